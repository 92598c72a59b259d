/**
 * What Claude Code already has on disk, used as Claude Code uses it: `enabledPlugins` of its
 * settings layers decides which of its cached plugins discovery loads; `import-claude` reads its
 * marketplace copies instead of fetching (offline, `--dry-run` fetches nothing); a git
 * marketplace's clone becomes the cache by rename. Fixtures of our own, shaped like Claude Code's.
 */
import { readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { discoverToolPaths } from "../../src/discovery/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { gitIdentityEnv, isolatedGitEnv, makeGitRemote } from "../helpers/git-remote.js";
import { catalog, catalogPath, pluginFiles, writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { installEntry, writeTool } from "./discovery-fixtures.js";

let w: TmpWorld;

beforeAll(async () => {
  await buildDist();
}, 180_000);
afterEach(async () => {
  await w.cleanup();
});

const gitEnv = () => gitIdentityEnv(w.home);
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: w.cwd, home: w.home, env: { ...gitEnv(), ...env }, timeoutMs: 60_000 });
const json = (out: { stdout: string }) => JSON.parse(out.stdout);

/** Claude Code's cache with plugins `a`, `b`, `c` of marketplace `mkt`, each with one tool of its name. */
async function claudeCache(): Promise<void> {
  const plugins: Record<string, unknown[]> = {};
  for (const name of ["a", "b", "c"]) {
    const dir = path.join(w.home, ".claude/plugins/cache/mkt", name, "1.0.0");
    await writeTool(w, path.join(dir, "tools", `${name}.js`), `${name}_tool`);
    plugins[`${name}@mkt`] = [installEntry(dir)];
  }
  await w.write(path.join(w.home, ".claude/plugins/installed_plugins.json"), { version: 2, plugins });
}

const settings = (where: "user" | "project" | "local", enabledPlugins: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  w.write(where === "user" ? path.join(w.home, ".claude/settings.json") : path.join(w.cwd, ".claude", where === "project" ? "settings.json" : "settings.local.json"), { ...extra, enabledPlugins });

const loaded = async () => {
  const result = await discoverToolPaths([], w.cwd, { home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["claude-plugins"] });
  return { names: result.paths.map((p) => path.basename(p.path, ".js")), result };
};

describe("Claude Code's enabledPlugins decide which of its plugins load", () => {
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
    await claudeCache();
  });

  it("without settings every plugin loads; `false` in ~/.claude/settings.json leaves that plugin out", async () => {
    expect((await loaded()).names).toEqual(["a", "b", "c"]);
    await settings("user", { "a@mkt": false, "b@mkt": true }, { model: "opus", permissions: { allow: [] } });
    const { names, result } = await loaded();
    expect(names).toEqual(["b", "c"]);
    expect(result.errors).toEqual([]);
  });

  it("local over project over user, in a trusted project; a version list means on", async () => {
    await settings("user", { "a@mkt": false, "b@mkt": false, "c@mkt": true });
    await settings("project", { "a@mkt": true, "b@mkt": ["1.0.0"], "c@mkt": false });
    await settings("local", { "a@mkt": false });
    expect((await loaded()).names).toEqual(["b"]);
  });

  it("an untrusted project's settings are not read (reported as left out); the user's file decides", async () => {
    await w.cleanup();
    w = await makeTmpWorld("xcsh-tools-test-", { trustProject: false });
    await claudeCache();
    await settings("user", { "a@mkt": false });
    await settings("project", { "a@mkt": true, "b@mkt": false });
    await settings("local", { "c@mkt": false });
    const { names, result } = await loaded();
    expect(names).toEqual(["b", "c"]);
    expect(result.untrusted?.skipped.filter((s) => s.kind === "claude-settings").map((s) => path.relative(w.cwd, s.path))).toEqual([path.join(".claude", "settings.json"), path.join(".claude", "settings.local.json")]);
  });

  it("a settings file with a malformed enabledPlugins is one ESTATE_FILE record and counts as absent", async () => {
    await settings("user", { "a@mkt": "no" });
    await w.write(path.join(w.cwd, ".claude/settings.local.json"), "{ not json");
    const { names, result } = await loaded();
    expect(names).toEqual(["a", "b", "c"]);
    expect(result.errors.map((e) => [e.code, path.basename(e.path)])).toEqual([
      ["ESTATE_FILE", "settings.json"],
      ["ESTATE_FILE", "settings.local.json"],
    ]);
  });

  it("`tools` follows a change of the settings (the boot index does not serve a stale answer)", async () => {
    const names = async () => json(await cli(["tools", "--json"])).tools.map((t: { name: string }) => t.name).sort();
    expect(await names()).toEqual(["a_tool", "b_tool", "c_tool"]);
    await settings("user", { "b@mkt": false });
    expect(await names()).toEqual(["a_tool", "c_tool"]);
    await settings("local", { "b@mkt": true, "c@mkt": false });
    expect(await names()).toEqual(["a_tool", "b_tool"]);
  });
});

