/**
 * `list`, `show` and `tools` through the built CLI, for plugins installed in the three roots:
 * an xcsh marketplace install, a Claude Code cache install and an npm plugin.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { writeFullPlugin, writeManifestPathsPlugin } from "../helpers/component-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

beforeAll(async () => {
  await buildDist();
}, 180_000);

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-components-", { trustProject: true });

function installXcsh(name: string, write: (root: string) => void, scope: "user" | "project" = "user"): string {
  const root = path.join(w.xcshHome, "plugins", "cache", "plugins", `mkt___${name}___1.0.0`);
  write(root);
  const registry = scope === "user" ? path.join(w.xcshHome, "plugins", "installed_plugins.json") : path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json");
  mkdirSync(path.dirname(registry), { recursive: true });
  writeFileSync(registry, JSON.stringify({ version: 2, plugins: { [`${name}@mkt`]: [{ scope, installPath: root, version: "1.0.0" }] } }));
  return root;
}

function installClaude(name: string): string {
  const root = path.join(w.home, ".claude", "plugins", "cache", "cmkt", name, "2.0.0");
  mkdirSync(path.join(root, "skills", "only"), { recursive: true });
  writeFileSync(path.join(root, "skills", "only", "SKILL.md"), "---\ndescription: a Claude-only skill\n---\nbody\n");
  const registry = path.join(w.home, ".claude", "plugins", "installed_plugins.json");
  writeFileSync(registry, JSON.stringify({ version: 2, plugins: { [`${name}@cmkt`]: [{ scope: "user", installPath: root, version: "2.0.0" }] } }));
  return root;
}

function installNpm(name: string): string {
  const plugins = path.join(w.xcshHome, "plugins");
  const dir = path.join(plugins, "node_modules", name);
  mkdirSync(path.join(dir, "commands"), { recursive: true });
  writeFileSync(path.join(dir, "commands", "deploy.md"), "---\ndescription: Deploy it\n---\nSteps.\n");
  writeFileSync(path.join(dir, "hook.js"), "export default () => {};\n");
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "0.3.0", xcsh: { commands: ["./commands/deploy.md"], hooks: ["./hook.js"] } }));
  writeFileSync(path.join(plugins, "package.json"), JSON.stringify({ name: "xcsh-plugins", private: true, dependencies: { [name]: "0.3.0" } }));
  return dir;
}

describe("list / show / tools: components", () => {
  it("show lists every component with details; --json carries it all", async () => {
    const root = installXcsh("kitchen-sink", (r) => writeFullPlugin(r));
    const r = await runCli(["show", "kitchen-sink"], { cwd: w.cwd, home: w.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("kitchen-sink@mkt 1.0.0");
    expect(r.stdout).toContain("Components: 1 tool, 3 skills, 1 agent, 4 hooks, 2 MCP servers, 1 LSP server, 1 output style, 1 bin executable, 1 monitor");
    expect(r.stdout).toContain(`runs: python3 ${root}/scripts/format.py (shell)`);
    expect(r.stdout).toContain(`runs: ${root}/servers/mcp.js --root ${root}`);
    expect(r.stdout).toContain("env: API_TOKEN");
    expect(r.stdout).toMatch(/Context: ~\d+ tokens added to every session/);
    const j = await runCli(["show", "kitchen-sink@mkt", "--json"], { cwd: w.cwd, home: w.home });
    const doc = j.json();
    expect(doc.plugins).toHaveLength(1);
    const hook = doc.plugins[0].components.find((c: any) => c.kind === "hook" && c.event === "PostToolUse");
    expect(hook).toMatchObject({ matcher: "Write|Edit", timeout: 30, loadedByXcsh: false, exec: { command: `python3 ${root}/scripts/format.py` } });
    expect(doc.plugins[0].cost.alwaysOn).toBeGreaterThan(0);
  });

  it("show of a plugin that is not installed is ENOT_INSTALLED", async () => {
    const r = await runCli(["show", "nope", "--json"], { cwd: w.cwd, home: w.home });
    expect(r.code).toBe(1);
    expect(r.json().error.code).toBe("ENOT_INSTALLED");
  });

  it("list shows a summary by kind per plugin, npm and marketplace, and a context total", async () => {
    installXcsh("custom-paths", (r) => writeManifestPathsPlugin(r));
    installNpm("deploy-kit");
    const r = await runCli(["list"], { cwd: w.cwd, home: w.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/custom-paths@mkt 1\.0\.0[^\n]*\n\s+components: 2 skills, 1 agent, 1 hook, 1 MCP server, 1 LSP server · ~\d+ tokens every session \(\+1 unknown\)/);
    expect(r.stdout).toMatch(/deploy-kit@0\.3\.0[^\n]*\n\s+components: 1 command, 1 hook · ~\d+ tokens every session/);
    expect(r.stdout).toMatch(/Context: ~\d+ tokens added to every session by these plugins/);
    const doc = (await runCli(["list", "--json"], { cwd: w.cwd, home: w.home })).json();
    expect(doc.plugins[0].components).toMatchObject({ summary: "1 command, 1 hook", counts: { command: 1, hook: 1 } });
    expect(doc.marketplacePlugins[0].components.counts).toMatchObject({ skill: 2, "mcp-server": 1 });
    expect(doc.contextTokens.alwaysOn).toBeGreaterThan(0);
  });

  it("tools notes installed plugins that bring no tools but other components, from every root", async () => {
    installClaude("claude-only");
    installNpm("deploy-kit");
    const r = await runCli(["tools"], { cwd: w.cwd, home: w.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("No custom tools found.");
    expect(r.stdout).toContain("2 installed plugins bring no tools but other components:");
    expect(r.stdout).toMatch(/claude-only@cmkt {2}1 skill/);
    const doc = (await runCli(["tools", "--json"], { cwd: w.cwd, home: w.home })).json();
    expect(doc.otherComponents.map((p: any) => p.plugin).sort()).toEqual(["claude-only@cmkt", "deploy-kit"]);
  });

  it("an untrusted project's plugin installs are not read", async () => {
    const untrusted = await makeTmpWorld("xcsh-tools-components-untrusted-", { trustProject: false });
    try {
      const prev = w;
      w = untrusted;
      installXcsh("proj-plugin", (r) => writeFullPlugin(r, "proj-plugin"), "project");
      w = prev;
      const r = await runCli(["show", "proj-plugin", "--json"], { cwd: untrusted.cwd, home: untrusted.home });
      expect(r.json().error.code).toBe("ENOT_INSTALLED");
    } finally {
      await untrusted.cleanup();
    }
  });
});
