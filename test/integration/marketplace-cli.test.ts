/**
 * The marketplace commands end to end through the built `bin/xcsh-tools.js`, and Claude Code's
 * marketplaces: `marketplace list --claude` and `import-claude` read `~/.claude` and never write
 * it (the tree is compared byte for byte).
 */
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { gitIdentityEnv, isolatedGitEnv, makeGitRemote } from "../helpers/git-remote.js";
import { catalog, catalogPath, pluginFiles, writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";

let w: TmpWorld;

beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
});
afterEach(async () => {
  await w.cleanup();
});

const gitEnv = () => gitIdentityEnv(w.home);
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: w.cwd, home: w.home, env: { ...gitEnv(), ...env }, timeoutMs: 60_000 });
const json = (out: { stdout: string }) => JSON.parse(out.stdout);

async function folderMarketplace(name: string, flavour: "xcsh" | "claude" = "xcsh"): Promise<string> {
  const root = path.join(w.root, `market-${name}`);
  return writeFolderMarketplace(root, { name, tools: [`${name.replace(/-/g, "_")}_tool`], entry: { version: "1.0.0", description: "Says hello", keywords: ["greeting"] }, flavour });
}

describe("xcsh-tools marketplace … and the shared commands", () => {
  it("add, discover, search, install in project scope, list, tools, outdated, uninstall, remove", async () => {
    const root = await folderMarketplace("acme");
    const added = await cli(["marketplace", "add", root, "--json"]);
    expect(added.code, added.stderr).toBe(0);
    expect(json(added)).toMatchObject({ ok: true, op: "ADD", name: "acme", plugins: ["hello"] });
    expect((await cli(["marketplace", "list"])).stdout).toMatch(/acme .*user .*local .*1 plugin/);
    expect(json(await cli(["marketplace", "discover", "acme", "--json"])).plugins).toMatchObject([{ id: "hello@acme", version: "1.0.0", installed: [] }]);
    expect((await cli(["marketplace", "search", "greeting"])).stdout).toMatch(/hello@acme 1\.0\.0/);

    const dry = await cli(["install", "hello@acme", "--scope", "project", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(json(dry)).toMatchObject({ dryRun: true, items: [{ op: "ADD", id: "hello@acme", scope: "project" }] });
    const installed = await cli(["install", "hello@acme", "--scope", "project"]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toMatch(/\+ ADD +hello@acme \(project\)/);
    expect(installed.stdout).toMatch(/Installed hello@acme/);
    const registry = JSON.parse(await readFile(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), "utf8"));
    expect(Object.keys(registry.plugins)).toEqual(["hello@acme"]);

    const list = json(await cli(["list", "--json"]));
    expect(list.marketplacePlugins).toMatchObject([{ id: "hello@acme", scope: "project", version: "1.0.0", enabled: true }]);
    const tools = json(await cli(["tools", "--json"]));
    expect(tools.tools).toMatchObject([{ name: "acme_tool", provider: "xcsh-plugins", level: "project", plugin: "hello@acme" }]);
    expect(json(await cli(["outdated", "hello@acme", "--json"])).marketplacePlugins).toMatchObject([{ id: "hello@acme", outdated: false }]);

    const mixed = await cli(["install", "hello@acme", "left-pad"]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/Cannot install marketplace plugins \(hello@acme\) and npm plugins \(left-pad\)/);
    expect((await cli(["install", "hello@acme", "--scope", "galaxy"])).code).toBe(2);

    const un = await cli(["uninstall", "hello@acme", "--json"]);
    expect(un.code, un.stderr).toBe(0);
    expect(json(un)).toMatchObject({ items: [{ op: "REMOVE", id: "hello@acme", scope: "project" }], cacheRemoved: [expect.stringContaining("acme___hello___1.0.0-")] });
    const removed = await cli(["marketplace", "remove", "acme"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect((await cli(["marketplace", "list", "--json"])).stdout).toBe(`${JSON.stringify({ marketplaces: [] }, null, 2)}\n`);
  });

  it("a relative source is read from the folder the command runs in, also below the project folder (--scope project)", async () => {
    await mkdir(path.join(w.cwd, ".xcsh"), { recursive: true });
    const sub = path.join(w.cwd, "sub");
    await writeFolderMarketplace(path.join(sub, "market"), { name: "nearby", tools: ["nearby_tool"], entry: { version: "1.0.0" }, flavour: "xcsh" });
    await mkdir(path.join(sub, "acme", "tools"), { recursive: true });
    const inSub = (args: string[]) => runCli(args, { cwd: sub, home: w.home, env: gitEnv(), timeoutMs: 60_000 });
    const added = await inSub(["marketplace", "add", "./market", "--scope", "project", "--json"]);
    expect(added.code, added.stderr).toBe(0);
    expect(json(added)).toMatchObject({ name: "nearby", scope: "project", entry: { sourceType: "local", sourceUri: path.join(sub, "market") } });
    expect(JSON.parse(await readFile(path.join(w.cwd, ".xcsh/marketplaces.json"), "utf8")).marketplaces).toMatchObject([{ name: "nearby" }]);
    // owner/repo that is also a folder where the user stands: refused as ambiguous there, not at the project folder.
    const ambiguous = await inSub(["marketplace", "add", "acme/tools", "--scope", "project"]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`ESOURCE_AMBIGUOUS`);
    expect(ambiguous.stderr).toContain(path.join(sub, "acme", "tools"));
  });

  it("an injected failure in the middle of install exits 1 and changes nothing; errors carry codes and hints", async () => {
    const root = await folderMarketplace("acme");
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const before = await snapshotTree(w.root);
    const failed = await cli(["install", "hello@acme", "--json"], { XCSH_TOOLS_TEST_FAULT: "marketplace:staged-registries" });
    expect(failed.code).toBe(1);
    expect(json(failed)).toMatchObject({ error: { code: "EFAULT_INJECTED" } });
    expect(await snapshotTree(w.root)).toEqual(before);
    const unknown = await cli(["marketplace", "add", "not-a-source"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/ESOURCE_UNKNOWN/);
    expect(unknown.stderr).toMatch(/Try this:/);
    const missing = await cli(["install", "nope@acme", "--json"]);
    expect(missing.code).toBe(1);
    expect(json(missing).error).toMatchObject({ code: "EPLUGIN_NOT_FOUND" });
  });
});

describe("Claude Code marketplaces", () => {
  it("lists and imports Claude's marketplaces without ever writing ~/.claude", async () => {
    const claudeDir = await folderMarketplace("claude-dir", "claude");
    const remote = await makeGitRemote(w.root, "claude-git", { [catalogPath("claude")]: catalog("claude-git", [{ name: "hello", source: "./plugins/hello" }]), ...pluginFiles("plugins/hello", "hello", ["git_tool"], { flavour: "claude" }) }, isolatedGitEnv(w.home));
    await w.write(path.join(w.home, ".claude/plugins/known_marketplaces.json"), {
      "claude-dir": { source: { source: "directory", path: claudeDir }, installLocation: claudeDir, lastUpdated: "2025-01-01T00:00:00.000Z" },
      "claude-git": { source: { source: "git", url: remote.url }, installLocation: path.join(w.home, ".claude/plugins/marketplaces/claude-git") },
      "far-away": { source: { source: "github", repo: "example/far-away" }, installLocation: path.join(w.home, ".claude/plugins/marketplaces/far-away") },
      "odd-kind": { source: { source: "settings", name: "x" }, installLocation: "/x" },
    });
    await w.write(path.join(w.home, ".claude/settings.json"), { enabledPlugins: {} });
    const claudeBefore = await snapshotTree(path.join(w.home, ".claude"));

    const listed = await cli(["marketplace", "list", "--claude", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(json(listed).marketplaces.map((m: { name: string; importable?: string; registered: boolean }) => [m.name, m.importable ?? null, m.registered])).toEqual([
      ["claude-dir", claudeDir, false],
      ["claude-git", remote.url, false],
      ["far-away", "github:example/far-away", false],
      ["odd-kind", null, false],
    ]);
    // far-away is on GitHub: the test imports only the local ones (no network).
    const imported = await cli(["marketplace", "import-claude", "claude-dir", "claude-git", "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(json(imported).marketplaces).toEqual([
      { name: "claude-dir", status: "added", source: claudeDir },
      { name: "claude-git", status: "added", source: remote.url },
    ]);
    const again = json(await cli(["marketplace", "import-claude", "claude-dir", "--json"]));
    expect(again.marketplaces).toEqual([{ name: "claude-dir", status: "skipped", reason: "already registered in xcsh" }]);
    expect((await cli(["install", "hello@claude-git"])).code).toBe(0);
    const tools = json(await cli(["tools", "--json"]));
    expect(tools.tools.map((t: { name: string }) => t.name)).toEqual(["git_tool"]);
    expect(await snapshotTree(path.join(w.home, ".claude"))).toEqual(claudeBefore);
  });
});
