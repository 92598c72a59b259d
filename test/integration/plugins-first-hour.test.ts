/**
 * What a new user met in their first hour (issue 41), end to end with the built CLI, a temp HOME
 * and the shared Verdaccio: git-sourced plugins that update (and that doctor --fix restores) and
 * git failures that say what git said; tool-name conflicts reported by install (npm and
 * marketplace) and link; "did you mean" for misspelled plugin and marketplace names; progress
 * lines in words; where a local plugin came from; and an `update` whose closing line agrees with
 * the lines above it.
 */
import { execFileSync } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { gitIdentityEnv, makeGitRemote, type GitRemote } from "../helpers/git-remote.js";
import { catalog, catalogPath, writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { makePluginWorld, toolName, toolSource, type PluginWorld } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let w: PluginWorld;
let prefix: string;

vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  prefix = `fh${Date.now().toString(36)}`;
}, 180_000);
afterAll(async () => {
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makePluginWorld(reg);
});
afterEach(async () => {
  await w.cleanup();
});

/** The files of a plugin package `name` with one tool `tool`. */
function pluginPackage(name: string, tool: string, version = "0.1.0"): Record<string, string | object> {
  return { "package.json": { name, version, type: "module", xcsh: { tools: "./t.js" } }, "t.js": toolSource(tool) };
}

/** A bare repository holding plugin `name`, and the env its git runs with. */
async function gitPlugin(name: string): Promise<GitRemote> {
  return makeGitRemote(w.root, name, pluginPackage(name, toolName(name)), gitIdentityEnv(w.home));
}

const shown = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

describe("git-sourced npm plugins", () => {
  it("update re-resolves a plugin installed from git+file:// and brings the new commit", async () => {
    const name = `${prefix}-gitup`;
    const remote = await gitPlugin(name);
    const first = await w.cli(["install", `git+${remote.url}`]);
    expect(first.code, shown(first)).toBe(0);
    const resolved = async () => (await w.readJson("package-lock.json")).packages[`node_modules/${name}`].resolved as string;
    expect(await resolved()).toBe(`git+${remote.url}#${await remote.head()}`);

    const next = await remote.commit({ "t.js": toolSource(toolName(name), "// second commit") });
    const up = await w.cli(["update"]);
    expect(up.code, shown(up)).toBe(0);
    expect(up.stderr).not.toMatch(/cannot reach|unknown git error/i);
    expect(await resolved()).toBe(`git+${remote.url}#${next}`);
    expect(up.stdout.trimEnd().split("\n").at(-1)).toBe(`Updated ${name}@0.1.0 (commit ${next.slice(0, 7)})`);
    // No new commit: fetched again, and said to be up to date, not "Updated".
    const again = await w.cli(["update"]);
    expect(again.code, shown(again)).toBe(0);
    expect(again.stdout.trimEnd().split("\n").at(-1)).toBe("Everything is up to date.");

    // Named, too.
    const third = await remote.commit({ "t.js": toolSource(toolName(name), "// third commit") });
    const named = await w.cli(["update", name]);
    expect(named.code, shown(named)).toBe(0);
    expect(await resolved()).toBe(`git+${remote.url}#${third}`);
  });

  it("doctor --fix installs a git+file:// plugin whose folder went missing again, from its repository", async () => {
    const name = `${prefix}-gitfix`;
    const remote = await gitPlugin(name);
    expect((await w.cli(["install", `git+${remote.url}`])).code).toBe(0);
    await rm(path.join(w.plugins, "node_modules", name), { recursive: true, force: true });
    const fixed = await w.cli(["doctor", "--fix", "--json"]);
    expect(fixed.stdout, shown(fixed)).not.toMatch(/transport 'file' not allowed/);
    const tools = await w.cli(["tools", "--json"]);
    expect(tools.code, shown(tools)).toBe(0);
    expect(tools.json().tools.map((t: { name: string }) => t.name)).toEqual([toolName(name)]);
  });

  it("a repository that is gone: update prints git's own words and a hint, not the registry's", async () => {
    const name = `${prefix}-gitgone`;
    const remote = await gitPlugin(name);
    expect((await w.cli(["install", `git+${remote.url}`])).code).toBe(0);
    await rm(remote.bare, { recursive: true, force: true });
    const before = await w.snapshot();
    const up = await w.cli(["update"]);
    expect(up.code).toBe(1);
    expect(up.stderr).toContain("Code: EGIT");
    expect(up.stderr).toMatch(/fatal: '.*gitgone\.git' does not appear to be a git repository/);
    expect(up.stderr).toMatch(/Try this: The repository cannot be reached/);
    expect(up.stderr).not.toMatch(/cannot reach the registry|unknown git error/i);
    expect(await w.snapshot()).toEqual(before);

    const json = await w.cli(["update", "--json"]);
    expect(json.code).toBe(1);
    expect(json.json().error).toMatchObject({ code: "EGIT", message: expect.stringMatching(/does not appear to be a git repository/), hint: expect.stringMatching(/still exists/) });
  });

  it("install of a ref the repository does not have, or of a repository that is not there, says so", async () => {
    const name = `${prefix}-gitref`;
    const remote = await gitPlugin(name);
    const ref = await w.cli(["install", `git+${remote.url}#no-such-branch`]);
    expect(ref.code).toBe(1);
    expect(ref.stderr).toContain("Code: EGIT");
    expect(ref.stderr).toMatch(/no-such-branch/);
    expect(ref.stderr).toMatch(/Try this: The branch, tag or commit after `#` is not in the repository/);
    expect(ref.stderr).not.toMatch(/registry|unknown git error|could not be found\b/i);

    const missing = await w.cli(["install", `git+file://${path.join(w.root, "nowhere.git")}`]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/git ls-remote failed \(exit 128\): fatal: '.*nowhere\.git' does not appear to be a git repository/);
    expect(missing.stderr).not.toMatch(/registry/i);
    expect(await w.snapshot()).toEqual(w.fresh);
  });

  it("a marketplace whose repository is gone: update shows git's words (core/git.ts runner)", async () => {
    const mkt = await makeGitRemote(w.root, "gonemkt", { [catalogPath()]: catalog("gonemkt", []) }, gitIdentityEnv(w.home));
    const added = await w.cli(["marketplace", "add", mkt.url], gitIdentityEnv(w.home));
    expect(added.code, shown(added)).toBe(0);
    await rm(mkt.bare, { recursive: true, force: true });
    const up = await w.cli(["marketplace", "update"], gitIdentityEnv(w.home));
    expect(up.code).toBe(1);
    expect(shown(up)).toMatch(/fatal: .*gonemkt\.git.* does not appear to be a git repository/);
    expect(shown(up)).not.toMatch(/Please make sure you have the correct access rights/);
  });
});

