/**
 * `update --scope project` and `outdated` against a team set's lock (docs/design/team-sets.md (d)),
 * and the marketplace sources a lock can now pin (url catalogs by sha256, catalogs in a folder of
 * a git repository, npm plugin sources), through the CLI as a user runs it: a temp HOME, the local
 * registry, bare git repositories served over loopback HTTP. Every refusal leaves every file as it was.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isolatedGitEnv, makeGitRemote, type GitRemote } from "../helpers/git-remote.js";
import { startGitHttpServer, type GitHttpServer } from "../helpers/git-http.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog, catalogPath, pluginFiles } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { worldPerTest, writeTrustRecord, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

const exec = promisify(execFile);
const LOCK = "xcsh-team.lock.json";
const DECLARATION = "xcsh-team.json";

/** The CLI in `cwd` as the world's user. */
const xcsh = (w: TmpWorld, cwd: string, args: string[]) => runCli(args, { cwd, home: w.home, timeoutMs: 120_000 });
const readJson = async (file: string) => JSON.parse(await readFile(file, "utf8"));
/** Everything a refusal must leave as it was: the project and the user's home (npm's own cache aside). */
const everything = (w: TmpWorld) => snapshotTree(w.root, { exclude: [".npm"] });

/**
 * This machine as if it had never restored the set: the generated registry emptied and the plugin
 * cache gone, so the next restore fetches and checks every byte (not a no-op, no folder to reuse).
 */
async function forgetRestored(w: TmpWorld, project: string): Promise<void> {
  await w.write(path.join(project, ".xcsh/plugins/installed_plugins.json"), { version: 2, plugins: {} });
  await rm(path.join(w.xcshHome, "plugins", "cache", "plugins"), { recursive: true, force: true });
}

/** A failed run's `--json` error, with the exit code. */
function refusal(r: Awaited<ReturnType<typeof xcsh>>): { code: number | null; error: { code: string; message: string; hint?: string; file?: string; path?: string } } {
  return { code: r.code, error: r.json().error };
}