describe("import-claude reads Claude Code's copies: offline, and --dry-run fetches nothing", () => {
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  });

  /** Claude Code's copy of a marketplace whose recorded source cannot be reached. */
  async function claudeMarketplace(name: string, source: Record<string, unknown>): Promise<string> {
    const location = path.join(w.home, ".claude/plugins/marketplaces", name);
    await writeFolderMarketplace(location, { name, tools: [`${name.replace(/-/g, "_")}_tool`], entry: { version: "1.0.0" }, flavour: "claude" });
    await w.write(path.join(location, ".git/HEAD"), "ref: refs/heads/main\n");
    return location;
  }

  it("imports from ~/.claude/plugins/marketplaces/<name> when the git remote is gone and the registry unreachable", async () => {
    const gone = `file://${path.join(w.root, "gone.git")}`;
    const location = await claudeMarketplace("offline-market", { source: "git", url: gone });
    await w.write(path.join(w.home, ".claude/plugins/known_marketplaces.json"), {
      "offline-market": { source: { source: "git", url: gone }, installLocation: location, lastUpdated: "2026-01-01T00:00:00.000Z" },
    });
    const claudeBefore = await snapshotTree(path.join(w.home, ".claude"));
    const xcshBefore = await snapshotTree(w.xcshHome);
    const offline = { npm_config_registry: "http://127.0.0.1:9/" };

    const dry = await cli(["marketplace", "import-claude", "--dry-run", "--json"], offline);
    expect(dry.code, dry.stderr).toBe(0);
    expect(json(dry).marketplaces).toEqual([{ name: "offline-market", status: "would-add", source: gone, from: location }]);
    expect(await snapshotTree(w.xcshHome)).toEqual(xcshBefore);

    const real = await cli(["marketplace", "import-claude"], offline);
    expect(real.code, real.stderr).toBe(0);
    expect(real.stdout).toMatch(/added +offline-market .*read from Claude Code's copy/);
    const registry = JSON.parse(await readFile(path.join(w.xcshHome, "marketplaces.json"), "utf8"));
    // The real source is recorded: `marketplace update` fetches from it.
    expect(registry.marketplaces).toMatchObject([{ name: "offline-market", sourceType: "git", sourceUri: gone }]);
    const cache = path.join(w.xcshHome, "plugins/cache/marketplaces/offline-market");
    expect(await snapshotTree(cache)).not.toHaveProperty([".git/HEAD"]);
    const installed = await cli(["install", "hello@offline-market"], offline);
    expect(installed.code, installed.stderr).toBe(0);
    expect(json(await cli(["tools", "--json"])).tools.map((t: { name: string }) => t.name)).toEqual(["offline_market_tool"]);
    expect(await snapshotTree(path.join(w.home, ".claude"))).toEqual(claudeBefore);
  });

  it("--dry-run without Claude Code's copy says it was not checked and fetches nothing", async () => {
    const gone = `file://${path.join(w.root, "gone.git")}`;
    await w.write(path.join(w.home, ".claude/plugins/known_marketplaces.json"), {
      elsewhere: { source: { source: "git", url: gone }, installLocation: path.join(w.home, ".claude/plugins/marketplaces/elsewhere") },
    });
    const dry = await cli(["marketplace", "import-claude", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(json(dry).marketplaces).toEqual([{ name: "elsewhere", status: "would-add", source: gone, reason: expect.stringMatching(/^not checked: Claude Code has no copy at .*elsewhere, so the import will fetch /) }]);
    // The real import does fetch, and says why it failed.
    const real = await cli(["marketplace", "import-claude", "--json"]);
    expect(real.code).toBe(1);
    expect(json(real).marketplaces).toMatchObject([{ name: "elsewhere", status: "failed", error: { code: expect.stringMatching(/^EGIT/) } }]);
  });
});

describe("a git marketplace's clone becomes the cache", () => {
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  });

  it("without .git, with our marketplace.json replacing a link of that name (never written through)", async () => {
    const canary = await w.write("canary.txt", "untouched\n");
    const remote = await makeGitRemote(w.root, "linky", { [catalogPath("claude")]: catalog("linky", [{ name: "hello", source: "./plugins/hello" }]), ...pluginFiles("plugins/hello", "hello", ["linky_tool"], { flavour: "claude" }), "docs/readme.md": "# docs\n" }, isolatedGitEnv(w.home));
    await symlink(canary, path.join(remote.work, "marketplace.json"));
    await symlink(canary, path.join(remote.work, "docs", "outside.txt"));
    await remote.commit({}, "links");
    const added = await cli(["marketplace", "add", remote.url]);
    expect(added.code, added.stderr).toBe(0);
    const cache = path.join(w.xcshHome, "plugins/cache/marketplaces/linky");
    const tree = await snapshotTree(cache);
    expect(Object.keys(tree).filter((k) => k.startsWith(".git"))).toEqual([]);
    expect(JSON.parse(await readFile(path.join(cache, "marketplace.json"), "utf8"))).toMatchObject({ name: "linky" });
    expect(await readFile(canary, "utf8")).toBe("untouched\n");
    expect(await readFile(path.join(cache, "docs/readme.md"), "utf8")).toBe("# docs\n");
    expect((await cli(["install", "hello@linky"])).code).toBe(0);
  });
});

