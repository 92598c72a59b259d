/**
 * {{toolName}}'s result and its render hooks, with xcsh-tools/testing: `renderToLines` draws a
 * component at a width, the way the host's TUI would.
 */
import { describe, expect, it } from "vitest";
import { createToolHarness, renderToLines } from "xcsh-tools/testing";

const TOOL = new URL("../tools/{{toolName}}.ts", import.meta.url);
const items = [
  { text: "write the tool", done: true },
  { text: "test it", done: true },
  { text: "publish", done: false },
  { text: "tell people", done: false },
];

describe("{{toolName}}", () => {
  it("returns the checklist as text", async () => {
    const harness = createToolHarness();
    const run = await harness.runTool(await harness.loadTool(TOOL), { title: "Release", items });
    expect(run.text.split("\n")[0]).toBe("Release: 2/4 done");
  });

  it("renders the call and a collapsed or expanded result", async () => {
    const harness = createToolHarness();
    const tool = await harness.loadTool(TOOL);
    const run = await harness.runTool(tool, { title: "Release", items });
    const theme = { fg: (color: string, text: string) => `<${color}>${text}</${color}>` };
    const call = tool.renderCall!({ title: "Release", items }, { expanded: false, isPartial: true }, theme);
    expect(renderToLines(call)).toEqual(["<accent>{{title}}</accent> Release (4 items)"]);
    const collapsed = renderToLines(tool.renderResult!(run.result, { expanded: false, isPartial: false }, undefined));
    expect(collapsed).toEqual(["Release: 2/4 done", "✔ write the tool", "✔ test it", "○ publish", "… 1 more (expand to see all)"]);
    const expanded = renderToLines(tool.renderResult!(run.result, { expanded: true, isPartial: false }, undefined), 12);
    expect(expanded).toHaveLength(5);
    expect(expanded.every((line) => line.length <= 12)).toBe(true);
  });
});
