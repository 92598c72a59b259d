/**
 * npm plugins of a team set restored exactly as locked (docs/design/team-sets.md (c) "npm plugins,
 * precisely", (d) 4. and 6.): the plugin and its whole dependency closure at the locked versions and
 * bytes, fetched without packuments; a git plugin at its locked commit; our record of which
 * projects installed what (prune, personal installs kept, a version another project locks).
 *
 * Classes, each with hostile cases:
 * - the registry offers something newer or other than the lock: a newer dependency, other bytes for
 *   a locked dependency, a hand-edited dependency integrity, a user tree holding another version of
 *   a locked dependency — exactly the locked closure, or `EINTEGRITY` naming the lock field and
 *   nothing installed;
 * - the source moved after locking: a git branch moved on → the locked commit;
 * - requests: a cold and a warm restore fetch no packument; a registry without npm's tarball
 *   layout costs one packument per package;
 * - who keeps a plugin: another project, the user themselves, nobody (uninstalled); two projects
 *   locking two versions.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, realpath, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import * as tar from "tar";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadRegistryOptions } from "../../src/plugins/npmrc.js";
import { restoreTeamSet, type TeamWorld } from "../../src/teamset/index.js";
import { startGitHttpServer, type GitHttpServer } from "../helpers/git-http.js";
import { isolatedGitEnv, makeGitRemote, type GitRemote } from "../helpers/git-remote.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { marketplaceCtx } from "../helpers/marketplace-fixtures.js";
import { publishRaw } from "../helpers/publish-raw.js";
import { twoHomesBehindProxy, type ProxiedPair } from "../helpers/registry-proxy.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeTmpWorld, writeTrustRecord, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

const exec = promisify(execFile);
const git = (args: string[], cwd: string, env: NodeJS.ProcessEnv) => exec("git", args, { cwd, env });

/** The team world of a HOME at `root`: npm options from its .npmrc, consent given (`--yes`). */
async function teamWorld(w: TmpWorld, root: string): Promise<TeamWorld> {
  const registry = (await loadRegistryOptions({ home: w.home, env: {}, pluginsDir: path.join(w.xcshHome, "plugins") })).options;
  return { ctx: marketplaceCtx(w, { cwd: root, approveExecutables: async () => undefined }), npm: { registry, home: w.home, allowScripts: false } };
}

const restore = async (w: TmpWorld, root: string) => restoreTeamSet(root, { world: await teamWorld(w, root) });

const plugins = (w: TmpWorld) => path.join(w.xcshHome, "plugins");

/** The version of `dep` that Node's resolution finds from `plugin`'s folder in `w`'s plugins tree. */
async function versionSeenBy(w: TmpWorld, plugin: string, dep: string): Promise<string> {
  for (const dir of [path.join(plugins(w), "node_modules", plugin, "node_modules", dep), path.join(plugins(w), "node_modules", dep)]) {
    const text = await readFile(path.join(dir, "package.json"), "utf8").catch(() => undefined);
    if (text !== undefined) return JSON.parse(text).version;
  }
  return "missing";
}

const installedVersion = async (w: TmpWorld, name: string) => JSON.parse(await readFile(path.join(plugins(w), "node_modules", name, "package.json"), "utf8")).version;
const record = async (w: TmpWorld) => JSON.parse(await readFile(path.join(plugins(w), ".xcsh-tools", "installs.json"), "utf8"));
const dependencies = async (w: TmpWorld) => JSON.parse(await readFile(path.join(plugins(w), "package.json"), "utf8")).dependencies;

/** A project folder (not a repository: the record and the lock do not need one), trusted by `w`. */
async function project(w: TmpWorld, name: string, declared: Record<string, unknown>): Promise<string> {
  const root = path.join(w.root, name);
  await w.write(path.join(root, "xcsh-team.json"), { version: 1, plugins: declared });
  await w.write(path.join(root, ".xcsh", ".keep"), "");
  return root;
}

async function declare(root: string, declared: Record<string, unknown>): Promise<void> {
  await writeFile(path.join(root, "xcsh-team.json"), `${JSON.stringify({ version: 1, plugins: declared }, null, 2)}\n`);
}

