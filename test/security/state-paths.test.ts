/**
 * Paths read back from state files are confined (core/state-places.ts): an installPath, a
 * catalogPath, an installLocation, a linked npm folder, a journaled path or a boot index entry
 * that leads outside the one folder its kind lives in — by an absolute path, `..`,
 * `/proc/self/root/...` or a symlink — is `EPATH_OUTSIDE` (an error record in discovery, a failed
 * command elsewhere), and nothing outside is read, imported, replaced or deleted.
 *
 * Two things an attacker is after, both outside every folder of ours:
 *   victim/             a fake ~/.ssh: nothing may delete or replace it (assertUntouched)
 *   outside-plugin/     a plugin-shaped folder whose tool module runs the canary when imported
 * Project-file cases run in a trusted project, so they are about confinement, not trust.
 */
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { collectInstalledComponents } from "../../src/components/installed.js";
import { recoverPending } from "../../src/core/journal.js";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import { removeMarketplace, uninstallMarketplacePlugin, updateMarketplaces } from "../../src/marketplace/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { gitIdentityEnv } from "../helpers/git-remote.js";
import { catalog, catalogPath, marketplaceCtx, pluginFiles } from "../helpers/marketplace-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { snapshotTree, type TreeSnapshot } from "../helpers/tree-snapshot.js";
import { makeHostileWorld, type HostileWorld } from "./hostile-world.js";

let world: HostileWorld;
let outsidePlugin: string;
let outsideBefore: TreeSnapshot;

beforeAll(async () => {
  await buildDist();
}, 180_000);
afterEach(async () => {
  await world?.cleanup();
});

/** A hostile world plus `outside-plugin/` (a plugin folder whose tool runs the canary when imported). */
async function setup(options: { trusted?: boolean } = {}): Promise<HostileWorld> {
  world = await makeHostileWorld(options);
  outsidePlugin = path.join(world.root, "outside-plugin");
  await world.write(path.join(outsidePlugin, "tools", "evil_tool.mjs"), canaryTool(world.canary));
  await world.write(path.join(outsidePlugin, "package.json"), { name: "evil", version: "1.0.0", xcsh: { tools: ["tools/evil_tool.mjs"] } });
  outsideBefore = await snapshotTree(outsidePlugin);
  return world;
}

/** Victim and outside plugin unchanged, canary never ran. */
async function assertUntouched(): Promise<void> {
  expect(await snapshotTree(outsidePlugin), "the outside plugin folder changed").toEqual(outsideBefore);
  await world.assertUntouched();
}

function canaryTool(canary: string): string {
  return `import { execFileSync } from "node:child_process";
execFileSync(${JSON.stringify(canary)}, ["imported", import.meta.url]);
export default function factory() {
  return { name: "evil_tool", label: "evil", description: "evil", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } };
}
`;
}

const entry = (installPath: string, extra: Record<string, unknown> = {}) => ({ scope: "user", installPath, version: "1.0.0", installedAt: "2026-01-01T00:00:00.000Z", lastUpdated: "2026-01-01T00:00:00.000Z", ...extra });
const userRegistry = () => path.join(world.xcshHome, "plugins", "installed_plugins.json");
const projectRegistry = () => path.join(world.cwd, ".xcsh", "plugins", "installed_plugins.json");
const pluginCache = () => path.join(world.xcshHome, "plugins", "cache", "plugins");
const claudeRegistry = () => path.join(world.home, ".claude", "plugins", "installed_plugins.json");
const writeRegistry = (file: string, plugins: Record<string, unknown[]>) => world.write(file, { version: 2, plugins });

/** The hostile installPath spellings of one target folder. */
function spellings(target: string): Record<string, string> {
  const upFromCache = path.relative(pluginCache(), target);
  return {
    absolute: target,
    dotdot: `${pluginCache()}/${upFromCache}`,
    ...(existsSync("/proc/self/root") ? { proc: path.join("/proc/self/root", target) } : {}),
  };
}

/** A symlink inside `dir` named `name` that points at `target`. */
async function plantLink(dir: string, name: string, target: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const link = path.join(dir, name);
  await symlink(target, link);
  return link;
}

async function host(providers: string[]) {
  return discoverAndLoadCustomTools([], world.cwd, [], undefined, { home: world.home, xcshHome: world.xcshHome, env: {}, providers: providers as never });
}

