/**
 * What Claude Code loads, `validate` passes (issue 31 point 2, checked against public catalogs):
 * a plugin written here in the shapes real marketplaces use that YAML alone rejects or our
 * schemas once called errors. Each is a warning (or nothing); real breakage stays an error.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scanPluginComponents } from "../../src/components/scan.js";
import { validatePath } from "../../src/validate/index.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-real-shapes-"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function put(rel: string, content: string | object): void {
  const file = path.join(root, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2));
}

/** A plugin with the oddities Claude Code tolerates. */
function writeTolerated(): void {
  put(".claude-plugin/plugin.json", { name: "odd-but-fine", version: "0.3.0", description: "shapes seen in real catalogs" });
  // An unquoted description holding ": " and an example block: YAML rejects it, hosts read it line by line.
  put("agents/triage.md", "---\nname: triage\ndescription: Use this agent when a test fails. Examples: <example>Context: CI is red. user: fix it</example>\nmodel: inherit\n---\nYou triage failures.\n");
  // An agent file with no frontmatter at all: hosts skip it, the plugin still loads.
  put("agents/notes.md", "You are a note taker. Write things down.\n");
  // `argument-hint: [name]` unquoted is a YAML list.
  put("commands/scaffold.md", "---\ndescription: Scaffold a project\nargument-hint: [project-name]\n---\nCreate the project $ARGUMENTS.\n");
  // An MCP server in a package of its own: package.json without any xcsh manifest.
  put("package.json", { name: "odd-but-fine-server", version: "0.3.0", private: true, dependencies: {} });
  put(".mcp.json", { mcpServers: { chat: { command: "node", args: ["$" + "{CLAUDE_PLUGIN_ROOT}/server.js"] }, built: { command: "node", args: ["$" + "{CLAUDE_PLUGIN_ROOT}/dist/built.js"] } } });
  put("server.js", "// server\n");
}

describe("shapes of real Claude Code plugins", () => {
  it("scan: the tolerated oddities are warnings and the components are still listed", () => {
    writeTolerated();
    const scan = scanPluginComponents(root, { rootKind: "folder" });
    expect(scan.errors).toEqual([]);
    const codes = scan.warnings.map((w) => `${path.relative(root, w.file)} ${w.code}`).sort();
    // dist/built.js: a build output the repository does not hold; the server fails until it exists.
    expect(codes).toEqual([".mcp.json EENTRY_NOT_FOUND", "agents/notes.md EAGENT_SKIPPED", "agents/notes.md EAGENT_SKIPPED", "agents/triage.md EFRONTMATTER_YAML"]);
    const triage = scan.components.find((c) => c.kind === "agent" && c.name === "triage");
    expect(triage?.description).toMatch(/^Use this agent when a test fails\. Examples:/);
    expect(scan.components.find((c) => c.kind === "command")?.name).toBe("scaffold");
  });

  it("validate: a plugin folder with a package.json but no xcsh manifest is a Claude Code plugin, and passes", async () => {
    writeTolerated();
    const report = await validatePath(root, { cwd: root, staticOnly: true });
    expect(report.errors).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it("real breakage stays an error: hooks.json without its hooks object", () => {
    put(".claude-plugin/plugin.json", { name: "broken-hooks", version: "1.0.0" });
    put("hooks/hooks.json", { PostToolUse: [{ matcher: "Write", hooks: [{ type: "command", command: "true" }] }] });
    const scan = scanPluginComponents(root, { rootKind: "folder" });
    expect(scan.errors.map((e) => e.code)).toEqual(["EREQUIRED"]);
  });
});
