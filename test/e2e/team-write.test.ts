/**
 * Write-through of team sets, the CLI as a process (docs/design/team-sets.md (d) "--scope project
 * changes"): in a trusted git repository every `--scope project` change edits xcsh-team.json and
 * restores, the committed files stay canonical and free of anything machine-specific, and git sees
 * only them (and `.xcsh/.gitignore`) change; `--scope local` writes the personal file only, and
 * `list` says who decided. A refused change (consent, a machine path, a secret) leaves the
 * declaration and the lock byte for byte as they were.
 */
import { readdir, readFile, rm, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { formatDeclaration, formatLock, parseLock } from "../../src/teamset/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { projectCli } from "../helpers/project-cli.js";
import { worldPerTest, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { toolName, toolSource } from "../integration/plugins-fixtures.js";

vi.setConfig({ testTimeout: 300_000 });

let reg: RegistryHandle & { dispose(): Promise<void> };
const tag = Math.random().toString(36).slice(2, 8);
const P1 = `@teamw/p1-${tag}`;
const P1_TOOL = toolName(P1);

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  await reg.publish({
    name: P1,
    version: "1.0.0",
    packageJson: {
      type: "module",
      xcsh: {
        tools: "./base.js",
        features: { web: { description: "web", default: true, tools: ["./web.js"] }, cache: { description: "cache", default: false, tools: ["./cache.js"] } },
        settings: { limit: { type: "number", default: 10 }, apiKey: { type: "string", secret: true } },
      },
    },
    files: { "base.js": toolSource(P1_TOOL), "web.js": toolSource(`${P1_TOOL}_web`), "cache.js": toolSource(`${P1_TOOL}_cache`) },
  });
});
afterAll(async () => {
  await reg?.dispose();
});

let w: TmpWorld;
worldPerTest((x) => (w = x), "xcsh-team-write-");

const { git, cli, ok } = projectCli(() => w);
const read = (file: string) => readFile(path.join(w.cwd, file), "utf8").catch(() => undefined);
const declaration = async () => JSON.parse((await read("xcsh-team.json"))!);
const lock = async () => JSON.parse((await read("xcsh-team.lock.json"))!);

/** The committed files are exactly their canonical bytes and name nothing of this machine or this moment. */
async function expectCommittable(): Promise<void> {
  const decl = (await read("xcsh-team.json"))!;
  const locked = (await read("xcsh-team.lock.json"))!;
  expect(formatDeclaration(JSON.parse(decl))).toBe(decl);
  expect(formatLock(parseLock(locked))).toBe(locked);
  for (const text of [decl, locked]) {
    expect(text).not.toContain(w.root);
    expect(text).not.toContain(w.home);
    expect(text).not.toMatch(/"\/|"[A-Za-z]:\\\\|"~/); // no absolute or home-relative path as a value
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/); // no time
    expect(text).not.toContain("127.0.0.1"); // no registry of this machine
  }
}

/** What git sees as new or changed (every untracked file listed). */
async function gitChanges(): Promise<string[]> {
  return (await git(["status", "--porcelain", "--untracked-files=all"])).split("\n").filter(Boolean).map((l) => l.slice(3)).sort();
}

/** The bytes of the committed files, to compare after a refused change. */
async function committed() {
  return { decl: await read("xcsh-team.json"), lock: await read("xcsh-team.lock.json") };
}