describe("install and link warn about tool-name conflicts (the loader's rules)", () => {
  /** A plugin folder `name` with one tool `tool`. */
  async function folderPlugin(name: string, tool: string): Promise<string> {
    const dir = path.join(w.root, "dev", name);
    for (const [file, content] of Object.entries(pluginPackage(name, tool))) await w.write(path.join(dir, file), content);
    return dir;
  }

  it("install of a plugin whose tool another plugin already has: a warning naming both, which one wins and what to do; --json carries it", async () => {
    const first = await folderPlugin(`${prefix}-c1`, "shared_tool");
    const second = await folderPlugin(`${prefix}-c2`, "shared_tool");
    const quiet = await w.cli(["install", first]);
    expect(quiet.code, shown(quiet)).toBe(0);
    expect(quiet.stderr).not.toMatch(/warning/);

    const r = await w.cli(["install", second]);
    expect(r.code, shown(r)).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`warning: tool "shared_tool" of npm Plugin ${prefix}-c2 \\(user\\) \\(.*${prefix}-c2/t\\.js\\) has the same name as the one of npm Plugin ${prefix}-c1 \\(user\\) \\(.*${prefix}-c1/t\\.js\\), which loads first: the host keeps that one and skips this one`));
    expect(r.stderr).toMatch(new RegExp(`xcsh-tools disable ${prefix}-c2\``));

    // Installed again under --json: the document says it (nothing on stderr).
    const json = await w.cli(["install", second, "--json"]);
    expect(json.code).toBe(0);
    expect(json.stderr).toBe("");
    expect(json.json().toolConflicts).toEqual([expect.objectContaining({ tool: "shared_tool", skipped: expect.objectContaining({ plugin: `${prefix}-c2` }), kept: expect.objectContaining({ plugin: `${prefix}-c1` }) })]);
  });

  it("a plugin's tool that a tools folder of the project already has: the warning names the file that wins", async () => {
    const projectTool = await w.write(path.join(w.cwd, ".xcsh/tools/mine.js"), toolSource("project_tool"));
    // A project's tools load only once the user trusts it, as a user would.
    expect((await w.cli(["trust"])).code).toBe(0);
    const r = await w.cli(["install", await folderPlugin(`${prefix}-c3`, "project_tool")]);
    expect(r.code, shown(r)).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`warning: tool "project_tool" of npm Plugin ${prefix}-c3 .* has the same name as the one of .*\\(${projectTool.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\), which loads first`));
  });

  it("install of a marketplace plugin whose tool an npm plugin already has: a warning naming both", async () => {
    expect((await w.cli(["install", await folderPlugin(`${prefix}-c6`, "market_shared_tool")])).code).toBe(0);
    const root = await writeFolderMarketplace(path.join(w.root, "cmarket"), { name: "cmarket", plugin: "hello", tools: ["market_shared_tool"] });
    expect((await w.cli(["marketplace", "add", root])).code).toBe(0);
    const r = await w.cli(["install", "hello@cmarket", "--yes"]);
    expect(r.code, shown(r)).toBe(0);
    // Marketplace plugins load before npm ones: the new plugin's tool wins, the npm plugin's is skipped.
    expect(r.stderr).toMatch(new RegExp(`warning: tool "market_shared_tool" of npm Plugin ${prefix}-c6 \\(user\\) \\(.*\\) has the same name as the one of xcsh Marketplace hello@cmarket \\(user\\) \\(.*\\), which loads first: the host keeps that one and skips this one`));
    const json = await w.cli(["install", "hello@cmarket", "--yes", "--json"]);
    expect(json.code, shown(json)).toBe(0);
    // Already installed: nothing new, nothing said.
    expect(json.json().toolConflicts).toBeUndefined();
  });

  it("link of a folder whose tool an installed plugin has: a warning, and --json carries it", async () => {
    expect((await w.cli(["install", await folderPlugin(`${prefix}-c4`, "linked_tool")])).code).toBe(0);
    const dev = await folderPlugin(`${prefix}-c5`, "linked_tool");
    const r = await w.cli(["link", dev]);
    expect(r.code, shown(r)).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`warning: tool "linked_tool" of npm Plugin ${prefix}-c5 .* has the same name as the one of npm Plugin ${prefix}-c4 .*which loads first`));
    const again = await w.cli(["link", dev, "--json"]);
    expect(again.json().toolConflicts ?? [], "a NOOP link brings nothing new").toEqual([]);
    expect((await w.cli(["unlink", `${prefix}-c5`])).code).toBe(0);
    const json = await w.cli(["link", dev, "--json"]);
    expect(json.json().toolConflicts).toEqual([expect.objectContaining({ tool: "linked_tool", skipped: expect.objectContaining({ plugin: `${prefix}-c5` }) })]);
  });
});

