/**
 * The inventory as Claude Code's `claude plugin details` (2.1.332) files it, unit by unit
 * (test/integration/conformance-inventory.test.ts compares whole plugins with its recording):
 * names by folder or file, commands among skills, hooks per event, and its cost estimate.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { estimateTokens } from "../../src/components/cost.js";
import { scanPluginComponents } from "../../src/components/scan.js";
import { claudeInventory, countByKind, summarizeComponents } from "../../src/components/summary.js";
import type { PluginRootKind } from "../../src/components/types.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A plugin folder named `name` holding `files` (path → text or JSON). */
function plugin(files: Record<string, string | object>, name = "kit"): string {
  const root = path.join(mkdtempSync(path.join(os.tmpdir(), "xt-inv-")), name);
  dirs.push(path.dirname(root));
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), typeof content === "string" ? content : JSON.stringify(content));
  }
  return root;
}

const scan = (root: string, rootKind: PluginRootKind = "folder", pluginName?: string) => scanPluginComponents(root, { rootKind, ...(pluginName ? { pluginName } : {}) });
const md = (fm: string, body = "Body.\n") => `---\n${fm}\n---\n${body}`;

describe("names: by folder or file, as Claude Code names them", () => {
  it("a skill by its folder and an agent by its file, whatever their frontmatter says (kept as declaredName)", () => {
    const found = scan(plugin({ "skills/sql-tuning/SKILL.md": md("name: Query Optimizer\ndescription: d"), "agents/perf.md": md("name: Performance Auditor\ndescription: d"), "commands/fix.md": md("name: issue-fixer\ndescription: d") }));
    expect(found.components.map((c) => [c.kind, c.name, c.declaredName])).toEqual([
      ["skill", "sql-tuning", "Query Optimizer"],
      ["command", "fix", undefined],
      ["agent", "perf", "Performance Auditor"],
    ]);
  });

  it("a skill folder plugin.json names itself goes by its frontmatter name, the plugin: prefix taken off", () => {
    const found = scan(plugin({ ".claude-plugin/plugin.json": { name: "kit", skills: ["./one", "./two"] }, "one/SKILL.md": md("name: kit:first-skill\ndescription: d"), "two/SKILL.md": md("description: d") }));
    expect(found.components.map((c) => c.name)).toEqual(["first-skill", "two"]);
  });

  it("a root SKILL.md goes by its frontmatter name", () => {
    expect(scan(plugin({ "SKILL.md": md("name: pdf-forms\ndescription: d") }, "folder-name")).components.map((c) => c.name)).toEqual(["pdf-forms"]);
  });

  it("two skills with one frontmatter name still clash for the host, which goes by that name", () => {
    const found = scan(plugin({ "skills/a/SKILL.md": md("name: same\ndescription: d"), "skills/b/SKILL.md": md("name: same\ndescription: d") }));
    expect(found.components.map((c) => c.name)).toEqual(["a", "b"]);
    expect(found.errors.map((e) => e.code)).toEqual(["EDUPLICATE_COMPONENT"]);
  });
});

describe("filing: commands/ files are skills, hooks count per event", () => {
  it("commands are filed among skills in every Claude-layout root, not in npm plugins", () => {
    const root = plugin({ "commands/deploy.md": md("description: Deploy"), "skills/s/SKILL.md": md("description: d") });
    for (const kind of ["folder", "xcsh-marketplace", "claude-cache"] as const) {
      const found = scan(root, kind);
      expect(summarizeComponents(found.components), kind).toBe("2 skills");
      expect(claudeInventory(found.components).skills, kind).toEqual(["s", "deploy"]);
    }
    const npm = scanPluginComponents(root, { rootKind: "npm", manifest: { commands: ["./commands/deploy.md"] } });
    expect(npm.components.map((c) => [c.kind, c.filedAs])).toEqual([["command", undefined]]);
    expect(summarizeComponents(npm.components)).toBe("1 command");
  });

  it("hooks count once per event: several handlers, several matchers, hooks.json and plugin.json alike", () => {
    const found = scan(
      plugin({
        ".claude-plugin/plugin.json": { name: "kit", hooks: { Stop: [{ hooks: [{ type: "command", command: "echo m" }] }], SessionStart: [{ hooks: [{ type: "command", command: "echo s" }] }] } },
        "hooks/hooks.json": { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "echo a" }, { type: "command", command: "echo b" }] }, { matcher: "Edit", hooks: [{ type: "command", command: "echo c" }] }], Stop: [{ hooks: [{ type: "command", command: "echo d" }] }] } },
      }),
    );
    expect(found.components.filter((c) => c.kind === "hook")).toHaveLength(6);
    expect(countByKind(found.components).hook).toBe(3);
    expect(claudeInventory(found.components).hooks).toEqual(["PreToolUse", "Stop", "SessionStart"]);
  });

  it("xcsh's hooks/pre and hooks/post scripts are each a hook of their own, and not in Claude Code's inventory", () => {
    const found = scan(plugin({ "hooks/pre/bash.sh": "#!/bin/sh\n", "hooks/pre/edit.sh": "#!/bin/sh\n", "hooks/post/bash.sh": "#!/bin/sh\n" }), "xcsh-marketplace");
    expect(countByKind(found.components).hook).toBe(3);
    expect(claudeInventory(found.components).hooks).toEqual([]);
  });
});