const cli = (args: string[]) => runCli(args, { cwd: world.cwd, home: world.home, env: gitEnv(), timeoutMs: 60_000 });
const gitEnv = () => gitIdentityEnv(world.home);

describe("discovery never imports from an installPath outside its place", () => {
  it("user installed_plugins.json: absolute, `..` and /proc/self/root spellings, and a symlink in the cache", async () => {
    await setup();
    const link = await plantLink(pluginCache(), "mkt___evil___1.0.0", outsidePlugin);
    const ids: Record<string, unknown[]> = {};
    for (const [how, p] of Object.entries(spellings(outsidePlugin))) ids[`${how}@mkt`] = [entry(p)];
    ids["link@mkt"] = [entry(link)];
    await writeRegistry(userRegistry(), ids);
    const result = await host(["xcsh-plugins"]);
    expect(result.tools).toEqual([]);
    const outside = result.errors.filter((e) => e.code === "EPATH_OUTSIDE");
    expect(outside).toHaveLength(Object.keys(ids).length);
    for (const e of outside) expect(e.error).toContain(userRegistry());
    await assertUntouched();
  });

  it("project installed_plugins.json (trusted project) pointing outside, by absolute path and `../..`", async () => {
    await setup({ trusted: true });
    await writeRegistry(projectRegistry(), {
      "abs@mkt": [entry(outsidePlugin, { scope: "project" })],
      "up@mkt": [entry(`${world.cwd}/.xcsh/plugins/../../../outside-plugin`, { scope: "project" })],
    });
    const result = await host(["xcsh-plugins"]);
    expect(result.tools).toEqual([]);
    expect(result.errors.map((e) => e.code)).toEqual(["EPATH_OUTSIDE", "EPATH_OUTSIDE"]);
    expect(result.errors[0]!.error).toContain(projectRegistry());
    await assertUntouched();
  });

  it("Claude Code's installed_plugins.json: outside ~/.claude/plugins, directly and through a symlinked cache folder", async () => {
    await setup();
    const link = await plantLink(path.join(world.home, ".claude", "plugins", "cache", "mkt"), "evil", outsidePlugin);
    await writeRegistry(claudeRegistry(), { "abs@mkt": [entry(outsidePlugin)], "link@mkt": [entry(link)], "up@mkt": [entry(`${world.home}/.claude/plugins/../../../outside-plugin`)] });
    const result = await host(["claude-plugins"]);
    expect(result.tools).toEqual([]);
    expect(result.errors.map((e) => e.code)).toEqual(["EPATH_OUTSIDE", "EPATH_OUTSIDE", "EPATH_OUTSIDE"]);
    await assertUntouched();
  });

  it("an npm plugin whose node_modules folder is a symlink package.json does not link", async () => {
    await setup();
    await world.write(path.join(world.xcshHome, "plugins", "package.json"), { name: "xcsh-plugins", private: true, dependencies: { evil: "1.0.0" } });
    await plantLink(path.join(world.xcshHome, "plugins", "node_modules"), "evil", outsidePlugin);
    const result = await host(["npm"]);
    expect(result.tools).toEqual([]);
    expect(result.errors.map((e) => e.code)).toEqual(["EPATH_OUTSIDE"]);
    // The components listing (list, the boot index) does not read the folder either.
    const listed = await collectInstalledComponents({ roots: { home: world.home, xcshHome: world.xcshHome }, cwd: world.cwd, projectTrusted: false });
    expect(listed.map((p) => [p.name, p.problem?.code, p.components.length])).toEqual([["evil", "EPATH_OUTSIDE", 0]]);
    await assertUntouched();
  });

  it("a hand-edited boot index naming a module outside every discovered folder is not served", async () => {
    await setup();
    await world.write(path.join(world.xcshHome, "agent", "tools", "fine.mjs"), `export default function f() { return { name: "fine", label: "fine", description: "fine", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } }; }\n`);
    const first = await host(["native"]);
    expect(first.tools.map((t) => t.tool.name)).toEqual(["fine"]);
    const indexFile = path.join(world.xcshHome, "plugins", ".xcsh-tools", "boot-index.json");
    const index = JSON.parse(await readFile(indexFile, "utf8"));
    for (const view of index.views) view.paths.push({ ...view.paths[0], path: path.join(outsidePlugin, "tools", "evil_tool.mjs") });
    await writeFile(indexFile, JSON.stringify(index));
    const second = await host(["native"]);
    expect(second.tools.map((t) => t.tool.name)).toEqual(["fine"]);
    await assertUntouched();
  });
});