describe("a misspelled plugin name: the error hints the closest installed names", () => {
  /** A plugin folder `name` with one tool `tool`. */
  async function folderPlugin(name: string, tool: string): Promise<string> {
    const dir = path.join(w.root, "dev", name.replace(/[@/]/g, "_"));
    for (const [file, content] of Object.entries(pluginPackage(name, tool))) await w.write(path.join(dir, file), content);
    return dir;
  }

  it("every command that takes an installed npm plugin's name, human and --json", async () => {
    const search = `@${prefix}/search`;
    const weather = `${prefix}-weather`;
    const r = await w.cli(["install", await folderPlugin(search, "dym_search"), await folderPlugin(weather, "dym_weather")]);
    expect(r.code, shown(r)).toBe(0);
    const typo = `${prefix}-wether`;
    const cases: [string[], string][] = [
      [["enable", typo], weather],
      [["disable", `@${prefix}/serach`], search],
      [["features", typo], weather],
      [["config", "list", typo], weather],
      [["config", "get", `${prefix}-weathr`, "limit"], weather],
      [["uninstall", typo], weather],
      [["unlink", typo], weather],
      [["update", typo], weather],
      [["outdated", typo], weather],
      [["show", typo], weather],
      // The scope left off.
      [["disable", "search"], search],
    ];
    // `show` keeps a cache of components (boot-components.json): made now, so that the
    // snapshot below compares only what the failed commands could have changed.
    expect((await w.cli(["show", weather])).code).toBe(0);
    const before = await w.snapshot();
    for (const [args, meant] of cases) {
      const human = await w.cli(args);
      expect(human.code, `${args.join(" ")}\n${shown(human)}`).toBe(1);
      expect(human.stderr, args.join(" ")).toMatch(/^Code: ENOT_INSTALLED$/m);
      expect(human.stderr, args.join(" ")).toContain(`Try this: Did you mean \`${meant}\`?`);
      const json = await w.cli([...args, "--json"]);
      expect(json.json().error, args.join(" ")).toMatchObject({ code: "ENOT_INSTALLED", hint: expect.stringContaining(`Did you mean \`${meant}\`?`) });
    }
    // Nothing close: no guess.
    const far = await w.cli(["enable", "completely-unrelated-name"]);
    expect(far.stderr).toMatch(/^Code: ENOT_INSTALLED$/m);
    expect(far.stderr).not.toMatch(/Did you mean/);
    expect(await w.snapshot()).toEqual(before);
  });

  it("marketplace plugin ids and marketplace names", async () => {
    const root = await writeFolderMarketplace(path.join(w.root, "market"), { name: "acme-market", plugin: "hello", tools: ["dym_hello_tool"] });
    expect((await w.cli(["marketplace", "add", root])).code).toBe(0);
    const installed = await w.cli(["install", "hello@acme-market", "--yes"]);
    expect(installed.code, shown(installed)).toBe(0);
    const cases: [string[], string, string][] = [
      [["disable", "helo@acme-market"], "ENOT_INSTALLED", "hello@acme-market"],
      [["uninstall", "hlelo@acme-market"], "ENOT_INSTALLED", "hello@acme-market"],
      [["update", "hallo@acme-market"], "ENOT_INSTALLED", "hello@acme-market"],
      [["install", "hello@acme-makret"], "EUNKNOWN_MARKETPLACE", "acme-market"],
      [["marketplace", "remove", "acme-markt"], "EMARKETPLACE_NOT_FOUND", "acme-market"],
      [["marketplace", "update", "acme-marke"], "EMARKETPLACE_NOT_FOUND", "acme-market"],
    ];
    for (const [args, code, meant] of cases) {
      const r = await w.cli([...args, "--json"]);
      expect(r.code, `${args.join(" ")}\n${shown(r)}`).not.toBe(0);
      expect(r.json().error, args.join(" ")).toMatchObject({ code, hint: expect.stringContaining(`Did you mean \`${meant}\`?`) });
    }
  });
});

