/**
 * Unit tests with xcsh-tools/testing: the tools are loaded the way the host loads them, with a
 * recording `exec` that answers instead of running grep, so the tests are fast and offline.
 */
import { describe, expect, it } from "vitest";
import { createToolHarness } from "xcsh-tools/testing";

const TOOL = new URL("../tools/{{toolName}}.ts", import.meta.url);
const COUNT = new URL("../features/{{toolName}}_count.ts", import.meta.url);

describe("{{toolName}}", () => {
  it("returns the matches grep finds, and streams a progress update first", async () => {
    const harness = createToolHarness({ exec: () => "src/a.ts:3:// TODO: tidy up\nsrc/b.ts:9:// FIXME\n" });
    const tool = await harness.loadTool(TOOL);
    const run = await harness.runTool(tool, { path: "src" });
    expect(run.text).toBe("src/a.ts:3:// TODO: tidy up\nsrc/b.ts:9:// FIXME");
    expect(run.result.details).toEqual({ matches: 2 });
    expect(run.updates.map((u) => u.content[0])).toEqual([{ type: "text", text: "searching src..." }]);
    const [call] = harness.exec.calls;
    expect(call?.command).toBe("grep");
    expect(call?.args.at(-1)).toBe("src");
    expect(call?.options.signal).toBeUndefined();
  });

  it("treats grep's exit 1 as no match, and other exits as a failure", async () => {
    const quiet = createToolHarness({ exec: () => ({ code: 1 }) });
    expect((await quiet.runTool(await quiet.loadTool(TOOL), {})).text).toBe("No TODO or FIXME found.");
    const broken = createToolHarness({ exec: () => ({ code: 2, stderr: "grep: nope: No such file or directory" }) });
    await expect(broken.runTool(await broken.loadTool(TOOL), { path: "nope" })).rejects.toThrow(/exited with 2/);
  });

  it("passes the cancellation signal to grep", async () => {
    const harness = createToolHarness();
    const controller = new AbortController();
    controller.abort();
    await expect(harness.runTool(await harness.loadTool(TOOL), {}, { signal: controller.signal })).rejects.toThrow("cancelled");
    expect(harness.exec.calls[0]?.options.signal).toBe(controller.signal);
  });

  it("counts lines, words and characters (feature count)", async () => {
    const harness = createToolHarness();
    const run = await harness.runTool(await harness.loadTool(COUNT), { text: "one two\nthree" });
    expect(run.result.details).toEqual({ lines: 2, words: 3, characters: 13 });
  });
});