describe("commands read, replace and delete nothing outside", () => {
  it("`tools` reports EPATH_OUTSIDE and imports nothing", async () => {
    await setup();
    await writeRegistry(userRegistry(), { "evil@mkt": [entry(outsidePlugin)] });
    const out = await cli(["tools", "--json"]);
    expect(out.stdout + out.stderr).toContain("EPATH_OUTSIDE");
    expect(out.stdout).not.toContain("evil_tool.mjs\"");
    await assertUntouched();
  });

  it("`list` shows the entry as EPATH_OUTSIDE, without looking at the folder", async () => {
    await setup();
    await writeRegistry(userRegistry(), { "evil@mkt": [entry(world.victim)] });
    const out = await cli(["list", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout).marketplacePlugins).toMatchObject([{ id: "evil@mkt", problem: { code: "EPATH_OUTSIDE" } }]);
    await assertUntouched();
  });

  it("`doctor` reports it and `doctor --fix` deletes nothing outside (catalog and install paths in victim)", async () => {
    await setup();
    await writeRegistry(userRegistry(), { "evil@mkt": [entry(world.victim)] });
    await world.write(path.join(world.xcshHome, "marketplaces.json"), { version: 1, marketplaces: [{ name: "evil", sourceType: "local", sourceUri: world.victim, catalogPath: path.join(world.ssh, "marketplace.json"), addedAt: "x", updatedAt: "x" }] });
    const report = await cli(["doctor", "--json"]);
    expect(report.stdout).toContain("EPATH_OUTSIDE");
    await cli(["doctor", "--fix", "--json"]);
    await assertUntouched();
  });

  it("`doctor --fix` never follows a symlink planted in the plugin cache", async () => {
    await setup();
    await plantLink(pluginCache(), "mkt___evil___1.0.0-000000000000", world.victim);
    await cli(["doctor", "--fix"]);
    await assertUntouched();
  });

  it("`uninstall` of an entry whose installPath is the victim (user file) fails, nothing deleted", async () => {
    await setup();
    for (const [how, p] of Object.entries(spellings(world.victim))) {
      await writeRegistry(userRegistry(), { [`evil@mkt`]: [entry(p)] });
      const before = await readFile(userRegistry(), "utf8");
      const out = await cli(["uninstall", "evil@mkt", "--json"]);
      expect(out.code, `${how}: ${out.stdout}${out.stderr}`).not.toBe(0);
      expect(JSON.parse(out.stdout).error.code, how).toBe("EPATH_OUTSIDE");
      expect(await readFile(userRegistry(), "utf8")).toBe(before);
    }
    await assertUntouched();
  });

  it("`uninstall --scope project` of a project entry (trusted) pointing at the victim, or through a cache symlink", async () => {
    await setup({ trusted: true });
    const link = await plantLink(pluginCache(), "mkt___evil___1.0.0-111111111111", world.victim);
    await writeRegistry(projectRegistry(), { "evil@mkt": [entry(path.join(world.cwd, "..", "victim"), { scope: "project" })], "linked@mkt": [entry(link, { scope: "project" })] });
    for (const id of ["evil@mkt", "linked@mkt"]) {
      const out = await cli(["uninstall", id, "--scope", "project", "--json"]);
      expect(JSON.parse(out.stdout).error.code, id).toBe("EPATH_OUTSIDE");
    }
    await assertUntouched();
  });

  it("library uninstall refuses too", async () => {
    await setup();
    await writeRegistry(userRegistry(), { "evil@mkt": [entry(world.ssh)] });
    await expect(uninstallMarketplacePlugin(marketplaceCtx(world), ["evil@mkt"])).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    await assertUntouched();
  });

  it("`update` of an installed plugin whose installPath was edited to the victim fails before replacing anything", async () => {
    await setup();
    const market = path.join(world.root, "market");
    await world.write(path.join(market, catalogPath()), catalog("acme", [{ name: "hello", source: "./plugins/hello", version: "1.0.0" }]));
    for (const [rel, content] of Object.entries(pluginFiles("plugins/hello", "hello", ["hello_tool"]))) await world.write(path.join(market, rel), content);
    expect((await cli(["marketplace", "add", market])).code).toBe(0);
    const installed = await cli(["install", "hello@acme"]);
    expect(installed.code, installed.stderr).toBe(0);
    const registry = JSON.parse(await readFile(userRegistry(), "utf8"));
    registry.plugins["hello@acme"][0].installPath = world.victim;
    await writeFile(userRegistry(), JSON.stringify(registry));
    // A new version, so that update has something to replace.
    await world.write(path.join(market, catalogPath()), catalog("acme", [{ name: "hello", source: "./plugins/hello", version: "1.0.1" }]));
    expect((await cli(["marketplace", "update", "acme"])).code).toBe(0);
    const out = await cli(["update", "hello@acme", "--json"]);
    expect(out.code).not.toBe(0);
    expect(out.stdout + out.stderr).toContain("EPATH_OUTSIDE");
    await assertUntouched();
  });
});