/** The shared test registry (names of this file are unique per test: `tag()`). */
let reg: RegistryHandle & { dispose(): Promise<void> };
beforeAll(async () => {
  reg = await useGlobalRegistry();
});
afterAll(async () => {
  await reg.dispose();
});
let tags = 0;
const tag = () => `${Math.random().toString(36).slice(2, 7)}${(tags += 1)}`;

describe("team restore of npm plugins: the closure exactly as locked", () => {
  let a: TmpWorld;
  let b: TmpWorld;
  let pair: ProxiedPair | undefined;
  let requests: string[];
  let swap: ((url: string) => Buffer | undefined) | undefined;
  let plugin: string;
  let dep: string;
  let sub: string;

  const publishDep = (name: string, version: string, more: Record<string, unknown> = {}) =>
    reg.publish({ name, version, packageJson: { type: "module", ...more }, files: { "index.js": `export default ${JSON.stringify(version)};\n` } });

  beforeEach(async () => {
    const t = tag();
    plugin = `@teamnpm/p-${t}`;
    dep = `@teamnpm/dep-${t}`;
    sub = `@teamnpm/sub-${t}`;
    // A two-level closure: the plugin → dep → sub.
    await publishDep(sub, "1.0.0");
    await publishDep(dep, "1.0.0", { dependencies: { [sub]: "^1.0.0" } });
    await reg.publish({ name: plugin, version: "1.0.0", packageJson: { type: "module", dependencies: { [dep]: "^1.0.0" }, xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(plugin)) } });
    swap = undefined;
    // B reaches the registry through a proxy that counts what it asks for (and can serve other bytes).
    pair = await twoHomesBehindProxy(reg.url, "xcsh-teamnpm", () => swap);
    ({ a, b, requests } = pair);
  });
  afterEach(async () => {
    await pair?.dispose();
  });

  /** A locks the set in its project, B gets a copy of the project (declaration and lock); B's root. */
  async function lockInA(declared: Record<string, unknown> = { [plugin]: { spec: "^1.0.0" } }): Promise<{ root: string; lock: any }> {
    const rootA = await project(a, "project", declared);
    await writeTrustRecord(a.xcshHome, [rootA]);
    await restore(a, rootA);
    const lockText = await readFile(path.join(rootA, "xcsh-team.lock.json"), "utf8");
    const root = await project(b, "project", declared);
    await writeFile(path.join(root, "xcsh-team.lock.json"), lockText);
    await writeTrustRecord(b.xcshHome, [root]);
    return { root, lock: JSON.parse(lockText) };
  }

  /** Requests of packuments (anything but a tarball). */
  const packuments = () => requests.filter((r) => !/\/-\/[^/]+\.tgz$/.test(r));

  it("dependencies published after locking (dep 1.0.1, sub 1.0.1): B installs the locked 1.0.0 of each, and a second restore is a no-op", async () => {
    const { root, lock } = await lockInA();
    expect(Object.keys(lock.npm[plugin].dependencies).sort()).toEqual([`${dep}@1.0.0`, `${sub}@1.0.0`]);
    await publishDep(sub, "1.0.1");
    await publishDep(dep, "1.0.1", { dependencies: { [sub]: "^1.0.0" } });
    const report = await restore(b, root);
    expect(report).toMatchObject({ npmInstalled: [`${plugin}@1.0.0`], lockChanged: false, removed: [], versionMoves: [] });
    expect(await versionSeenBy(b, plugin, dep)).toBe("1.0.0");
    expect(await versionSeenBy(b, plugin, sub)).toBe("1.0.0");
    // The saved dependency is the locked version (the declared range would let npm move it).
    expect((await dependencies(b))[plugin]).toBe("1.0.0");
    const tree = await snapshotTree(plugins(b), { exclude: [".xcsh-tools"] });
    expect(await restore(b, root)).toMatchObject({ npmInstalled: [], written: [] });
    expect(await snapshotTree(plugins(b), { exclude: [".xcsh-tools"] })).toEqual(tree);
  });

  it("the user's tree already holds another version of a locked dependency at the top level: the plugin still gets the locked one, the user's stays", async () => {
    const { root } = await lockInA();
    await publishDep(dep, "1.0.1", { dependencies: { [sub]: "^1.0.0" } });
    const mine = `@teamnpm/mine-${tag()}`;
    await reg.publish({ name: mine, version: "1.0.0", packageJson: { type: "module", dependencies: { [dep]: "1.0.1" }, xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(mine)) } });
    const installed = await runCli(["install", mine, "--json"], { cwd: b.root, home: b.home });
    expect(installed.code, installed.stderr).toBe(0);
    expect(await versionSeenBy(b, mine, dep)).toBe("1.0.1");
    await restore(b, root);
    expect(await versionSeenBy(b, plugin, dep)).toBe("1.0.0");
    expect(await versionSeenBy(b, mine, dep)).toBe("1.0.1");
  });

  it("a closure holding two versions of one name (plugin → dep ^1, plugin → other → dep ^2): each package finds the version the lock gives it, though newer ones were published", async () => {
    const other = `@teamnpm/other-${tag()}`;
    const two = `@teamnpm/p2-${tag()}`;
    await publishDep(dep, "2.0.0", { dependencies: { [sub]: "^1.0.0" } });
    await publishDep(other, "1.0.0", { dependencies: { [dep]: "^2.0.0" } });
    await reg.publish({ name: two, version: "1.0.0", packageJson: { type: "module", dependencies: { [dep]: "^1.0.0", [other]: "^1.0.0" }, xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(two)) } });
    const { root, lock } = await lockInA({ [two]: { spec: "^1.0.0" } });
    expect(Object.keys(lock.npm[two].dependencies).sort()).toEqual([`${dep}@1.0.0`, `${dep}@2.0.0`, `${other}@1.0.0`, `${sub}@1.0.0`].sort());
    await publishDep(dep, "1.0.1", { dependencies: { [sub]: "^1.0.0" } });
    await publishDep(dep, "2.0.1", { dependencies: { [sub]: "^1.0.0" } });
    await restore(b, root);
    expect(await versionSeenBy(b, two, dep)).toBe("1.0.0");
    // What `other` finds, by Node's own resolution from its folder.
    const { createRequire } = await import("node:module");
    const otherDir = path.dirname(createRequire(path.join(plugins(b), "node_modules", two, "package.json")).resolve(`${other}/package.json`));
    expect(JSON.parse(await readFile(createRequire(path.join(otherDir, "package.json")).resolve(`${dep}/package.json`), "utf8")).version).toBe("2.0.0");
  });

  it("a locked plugin whose manifest names a dependency folder outside node_modules (alias key `../../escaped`): ESPEC naming the plugin, nothing written outside the plugins folder", async () => {
    const { root, lock } = await lockInA();
    const evil = `@teamnpm/evil-${tag()}`;
    const dir = path.join(b.root, "evil", "package");
    const manifest = { name: evil, version: "1.0.0", type: "module", dependencies: { "../../escaped": `npm:${dep}@^1.0.0` }, xcsh: { tools: "./t.js" } };
    await b.write(path.join(dir, "package.json"), manifest);
    await b.write(path.join(dir, "t.js"), toolSource(toolName(evil)));
    const tgz = path.join(b.root, "evil.tgz");
    await tar.c({ gzip: true, file: tgz, cwd: path.dirname(dir), portable: true }, ["package"]);
    const bytes = await readFile(tgz);
    await publishRaw(reg, evil, bytes, { manifest: { type: "module", dependencies: manifest.dependencies, xcsh: manifest.xcsh } });
    // A lock written by hand (no resolver would lock it): the evil plugin by its true integrity, with dep's closure.
    const locked = lock.npm[plugin];
    const handmade = { ...lock, npm: { [evil]: { version: "1.0.0", integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`, dependencies: locked.dependencies } } };
    await declare(root, { [evil]: { spec: "1.0.0" } });
    await writeFile(path.join(root, "xcsh-team.lock.json"), `${JSON.stringify(handmade, null, 2)}\n`);
    const outside = await snapshotTree(b.root, { exclude: ["home"] });
    const home = await snapshotTree(b.home, { exclude: [".npm"] });
    // npm's installer refuses the name (ESPEC naming the plugin); the synthesised package-lock never holds it either.
    await expect(restore(b, root)).rejects.toMatchObject({ code: "ESPEC", message: expect.stringContaining(`${evil}: Invalid package name "../../escaped"`) });
    expect(await snapshotTree(b.root, { exclude: ["home"] })).toEqual(outside);
    expect(await snapshotTree(b.home, { exclude: [".npm"] })).toEqual(home);
  });

  it("the registry serves other bytes for a locked dependency: EINTEGRITY naming /npm/<name>/dependencies/<dep@version> with expected and got, the plugins tree unchanged", async () => {
    const { root, lock } = await lockInA();
    const expected = lock.npm[plugin].dependencies[`${dep}@1.0.0`];
    // Other, valid package bytes (sub's tarball) for dep's tarball URL.
    const other = Buffer.from(await (await fetch(`${reg.url}${sub}/-/${sub.split("/")[1]}-1.0.0.tgz`)).arrayBuffer());
    swap = (url) => (decodeURIComponent(url).includes(`${dep.split("/")[1]}-1.0.0.tgz`) ? other : undefined);
    const before = await snapshotTree(b.home, { exclude: [".npm"] });
    const error = await restore(b, root).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "EINTEGRITY", file: path.join(root, "xcsh-team.lock.json"), path: `/npm/${plugin.replace("/", "~1")}/dependencies/${dep.replace("/", "~1")}@1.0.0` });
    expect((error as Error).message).toContain(`expected ${expected}, got sha512-`);
    expect(await snapshotTree(b.home, { exclude: [".npm"] })).toEqual(before);
  });

  it("a lock whose dependency integrity was edited by hand: EINTEGRITY naming that field, nothing installed", async () => {
    const { root, lock } = await lockInA();
    const forged = `sha512-${Buffer.alloc(64, 9).toString("base64")}`;
    lock.npm[plugin].dependencies[`${sub}@1.0.0`] = forged;
    await writeFile(path.join(root, "xcsh-team.lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
    const before = await snapshotTree(b.home, { exclude: [".npm"] });
    const error = await restore(b, root).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "EINTEGRITY", path: `/npm/${plugin.replace("/", "~1")}/dependencies/${sub.replace("/", "~1")}@1.0.0` });
    expect((error as Error).message).toContain(`expected ${forged}`);
    expect(await snapshotTree(b.home, { exclude: [".npm"] })).toEqual(before);
  });

  it("no packument is fetched: cold (empty npm cache) and warm (cache filled, plugins folder gone, not even a tarball request)", async () => {
    const { root } = await lockInA();
    await restore(b, root);
    expect(requests.length, "the cold restore fetched the tarballs").toBeGreaterThan(0);
    expect(packuments()).toEqual([]);
    requests = [];
    await rm(plugins(b), { recursive: true });
    await writeTrustRecord(b.xcshHome, [root]);
    const report = await restore(b, root);
    expect(report.npmInstalled).toEqual([`${plugin}@1.0.0`]);
    expect(requests).toEqual([]);
  });

  it("a registry that does not serve npm's tarball layout (404 at the derived URL): the packument's tarball URL is used, once per package", async () => {
    const { root } = await lockInA();
    const refused = new Set<string>();
    // Each tarball path answers 404 the first time (as a registry with another layout would), then its bytes.
    swap = (url) => {
      if (!/\.tgz$/.test(url) || refused.has(url)) return undefined;
      refused.add(url);
      return Buffer.alloc(0);
    };
    const report = await restore(b, root);
    expect(report.npmInstalled).toEqual([`${plugin}@1.0.0`]);
    expect(refused.size).toBe(3);
    expect(packuments().map((r) => decodeURIComponent(r).replace(/^GET \//, "")).sort()).toEqual([dep, plugin, sub].sort());
    expect(await versionSeenBy(b, plugin, sub)).toBe("1.0.0");
  });
});

describe("team restore of an npm plugin from git: the locked commit; install <git URL> --scope project", () => {
  let a: TmpWorld;
  let b: TmpWorld;
  let http: GitHttpServer;
  let repo: GitRemote;

  beforeEach(async () => {
    a = await makeTmpWorld("xcsh-teamnpm-git-a-");
    b = await makeTmpWorld("xcsh-teamnpm-git-b-");
    const served = path.join(a.root, "served");
    http = await startGitHttpServer(served);
    repo = await makeGitRemote(served, "git-plugin", { "package.json": { name: "git-plugin", version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } }, "t.js": toolSource("git_plugin") }, isolatedGitEnv(a.home));
  });
  afterEach(async () => {
    await http.close();
    await a.cleanup();
    await b.cleanup();
  });

  it("A locks the branch's commit; the branch moves on; B installs the locked commit, and again: a no-op", async () => {
    const declared = { "git-plugin": { spec: `git+${http.url}/git-plugin.git#main` } };
    const rootA = await project(a, "project", declared);
    await writeTrustRecord(a.xcshHome, [rootA]);
    await restore(a, rootA);
    const lockText = await readFile(path.join(rootA, "xcsh-team.lock.json"), "utf8");
    const locked = await repo.head();
    expect(JSON.parse(lockText).npm["git-plugin"]).toMatchObject({ version: "1.0.0", from: { kind: "git", url: `${http.url}/git-plugin.git`, commit: locked } });

    await repo.commit({ "package.json": { name: "git-plugin", version: "1.0.1", type: "module", xcsh: { tools: "./t.js" } }, "t.js": toolSource("git_plugin", "// moved on") });
    const root = await project(b, "project", declared);
    await writeFile(path.join(root, "xcsh-team.lock.json"), lockText);
    await writeTrustRecord(b.xcshHome, [root]);
    const report = await restore(b, root);
    expect(report).toMatchObject({ npmInstalled: ["git-plugin@1.0.0"], lockChanged: false });
    expect(await installedVersion(b, "git-plugin")).toBe("1.0.0");
    expect(await readFile(path.join(plugins(b), "node_modules", "git-plugin", "t.js"), "utf8")).not.toContain("moved on");
    expect((await dependencies(b))["git-plugin"]).toBe(`git+${http.url}/git-plugin.git#${locked}`);
    const tree = await snapshotTree(plugins(b), { exclude: [".xcsh-tools"] });
    expect(await restore(b, root)).toMatchObject({ npmInstalled: [], written: [] });
    expect(await snapshotTree(plugins(b), { exclude: [".xcsh-tools"] })).toEqual(tree);
  });

  it("the package's own name is the key, the URL the spec; the lock holds the commit; a file:// repository or a tarball file is refused, nothing written", async () => {
    const root = await project(a, "project", {});
    const cli = (args: string[]) => runCli(args, { cwd: root, home: a.home, env: isolatedGitEnv(a.home) });
    expect((await cli(["trust"])).code).toBe(0);
    const url = `git+${http.url}/git-plugin.git#main`;
    const installed = await cli(["install", url, "--scope", "project", "--yes"]);
    expect(installed.code, installed.stderr).toBe(0);
    expect(JSON.parse(await readFile(path.join(root, "xcsh-team.json"), "utf8")).plugins).toEqual({ "git-plugin": { spec: url } });
    expect(JSON.parse(await readFile(path.join(root, "xcsh-team.lock.json"), "utf8")).npm["git-plugin"]).toMatchObject({ version: "1.0.0", from: { kind: "git", url: `${http.url}/git-plugin.git`, commit: await repo.head() } });
    expect(await installedVersion(a, "git-plugin")).toBe("1.0.0");

    const before = await snapshotTree(root);
    for (const spec of [`git+file://${path.join(a.root, "served", "git-plugin.git")}`, "./some.tgz", `http://127.0.0.1:9/x.tgz`]) {
      const refused = await cli(["install", spec, "--scope", "project", "--yes"]);
      expect(refused.code, `${spec}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toMatch(/ETEAM_SPEC|EGIT_URL/);
      expect(refused.stderr).toContain(path.join(root, "xcsh-team.json"));
    }
    expect(await snapshotTree(root)).toEqual(before);
  });
});

describe("team restore of npm plugins: who keeps a plugin (our record)", () => {
  let w: TmpWorld;
  let p1: string;
  let p2: string;

  const publishPlugin = (name: string, version: string) => reg.publish({ name, version, packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(name)) } });

  beforeEach(async () => {
    const t = tag();
    p1 = `@teamkeep/p1-${t}`;
    p2 = `@teamkeep/p2-${t}`;
    for (const name of [p1, p2]) {
      await publishPlugin(name, "1.0.0");
      await publishPlugin(name, "1.1.0");
    }
    w = await makeTmpWorld("xcsh-teamkeep-");
    await writeUserNpmrc(w.home, reg.url);
  });
  afterEach(async () => {
    await w.cleanup();
  });

  it("a plugin the project no longer declares is uninstalled when no other project and not the user keeps it; one another project declares stays, losing this project", async () => {
    const p = await project(w, "p", { [p1]: { spec: "^1.0.0" }, [p2]: { spec: "^1.0.0" } });
    const q = await project(w, "q", { [p1]: { spec: "^1.0.0" } });
    await writeTrustRecord(w.xcshHome, [p, q]);
    await restore(w, p);
    await restore(w, q);
    const [rp, rq] = [await realpath(p), await realpath(q)];
    expect((await record(w)).plugins[p1]).toMatchObject({ team: { projects: { [rp]: "1.1.0", [rq]: "1.1.0" } } });
    expect((await record(w)).plugins[p1].personal).toBeUndefined();

    await declare(p, {});
    const report = await restore(w, p);
    expect(report.removed).toEqual([p2]);
    expect(Object.keys(await dependencies(w)).sort()).toEqual([p1]);
    const after = await record(w);
    expect(after.plugins[p2]).toBeUndefined();
    expect(after.plugins[p1].team).toEqual({ projects: { [rq]: "1.1.0" } });
    const runtime = JSON.parse(await readFile(path.join(w.xcshHome, "plugins", "xcsh-plugins.lock.json"), "utf8"));
    expect(Object.keys(runtime.plugins)).toEqual([p1]);

    // The last project leaves it: uninstalled too.
    await declare(q, {});
    expect((await restore(w, q)).removed).toEqual([p1]);
    expect(await dependencies(w)).toEqual({});
  });

  it("a plugin the user installed themselves is never removed: marked personal, the project only added and dropped from its record", async () => {
    const installed = await runCli(["install", p1, "--json"], { cwd: w.root, home: w.home });
    expect(installed.code, installed.stderr).toBe(0);
    expect((await record(w)).plugins[p1]).toMatchObject({ personal: true });
    const p = await project(w, "p", { [p1]: { spec: "^1.0.0" } });
    await writeTrustRecord(w.xcshHome, [p]);
    await restore(w, p);
    const rp = await realpath(p);
    expect((await record(w)).plugins[p1]).toMatchObject({ personal: true, team: { projects: { [rp]: "1.1.0" } } });

    await declare(p, {});
    const report = await restore(w, p);
    expect(report.removed).toEqual([]);
    expect(await installedVersion(w, p1)).toBe("1.1.0");
    const entry = (await record(w)).plugins[p1];
    expect(entry.personal).toBe(true);
    expect(entry.team).toBeUndefined();
  });

  it("two projects lock two versions: the restore moves the plugin and says which project locks the other version", async () => {
    const p = await project(w, "p", { [p1]: { spec: "1.0.0" } });
    const q = await project(w, "q", { [p1]: { spec: "^1.1.0" } });
    await writeTrustRecord(w.xcshHome, [p, q]);
    expect((await restore(w, p)).versionMoves).toEqual([]);
    expect(await installedVersion(w, p1)).toBe("1.0.0");
    const report = await restore(w, q);
    expect(await installedVersion(w, p1)).toBe("1.1.0");
    expect(report.versionMoves).toEqual([`moves ${p1} 1.0.0 → 1.1.0, which ${await realpath(p)} locks`]);
    expect((await record(w)).plugins[p1].team).toEqual({ projects: { [await realpath(p)]: "1.0.0", [await realpath(q)]: "1.1.0" } });
    // Restoring q again moves nothing, so says nothing; p moves it back and names q.
    expect((await restore(w, q)).versionMoves).toEqual([]);
    expect((await restore(w, p)).versionMoves).toEqual([`moves ${p1} 1.1.0 → 1.0.0, which ${await realpath(q)} locks`]);
  });
});