describe("progress lines read as words", () => {
  it("uninstall's progress says 'removing <name>', never '(-name)' that reads like a flag; install's names the plugins", async () => {
    const names = [1, 2].map((i) => `${prefix}-prog${i}`);
    const dirs: string[] = [];
    for (const name of names) {
      const dir = path.join(w.root, "dev", name);
      for (const [file, content] of Object.entries(pluginPackage(name, toolName(name)))) await w.write(path.join(dir, file), content);
      dirs.push(dir);
    }
    const install = await w.cli(["install", ...dirs]);
    expect(install.code, shown(install)).toBe(0);
    expect(install.stderr).toContain(`  Installing with npm's installer (${names.join(", ")})\n`);
    expect(install.stderr).toContain(`  Validating ${names.join(", ")}\n`);

    const uninstall = await w.cli(["uninstall", ...names]);
    expect(uninstall.code, shown(uninstall)).toBe(0);
    expect(uninstall.stderr).toContain(`  Installing with npm's installer (removing ${names.join(", ")})\n`);
    for (const r of [install, uninstall]) expect(r.stderr).not.toMatch(/[(,]\s*-[a-z@]/i);
  });
});

describe("list says where a local plugin came from, as an absolute path", () => {
  it("install ./folder, install ./x.tgz and link ./folder typed relative to the project: list shows the absolute source from any folder", async () => {
    const make = async (name: string) => {
      const dir = path.join(w.cwd, "plugins-dev", name);
      for (const [file, content] of Object.entries(pluginPackage(name, toolName(name)))) await w.write(path.join(dir, file), content);
      return dir;
    };
    const folder = await make(`${prefix}-where-folder`);
    const tarDir = await make(`${prefix}-where-tar`);
    const linked = await make(`${prefix}-where-link`);
    execFileSync("npm", ["pack", "--silent", "--ignore-scripts"], { cwd: tarDir, env: { ...process.env, npm_config_cache: path.join(w.home, ".npm") } });
    const tgz = path.join(tarDir, `${prefix}-where-tar-0.1.0.tgz`);

    // Typed relative to the project folder (the CLI's cwd), as a user does.
    const rel = (p: string) => `./${path.relative(w.cwd, p)}`;
    for (const args of [["install", rel(folder)], ["install", rel(tgz)], ["link", rel(linked)]]) {
      const r = await w.cli(args);
      expect(r.code, shown(r)).toBe(0);
    }
    // Asked from elsewhere: a relative path would name nothing there.
    const elsewhere = await w.cli(["list", "--cwd", w.home]);
    expect(elsewhere.code, shown(elsewhere)).toBe(0);
    const lineOf = (name: string) => elsewhere.stdout.split("\n").find((l) => l.startsWith(`${name}@`)) ?? "";
    expect(lineOf(`${prefix}-where-folder`)).toContain(`from folder ${folder}`);
    expect(lineOf(`${prefix}-where-tar`)).toContain(`from tarball ${tgz}`);
    expect(lineOf(`${prefix}-where-link`)).toContain(`linked → ${linked}`);
    expect(elsewhere.stdout).not.toContain("./plugins-dev");

    const json = (await w.cli(["list", "--json"])).json().plugins as { name: string; spec: string; source: string }[];
    expect(json.map((p) => [p.name, p.source, p.spec]).sort()).toEqual(
      [
        [`${prefix}-where-folder`, "directory", folder],
        [`${prefix}-where-link`, "link", `file:${linked}`],
        [`${prefix}-where-tar`, "tarball", tgz],
      ].sort(),
    );
  });
});

describe("update ends with one line that agrees with everything above it", () => {
  it("npm and marketplace plugins together: updated, failed, unchecked and up to date each say so", async () => {
    const market = path.join(w.root, "market");
    const offer = (version: string) => writeFolderMarketplace(market, { name: "upmkt", plugin: "hello", tools: ["up_hello_tool"], entry: { version } });
    await offer("1.0.0");
    expect((await w.cli(["marketplace", "add", market])).code).toBe(0);
    const installed = await w.cli(["install", "hello@upmkt", "--yes"]);
    expect(installed.code, shown(installed)).toBe(0);
    const last = (r: { stdout: string }) => r.stdout.trimEnd().split("\n").at(-1);

    // Only the marketplace plugin, nothing new: up to date.
    const same = await w.cli(["update", "--yes"]);
    expect(same.code, shown(same)).toBe(0);
    expect(last(same)).toBe("Everything is up to date.");

    // A plugin from a folder, which no registry can tell about.
    const name = `${prefix}-upfolder`;
    const dir = path.join(w.root, "dev", name);
    for (const [file, content] of Object.entries(pluginPackage(name, toolName(name)))) await w.write(path.join(dir, file), content);
    expect((await w.cli(["install", dir])).code).toBe(0);
    const unchecked = await w.cli(["update", "--yes"]);
    expect(unchecked.code, shown(unchecked)).toBe(0);
    expect(unchecked.stdout).toContain(`${name}  installed from folder ${dir}: reinstall it to update (\`xcsh-tools install ${dir}\`)`);
    expect(last(unchecked)).toBe(`Nothing was updated; ${name} has no registry to check (see above).`);

    // The catalog moved on and was not fetched yet: the marketplace plugin fails.
    await offer("1.1.0");
    const failed = await w.cli(["update", "--yes"]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/FAILED +hello@upmkt/);
    expect(last(failed)).toBe("Nothing was updated: see the failures above.");

    // Fetched: the marketplace plugin is updated, below the npm plugin's NOOP.
    expect((await w.cli(["marketplace", "update"])).code).toBe(0);
    const updated = await w.cli(["update", "--yes"]);
    expect(updated.code, shown(updated)).toBe(0);
    expect(updated.stdout).toMatch(/CHANGE +hello@upmkt \(user\) +1\.0\.0 → 1\.1\.0/);
    expect(last(updated)).toBe("Updated hello@upmkt 1.1.0");
    for (const r of [unchecked, failed, updated]) expect(r.stdout).not.toContain("Everything is up to date");
  });
});
