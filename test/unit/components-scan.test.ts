import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scanPluginComponents } from "../../src/components/scan.js";
import { summarizeComponents } from "../../src/components/summary.js";
import { estimateTokens } from "../../src/components/cost.js";
import { readFrontmatter } from "../../src/components/frontmatter.js";
import { writeBrokenPlugin, writeFullPlugin, writeManifestPathsPlugin } from "../helpers/component-fixtures.js";

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), "xt-comp-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function codes(issues: { code: string }[]): string[] {
  return issues.map((i) => i.code).sort();
}

describe("scanPluginComponents", () => {
  it("lists every kind of a full plugin with names, descriptions and resolved commands", () => {
    const root = path.join(tmp(), "p");
    writeFullPlugin(root);
    const found = scanPluginComponents(root, { rootKind: "xcsh-marketplace" });
    expect(found.errors).toEqual([]);
    expect(summarizeComponents(found.components)).toBe("1 tool, 3 skills, 1 agent, 4 hooks, 2 MCP servers, 1 LSP server, 1 output style, 1 bin executable, 1 monitor");
    const byName = (kind: string, name: string) => found.components.find((c) => c.kind === kind && c.name === name)!;
    expect(byName("skill", "review").description).toBe("Review the current diff for bugs");
    expect(byName("skill", "explain").file).toBe(path.join(root, "skills/explain/SKILL.md"));
    expect(byName("agent", "security-reviewer").loadedByXcsh).toBe(true);
    const post = byName("hook", "PostToolUse [Write|Edit]");
    expect(post.exec).toEqual({ command: `python3 ${root}/scripts/format.py`, args: [], env: [], shell: true });
    expect(post.timeout).toBe(30);
    expect(post.loadedByXcsh).toBe(false);
    const local = byName("mcp-server", "local");
    expect(local.exec).toEqual({ command: `${root}/servers/mcp.js`, args: ["--root", root], env: ["API_TOKEN"] });
    expect(local.loadedByXcsh).toBe(true);
    const remote = byName("mcp-server", "remote");
    expect(remote).toMatchObject({ url: "https://mcp.example.test/mcp", transport: "http", headers: ["Authorization"] });
    expect(byName("hook", "pre bash")).toMatchObject({ loadedByXcsh: true, exec: { command: path.join(root, "hooks/pre/bash.sh") } });
    expect(byName("lsp-server", "go")).toMatchObject({ loadedByXcsh: false, exec: { command: "gopls", args: ["serve"] } });
    expect(byName("bin", "hello-plugin").loadedByXcsh).toBe(false);
    expect(byName("monitor", "log-watch").exec!.command).toBe(`tail -F ${root}/scripts/hello.sh`);
  });

  it("marks what xcsh uses by root kind: a Claude cache plugin brings only its tools to xcsh", () => {
    const root = path.join(tmp(), "p");
    writeFullPlugin(root);
    const found = scanPluginComponents(root, { rootKind: "claude-cache" });
    const loaded = found.components.filter((c) => c.loadedByXcsh).map((c) => c.kind);
    expect(loaded).toEqual(["tool"]);
    expect(found.components.find((c) => c.kind === "skill")!.note).toMatch(/Claude Code's plugin cache/);
  });

  it("follows manifest paths: commands/agents/skills replace the defaults, hooks/MCP/LSP add to them", () => {
    const root = path.join(tmp(), "p");
    writeManifestPathsPlugin(root);
    const found = scanPluginComponents(root, { rootKind: "xcsh-marketplace" });
    expect(found.errors).toEqual([]);
    const names = found.components.map((c) => `${c.kind}:${c.name}`);
    expect(names).toEqual(expect.arrayContaining(["command:cmd", "agent:helper", "skill:deep", "hook:PreToolUse [Bash]", "mcp-server:inline", "lsp-server:py"]));
    expect(names).not.toContain("command:ignored");
    expect(names).not.toContain("skill:ignored");
    // The host reads default folders only.
    expect(found.components.find((c) => c.name === "deep")!.loadedByXcsh).toBe(false);
    expect(found.components.find((c) => c.name === "inline")!.loadedByXcsh).toBe(false);
  });

  it("reports every broken thing with a code and reads nothing outside the plugin", () => {
    const base = tmp();
    const root = path.join(base, "p");
    writeBrokenPlugin(root, path.join(base, "outside-skill"));
    const found = scanPluginComponents(root, { rootKind: "folder" });
    expect(codes(found.errors)).toEqual(
      expect.arrayContaining(["EFRONTMATTER", "EDUPLICATE_COMPONENT", "EENTRY_ESCAPE", "EENTRY_NOT_FOUND", "EHOOK_TYPE", "EREQUIRED", "ESCHEMA"].sort()),
    );
    expect(codes(found.warnings)).toContain("EHOOK_EVENT");
    const messages = found.errors.map((e) => `${e.code} ${e.path} ${e.message}`).join("\n");
    expect(messages).toMatch(/EENTRY_ESCAPE \/agents/); // ../outside-agents
    expect(messages).toMatch(/EENTRY_NOT_FOUND \/commands\/0/);
    expect(messages).toMatch(/\/\.\.\/escape\.sh leaves the plugin folder/);
    // A command naming a missing file is a warning: Claude Code installs such plugins.
    expect(found.warnings.map((e) => `${e.code} ${e.message}`).join("\n")).toMatch(/EENTRY_NOT_FOUND .*scripts\/missing\.sh does not exist/);
    expect(messages).not.toMatch(/scripts\/missing\.sh/);
    expect(messages).toMatch(/never closed/);
    expect(messages).toMatch(/\/mcpServers\/nothing\/command/);
    expect(messages).toMatch(/\/mcpServers\/remote\/url/);
    expect(messages).toMatch(/\/go\/extensionToLanguage/);
    expect(found.components.map((c) => c.name)).not.toContain("leaked");
  });

  it("lists an npm plugin's manifest entries as modules the host imports", () => {
    const root = tmp();
    writeFullPlugin(root); // files to point at
    const found = scanPluginComponents(root, { rootKind: "npm", manifest: { tools: "./tools", hooks: ["./hooks/pre/bash.sh"], commands: ["./commands/about.md"], features: { extra: { extensions: ["./servers/mcp.js"] } } }, manifestKey: "xcsh" });
    expect(found.errors).toEqual([]);
    expect(found.components.map((c) => `${c.kind}:${c.name}:${c.loadedByXcsh}`)).toEqual(["tool:tools:true", "hook:bash.sh:true", "command:about:true", "extension:mcp:true"]);
    expect(found.components.at(-1)!.note).toMatch(/feature extra/);
  });

  it("an npm manifest entry that leaves the package is EENTRY_ESCAPE", () => {
    const root = tmp();
    const found = scanPluginComponents(root, { rootKind: "npm", manifest: { hooks: ["../../etc/passwd"] } });
    expect(codes(found.errors)).toEqual(["EENTRY_ESCAPE"]);
    expect(found.components).toEqual([]);
  });
});

describe("context cost", () => {
  it("counts characters / 4, rounded (Claude Code's rule): plugin:name + description always, the trimmed body on invoke", () => {
    expect(estimateTokens("abcd")).toBe(1);
    expect(estimateTokens("abcde")).toBe(1);
    expect(estimateTokens("abcdef")).toBe(2);
    const root = path.join(tmp(), "p");
    writeFullPlugin(root);
    const review = scanPluginComponents(root, { rootKind: "folder" }).components.find((c) => c.name === "review")!;
    expect(review.cost).toEqual({ alwaysOn: estimateTokens("kitchen-sink:review Review the current diff for bugs"), onInvoke: estimateTokens("# Review\n\nRead the diff and list problems.") });
    const hook = scanPluginComponents(root, { rootKind: "folder" }).components.find((c) => c.kind === "hook")!;
    expect(hook.cost).toEqual({ alwaysOn: 0, onInvoke: 0 });
  });
});

describe("readFrontmatter", () => {
  it("parses YAML and caps aliases", () => {
    expect(readFrontmatter("---\na: 1\n---\nbody").data).toEqual({ a: 1 });
    expect(readFrontmatter("no frontmatter").present).toBe(false);
    const bomb = "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\n";
    expect(readFrontmatter(bomb).error).toMatch(/does not parse/);
  });
});
