/**
 * `xcsh-tools install` with no spec as a team runs it (issue 42 points 3, 5, 7, 8; design (d)
 * "install (no operand) = restore", "--frozen", "Conflicts after a merge"): the built CLI as a
 * process, HOMEs of their own, one repository with a bare remote, npm plugins from the local
 * Verdaccio, a git marketplace over http whose plugin runs a hook and an MCP server, and a
 * `directory` marketplace inside the project. Every refusal leaves every file as it was.
 */
import { execFile } from "node:child_process";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isolatedGitEnv, makeGitRemote, type GitRemote } from "../helpers/git-remote.js";
import { startGitHttpServer, type GitHttpServer } from "../helpers/git-http.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import { runOnPty } from "../helpers/pty.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, worldPerTest, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { toolName, toolSource } from "../integration/plugins-fixtures.js";

const exec = promisify(execFile);
const git = (args: string[], cwd: string, w: TmpWorld) => exec("git", args, { cwd, env: isolatedGitEnv(w.home) });
const MKT = "tools/marketplace";
const LONG = 240_000;

/** `xcsh-tools <args>` in `cwd` as the user of `w` (no terminal: stdin is a closed pipe). */
const cli = (w: TmpWorld, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd, home: w.home, env, timeoutMs: 180_000 });

/** What a refusal says with `--json`: the coded error on stdout. */
function refusal(r: ProcessResult): { code: string; message: string; file?: string; path?: string; hint?: string } {
  expect(r.code, `${r.stdout}\n${r.stderr}`).not.toBe(0);
  return r.json().error;
}

/** Snapshot of everything of a HOME and its clone (npm's own cache is npm's). */
const snap = (w: TmpWorld) => snapshotTree(w.root, { exclude: [".npm"] });

/** The directory marketplace inside the project: `hello` (a skill), `old` (switched off by the team). */
function inRepoMarketplace(): Record<string, string | object> {
  return {
    [`${MKT}/${catalogPath()}`]: catalog("inrepo", [
      { name: "hello", source: "./plugins/hello", version: "1.0.0" },
      { name: "old", source: "./plugins/old", version: "0.1.0" },
    ]),
    [`${MKT}/plugins/hello/.xcsh-plugin/plugin.json`]: { name: "hello", version: "1.0.0", description: "the hello plugin" },
    [`${MKT}/plugins/hello/skills/hi/SKILL.md`]: "---\nname: hi\ndescription: says hi\n---\nhi\n",
    [`${MKT}/plugins/old/.xcsh-plugin/plugin.json`]: { name: "old", version: "0.1.0", description: "switched off by the team" },
  };
}

/** A declaration written by hand, one plugin a line (so two branches can edit different lines). */
function declarationText(marketplaces: Record<string, unknown>, pluginLines: string[]): string {
  return `{\n  "version": 1,\n  "marketplaces": ${JSON.stringify(marketplaces)},\n  "plugins": {\n${pluginLines.map((l) => `    ${l}`).join(",\n")}\n  }\n}\n`;
}

