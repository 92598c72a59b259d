/** The marketplace's plugin tool, loaded the way xcsh loads it, with a scripted git. */
import { describe, expect, it } from "vitest";
import { createToolHarness } from "xcsh-tools/testing";

const TOOL = new URL("../plugins/{{pluginName}}/tools/{{toolName}}.ts", import.meta.url);

describe("{{toolName}}", () => {
  it("lists the commits git prints", async () => {
    const harness = createToolHarness({ exec: () => "abc1234 2026-01-02 Second\ndef5678 2026-01-01 First\n" });
    const run = await harness.runTool(await harness.loadTool(TOOL), { count: 2 });
    expect(run.text).toBe("abc1234 2026-01-02 Second\ndef5678 2026-01-01 First");
    expect(harness.exec.calls[0]?.args.slice(0, 2)).toEqual(["log", "-2"]);
  });

  it("fails with git's message outside a repository", async () => {
    const harness = createToolHarness({ exec: () => ({ code: 128, stderr: "fatal: not a git repository" }) });
    await expect(harness.runTool(await harness.loadTool(TOOL), {})).rejects.toThrow("not a git repository");
  });
});