describe("messages that point at the right plugin", () => {
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  });
  const out = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

  /** A folder marketplace `market` offering `hookify`, added. */
  async function addMarket(): Promise<string> {
    const root = path.join(w.root, "market");
    await writeFolderMarketplace(root, { name: "market", plugin: "hookify", tools: ["hookify_tool"], entry: { version: "1.0.0", description: "Hooks made easy" }, flavour: "claude" });
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    return root;
  }

  it("`uninstall hookify` with hookify@market installed suggests the id", async () => {
    await addMarket();
    expect((await cli(["install", "hookify@market"])).code).toBe(0);
    const un = await cli(["uninstall", "hookify"]);
    expect(un.code).toBe(1);
    expect(out(un)).toMatch(/ENOT_INSTALLED/);
    expect(out(un)).toMatch(/did you mean `hookify@market`\?/);
    expect(out(un)).toMatch(/xcsh-tools uninstall hookify@market/);
    const disable = await cli(["disable", "hookify"]);
    expect(disable.code).toBe(1);
    expect(out(disable)).toMatch(/ENOT_INSTALLED/);
    expect(out(disable)).toMatch(/did you mean `hookify@market`\?/);
  });

  it("`install hookify`, unknown to npm, offered by an added marketplace: did you mean hookify@market", async () => {
    const { useGlobalRegistry } = await import("../helpers/global-registry.js");
    const registry = await useGlobalRegistry();
    await addMarket();
    const before = await snapshotTree(w.xcshHome);
    const install = await cli(["install", "hookify", "--registry", registry.url]);
    expect(install.code).toBe(1);
    expect(out(install)).toMatch(/ENOT_FOUND/);
    expect(out(install)).toMatch(/did you mean `hookify@market`\? it is offered by an added marketplace/);
    expect(await snapshotTree(w.xcshHome)).toEqual(before);
  });

  it("enable/disable/uninstall of a plugin only Claude Code installed says it is Claude Code's (ECLAUDE_PLUGIN)", async () => {
    await addMarket();
    const dir = path.join(w.home, ".claude/plugins/cache/market/hookify/1.0.0");
    await writeTool(w, path.join(dir, "tools/cc.js"), "cc_tool");
    const other = path.join(w.home, ".claude/plugins/cache/claude-only/cc/1.0.0");
    await writeTool(w, path.join(other, "tools/cc.js"), "cc_tool");
    await w.write(path.join(w.home, ".claude/plugins/installed_plugins.json"), { version: 2, plugins: { "hookify@market": [installEntry(dir)], "cc@claude-only": [installEntry(other)] } });
    const claudeBefore = await snapshotTree(path.join(w.home, ".claude"));
    for (const args of [["disable", "cc@claude-only"], ["enable", "cc@claude-only"], ["disable", "hookify@market"], ["uninstall", "cc@claude-only"], ["uninstall", "hookify@market"]]) {
      const r = await cli([...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(1);
      expect(out(r), args.join(" ")).toMatch(/ECLAUDE_PLUGIN/);
      expect(out(r)).toMatch(new RegExp(`installed by Claude Code .*not by xcsh-tools: it is Claude Code's to ${args[0]}`));
    }
    const disable = await cli(["disable", "cc@claude-only"]);
    expect(out(disable)).toMatch(/"enabledPlugins": \{"cc@claude-only": false\}/);
    expect(await snapshotTree(path.join(w.home, ".claude"))).toEqual(claudeBefore);
  });

  it("`marketplace search ''` is a usage error", async () => {
    await addMarket();
    for (const query of [[""], ["  ", ""]]) {
      const r = await cli(["marketplace", "search", ...query]);
      expect(r.code).toBe(2);
      expect(out(r)).toMatch(/EUSAGE/);
      expect(out(r)).toMatch(/marketplace discover/);
    }
  });

  it("`marketplace remove` uninstalls the marketplace's plugins with it, and says so", async () => {
    await addMarket();
    expect((await cli(["install", "hookify@market"])).code).toBe(0);
    expect((await cli(["install", "hookify@market", "--scope", "project"])).code).toBe(0);
    const dry = await cli(["marketplace", "remove", "market", "--dry-run", "--json"]);
    expect(json(dry)).toMatchObject({ dryRun: true, uninstalled: ["hookify@market (user)", "hookify@market (project)"], stillInstalled: [] });
    const removed = await cli(["marketplace", "remove", "market"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/Uninstalled its plugins with it: hookify@market \(user\), hookify@market \(project\)/);
    expect(JSON.parse(await readFile(path.join(w.xcshHome, "plugins/installed_plugins.json"), "utf8")).plugins).toEqual({});
    expect(JSON.parse(await readFile(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), "utf8")).plugins).toEqual({});
    expect(await snapshotTree(path.join(w.xcshHome, "plugins/cache/plugins"))).toEqual({ ".": expect.stringMatching(/^dir/) });
    expect(json(await cli(["tools", "--json"])).tools).toEqual([]);
  });
});

describe("`list` shows Claude Code's plugins as its settings switch them", () => {
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
    await claudeCache();
  });

  it("enabled unless the nearest settings layer says false, naming that file", async () => {
    await settings("user", { "a@mkt": false, "b@mkt": false });
    await settings("local", { "b@mkt": true });
    const list = await cli(["list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(json(list).claudePlugins).toEqual([
      expect.objectContaining({ id: "a@mkt", enabled: false, decidedBy: path.join(w.home, ".claude/settings.json") }),
      expect.objectContaining({ id: "b@mkt", enabled: true }),
      expect.objectContaining({ id: "c@mkt", enabled: true }),
    ]);
    const human = await cli(["list"]);
    expect(human.stdout).toMatch(/Claude Code plugins/);
    expect(human.stdout).toMatch(/a@mkt 1\.0\.0 +disabled \(.*settings\.json\)/);
  });
});