describe("install with no spec: a team's flow through the CLI", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const tag = Math.random().toString(36).slice(2, 8);
  const alpha = `@teame2e/alpha-${tag}`;
  const beta = `@teame2e/beta-${tag}`;
  const gamma = `@teame2e/gamma-${tag}`;
  const delta = `@teame2e/delta-${tag}`;
  let canaryDir: TmpWorld;
  let canary: string;

  const publish = (name: string, version: string, xcsh: Record<string, unknown>, files: Record<string, string>) =>
    reg.publish({ name, version, packageJson: { type: "module", xcsh }, files });

  beforeAll(async () => {
    reg = await useGlobalRegistry();
    canaryDir = await makeTmpWorld("xcsh-team-e2e-canary-");
    canary = path.join(canaryDir.root, "canary");
    // alpha: a hook module the host would import, a secret setting, and a tool that leaves the canary when imported.
    const alphaFiles = { "t.js": toolSource(toolName(alpha), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(canary)}, "ran");\n`), "hooks/guard.js": "export default function () {}\n" };
    const alphaXcsh = { tools: "./t.js", hooks: "./hooks/guard.js", settings: { apiKey: { type: "string", secret: true, env: "TEAM_E2E_ALPHA_KEY" } } };
    await publish(alpha, "1.0.0", alphaXcsh, alphaFiles);
    await publish(alpha, "1.1.0", alphaXcsh, alphaFiles);
    for (const name of [beta, gamma, delta]) await publish(name, "1.0.0", { tools: "./t.js" }, { "t.js": toolSource(toolName(name)) });
  }, LONG);
  afterAll(async () => {
    await reg?.dispose();
    await canaryDir?.cleanup();
  });

  let a: TmpWorld;
  let b: TmpWorld;
  let c: TmpWorld;
  let http: GitHttpServer;
  let project: GitRemote;
  beforeEach(async () => {
    [a, b, c] = [await makeTmpWorld("xcsh-team-e2e-a-"), await makeTmpWorld("xcsh-team-e2e-b-"), await makeTmpWorld("xcsh-team-e2e-c-")];
    for (const w of [a, b, c]) await writeUserNpmrc(w.home, reg.url);
    const served = path.join(a.root, "served");
    http = await startGitHttpServer(served);
    // A git marketplace whose plugin runs a hook and an MCP server.
    await makeGitRemote(served, "mkt", {
      [catalogPath()]: catalog("gitmkt", [{ name: "guard", source: "./plugins/guard", version: "2.0.0" }]),
      "plugins/guard/.xcsh-plugin/plugin.json": { name: "guard", version: "2.0.0", description: "runs a hook and an MCP server" },
      "plugins/guard/hooks/hooks.json": { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/scripts/guard.sh" }] }] } },
      "plugins/guard/scripts/guard.sh": "#!/bin/sh\nexit 0\n",
      "plugins/guard/.mcp.json": { mcpServers: { lookup: { command: "node", args: ["${CLAUDE_PLUGIN_ROOT}/server.js"] } } },
      "plugins/guard/server.js": "// an MCP server\n",
    }, isolatedGitEnv(a.home));
    const marketplaces = { gitmkt: { source: { source: "git", url: `${http.url}/mkt.git`, ref: "main" } }, inrepo: { source: { source: "directory", path: `./${MKT}` } } };
    const text = declarationText(marketplaces, [`"${alpha}": { "spec": "^1.0.0" }`, `"${beta}": { "spec": "^1.0.0" }`, `"hello@inrepo": {}`, `"old@inrepo": { "enabled": false }`, `"guard@gitmkt": {}`]);
    project = await makeGitRemote(a.root, "project", { ...inRepoMarketplace(), "xcsh-team.json": text }, isolatedGitEnv(a.home));
  }, LONG);
  afterEach(async () => {
    await http?.close();
    for (const w of [a, b, c]) await w?.cleanup();
    await rm(canary, { force: true });
  });

  /** A trusts its checkout, restores with --yes, commits the lock and .xcsh/.gitignore, pushes; the lock's text. */
  async function lockInA(): Promise<string> {
    const work = project.work;
    expect((await cli(a, work, ["trust"])).code).toBe(0);
    const r = await cli(a, work, ["install", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    await git(["add", "xcsh-team.lock.json", ".xcsh/.gitignore"], work, a);
    await git(["commit", "-q", "-m", "lock the team set"], work, a);
    await git(["push", "-q", "origin", "main"], work, a);
    // A allowed it: validation imported its tools, as any install does.
    await rm(canary, { force: true });
    return readFile(path.join(work, "xcsh-team.lock.json"), "utf8");
  }

  async function cloneFor(w: TmpWorld): Promise<string> {
    const dir = path.join(w.root, "clone");
    await git(["clone", "-q", project.bare, dir], w.root, w);
    return dir;
  }

  it("A locks and commits; B: untrusted, unconfirmed, dry run, --yes, no-op; C: --frozen without a terminal, then a drifted range", async () => {
    const lockText = await lockInA();
    const gitignore = await readFile(path.join(project.work, ".xcsh/.gitignore"), "utf8");
    for (const committed of [lockText, gitignore]) {
      expect(committed).not.toContain(a.root);
      expect(committed).not.toMatch(/"\/[^"]*"/); // no absolute path as a value
      expect(committed).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/); // no ISO time
    }
    expect((await git(["status", "--porcelain"], project.work, a)).stdout).toBe("");
    const lock = JSON.parse(lockText);
    expect(Object.keys(lock.npm)).toEqual([alpha, beta]);
    expect(lock.npm[alpha].version).toBe("1.1.0");
    expect(Object.keys(lock.marketplacePlugins).sort()).toEqual(["guard@gitmkt", "hello@inrepo"]);

    const cloneB = await cloneFor(b);
    // Untrusted: refused before any project file is read; nothing written.
    let before = await snap(b);
    let error = refusal(await cli(b, cloneB, ["install", "--json"]));
    expect(error.code).toBe("EUNTRUSTED_PROJECT");
    expect(await snap(b)).toEqual(before);

    expect((await cli(b, cloneB, ["trust"])).code).toBe(0);
    // No terminal, no --yes: one refusal listing what every new plugin runs.
    before = await snap(b);
    const unconfirmed = await cli(b, cloneB, ["install"]);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr).toContain("EUNCONFIRMED");
    expect(unconfirmed.stderr).toContain("guard@gitmkt 2.0.0");
    expect(unconfirmed.stderr).toMatch(/\+ hook PreToolUse \[Bash\]: .*guard\.sh/);
    expect(unconfirmed.stderr).toMatch(/\+ mcp-server lookup: node /);
    expect(unconfirmed.stderr).toContain(`${alpha} 1.1.0`);
    expect(unconfirmed.stderr).toMatch(/\+ hook guard: imported by the host: .*hooks\/guard\.js/);
    expect(await snap(b)).toEqual(before);

    // Dry run: what would be installed and run; nothing asked, written or run.
    const dry = await cli(b, cloneB, ["install", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`Would install .*${alpha}@1\\.1\\.0`));
    expect(dry.stdout).toMatch(new RegExp(`Would install .*${beta}@1\\.0\\.0`));
    expect(dry.stdout).toMatch(/guard@gitmkt 2\.0\.0 would run:\n {2}\+ hook PreToolUse \[Bash\]/);
    expect(dry.stdout).toContain("+ mcp-server lookup: node ");
    expect(dry.stdout).toContain(`${alpha} 1.1.0 would run (hook and extension modules):`);
    expect(dry.stdout).toContain("old@inrepo: off — team (xcsh-team.json)");
    expect(dry.stdout).toContain("Dry run: nothing was asked, written or run.");
    const dryJson = (await cli(b, cloneB, ["install", "--dry-run", "--json"])).json();
    expect(dryJson).toMatchObject({ ok: true, dryRun: true, changed: true, lockChanged: false, written: [] });
    expect(dryJson.npmInstalled.sort()).toEqual([`${alpha}@1.1.0`, `${beta}@1.0.0`].sort());
    expect(dryJson.wouldRun.map((w: { id: string }) => w.id).sort()).toEqual([alpha, "guard@gitmkt"].sort());
    expect(await snap(b)).toEqual(before);
    expect(await stat(canary).catch(() => undefined)).toBeUndefined();

    // --yes: restored; the secret alpha needs and the team's opt-out are said.
    const yes = await cli(b, cloneB, ["install", "--yes"]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toContain(`needs a secret: xcsh-tools config set ${alpha} apiKey <value>  (or TEAM_E2E_ALPHA_KEY)`);
    expect(yes.stdout).toContain("old@inrepo: off — team (xcsh-team.json)");
    expect(await readFile(path.join(cloneB, "xcsh-team.lock.json"), "utf8")).toBe(lockText);
    const registry = JSON.parse(await readFile(path.join(cloneB, ".xcsh/plugins/installed_plugins.json"), "utf8"));
    const installPaths = Object.values(registry.plugins as Record<string, { installPath: string }[]>).flat().map((e) => e.installPath);
    expect(installPaths.length).toBeGreaterThanOrEqual(3);
    for (const p of installPaths) expect(p.startsWith(`${b.home}/`), p).toBe(true);

    // The same plugins at the same versions as A's.
    const seen = async (w: TmpWorld, cwd: string) => {
      const list = (await cli(w, cwd, ["list", "--json"])).json();
      const tools = (await cli(w, cwd, ["tools", "--json"])).json();
      return { list: JSON.stringify(projection(list, w, cwd)), tools: JSON.stringify(projection(tools, w, cwd)) };
    };
    expect(await seen(b, cloneB)).toEqual(await seen(a, project.work));

    // Again: nothing to do; the lock and the generated files untouched.
    const generated = [".xcsh/plugins/installed_plugins.json", "xcsh-team.lock.json"].map((f) => path.join(cloneB, f));
    const mtimes = await Promise.all(generated.map(async (f) => (await stat(f)).mtimeMs));
    const again = await cli(b, cloneB, ["install"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("Up to date");
    expect(await readFile(path.join(cloneB, "xcsh-team.lock.json"), "utf8")).toBe(lockText);
    expect(await Promise.all(generated.map(async (f) => (await stat(f)).mtimeMs))).toEqual(mtimes);
    // The stamp answers a no-op (teamset/fast.ts); a dry run always asks the engine, which says the same at length.
    expect((await cli(b, cloneB, ["install", "--json"], { TEAM_E2E_ALPHA_KEY: "from-env" })).json()).toMatchObject({ ok: true, upToDate: true });
    const againJson = (await cli(b, cloneB, ["install", "--dry-run", "--json"], { TEAM_E2E_ALPHA_KEY: "from-env" })).json();
    expect(againJson).toMatchObject({ ok: true, dryRun: true, changed: false, lockChanged: false, lockMerged: false, installed: [], npmInstalled: [], resolved: [], secretsNeeded: [], undeclared: [] });
    expect(againJson.optOuts).toEqual([{ plugin: "old@inrepo", by: "team", file: path.join(cloneB, "xcsh-team.json") }]);
    // A value stored with `config set` (no env variable): no longer needed.
    expect((await cli(b, cloneB, ["config", "set", alpha, "apiKey", "s3cret"])).code).toBe(0);
    expect((await cli(b, cloneB, ["install", "--json"])).json().secretsNeeded).toEqual([]);
    expect((await cli(b, cloneB, ["install", "--dry-run", "--json"], { TEAM_E2E_ALPHA_KEY: "" })).json().secretsNeeded).toEqual([]);

    // C, a CI job: no terminal, --frozen --yes after `trust`.
    const cloneC = await cloneFor(c);
    expect((await cli(c, cloneC, ["trust"])).code).toBe(0);
    const frozen = await cli(c, cloneC, ["install", "--frozen", "--yes"]);
    expect(frozen.code, frozen.stderr).toBe(0);
    // A range edited in xcsh-team.json alone: the lock no longer describes it.
    const declFile = path.join(cloneC, "xcsh-team.json");
    await writeFile(declFile, (await readFile(declFile, "utf8")).replace(`"spec": "^1.0.0"`, `"spec": "~1.0.0"`));
    before = await snap(c);
    error = refusal(await cli(c, cloneC, ["install", "--frozen", "--yes", "--json"]));
    expect(error).toMatchObject({ code: "ETEAM_FROZEN", file: path.join(cloneC, "xcsh-team.lock.json") });
    expect(error.message).toContain(`/npm/${alpha.replace("/", "~1")} is stale`);
    expect(error.hint).toContain("without --frozen");
    expect(await snap(c)).toEqual(before);
  }, 600_000);

  it("on a terminal: ONE question for the whole set; no refuses and writes nothing", async () => {
    await lockInA();
    const cloneB = await cloneFor(b);
    expect((await cli(b, cloneB, ["trust"])).code).toBe(0);
    const before = await snap(b);
    const refused = await runOnPty(["install"], { cwd: cloneB, home: b.home }, "n");
    expect(refused.asked).toBe(true);
    expect(refused.screen.match(/\(y\/N\)/g)).toHaveLength(1);
    expect(refused.screen).toContain("Allow these 2 plugins to run these?");
    expect(refused.screen).toContain("guard@gitmkt 2.0.0 runs programs on your machine:");
    expect(refused.screen).toContain(`${alpha} 1.1.0 has the host run code on your machine:`);
    expect(refused.code).toBe(1);
    expect(refused.screen).toContain("EUNCONFIRMED");
    expect(await snap(b)).toEqual(before);
    const accepted = await runOnPty(["install"], { cwd: cloneB, home: b.home }, "y");
    expect(accepted.screen.match(/\(y\/N\)/g)).toHaveLength(1);
    expect(accepted.code, accepted.screen).toBe(0);
    expect(JSON.parse(await readFile(path.join(b.xcshHome, "plugins/node_modules", alpha, "package.json"), "utf8")).version).toBe("1.1.0");
  }, 600_000);

  it("two branches each change the set; the merge leaves markers in the lock only: --frozen refuses, install merges both sides", async () => {
    await lockInA();
    const work = project.work;
    const decl = path.join(work, "xcsh-team.json");
    const original = await readFile(decl, "utf8");
    const relock = async (branch: string, text: string) => {
      await git(["checkout", "-q", "-b", branch, "main"], work, a);
      await writeFile(decl, text);
      const r = await cli(a, work, ["install", "--yes"]);
      expect(r.code, r.stderr).toBe(0);
      await git(["commit", "-q", "-am", `add a plugin on ${branch}`], work, a);
    };
    // One adds a plugin on the first line of "plugins", the other after the last: the declaration merges cleanly.
    await relock("one", original.replace(`    "${alpha}"`, `    "${gamma}": { "spec": "^1.0.0" },\n    "${alpha}"`));
    await relock("two", original.replace(`"guard@gitmkt": {}`, `"guard@gitmkt": {},\n    "${delta}": { "spec": "^1.0.0" }`));
    await git(["checkout", "-q", "main"], work, a);
    await git(["merge", "-q", "--no-edit", "one"], work, a);
    const merge = await git(["merge", "--no-edit", "two"], work, a).catch((e: { code: number; stdout: string }) => e);
    expect((merge as { code?: number }).code).toBe(1);
    expect(await readFile(path.join(work, "xcsh-team.lock.json"), "utf8")).toContain("<<<<<<<");
    const merged = JSON.parse(await readFile(decl, "utf8"));
    expect(Object.keys(merged.plugins)).toEqual(expect.arrayContaining([alpha, beta, gamma, delta]));

    const before = await snap(a);
    const error = refusal(await cli(a, work, ["install", "--frozen", "--yes", "--json"]));
    expect(error).toMatchObject({ code: "ETEAM_CONFLICT_MARKERS", file: path.join(work, "xcsh-team.lock.json") });
    expect(await snap(a)).toEqual(before);

    const r = await cli(a, work, ["install", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("Merged xcsh-team.lock.json");
    const lock = JSON.parse(await readFile(path.join(work, "xcsh-team.lock.json"), "utf8"));
    expect(Object.keys(lock.npm).sort()).toEqual([alpha, beta, gamma, delta].sort());
    expect(lock.npm[alpha].version).toBe("1.1.0");
    expect(Object.keys(lock.marketplacePlugins).sort()).toEqual(["guard@gitmkt", "hello@inrepo"]);
    const next = await cli(a, work, ["install"]);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain("Up to date");
    expect((await cli(a, work, ["install", "--frozen", "--yes"])).code).toBe(0);
  }, 600_000);
});

/** A `list --json` / `tools --json` document with the paths of its HOME written `~` and of its checkout `<project>`. */
function projection(doc: unknown, w: TmpWorld, checkout: string): unknown {
  return JSON.parse(JSON.stringify(doc).split(checkout).join("<project>").split(w.home).join("~"));
}

describe("install with no spec: bad input through the CLI (a coded error naming file, field and fix; nothing written)", () => {
  let w: TmpWorld;
  let project: GitRemote;
  const declaration = { version: 1, marketplaces: { inrepo: { source: { source: "directory", path: `./${MKT}` } } }, plugins: { "hello@inrepo": {} } };

  worldPerTest((x) => (w = x), "xcsh-team-e2e-bad-");
  beforeEach(async () => {
    project = await makeGitRemote(w.root, "project", { ...inRepoMarketplace(), "xcsh-team.json": declaration }, isolatedGitEnv(w.home));
    expect((await cli(w, project.work, ["trust"])).code).toBe(0);
  });

  /** Restore once (the lock), then apply `edit`, and expect `install` to refuse with `expected`, writing nothing. */
  async function refusedAfter(edit: () => Promise<void>, args: string[] = ["install", "--yes", "--json"]) {
    const first = await cli(w, project.work, ["install", "--yes"]);
    expect(first.code, first.stderr).toBe(0);
    await edit();
    const before = await snap(w);
    const error = refusal(await cli(w, project.work, args));
    expect(error.hint, "every refusal says how to fix it").toBeTruthy();
    expect(await snap(w)).toEqual(before);
    return error;
  }

  const lockFile = () => path.join(project.work, "xcsh-team.lock.json");
  const declFile = () => path.join(project.work, "xcsh-team.json");
  const editJson = async (file: string, change: (doc: any) => void) => {
    const doc = JSON.parse(await readFile(file, "utf8"));
    change(doc);
    await writeFile(file, `${JSON.stringify(doc, null, 2)}\n`);
  };

  it("an unknown marketplace: ETEAM_UNKNOWN_MARKETPLACE naming xcsh-team.json and /plugins/<id>", async () => {
    const error = await refusedAfter(() => editJson(declFile(), (d) => (d.plugins["x@nowhere"] = {})));
    expect(error).toMatchObject({ code: "ETEAM_UNKNOWN_MARKETPLACE", file: declFile(), path: "/plugins/x@nowhere" });
  });

  it("a lock from a newer format (lockfileVersion 2): ETEAM_LOCK_VERSION naming the lock and /lockfileVersion", async () => {
    const error = await refusedAfter(() => editJson(lockFile(), (d) => (d.lockfileVersion = 2)));
    expect(error).toMatchObject({ code: "ETEAM_LOCK_VERSION", file: lockFile(), path: "/lockfileVersion" });
  });

  it("a content hash edited by hand: EINTEGRITY naming /marketplacePlugins/<id>/hash", async () => {
    const error = await refusedAfter(async () => {
      await editJson(lockFile(), (d) => (d.marketplacePlugins["hello@inrepo"].hash = `tree1-sha256:${"0".repeat(64)}`));
      // Make B's position: nothing restored here yet, so the content must be fetched and checked.
      await rm(path.join(project.work, ".xcsh/plugins"), { recursive: true, force: true });
    });
    expect(error).toMatchObject({ code: "EINTEGRITY", file: lockFile(), path: "/marketplacePlugins/hello@inrepo/hash" });
  });

  it("merge markers in xcsh-team.json: ETEAM_CONFLICT_MARKERS naming the declaration", async () => {
    const error = await refusedAfter(async () => {
      const text = await readFile(declFile(), "utf8");
      await writeFile(declFile(), text.replace(`"hello@inrepo": {}`, `<<<<<<< HEAD\n    "hello@inrepo": {}\n=======\n    "hello@inrepo": { "enabled": false }\n>>>>>>> other`));
    });
    expect(error).toMatchObject({ code: "ETEAM_CONFLICT_MARKERS", file: declFile() });
  });

  it("a generated file git tracks: ETEAM_GENERATED_TRACKED with the `git rm --cached` fix; the repository untouched", async () => {
    const tracked = ".xcsh/plugins/installed_plugins.json";
    const error = await refusedAfter(async () => {
      await git(["add", "-f", tracked], project.work, w);
      await git(["commit", "-q", "-m", "commit a generated file by mistake"], project.work, w);
    });
    expect(error).toMatchObject({ code: "ETEAM_GENERATED_TRACKED", file: path.join(project.work, tracked) });
    expect(error.hint).toContain(`git rm --cached ${tracked}`);
    expect((await git(["ls-files", "--", tracked], project.work, w)).stdout.trim()).toBe(tracked);
    // Also with --dry-run, which writes nothing either.
    expect(refusal(await cli(w, project.work, ["install", "--dry-run", "--json"])).code).toBe("ETEAM_GENERATED_TRACKED");
  });
});

describe("install with no spec: dry runs and personal choices (an in-repo marketplace)", () => {
  let w: TmpWorld;
  let project: GitRemote;
  const declaration = { version: 1, marketplaces: { inrepo: { source: { source: "directory", path: `./${MKT}` } } }, plugins: { "hello@inrepo": {}, "old@inrepo": { enabled: false } } };
  worldPerTest((x) => (w = x), "xcsh-team-e2e-dry-");
  beforeEach(async () => {
    project = await makeGitRemote(w.root, "project", { ...inRepoMarketplace(), "xcsh-team.json": declaration }, isolatedGitEnv(w.home));
    expect((await cli(w, project.work, ["trust"])).code).toBe(0);
  });

  it("a dry run on a terminal in a project not trusted yet asks nothing (not even trust): EUNTRUSTED_PROJECT, nothing written", async () => {
    const fresh = path.join(w.root, "fresh");
    await git(["clone", "-q", project.bare, fresh], w.root, w);
    // Project state of its own: a command that may ask about trust on a terminal would ask here.
    await w.write(path.join(fresh, ".xcsh/tools/x.ts"), "export default {};\n");
    const before = await snap(w);
    const r = await runOnPty(["install", "--dry-run"], { cwd: fresh, home: w.home }, "y");
    expect(r.asked).toBe(false);
    expect(r.code).not.toBe(0);
    expect(r.screen).toContain("EUNTRUSTED_PROJECT");
    expect(await snap(w)).toEqual(before);
  });

  it("a dry run before the first lock says what it would lock and install; no lock, no .xcsh, no cache written", async () => {
    const before = await snap(w);
    const dry = await cli(w, project.work, ["install", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("Would install hello@inrepo");
    expect(dry.stdout).toContain("Would lock ");
    expect(dry.stdout).toContain("old@inrepo: off — team (xcsh-team.json)");
    const doc = (await cli(w, project.work, ["install", "--dry-run", "--json", "--frozen"])).json();
    // --frozen keeps its refusal in a dry run: there is no lock to describe the set.
    expect(doc.error?.code).toBe("ETEAM_FROZEN");
    const json = (await cli(w, project.work, ["install", "--dry-run", "--json"])).json();
    expect(json).toMatchObject({ ok: true, dryRun: true, changed: true, lockChanged: true, written: [], installed: ["hello@inrepo"] });
    expect(await snap(w)).toEqual(before);
  });

  it("a personal opt-out (.xcsh/team.local.json) is shown as yours; the team's as the team's", async () => {
    await w.write(path.join(project.work, ".xcsh/team.local.json"), { version: 1, plugins: { "hello@inrepo": { enabled: false } } });
    const r = await cli(w, project.work, ["install", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("hello@inrepo: off — you (.xcsh/team.local.json)");
    expect(r.stdout).toContain("old@inrepo: off — team (xcsh-team.json)");
    const json = (await cli(w, project.work, ["install", "--dry-run", "--json"])).json();
    expect(json.optOuts).toEqual([
      { plugin: "hello@inrepo", by: "local", file: path.join(project.work, ".xcsh/team.local.json") },
      { plugin: "old@inrepo", by: "team", file: path.join(project.work, "xcsh-team.json") },
    ]);
  });

  it("a declared marketplace plugin asking for Claude Code userConfig: the restore says the host fills none of it (WHOST_USER_CONFIG), in the dry run and the real one, and writes no value anywhere", async () => {
    const catalogFile = path.join(project.work, MKT, catalogPath());
    const doc = JSON.parse(await readFile(catalogFile, "utf8"));
    doc.plugins.push({ name: "keyed", source: "./plugins/keyed", version: "1.0.0" });
    await w.write(catalogFile, doc);
    await w.write(path.join(project.work, MKT, "plugins/keyed/.claude-plugin/plugin.json"), { name: "keyed", version: "1.0.0", userConfig: { api_token: { type: "string", title: "API token", sensitive: true } } });
    await w.write(path.join(project.work, MKT, "plugins/keyed/.mcp.json"), { mcpServers: { keyed: { command: "keyed-server", env: { TOKEN: "${user_config.api_token}" } } } });
    await w.write(path.join(project.work, "xcsh-team.json"), { ...declaration, plugins: { ...declaration.plugins, "keyed@inrepo": {} } });
    const line = 'warning: WHOST_USER_CONFIG: keyed@inrepo declares userConfig "api_token" (sensitive) (.mcp.json uses ${user_config.api_token}), which the xcsh host neither asks for nor fills.';
    const dry = await cli(w, project.work, ["install", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(line);
    const r = await cli(w, project.work, ["install", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(line);
    expect(r.stdout).toContain("environment xcsh starts with");
    const json = (await cli(w, project.work, ["install", "--dry-run", "--json"])).json();
    expect(json.userConfigUnread).toEqual([{ plugin: "keyed@inrepo", use: { options: [{ key: "api_token", sensitive: true }], references: [{ file: ".mcp.json", keys: ["api_token"] }] } }]);
    for (const file of ["xcsh-team.json", "xcsh-team.lock.json"]) expect(await readFile(path.join(project.work, file), "utf8")).not.toContain("api_token");
  });

  it("every generated file git tracks is named, odd names quoted for the shell; the repository untouched", async () => {
    expect((await cli(w, project.work, ["install", "--yes"])).code).toBe(0);
    const odd = ".xcsh/plugins/it's here.json";
    await writeFile(path.join(project.work, odd), "{}\n");
    await writeFile(path.join(project.work, ".xcsh/plugin-overrides.json"), "{}\n");
    await git(["add", "-f", odd, ".xcsh/plugin-overrides.json"], project.work, w);
    await git(["commit", "-q", "-m", "commit generated files by mistake"], project.work, w);
    const head = (await git(["rev-parse", "HEAD"], project.work, w)).stdout;
    const index = await readFile(path.join(project.work, ".git/index"));
    const before = await snap(w);
    const error = refusal(await cli(w, project.work, ["install", "--yes", "--json"]));
    expect(error.code).toBe("ETEAM_GENERATED_TRACKED");
    expect(error.message).toContain(odd);
    expect(error.message).toContain(".xcsh/plugin-overrides.json");
    expect(error.hint).toContain(`git rm --cached .xcsh/plugin-overrides.json '.xcsh/plugins/it'\\''s here.json'`);
    expect(await snap(w)).toEqual(before);
    expect((await git(["rev-parse", "HEAD"], project.work, w)).stdout).toBe(head);
    expect(await readFile(path.join(project.work, ".git/index"))).toEqual(index);
  });
});