beforeEach(async () => {
  await writeUserNpmrc(w.home, reg.url);
  // A repository with a directory marketplace inside it: `x` runs a hook (consent), `old` is to be switched off.
  const mkt = "tools/mkt";
  await w.write(path.join(w.cwd, mkt, catalogPath()), catalog("mkt", [
    { name: "x", source: "./plugins/x", version: "1.0.0" },
    { name: "old", source: "./plugins/old", version: "0.1.0" },
  ]));
  await w.write(path.join(w.cwd, mkt, "plugins/x/.xcsh-plugin/plugin.json"), { name: "x", version: "1.0.0", description: "x" });
  await w.write(path.join(w.cwd, mkt, "plugins/x/hooks/hooks.json"), { hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo hi" }] }] } });
  await w.write(path.join(w.cwd, mkt, "plugins/old/.xcsh-plugin/plugin.json"), { name: "old", version: "0.1.0", description: "old" });
  await git(["init", "-q", "-b", "main"]);
  await git(["add", "-A"]);
  await git(["commit", "-q", "-m", "the project"]);
  await ok(["trust"]);
});

describe("--scope project writes xcsh-team.json and restores", () => {
  it("marketplace add, install (marketplace and npm), disable, features, config set: canonical committed files, git sees only them", async () => {
    // A folder outside the repository is no source a teammate has: refused, nothing written.
    const outside = await w.write("elsewhere/" + catalogPath(), catalog("elsewhere", []));
    const far = await cli(["marketplace", "add", path.dirname(path.dirname(outside)), "--scope", "project"]);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain("ETEAM_MACHINE_PATH");
    expect(await read("xcsh-team.json")).toBeUndefined();
    expect(await gitChanges()).toEqual([]);

    await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    expect((await declaration()).marketplaces).toEqual({ mkt: { source: { source: "directory", path: "./tools/mkt" } } });
    await expectCommittable();

    // Without a terminal and without --yes: the hook was not confirmed, the declaration and lock stay as they were.
    const before = await committed();
    const refused = await cli(["install", "x@mkt", "--scope", "project"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("EUNCONFIRMED");
    expect(await committed()).toEqual(before);

    await ok(["install", "x@mkt", "--scope", "project", "--yes"]);
    expect((await declaration()).plugins).toEqual({ "x@mkt": {} });
    expect((await lock()).marketplacePlugins["x@mkt"]).toMatchObject({ version: "1.0.0", hash: expect.stringMatching(/^tree1-sha256:/) });
    await expectCommittable();

    // npm saves a bare name as ^<resolved>; the plugin goes to the user's tree (the host loads npm plugins per user).
    await ok(["install", P1, "--scope", "project", "--yes"]);
    expect((await declaration()).plugins[P1]).toEqual({ spec: "^1.0.0" });
    expect((await lock()).npm[P1]).toMatchObject({ version: "1.0.0", integrity: expect.stringMatching(/^sha512-/) });
    expect(JSON.parse(await readFile(path.join(w.xcshHome, "plugins/node_modules", P1, "package.json"), "utf8")).version).toBe("1.0.0");
    await expectCommittable();

    await ok(["disable", "--scope", "project", "old@mkt"]);
    expect((await declaration()).plugins["old@mkt"]).toEqual({ enabled: false });
    await ok(["features", P1, "--set", "cache", "--scope", "project"]);
    expect((await declaration()).plugins[P1]).toEqual({ spec: "^1.0.0", features: ["cache"] });
    await ok(["config", "set", P1, "limit", "5", "--scope", "project"]);
    expect((await declaration()).plugins[P1]).toEqual({ spec: "^1.0.0", features: ["cache"], settings: { limit: 5 } });
    // The generated overrides carry what the declaration chose for the npm plugin.
    expect(JSON.parse((await read(".xcsh/plugin-overrides.json"))!)).toEqual({ features: { [P1]: ["cache"] }, settings: { [P1]: { limit: 5 } } });
    await expectCommittable();

    // A secret never goes into a committed file.
    const beforeSecret = await committed();
    const secret = await cli(["config", "set", P1, "apiKey", "sk-DO-NOT-WRITE", "--scope", "project"]);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain("ESECRET_SCOPE");
    expect(secret.stderr).toContain("/settings/apiKey");
    expect(await committed()).toEqual(beforeSecret);
    expect(await read("xcsh-team.json")).not.toContain("sk-DO-NOT-WRITE");

    await ok(["config", "delete", P1, "limit", "--scope", "project"]);
    await ok(["features", P1, "--reset", "--scope", "project"]);
    expect((await declaration()).plugins[P1]).toEqual({ spec: "^1.0.0" });
    expect(await read(".xcsh/plugin-overrides.json")).toBe("{}\n");
    await expectCommittable();

    expect(await gitChanges()).toEqual([".xcsh/.gitignore", "xcsh-team.json", "xcsh-team.lock.json"]);
  });

  it("a feature the plugin does not have: EUNKNOWN_FEATURE at the restore, the declaration and lock unchanged; --dry-run writes nothing", async () => {
    await ok(["install", P1, "--scope", "project", "--yes"]);
    const before = await committed();
    const unknown = await cli(["features", P1, "--set", "nope", "--scope", "project"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("EUNKNOWN_FEATURE");
    expect(await committed()).toEqual(before);

    const dry = await ok(["config", "set", P1, "limit", "7", "--scope", "project", "--dry-run"]);
    expect(dry.stdout).toContain('"limit": 7');
    expect(await committed()).toEqual(before);
  });

  it("--dry-run of a change says what the restore would install, lock and run, asks nothing, writes nothing; a change the restore would refuse is refused", async () => {
    await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    const before = await committed();
    const changes = await gitChanges();
    const dry = await ok(["install", "x@mkt", "--scope", "project", "--dry-run"]);
    expect(dry.stdout).toContain("Would write xcsh-team.json (dry run: nothing was written):");
    expect(dry.stdout).toContain('"x@mkt": {}');
    expect(dry.stdout).toMatch(/Would install x@mkt/);
    expect(dry.stdout).toMatch(/x@mkt 1\.0\.0 would run/);
    const json = await ok(["install", "x@mkt", "--scope", "project", "--dry-run", "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, dryRun: true, changed: true, installed: expect.arrayContaining([expect.stringContaining("x@mkt")]) });
    expect(await committed()).toEqual(before);
    expect(await gitChanges()).toEqual(changes);

    await ok(["install", P1, "--scope", "project", "--yes"]);
    const unknown = await cli(["features", P1, "--set", "nope", "--scope", "project", "--dry-run"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("EUNKNOWN_FEATURE");
  });

  it("uninstall and marketplace remove take the entries out; the generated registry drops the plugin", async () => {
    await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    await ok(["install", "x@mkt", "--scope", "project", "--yes"]);
    const inUse = await cli(["marketplace", "remove", "mkt", "--scope", "project"]);
    expect(inUse.code).toBe(2);
    expect(inUse.stderr).toContain("ETEAM_UNKNOWN_MARKETPLACE");
    await ok(["uninstall", "x@mkt", "--scope", "project"]);
    expect((await declaration()).plugins).toEqual({});
    expect(Object.keys(JSON.parse((await read(".xcsh/plugins/installed_plugins.json"))!).plugins)).toEqual([]);
    expect((await lock()).marketplacePlugins).toEqual({});
    await ok(["marketplace", "remove", "mkt", "--scope", "project"]);
    expect((await declaration()).marketplaces).toEqual({});
    await expectCommittable();
  });
});

describe("the edit and the restore are one change", () => {
  /** A set with x@mkt locked and committed. */
  async function committedSet(): Promise<void> {
    await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    await ok(["install", "x@mkt", "--scope", "project", "--yes"]);
    await git(["add", "-A"]);
    await git(["commit", "-q", "-m", "the set"]);
  }

  it("a plugin's files changed after locking: EINTEGRITY, and the declaration a change was making is not written", async () => {
    await committedSet();
    await w.write(path.join(w.cwd, "tools/mkt/plugins/x/hooks/hooks.json"), { hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo changed" }] }] } });
    // As on a teammate's machine: no copy of x cached yet, so the restore fetches it and checks its hash.
    const cache = path.join(w.xcshHome, "plugins/cache/plugins");
    for (const dir of await readdir(cache)) if (dir.startsWith("mkt___x___")) await rm(path.join(cache, dir), { recursive: true, force: true });
    const before = { ...(await committed()), xcsh: await snapshotTree(path.join(w.cwd, ".xcsh")) };
    const r = await cli(["disable", "old@mkt", "--scope", "project", "--yes"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("EINTEGRITY");
    expect(r.stderr).toContain("/marketplacePlugins/x@mkt/hash");
    expect({ ...(await committed()), xcsh: await snapshotTree(path.join(w.cwd, ".xcsh")) }).toEqual(before);
  });

  it.each(["teamset:staged", "commit:synced"])("a failure at %s (inside the restore's transaction): the declaration, lock and generated files as they were", async (step) => {
    await committedSet();
    const before = { ...(await committed()), xcsh: await snapshotTree(path.join(w.cwd, ".xcsh")) };
    const r = await cli(["disable", "old@mkt", "--scope", "project", "--json"], { XCSH_TOOLS_TEST_FAULT: step });
    expect(r.code, r.stderr).toBe(1);
    expect(r.json().error.code).toBe("EFAULT_INJECTED");
    expect({ ...(await committed()), xcsh: await snapshotTree(path.join(w.cwd, ".xcsh")) }).toEqual(before);
    // The next change goes through as if the failed one never happened.
    await ok(["disable", "old@mkt", "--scope", "project"]);
    expect((await declaration()).plugins).toEqual({ "old@mkt": { enabled: false }, "x@mkt": {} });
  });
});

describe("--scope project over Claude Code's settings, and marketplace versions", () => {
  it("a plugin only .claude/settings.json declares: an override entry in xcsh-team.json, .claude/ never written; name@mkt@<range> declares the range", async () => {
    const claude = await w.write(path.join(w.cwd, ".claude/settings.json"), {
      extraKnownMarketplaces: { mkt: { source: { source: "directory", path: "./tools/mkt" } } },
      enabledPlugins: { "x@mkt": true },
    });
    await git(["add", "-A"]);
    await git(["commit", "-q", "-m", "Claude Code's team settings"]);
    const claudeBytes = await readFile(claude, "utf8");

    await ok(["disable", "x@mkt", "--scope", "project"]);
    expect(await declaration()).toEqual({ version: 1, plugins: { "x@mkt": { enabled: false } } });
    expect(await readFile(claude, "utf8")).toBe(claudeBytes);
    const listed = (await ok(["list", "--json"])).json();
    expect(listed.teamSet).toContainEqual({ key: "x@mkt", kind: "marketplace", enabled: false, decidedBy: "team", file: "xcsh-team.json" });
    // Its project row is the set's off entry (an empty folder that shadows any copy of yours): off, not an enabled plugin of unknown version.
    expect(listed.marketplacePlugins.filter((row: { id: string; scope: string }) => row.id === "x@mkt" && row.scope === "project")).toEqual([expect.objectContaining({ enabled: false, version: "-", offBySet: true })]);
    expect((await ok(["list"])).stdout).toMatch(/^x@mkt -  off \(the project's set\)  project$/m);
    await expectCommittable();

    await ok(["install", "old@mkt@^0.1.0", "--scope", "project", "--yes"]);
    expect((await declaration()).plugins["old@mkt"]).toEqual({ version: "^0.1.0" });
    expect((await lock()).marketplacePlugins["old@mkt"]).toMatchObject({ version: "0.1.0" });
    // A range the catalog's version does not meet: refused at the restore, nothing written.
    const before = await committed();
    const r = await cli(["install", "old@mkt@^2.0.0", "--scope", "project", "--yes"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("ETEAM_UNSATISFIABLE");
    expect(await committed()).toEqual(before);
    expect(await readFile(claude, "utf8")).toBe(claudeBytes);
    expect(await gitChanges()).toEqual([".xcsh/.gitignore", "xcsh-team.json", "xcsh-team.lock.json"]);
  });
});

describe("--scope local: a personal choice; list says who decided", () => {
  it("disable --scope local p1: off for you only, xcsh-team.json unchanged, its tools gone here; Claude's local false shows claude-local", async () => {
    await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    await ok(["install", "x@mkt", "--scope", "project", "--yes"]);
    await ok(["install", P1, "--scope", "project", "--yes"]);
    expect(JSON.stringify((await ok(["tools", "--json"])).json())).toContain(P1_TOOL);
    const before = await committed();
    const changesBefore = await gitChanges();

    await ok(["disable", "--scope", "local", P1]);
    expect(JSON.parse((await read(".xcsh/team.local.json"))!)).toEqual({ version: 1, plugins: { [P1]: { enabled: false } } });
    expect(await committed()).toEqual(before);
    expect(await gitChanges()).toEqual(changesBefore);
    expect((await ok(["list"])).stdout).toMatch(new RegExp(`${P1.replace(/[/.]/g, "\\$&")}\\s+off — you \\(\\.xcsh/team\\.local\\.json\\)`));
    const listed = (await ok(["list", "--json"])).json();
    expect(listed.teamSet).toContainEqual({ key: P1, kind: "npm", enabled: false, decidedBy: "local", file: ".xcsh/team.local.json" });
    expect(listed.plugins.find((p: { name: string }) => p.name === P1).decidedBy).toBe("local");
    expect(JSON.stringify((await ok(["tools", "--json"])).json())).not.toContain(P1_TOOL);

    // On again for you (the set says on: the personal entry goes), then your own value of a setting.
    await ok(["enable", "--scope", "local", P1]);
    await ok(["config", "set", P1, "limit", "3", "--scope", "local"]);
    await ok(["features", P1, "--enable", "cache", "--scope", "local"]);
    expect(JSON.parse((await read(".xcsh/team.local.json"))!)).toEqual({ version: 1, plugins: { [P1]: { features: ["web", "cache"], settings: { limit: 3 } } } });
    expect(JSON.parse((await read(".xcsh/plugin-overrides.json"))!)).toEqual({ features: { [P1]: ["web", "cache"] }, settings: { [P1]: { limit: 3 } } });
    expect(JSON.stringify((await ok(["tools", "--json"])).json())).toContain(`${P1_TOOL}_cache`);
    expect(await committed()).toEqual(before);
    expect(await gitChanges()).toEqual(changesBefore);
    // Switched off by you for every project (the runtime lock): that decides here too, and list says so.
    await ok(["disable", P1]);
    expect((await ok(["list", "--json"])).json().teamSet).toContainEqual({ key: P1, kind: "npm", enabled: false, decidedBy: "user", file: path.join(w.xcshHome, "plugins", "xcsh-plugins.lock.json") });
    await ok(["enable", P1]);
    await ok(["disable", "--scope", "local", P1]);

    await w.write(path.join(w.cwd, ".claude/settings.local.json"), { enabledPlugins: { "x@mkt": false } });
    expect((await ok(["list", "--json"])).json().teamSet).toContainEqual({ key: "x@mkt", kind: "marketplace", enabled: false, decidedBy: "claude-local", file: ".claude/settings.local.json" });
    expect((await ok(["list"])).stdout).toMatch(/x@mkt\s+off — you \(\.claude\/settings\.local\.json\)/);
  });

  it("a plugin the project does not declare: ETEAM_NOT_DECLARED naming --scope user, nothing written", async () => {
    await ok(["install", P1, "--scope", "project", "--yes"]);
    const before = await committed();
    const r = await cli(["disable", "--scope", "local", "someone-else"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ETEAM_NOT_DECLARED");
    expect(r.stderr).toContain("--scope user");
    expect(await read(".xcsh/team.local.json")).toBeUndefined();
    expect(await committed()).toEqual(before);
  });
});

describe("bad input to a project change: a coded error naming the file, the declaration and lock unchanged", () => {
  /** Run `args`, expect exit `code` with `errorCode` on stderr, and the committed files (and .xcsh/) as they were. */
  async function refused(args: string[], code: number, errorCode: string): Promise<string> {
    const before = { ...(await committed()), xcsh: await snapshotTree(path.join(w.cwd, ".xcsh")).catch(() => undefined) };
    const r = await cli(args);
    expect(r.code, `${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(code);
    expect(r.stderr).toContain(errorCode);
    expect({ ...(await committed()), xcsh: await snapshotTree(path.join(w.cwd, ".xcsh")).catch(() => undefined) }).toEqual(before);
    return r.stderr;
  }

  it("specs a teammate cannot restore, undeclared marketplaces and plugins, secrets at local scope", async () => {
    await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    await ok(["install", P1, "--scope", "project", "--yes"]);
    // A folder or a tarball of this machine.
    await w.write(path.join(w.cwd, "local-plugin/package.json"), { name: "local-plugin", version: "1.0.0" });
    expect(await refused(["install", "./local-plugin", "--scope", "project", "--yes"], 2, "ETEAM_SPEC")).toContain("xcsh-team.json");
    expect(await refused(["install", "./local-plugin.tgz", "--scope", "project", "--yes"], 2, "ETEAM_SPEC")).toContain("directory");
    // A marketplace the project does not declare (added for the user only does not count).
    expect(await refused(["install", "x@nowhere", "--scope", "project", "--yes"], 2, "ETEAM_UNKNOWN_MARKETPLACE")).toContain("marketplace add");
    // enable/features/config of a plugin the set does not declare: install it first.
    expect(await refused(["enable", "unknown-plugin", "--scope", "project"], 2, "ETEAM_NOT_DECLARED")).toContain("install unknown-plugin --scope project");
    await refused(["config", "set", "unknown-plugin", "limit", "5", "--scope", "project"], 2, "ETEAM_NOT_DECLARED");
    await refused(["uninstall", "unknown-plugin", "--scope", "project"], 2, "ETEAM_NOT_DECLARED");
    // The personal file is no place for a secret either (it is not owner-only).
    expect(await refused(["config", "set", P1, "apiKey", "sk-DO-NOT-WRITE", "--scope", "local"], 2, "ESECRET_SCOPE")).toContain("team.local.json");
  });

  it("a directory marketplace whose folder is a symlink out of the repository: ETEAM_MACHINE_PATH, nothing written", async () => {
    const outside = await w.write("elsewhere/" + catalogPath(), catalog("mkt2", []));
    await symlink(path.dirname(path.dirname(outside)), path.join(w.cwd, "linked-mkt"));
    await refused(["marketplace", "add", "./linked-mkt", "--scope", "project"], 2, "ETEAM_MACHINE_PATH");
    expect(await read("xcsh-team.json")).toBeUndefined();
  });

  it("an untrusted repository: EUNTRUSTED_PROJECT for --scope project and --scope local, before anything is read or written", async () => {
    await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    await ok(["install", P1, "--scope", "project", "--yes"]);
    await ok(["untrust"]);
    // A declaration that would fail to parse if it were read: the refusal comes first.
    await w.write(path.join(w.cwd, "xcsh-team.json"), "<<<<<<< not read\n");
    for (const args of [
      ["install", "x@mkt", "--scope", "project", "--yes"],
      ["disable", P1, "--scope", "project"],
      ["disable", P1, "--scope", "local"],
      ["marketplace", "add", "./tools/mkt", "--scope", "project"],
      ["config", "set", P1, "limit", "5", "--scope", "local"],
    ]) {
      await refused(args, 1, "EUNTRUSTED_PROJECT");
    }
  });
});