describe("update --scope project / outdated: npm plugins of the set", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const tag = Math.random().toString(36).slice(2, 8);
  let n = 0;
  let w: TmpWorld;
  let project: string;
  let plugin: string;

  const publish = (version: string) => reg.publish({ name: plugin, version, packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(plugin)) } });
  const installed = async () => (await readJson(path.join(w.xcshHome, "plugins", "node_modules", plugin, "package.json"))).version;

  beforeAll(async () => {
    reg = await useGlobalRegistry();
  });
  afterAll(async () => {
    await reg.dispose();
  });
  worldPerTest((x) => (w = x), "xcsh-team-upd-");
  beforeEach(async () => {
    plugin = `@teamupd/p${n++}-${tag}`;
    project = w.cwd;
    await writeUserNpmrc(w.home, reg.url);
    await w.write(path.join(project, DECLARATION), { version: 1, plugins: { [plugin]: { spec: "^1.0.0" } } });
    await w.write(path.join(project, ".xcsh/.keep"), "");
  });

  /** Trust the project, publish 1.0.0 and lock it (`install` with no spec), then publish `more`. */
  async function lockAt100(...more: string[]): Promise<void> {
    await writeTrustRecord(w.xcshHome, [project]);
    await publish("1.0.0");
    const r = await xcsh(w, project, ["install", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect((await readJson(path.join(project, LOCK))).npm[plugin].version).toBe("1.0.0");
    for (const version of more) await publish(version);
  }

  it("moves the lock to the highest version the range allows and installs it; --latest goes beyond and rewrites the range to ^<latest>", async () => {
    await lockAt100("1.1.0", "2.0.0");
    const declared = await readFile(path.join(project, DECLARATION), "utf8");

    const r = await xcsh(w, project, ["update", "--scope", "project", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ ok: true, dryRun: false, declarationChanged: false, entries: [{ section: "npm", key: plugin, from: "1.0.0", to: "1.1.0" }], lockChanged: true });
    expect((await readJson(path.join(project, LOCK))).npm[plugin]).toMatchObject({ version: "1.1.0", integrity: expect.stringMatching(/^sha512-/) });
    expect(await installed()).toBe("1.1.0");
    expect(await readFile(path.join(project, DECLARATION), "utf8")).toBe(declared);

    const latest = await xcsh(w, project, ["update", "--scope", "project", "--latest", "--yes", "--json"]);
    expect(latest.code, latest.stderr).toBe(0);
    expect(latest.json()).toMatchObject({ declarationChanged: true, entries: [{ key: plugin, from: "1.1.0", to: "2.0.0", range: { from: "^1.0.0", to: "^2.0.0" } }] });
    expect((await readJson(path.join(project, DECLARATION))).plugins[plugin]).toEqual({ spec: "^2.0.0" });
    expect((await readJson(path.join(project, LOCK))).npm[plugin].version).toBe("2.0.0");
    expect(await installed()).toBe("2.0.0");
    // The committed pair agrees: CI's frozen restore accepts it as it is.
    const frozen = await xcsh(w, project, ["install", "--frozen", "--yes", "--json"]);
    expect(frozen.code, frozen.stderr).toBe(0);
  });

  it("--dry-run prints old → new per entry and writes nothing (with --latest neither)", async () => {
    await lockAt100("1.1.0", "2.0.0");
    const before = await everything(w);
    const r = await xcsh(w, project, ["update", "--scope", "project", "--dry-run", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ dryRun: true, entries: [{ key: plugin, from: "1.0.0", to: "1.1.0" }] });
    const human = await xcsh(w, project, ["update", "--scope", "project", "--latest", "--dry-run"]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("dry run");
    expect(human.stdout).toContain(`${plugin}  1.0.0 → 2.0.0; xcsh-team.json ^1.0.0 → ^2.0.0`);
    expect(await everything(w)).toEqual(before);
  });

  it("a name the set does not declare: ETEAM_NOT_DECLARED naming the file, exit 2, nothing written", async () => {
    await lockAt100("1.1.0");
    const before = await everything(w);
    for (const names of [["left-pad"], [plugin, "nope@acme"]]) {
      const r = await xcsh(w, project, ["update", "--scope", "project", ...names, "--yes", "--json"]);
      const { code, error } = refusal(r);
      expect(code).toBe(2);
      expect(error).toMatchObject({ code: "ETEAM_NOT_DECLARED", file: path.join(project, DECLARATION), path: `/plugins/${names.at(-1)}` });
      expect(error.hint).toContain("--scope project");
    }
    expect(await everything(w)).toEqual(before);
  });

  it("outdated: the set's rows (locked, wanted, latest, set: true) beside the user's, which are unchanged", async () => {
    await lockAt100("1.1.0", "2.0.0");
    const r = await xcsh(w, project, ["outdated", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.set).toEqual([{ set: true, section: "npm", key: plugin, declared: "^1.0.0", locked: "1.0.0", wanted: "1.1.0", latest: "2.0.0", outdated: true }]);
    // The user's rows: the plugin restore installed for this user, as before.
    expect(doc.plugins[plugin]).toMatchObject({ current: "1.0.0", latest: "2.0.0" });
    const human = await xcsh(w, project, ["outdated"]);
    expect(human.code, human.stderr).toBe(0);
    const row = human.stdout.split("\n").find((line) => line.startsWith(plugin) && line.includes("set"));
    expect(row?.split(/\s+/)).toEqual([plugin, "1.0.0", "1.1.0", "2.0.0", "^1.0.0", "set"]);
  });

  it("an untrusted project: outdated does not read its set and says so; update --scope project refuses before reading it", async () => {
    await publish("1.0.0");
    await writeTrustRecord(w.xcshHome, []);
    // A declaration that would not parse: reading it would throw its own code.
    await w.write(path.join(project, DECLARATION), "{ not json");
    const before = await everything(w);
    const r = await xcsh(w, project, ["outdated", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().set).toBeUndefined();
    expect(r.json().projectNotLoaded).toMatchObject({ reason: "not loaded: project not trusted", files: [path.join(project, DECLARATION)] });
    const human = await xcsh(w, project, ["outdated"]);
    expect(human.stdout).toContain("xcsh-team.json) not loaded: project not trusted");
    const u = await xcsh(w, project, ["update", "--scope", "project", "--json"]);
    expect(refusal(u)).toMatchObject({ code: 1, error: { code: "EUNTRUSTED_PROJECT" } });
    expect(await everything(w)).toEqual(before);
  });
});

describe("update --scope project / outdated: a git marketplace over http", () => {
  let w: TmpWorld;
  let http: GitHttpServer;
  let mkt: GitRemote;
  let project: string;

  worldPerTest((x) => (w = x), "xcsh-team-updm-");
  beforeEach(async () => {
    const served = path.join(w.root, "served");
    http = await startGitHttpServer(served);
    mkt = await makeGitRemote(served, "mkt", {
      [catalogPath()]: catalog("acme", [{ name: "inrepo", source: "./plugins/inrepo" }, { name: "other", source: "./plugins/other" }]),
      ...pluginFiles("plugins/inrepo", "inrepo", ["inrepo_tool"], { version: "1.0.0" }),
      ...pluginFiles("plugins/other", "other", ["other_tool"], { version: "0.1.0" }),
    }, isolatedGitEnv(w.home));
    project = w.cwd;
    await w.write(path.join(project, DECLARATION), { version: 1, marketplaces: { acme: { source: { source: "git", url: `${http.url}/mkt.git`, ref: "main" } } }, plugins: { "inrepo@acme": { version: "^1.0.0" } } });
    await w.write(path.join(project, ".xcsh/.keep"), "");
    await writeTrustRecord(w.xcshHome, [project]);
    const r = await xcsh(w, project, ["install", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
  });
  afterEach(async () => {
    await http.close();
  });

  it("the catalog moved (a new commit with a new version): outdated shows it; update moves the catalog commit, the version and the hash, and installs it", async () => {
    const before = await readJson(path.join(project, LOCK));
    const c1 = await mkt.head();
    expect(before.marketplaces.acme.commit).toBe(c1);
    const c2 = await mkt.commit(pluginFiles("plugins/inrepo", "inrepo", ["inrepo_tool"], { version: "1.1.0", text: "v1.1" }));

    // Without --scope, update leaves the set to its lock (the user's plugins only): it neither fails on the set's entries nor moves them.
    const lockText = await readFile(path.join(project, LOCK), "utf8");
    const registryText = await readFile(path.join(project, ".xcsh/plugins/installed_plugins.json"), "utf8");
    const plain = await xcsh(w, project, ["update"]);
    expect(plain.code, plain.stdout + plain.stderr).toBe(0);
    expect(plain.stdout).toContain("not updated here: xcsh-tools update --scope project");
    // outdated of a set's plugin by name: its set row, not the marketplace engine's "not registered".
    const one = await xcsh(w, project, ["outdated", "inrepo@acme", "--json"]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.json()).toMatchObject({ set: [{ key: "inrepo@acme", locked: "1.0.0", wanted: "1.1.0" }] });
    expect(one.json().marketplacePlugins ?? []).toEqual([]);
    // Named without --scope: refused with the command that moves it (not EMARKETPLACE_NOT_FOUND, not a move off the lock).
    const named = refusal(await xcsh(w, project, ["update", "inrepo@acme", "--json"]));
    expect(named).toMatchObject({ code: 2, error: { code: "EUSAGE", hint: expect.stringContaining("xcsh-tools update --scope project inrepo@acme") } });
    expect(await readFile(path.join(project, LOCK), "utf8")).toBe(lockText);
    expect(await readFile(path.join(project, ".xcsh/plugins/installed_plugins.json"), "utf8")).toBe(registryText);

    const o = await xcsh(w, project, ["outdated", "--json"]);
    expect(o.code, o.stderr).toBe(0);
    // The set's plugin is its row, checked against the lock: not also a project row of the marketplace engine (which knows no declared marketplace).
    expect(o.json().marketplacePlugins ?? []).toEqual([]);
    expect(o.json().set).toEqual([
      { set: true, section: "marketplaces", key: "acme", declared: "main", locked: c1, wanted: c2, latest: c2, outdated: true },
      { set: true, section: "marketplacePlugins", key: "inrepo@acme", declared: "^1.0.0", locked: "1.0.0", wanted: "1.1.0", latest: "1.1.0", outdated: true },
    ]);

    const r = await xcsh(w, project, ["update", "--scope", "project", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().entries).toEqual([
      { section: "marketplaces", key: "acme", from: c1, to: c2 },
      { section: "marketplacePlugins", key: "inrepo@acme", from: "1.0.0", to: "1.1.0" },
    ]);
    const after = await readJson(path.join(project, LOCK));
    expect(after.marketplaces.acme.commit).toBe(c2);
    expect(after.marketplacePlugins["inrepo@acme"].version).toBe("1.1.0");
    expect(after.marketplacePlugins["inrepo@acme"].hash).not.toBe(before.marketplacePlugins["inrepo@acme"].hash);
    const registry = await readJson(path.join(project, ".xcsh/plugins/installed_plugins.json"));
    expect(registry.plugins["inrepo@acme"][0].version).toBe("1.1.0");
    expect(await readFile(path.join(registry.plugins["inrepo@acme"][0].installPath, "tools", "inrepo_tool.mjs"), "utf8")).toContain("v1.1");
    // Nothing more to move: the same command again changes nothing.
    const again = await xcsh(w, project, ["update", "--scope", "project", "acme", "--yes", "--json"]);
    expect(again.json()).toMatchObject({ lockChanged: false, written: [] });
  });

  it("naming one plugin moves only its marketplace: another marketplace of the set keeps its locked commit though it moved too", async () => {
    const beta = await makeGitRemote(path.join(w.root, "served"), "beta", { [catalogPath()]: catalog("beta", [{ name: "b", source: "./plugins/b" }]), ...pluginFiles("plugins/b", "b", ["b_tool"], { version: "1.0.0" }) }, isolatedGitEnv(w.home));
    const declaration = await readJson(path.join(project, DECLARATION));
    declaration.marketplaces.beta = { source: { source: "git", url: `${http.url}/beta.git` } };
    declaration.plugins["b@beta"] = {};
    await w.write(path.join(project, DECLARATION), declaration);
    expect((await xcsh(w, project, ["install", "--yes", "--json"])).code).toBe(0);
    const locked = await readJson(path.join(project, LOCK));
    await mkt.commit(pluginFiles("plugins/inrepo", "inrepo", ["inrepo_tool"], { version: "1.1.0" }));
    const b2 = await beta.commit(pluginFiles("plugins/b", "b", ["b_tool"], { version: "1.0.1" }));

    const r = await xcsh(w, project, ["update", "--scope", "project", "b@beta", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().entries.map((e: { key: string; to: string }) => `${e.key} ${e.to}`)).toEqual([`beta ${b2}`, "b@beta 1.0.1"]);
    const after = await readJson(path.join(project, LOCK));
    expect(after.marketplaces.acme).toEqual(locked.marketplaces.acme);
    expect(after.marketplacePlugins["inrepo@acme"]).toEqual(locked.marketplacePlugins["inrepo@acme"]);
    expect(after.marketplacePlugins["b@beta"].version).toBe("1.0.1");
  });

  it("the new version runs a hook: without --yes and without a terminal EUNCONFIRMED listing it, the lock unchanged, nothing written, no code of it ran (not on --dry-run either)", async () => {
    const canary = path.join(w.root, "canary");
    await mkt.commit({
      "plugins/inrepo/.xcsh-plugin/plugin.json": { name: "inrepo", version: "1.1.0", description: "now with a hook" },
      "plugins/inrepo/hooks/hooks.json": { hooks: { SessionStart: [{ hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/scripts/hello.sh" }] }] } },
      "plugins/inrepo/scripts/hello.sh": "#!/bin/sh\necho hi\n",
      // Imported, this module would leave the canary: neither planning nor a refused consent imports plugin code.
      "plugins/inrepo/tools/inrepo_tool.mjs": `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(canary)}, "ran");\nexport default () => ({ name: "inrepo_tool", label: "t", description: "t", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } });\n`,
    });
    const before = await everything(w);
    const dry = await xcsh(w, project, ["update", "--scope", "project", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json().entries.at(-1)).toMatchObject({ key: "inrepo@acme", from: "1.0.0", to: "1.1.0" });
    const { code, error } = refusal(await xcsh(w, project, ["update", "--scope", "project", "--json"]));
    expect(code).toBe(1);
    expect(error.code).toBe("EUNCONFIRMED");
    expect(error.message).toContain("hello.sh");
    expect(await everything(w)).toEqual(before);
  });

  it("the moved catalog offers a version the declared range does not allow: ETEAM_UNSATISFIABLE naming the file, the field, the range and the version; nothing written", async () => {
    await mkt.commit(pluginFiles("plugins/inrepo", "inrepo", ["inrepo_tool"], { version: "2.0.0" }));
    const before = await everything(w);
    const r = await xcsh(w, project, ["update", "--scope", "project", "inrepo@acme", "--yes", "--json"]);
    const { code, error } = refusal(r);
    expect(code).toBe(1);
    expect(error).toMatchObject({ code: "ETEAM_UNSATISFIABLE", file: path.join(project, DECLARATION), path: "/plugins/inrepo@acme/version" });
    expect(error.message).toContain("offers inrepo@acme 2.0.0, which does not meet the declared range ^1.0.0");
    expect(await everything(w)).toEqual(before);
  });

  it("a plugin gone from the moved catalog: ETEAM_PLUGIN_DELISTED, the lock unchanged; install still restores the locked commit", async () => {
    await mkt.commit({ [catalogPath()]: catalog("acme", [{ name: "other", source: "./plugins/other" }]) });
    const lockText = await readFile(path.join(project, LOCK), "utf8");
    const before = await everything(w);
    const r = await xcsh(w, project, ["update", "--scope", "project", "--yes", "--json"]);
    const { code, error } = refusal(r);
    expect(code).toBe(1);
    expect(error).toMatchObject({ code: "ETEAM_PLUGIN_DELISTED", file: path.join(project, DECLARATION), path: "/plugins/inrepo@acme" });
    expect(error.hint).toContain("pin the marketplace's ref");
    expect(await everything(w)).toEqual(before);
    const o = await xcsh(w, project, ["outdated", "--json"]);
    expect(o.json().set.find((row: { key: string }) => row.key === "inrepo@acme")).toMatchObject({ locked: "1.0.0", latest: null, note: expect.stringContaining("no longer lists it") });
    const restore = await xcsh(w, project, ["install", "--frozen", "--yes", "--json"]);
    expect(restore.code, restore.stderr).toBe(0);
    expect(await readFile(path.join(project, LOCK), "utf8")).toBe(lockText);
  });
});

describe("marketplace sources a lock pins: url catalogs, catalogs in a folder of a repository, npm plugin sources", () => {
  let w: TmpWorld;
  let git: GitHttpServer;
  let web: TestHttpServer;
  let served: string;
  let project: string;

  worldPerTest((x) => (w = x), "xcsh-team-src-");
  beforeEach(async () => {
    served = path.join(w.root, "served");
    git = await startGitHttpServer(served);
    web = await startHttpServer();
    project = w.cwd;
    await w.write(path.join(project, ".xcsh/.keep"), "");
    await writeTrustRecord(w.xcshHome, [project]);
  });
  afterEach(async () => {
    await git.close();
    await web.close();
  });

  const declare = (marketplaces: Record<string, unknown>, plugins: Record<string, unknown>) => w.write(path.join(project, DECLARATION), { version: 1, marketplaces, plugins });

  it("a url catalog: locked by the sha256 of its bytes; other bytes at restore are EINTEGRITY naming /marketplaces/<name>/sha256, nothing written; update moves the sha256", async () => {
    await makeGitRemote(served, "ext", pluginFiles("", "ext", ["ext_tool"], { version: "1.0.0" }), isolatedGitEnv(w.home));
    const text = `${JSON.stringify(catalog("webcat", [{ name: "ext", source: { source: "url", url: `${git.url}/ext.git` } }]), null, 2)}\n`;
    web.set("/cat/marketplace.json", text);
    await declare({ webcat: { source: { source: "url", url: `${web.url}/cat/marketplace.json` } } }, { "ext@webcat": {} });
    const r = await xcsh(w, project, ["install", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const sha256 = createHash("sha256").update(text).digest("hex");
    const lock = await readJson(path.join(project, LOCK));
    expect(lock.marketplaces.webcat).toEqual({ sha256, source: { source: "url", url: `${web.url}/cat/marketplace.json` } });
    expect(lock.marketplacePlugins["ext@webcat"]).toMatchObject({ version: "1.0.0", from: { kind: "git", url: `${git.url}/ext.git` } });

    // The same catalog, one description more: other bytes than the lock's.
    const changed = `${JSON.stringify(catalog("webcat", [{ name: "ext", description: "changed", source: { source: "url", url: `${git.url}/ext.git` } }]), null, 2)}\n`;
    web.set("/cat/marketplace.json", changed);
    await forgetRestored(w, project);
    const before = await everything(w);
    const refused = refusal(await xcsh(w, project, ["install", "--yes", "--json"]));
    expect(refused.code).toBe(1);
    expect(refused.error).toMatchObject({ code: "EINTEGRITY", file: path.join(project, LOCK), path: "/marketplaces/webcat/sha256" });
    expect(refused.error.message).toContain(`expected ${sha256}, got ${createHash("sha256").update(changed).digest("hex")}`);
    expect(await everything(w)).toEqual(before);

    const u = await xcsh(w, project, ["update", "--scope", "project", "--yes", "--json"]);
    expect(u.code, u.stderr).toBe(0);
    expect((await readJson(path.join(project, LOCK))).marketplaces.webcat.sha256).toBe(createHash("sha256").update(changed).digest("hex"));
  });

  it("a catalog in a folder of a git repository (`path`, Claude Code's catalog-file form and the folder form): locked at the repository's commit, its relative plugins restored", async () => {
    const mkt = await makeGitRemote(served, "mono", {
      "README.md": "a monorepo\n",
      [`tools/market/${catalogPath("claude")}`]: catalog("mono", [{ name: "sub", source: "./plugins/sub" }]),
      ...pluginFiles("tools/market/plugins/sub", "sub", ["sub_tool"], { version: "1.2.0", flavour: "claude" }),
    }, isolatedGitEnv(w.home));
    for (const form of ["tools/market/.claude-plugin/marketplace.json", "./tools/market"]) {
      await declare({ mono: { source: { source: "git", url: `${git.url}/mono.git`, path: form } } }, { "sub@mono": {} });
      const r = await xcsh(w, project, ["install", "--yes", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const lock = await readJson(path.join(project, LOCK));
      expect(lock.marketplaces.mono.commit).toBe(await mkt.head());
      expect(lock.marketplacePlugins["sub@mono"]).toMatchObject({ version: "1.2.0", from: { kind: "relative", path: "./plugins/sub" } });
      const registry = await readJson(path.join(project, ".xcsh/plugins/installed_plugins.json"));
      expect(await readFile(path.join(registry.plugins["sub@mono"][0].installPath, "tools", "sub_tool.mjs"), "utf8")).toContain("sub_tool");
    }
  });

  it("a `path` that is no catalog folder of the repository (another file, a link out of it, a folder it lacks): refused with its code, nothing written", async () => {
    const outside = path.join(w.root, "outside");
    await w.write(path.join(outside, catalogPath()), catalog("mono", []));
    const mkt = await makeGitRemote(served, "mono", { [`tools/market/${catalogPath()}`]: catalog("mono", []) }, isolatedGitEnv(w.home));
    await symlink(outside, path.join(mkt.work, "escape"));
    await mkt.commit({});
    const cases: [string, string, number][] = [
      ["tools/market/catalog.json", "ETEAM_SOURCE", 2],
      ["escape", "ECATALOG_NOT_FOUND", 1],
      ["escape/.xcsh-plugin/marketplace.json", "ECATALOG_NOT_FOUND", 1],
      ["not/there", "ECATALOG_NOT_FOUND", 1],
    ];
    for (const [form, expected, exit] of cases) {
      await declare({ mono: { source: { source: "git", url: `${git.url}/mono.git`, path: form } } }, {});
      const before = await everything(w);
      const { code, error } = refusal(await xcsh(w, project, ["install", "--yes", "--json"]));
      expect({ code, error }, form).toMatchObject({ code: exit, error: { code: expected } });
      if (expected === "ECATALOG_NOT_FOUND") expect(error.message, form).toContain("is not a folder of the repository");
      expect(await everything(w), form).toEqual(before);
    }
  });
});

describe("an npm plugin source in a catalog: locked by version and integrity", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const pkg = `@teamupd/mp-${Math.random().toString(36).slice(2, 8)}`;
  let w: TmpWorld;
  const publish = (version: string) => reg.publish({ name: pkg, version, packageJson: {}, files: { ".xcsh-plugin/plugin.json": JSON.stringify({ name: "frompkg", version, description: "from npm" }), "skills/s/SKILL.md": `---\nname: s\ndescription: v${version}\n---\nv${version}\n` } });

  beforeAll(async () => {
    reg = await useGlobalRegistry();
    await publish("1.0.0");
  });
  afterAll(async () => {
    await reg.dispose();
  });
  worldPerTest((x) => (w = x), "xcsh-team-npmsrc-");

  it("restores the locked version though the catalog's range now allows a newer one; update moves it", async () => {
    await writeUserNpmrc(w.home, reg.url);
    const project = w.cwd;
    await w.write(path.join(project, `tools/market/${catalogPath()}`), catalog("in-repo", [{ name: "frompkg", source: { source: "npm", package: pkg, version: "^1.0.0" } }]));
    await w.write(path.join(project, DECLARATION), { version: 1, marketplaces: { "in-repo": { source: { source: "directory", path: "./tools/market" } } }, plugins: { "frompkg@in-repo": {} } });
    await w.write(path.join(project, ".xcsh/.keep"), "");
    await writeTrustRecord(w.xcshHome, [project]);
    const r = await xcsh(w, project, ["install", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const lock = await readJson(path.join(project, LOCK));
    expect(lock.marketplacePlugins["frompkg@in-repo"]).toMatchObject({ version: "1.0.0", from: { kind: "npm", package: pkg, version: "1.0.0", integrity: expect.stringMatching(/^sha512-/) } });

    await publish("1.1.0");
    // outdated: a marketplace that is a folder of the repository has no row of its own (it moves with the repository), its plugin has one.
    const outdated = await xcsh(w, project, ["outdated", "--json"]);
    expect(outdated.code, outdated.stderr).toBe(0);
    expect(outdated.json().set.map((row: { section: string; key: string }) => `${row.section} ${row.key}`)).toEqual(["marketplacePlugins frompkg@in-repo"]);
    // A restore from scratch (a machine that never restored): the locked 1.0.0, not the 1.1.0 the range now allows.
    await forgetRestored(w, project);
    const again = await xcsh(w, project, ["install", "--frozen", "--yes", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const registry = await readJson(path.join(project, ".xcsh/plugins/installed_plugins.json"));
    expect(registry.plugins["frompkg@in-repo"][0].version).toBe("1.0.0");

    const u = await xcsh(w, project, ["update", "--scope", "project", "--yes", "--json"]);
    expect(u.code, u.stderr).toBe(0);
    const moved = await readFile(path.join(project, LOCK), "utf8");
    const integrity = JSON.parse(moved).marketplacePlugins["frompkg@in-repo"].from.integrity;
    expect(JSON.parse(moved).marketplacePlugins["frompkg@in-repo"].from.version).toBe("1.1.0");

    // The registry serving other bytes than the locked integrity (as a republished package looks): refused before anything is installed.
    await writeFile(path.join(project, LOCK), moved.replace(integrity, `sha512-${Buffer.alloc(64, 7).toString("base64")}`));
    await forgetRestored(w, project);
    const before = await everything(w);
    const refused = refusal(await xcsh(w, project, ["install", "--yes", "--json"]));
    expect(refused).toMatchObject({ code: 1, error: { code: "EINTEGRITY" } });
    expect(await everything(w)).toEqual(before);
  });
});

/** A loopback https server with a certificate made for this test (the CLI child trusts it through NODE_EXTRA_CA_CERTS): a lock fetches archives over https only. */
async function startHttpsServer(dir: string): Promise<{ url: string; ca: string; set(pathname: string, body: Buffer): void; close(): Promise<void> }> {
  const key = path.join(dir, "key.pem");
  const ca = path.join(dir, "cert.pem");
  await exec("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", ca, "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"], { cwd: dir });
  const routes = new Map<string, Buffer>();
  const server = createHttpsServer({ key: await readFile(key), cert: await readFile(ca) }, (req, res) => {
    const body = routes.get(new URL(req.url ?? "/", "https://x").pathname);
    res.writeHead(body ? 200 : 404, { "content-type": "application/octet-stream" });
    res.end(body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca,
    set: (pathname, body) => routes.set(pathname, body),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A .tar.gz of a plugin folder holding `files` under `package/` (npm pack's layout). */
async function archiveOf(dir: string, files: Record<string, string | object>): Promise<Buffer> {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(dir, "package", rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
  await exec("tar", ["czf", "p.tar.gz", "package"], { cwd: dir });
  return readFile(path.join(dir, "p.tar.gz"));
}

describe("an archive plugin source in a catalog: locked by the sha256 of its bytes", () => {
  let w: TmpWorld;
  worldPerTest((x) => (w = x), "xcsh-team-arch-");

  const projectWith = async (url: string) => {
    const project = w.cwd;
    await w.write(path.join(project, `tools/market/${catalogPath()}`), catalog("in-repo", [{ name: "arch", source: { source: "archive", url } }]));
    await w.write(path.join(project, DECLARATION), { version: 1, marketplaces: { "in-repo": { source: { source: "directory", path: "./tools/market" } } }, plugins: { "arch@in-repo": {} } });
    await w.write(path.join(project, ".xcsh/.keep"), "");
    await writeTrustRecord(w.xcshHome, [project]);
    return project;
  };

  it("locks {url, sha256}; the server sending other bytes later is EINTEGRITY at restore, nothing written", async () => {
    const https = await startHttpsServer(await mkdtemp(path.join(w.root, "tls-")));
    try {
      const run = (project: string, args: string[]) => runCli(args, { cwd: project, home: w.home, env: { NODE_EXTRA_CA_CERTS: https.ca }, timeoutMs: 120_000 });
      const first = await archiveOf(await mkdtemp(path.join(w.root, "a1-")), pluginFiles("", "arch", ["arch_tool"], { version: "1.0.0" }));
      https.set("/p.tar.gz", first);
      const project = await projectWith(`${https.url}/p.tar.gz`);
      const r = await run(project, ["install", "--yes", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const sha256 = createHash("sha256").update(first).digest("hex");
      expect((await readJson(path.join(project, LOCK))).marketplacePlugins["arch@in-repo"]).toMatchObject({ version: "1.0.0", from: { kind: "archive", url: `${https.url}/p.tar.gz`, sha256 } });

      https.set("/p.tar.gz", await archiveOf(await mkdtemp(path.join(w.root, "a2-")), pluginFiles("", "arch", ["arch_tool"], { version: "1.0.0", text: "swapped" })));
      await forgetRestored(w, project);
      const before = await everything(w);
      const { code, error } = refusal(await run(project, ["install", "--yes", "--json"]));
      expect(code).toBe(1);
      expect(error.code).toBe("EINTEGRITY");
      expect(error.message).toContain(`expected ${sha256}`);
      expect(await everything(w)).toEqual(before);
    } finally {
      await https.close();
    }
  });

  it("an archive over plain http (a catalog in the repository may name one): ESOURCE_URL, a lock fetches over https only; nothing written", async () => {
    const web = await startHttpServer();
    try {
      web.set("/p.tar.gz", await archiveOf(await mkdtemp(path.join(w.root, "a-")), pluginFiles("", "arch", ["arch_tool"], { version: "1.0.0" })));
      const project = await projectWith(`${web.url}/p.tar.gz`);
      const before = await everything(w);
      const { code, error } = refusal(await xcsh(w, project, ["install", "--yes", "--json"]));
      expect(code).toBe(2);
      expect(error).toMatchObject({ code: "ESOURCE_URL", file: path.join(project, DECLARATION) });
      expect(error.message).toContain("is not https, which a team lock requires");
      expect(await everything(w)).toEqual(before);
    } finally {
      await web.close();
    }
  });
});