describe("install with no spec asks git what it tracks, read-only and running nothing of the repository's configuration", () => {
  let w: TmpWorld;
  worldPerTest((x) => (w = x), "xcsh-team-e2e-git-");
  const declaration = { version: 1, marketplaces: { inrepo: { source: { source: "directory", path: `./${MKT}` } } }, plugins: { "hello@inrepo": {} } };

  it("a core.fsmonitor program in .git/config never runs (plain `git ls-files` would run it)", async () => {
    const project = await makeGitRemote(w.root, "project", { ...inRepoMarketplace(), "xcsh-team.json": declaration }, isolatedGitEnv(w.home));
    const canary = path.join(w.root, "fsmonitor-ran");
    const monitor = await w.write("monitor.sh", `#!/bin/sh\necho ran > ${JSON.stringify(canary)}\n`);
    await exec("chmod", ["+x", monitor]);
    await git(["config", "core.fsmonitor", monitor], project.work, w);
    expect((await cli(w, project.work, ["trust"])).code).toBe(0);
    const r = await cli(w, project.work, ["install", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(await stat(canary).catch(() => undefined)).toBeUndefined();
    // The same question asked without our hardening runs it: the check above can fail.
    await git(["ls-files", "-z", "--", ".xcsh/plugins"], project.work, w);
    expect((await stat(canary)).isFile()).toBe(true);
  });

  it("a project in a subfolder of a repository: a generated file tracked there stops install; names are relative to the project", async () => {
    const repo = await makeGitRemote(w.root, "mono", Object.fromEntries(Object.entries({ ...inRepoMarketplace(), "xcsh-team.json": declaration }).map(([k, v]) => [`apps/web/${k}`, v])), isolatedGitEnv(w.home));
    const web = path.join(repo.work, "apps/web");
    // The project root is where the host finds it: a .xcsh folder marks the subfolder.
    await w.write(path.join(web, ".xcsh/plugin-overrides.json"), "{}\n");
    await git(["add", "-f", "apps/web/.xcsh/plugin-overrides.json"], repo.work, w);
    await git(["commit", "-q", "-m", "overrides"], repo.work, w);
    expect((await cli(w, web, ["trust"])).code).toBe(0);
    const before = await snap(w);
    const error = refusal(await cli(w, web, ["install", "--yes", "--json"]));
    expect(error).toMatchObject({ code: "ETEAM_GENERATED_TRACKED", file: path.join(web, ".xcsh/plugin-overrides.json") });
    expect(error.hint).toContain("git rm --cached .xcsh/plugin-overrides.json");
    expect(await snap(w)).toEqual(before);
  });
});

describe("install with no spec in a repository set up for Claude Code only", () => {
  let w: TmpWorld;
  worldPerTest((x) => (w = x), "xcsh-team-e2e-claude-");

  it("restores what .claude/settings.json declares, never touches .claude/, and writes the lock", async () => {
    const claude = { extraKnownMarketplaces: { inrepo: { source: { source: "directory", path: `./${MKT}` } } }, enabledPlugins: { "hello@inrepo": true } };
    for (const [file, content] of Object.entries({ ...inRepoMarketplace(), ".claude/settings.json": claude })) await w.write(path.join(w.cwd, file), content);
    expect((await cli(w, w.cwd, ["trust"])).code).toBe(0);
    const claudeBefore = await snapshotTree(path.join(w.cwd, ".claude"));
    const r = await cli(w, w.cwd, ["install", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(await snapshotTree(path.join(w.cwd, ".claude"))).toEqual(claudeBefore);
    const lock = JSON.parse(await readFile(path.join(w.cwd, "xcsh-team.lock.json"), "utf8"));
    expect(Object.keys(lock.marketplacePlugins)).toEqual(["hello@inrepo"]);
    const registry = JSON.parse(await readFile(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), "utf8"));
    expect(registry.plugins["hello@inrepo"][0].installPath.startsWith(`${w.home}/`)).toBe(true);
  }, 300_000);
});