describe("cost: Claude Code's estimate", () => {
  const cost = (files: Record<string, string | object>, name?: string) => scan(plugin(files), "folder", name).components.map((c) => [c.name, c.cost.alwaysOn, c.cost.onInvoke]);

  it("a skill or command is listed as plugin:name, odd characters made -; an agent by its bare name", () => {
    expect(cost({ "skills/my skill.v2/SKILL.md": md("description: Does things"), "agents/helper.md": md("name: helper\ndescription: Helps") }, "python-dev")).toEqual([
      ["my skill.v2", estimateTokens("python-dev:my-skill-v2 Does things"), estimateTokens("Body.")],
      ["helper", estimateTokens("helper Helps"), estimateTokens("Body.")],
    ]);
  });

  it("when_to_use is listed too, and the body is counted trimmed", () => {
    expect(cost({ "skills/s/SKILL.md": md("description: Parse CSV\nwhen_to_use: When a CSV file is given", "\n\n  Steps to follow.  \n\n") })).toEqual([["s", estimateTokens("kit:s Parse CSV When a CSV file is given"), estimateTokens("Steps to follow.")]]);
  });

  it("without a description the body's first line stands in, heading marks off, 100 characters at most", () => {
    const long = "x".repeat(120);
    expect(cost({ "skills/a/SKILL.md": md("name: a", "\n# Generate fixtures\n\nMore.\n"), "commands/b.md": `${long}\nrest\n`, "skills/c/SKILL.md": md("name: c", "") })).toEqual([
      ["a", estimateTokens("kit:a Generate fixtures"), estimateTokens("# Generate fixtures\n\nMore.")],
      ["c", estimateTokens("kit:c Skill"), 0],
      ["b", estimateTokens(`kit:b ${"x".repeat(97)}...`), estimateTokens(`${long}\nrest`)],
    ]);
  });

  it("skill descriptions have newline runs made one space and <, > escaped; agent descriptions are taken as written", () => {
    const description = "Convert <CSV>\n\nfiles.";
    const fm = `description: ${JSON.stringify(description)}`;
    expect(cost({ "skills/s/SKILL.md": md(fm), "agents/g.md": md(`name: g\n${fm}`) })).toEqual([
      ["s", estimateTokens("kit:s Convert &lt;CSV&gt; files."), 1],
      ["g", estimateTokens(`g ${description}`), 1],
    ]);
  });

  it("a frontmatter whose value runs on over key-like lines is dropped, as Claude Code drops it: the body's first line is listed", () => {
    const runOn = "description: Use this agent to plan migrations. Examples:\n\n<example>\nuser: \"plan it\"\nassistant: \"I will\"\n</example>\nwhen_to_use: never read";
    expect(cost({ "agents/planner.md": md(`name: planner\n${runOn}`, "You plan migrations.\n"), "skills/s/SKILL.md": md(runOn, "# Plans\n") })).toEqual([
      ["s", estimateTokens("kit:s Plans"), estimateTokens("# Plans")],
      ["planner", estimateTokens("planner You plan migrations."), estimateTokens("You plan migrations.")],
    ]);
    // A `: ` inside a value is read line by line, as Claude Code reads it.
    expect(cost({ "agents/g.md": md("name: g\ndescription: Checks: style and tests") })).toEqual([["g", estimateTokens("g Checks: style and tests"), 1]]);
  });

  it("a skill the model cannot invoke (disable-model-invocation) is priced always-on, as claude plugin details prices it", () => {
    const priced = cost({ "skills/s/SKILL.md": md("description: Hidden one\ndisable-model-invocation: true") });
    expect(priced).toEqual(cost({ "skills/s/SKILL.md": md("description: Hidden one") }));
    expect(priced[0]![1]).toBeGreaterThan(0);
  });

  it("the plugin's name comes from the caller, else plugin.json, else the folder", () => {
    const files = { ".claude-plugin/plugin.json": { name: "declared" }, "skills/s/SKILL.md": md("description: d") };
    expect(cost(files)).toEqual([["s", estimateTokens("declared:s d"), 1]]);
    expect(cost(files, "installed-as")).toEqual([["s", estimateTokens("installed-as:s d"), 1]]);
    expect(cost({ "skills/s/SKILL.md": md("description: d") })).toEqual([["s", estimateTokens("kit:s d"), 1]]);
  });
});
