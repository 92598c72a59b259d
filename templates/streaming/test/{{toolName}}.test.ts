/**
 * Streaming, cancellation and session state of {{toolName}}, with xcsh-tools/testing: `exec`
 * is scripted (no npm runs), the updates are collected, and session events go through the
 * host's dispatcher.
 */
import { describe, expect, it } from "vitest";
import { createTestContext, createToolHarness } from "xcsh-tools/testing";

const TOOL = new URL("../tools/{{toolName}}.ts", import.meta.url);

describe("{{toolName}}", () => {
  it("streams one update per script and reports failures", async () => {
    const harness = createToolHarness({ exec: ({ args }) => ({ code: args.at(-1) === "lint" ? 1 : 0 }) });
    const tool = await harness.loadTool(TOOL);
    const run = await harness.runTool(tool, { scripts: ["lint", "build"] });
    expect(run.updates.map((u) => u.content[0])).toEqual([
      { type: "text", text: "running lint (1/2)" },
      { type: "text", text: "running build (2/2)" },
    ]);
    expect(run.result.details).toMatchObject({ done: 2, total: 2, failed: ["lint"] });
    expect(harness.exec.calls.map((c) => c.args)).toEqual([
      ["run", "--silent", "lint"],
      ["run", "--silent", "build"],
    ]);
  });

  it("stops when cancelled: the signal reaches exec and no further script starts", async () => {
    const controller = new AbortController();
    // A script that only ends when it is killed, like a real subprocess.
    const harness = createToolHarness({
      exec: ({ options }) =>
        new Promise((resolve) => options.signal?.addEventListener("abort", () => resolve({ code: 143, killed: true }), { once: true })),
    });
    const tool = await harness.loadTool(TOOL);
    const running = harness.runTool(tool, { scripts: ["watch", "build"] }, { signal: controller.signal, onUpdate: () => controller.abort() });
    await expect(running).rejects.toThrow("cancelled while running watch");
    expect(harness.exec.calls).toHaveLength(1);
    expect(harness.exec.calls[0]?.options.signal).toBe(controller.signal);
  });

  it("restores its totals from the session on start and forgets them on shutdown", async () => {
    const harness = createToolHarness();
    const tool = await harness.loadTool(TOOL);
    const entries = [{ type: "message", message: { role: "toolResult", toolName: "{{toolName}}", details: { done: 3, total: 3, failed: [], sessionRuns: 7 } } }];
    const ctx = createTestContext({ sessionManager: { getBranch: () => entries } });
    const summary = await harness.sendSessionEvent({ reason: "start", previousSessionFile: undefined }, { ctx });
    expect(summary.failures).toEqual([]);
    expect((await harness.runTool(tool, { scripts: ["test"] })).result.details.sessionRuns).toBe(8);
    await harness.sendSessionEvent({ reason: "shutdown", previousSessionFile: undefined });
    expect((await harness.runTool(tool, { scripts: ["test"] })).result.details.sessionRuns).toBe(1);
  });
});