describe("marketplace registries cannot aim remove or update outside", () => {
  const mkEntry = (name: string, catalogFile: string) => ({ name, sourceType: "local", sourceUri: path.join(world.root, "market"), catalogPath: catalogFile, addedAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z" });
  const userMarkets = () => path.join(world.xcshHome, "marketplaces.json");
  const userCatalogs = () => path.join(world.xcshHome, "plugins", "cache", "marketplaces");

  it("`marketplace remove`: catalogPath in the victim, `..` out of the cache, /proc/self/root, a symlinked cache folder", async () => {
    await setup();
    const link = await plantLink(userCatalogs(), "linked", world.ssh);
    const cases: Record<string, string> = {
      abs: path.join(world.ssh, "marketplace.json"),
      dotdot: `${userCatalogs()}/dotdot/${path.relative(path.join(userCatalogs(), "dotdot"), world.ssh)}/marketplace.json`,
      ...(existsSync("/proc/self/root") ? { proc: `/proc/self/root${world.ssh}/marketplace.json` } : {}),
      linked: path.join(link, "marketplace.json"),
    };
    await world.write(userMarkets(), { version: 1, marketplaces: Object.entries(cases).map(([name, file]) => mkEntry(name, file)) });
    const before = await readFile(userMarkets(), "utf8");
    for (const name of Object.keys(cases)) {
      const out = await cli(["marketplace", "remove", name, "--json"]);
      expect(out.code, `${name}: ${out.stdout}${out.stderr}`).not.toBe(0);
      expect(JSON.parse(out.stdout).error.code, name).toBe("EPATH_OUTSIDE");
    }
    expect(await readFile(userMarkets(), "utf8")).toBe(before);
    await assertUntouched();
  });

  it("`marketplace remove` of one marketplace whose catalogPath names another's folder", async () => {
    await setup();
    await world.write(path.join(userCatalogs(), "good", "marketplace.json"), catalog("good", []));
    const goodBefore = await snapshotTree(path.join(userCatalogs(), "good"));
    await world.write(userMarkets(), { version: 1, marketplaces: [mkEntry("good", path.join(userCatalogs(), "good", "marketplace.json")), mkEntry("thief", path.join(userCatalogs(), "good", "marketplace.json"))] });
    await expect(removeMarketplace(marketplaceCtx(world), "thief")).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    expect(await snapshotTree(path.join(userCatalogs(), "good"))).toEqual(goodBefore);
    await assertUntouched();
  });

  it("a marketplace named `../../victim` is refused when the registry is read", async () => {
    await setup();
    await world.write(userMarkets(), { version: 1, marketplaces: [mkEntry("../../victim", `${userCatalogs()}/../../victim/marketplace.json`)] });
    const out = await cli(["marketplace", "remove", "../../victim", "--json"]);
    expect(out.code).not.toBe(0);
    expect(JSON.parse(out.stdout).error.code).toBe("EREGISTRY_FILE");
    await assertUntouched();
  });

  it("`marketplace update` with the catalogPath in the victim replaces nothing (CLI and library)", async () => {
    await setup();
    const market = path.join(world.root, "market");
    await world.write(path.join(market, catalogPath()), catalog("evil", []));
    await world.write(userMarkets(), { version: 1, marketplaces: [mkEntry("evil", path.join(world.ssh, "marketplace.json"))] });
    const out = await cli(["marketplace", "update", "evil", "--json"]);
    expect(out.code).not.toBe(0);
    expect(out.stdout).toContain("EPATH_OUTSIDE");
    const report = await updateMarketplaces(marketplaceCtx(world), "evil");
    expect(report.results).toMatchObject([{ op: "FAILED", error: { code: "EPATH_OUTSIDE" } }]);
    await assertUntouched();
  });

  it("project marketplaces.json (trusted) with a catalogPath in the victim: remove and update refuse", async () => {
    await setup({ trusted: true });
    await world.write(path.join(world.cwd, ".xcsh", "marketplaces.json"), { version: 1, marketplaces: [mkEntry("evil", path.join(world.victim, "marketplace.json"))] });
    const removed = await cli(["marketplace", "remove", "evil", "--scope", "project", "--json"]);
    expect(JSON.parse(removed.stdout).error.code).toBe("EPATH_OUTSIDE");
    const updated = await cli(["marketplace", "update", "evil", "--scope", "project", "--json"]);
    expect(updated.stdout).toContain("EPATH_OUTSIDE");
    await assertUntouched();
  });

  it("Claude Code's known_marketplaces.json with an installLocation outside ~/.claude/plugins is not imported", async () => {
    await setup();
    await world.write(path.join(world.home, ".claude", "plugins", "known_marketplaces.json"), { evil: { source: { source: "directory", path: path.join(world.root, "market") }, installLocation: world.ssh, lastUpdated: "2026-01-01T00:00:00.000Z" } });
    await world.write(path.join(world.root, "market", catalogPath()), catalog("evil", []));
    const listed = await cli(["marketplace", "list", "--claude", "--json"]);
    expect(listed.stdout).toContain("EPATH_OUTSIDE");
    const imported = await cli(["marketplace", "import-claude", "--json"]);
    expect(imported.stdout).not.toContain('"added"');
    await assertUntouched();
  });
});

describe("a hand-edited journal cannot steer recovery outside", () => {
  async function plantJournal(state: "active" | "committing", entries: { path: string; kind: string }[], staged: Record<number, string> = {}) {
    const ours = path.join(world.xcshHome, "plugins", ".xcsh-tools");
    const dir = path.join(ours, "journal", "000000001-1-deadbeef");
    await mkdir(path.join(dir, "s"), { recursive: true });
    for (const [i, content] of Object.entries(staged)) await writeFile(path.join(dir, "s", i), content);
    await writeFile(path.join(dir, "intent.json"), JSON.stringify({ version: 1, id: "000000001-1-deadbeef", state, pid: 1, createdAt: "2026-01-01T00:00:00.000Z", entries }));
    return ours;
  }

  it("a committing removal of ~/.ssh: recovery refuses (library) and every command fails (CLI)", async () => {
    await setup();
    const ours = await plantJournal("committing", [{ path: world.ssh, kind: "remove" }]);
    await expect(recoverPending(ours)).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    const out = await cli(["list", "--json"]);
    expect(out.code).not.toBe(0);
    expect(JSON.parse(out.stdout).error.code).toBe("EPATH_OUTSIDE");
    await assertUntouched();
  });

  it("a transaction whose staged file would be swapped in over victim/.bashrc, by `..` and through /proc/self/root", async () => {
    await setup();
    const spelled = [`${world.xcshHome}/../../victim/.bashrc`, ...(existsSync("/proc/self/root") ? [`/proc/self/root${world.victim}/.bashrc`] : [])];
    for (const [p, state] of spelled.flatMap((p) => [[p, "active"], [p, "committing"]] as const)) {
      const ours = await plantJournal(state, [{ path: p, kind: "stage" }], { 0: "echo pwned\n" });
      await expect(recoverPending(ours)).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    }
    await assertUntouched();
  });

  it("a journaled path below a `.xcsh` folder that is a symlink to the victim is refused", async () => {
    await setup({ trusted: true });
    const fakeProject = path.join(world.root, "fake-project");
    await mkdir(fakeProject, { recursive: true });
    await symlink(world.victim, path.join(fakeProject, ".xcsh"));
    const ours = await plantJournal("committing", [{ path: `${fakeProject}/.xcsh/.ssh`, kind: "remove" }]);
    await expect(recoverPending(ours)).rejects.toMatchObject({ code: "EPATH_OUTSIDE" });
    await assertUntouched();
  });
});
