/**
 * Hostile git and npm sources: catalogs (folders, bare git repositories over file://, a catalog
 * served over loopback http), Claude Code's known marketplaces, typed marketplace sources and
 * install specs whose URLs, refs, shas, repos, paths and versions are shaped as options, remote
 * helpers (`ext::`, `fd::`) or local paths. Every command that touches them refuses with a coded
 * error (EGIT_URL, EGIT_REF, ESHA, ESOURCE_INVALID, EENTRY_ESCAPE, EVERSION…), the canary never
 * runs and nothing outside the world changes.
 *
 * The last part runs the git runner with a fake `git` first on PATH that records its argv: every
 * call carries `-c protocol.ext.allow=never` and puts the URL after `--`, and a hostile value
 * never reaches git at all.
 */
import { execFileSync } from "node:child_process";
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cloneAt, remoteHead } from "../../src/core/git.js";
import type { MarketplaceEntry } from "../../src/manifest/marketplaces-registry.js";
import { pluginSourceOf } from "../../src/marketplace/plugin-sources/index.js";
import { refreshBootIndex } from "../../src/boot/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { isolatedGitEnv, makeGitRemote } from "../helpers/git-remote.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog, pluginFiles } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { hermeticEnv, runCli, type ProcessResult } from "../helpers/run-cli.js";
import { writeUserNpmrc } from "../helpers/tmp-home.js";
import { makeHostileWorld, type HostileWorld } from "./hostile-world.js";

let world: HostileWorld;
let http: TestHttpServer | undefined;

beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  world = await makeHostileWorld({ trusted: true });
});
afterEach(async () => {
  await world.cleanup();
});
afterAll(async () => {
  await http?.close();
});

const GIT_ISOLATION = { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
  return runCli(args, { cwd: world.cwd, home: world.home, env: { ...GIT_ISOLATION, ...env }, timeoutMs: 90_000 });
}

/** The coded error of a failed `--json` run. */
function errorOf(r: ProcessResult): { code: string; message: string; hint?: string; file?: string; path?: string } {
  expect(r.code, `${r.stdout}\n${r.stderr}`).not.toBe(0);
  return r.json().error;
}

/** A folder marketplace `mkt` whose only plugin `evil` has `source`. */
async function folderMarketplace(source: unknown, name = "mkt"): Promise<string> {
  const dir = path.join(world.root, `market-${name}`);
  await world.write(path.join(dir, ".xcsh-plugin", "marketplace.json"), catalog(name, [{ name: "evil", source }]));
  return dir;
}

/** Hostile values, each naming the canary or the victim. */
function hostile() {
  return {
    uploadPack: `--upload-pack=${world.canary}`,
    proxy: `-oProxyCommand=${world.canary}`,
    ext: `ext::sh -c ${world.canary}`,
    extNoSpace: `ext::${world.canary}`,
    sshProxy: `ssh://-oProxyCommand=${world.canary}/x`,
    outputRef: `--output=${path.join(world.victim, "out")}`,
    configRef: `-c core.sshCommand=${world.canary}`,
  };
}

describe("read time: validate reports every hostile value with its code and field", () => {
  const cases: [string, () => unknown, string, string][] = [
    ["url --upload-pack", () => ({ source: "url", url: hostile().uploadPack }), "EGIT_URL", "/plugins/0/source/url"],
    ["url ext::", () => ({ source: "url", url: hostile().extNoSpace }), "EGIT_URL", "/plugins/0/source/url"],
    ["url ssh host -oProxyCommand", () => ({ source: "url", url: hostile().sshProxy }), "EGIT_URL", "/plugins/0/source/url"],
    ["url fd::", () => ({ source: "url", url: "fd::3" }), "EGIT_URL", "/plugins/0/source/url"],
    ["ref --output", () => ({ source: "github", repo: "acme/x", ref: hostile().outputRef }), "EGIT_REF", "/plugins/0/source/ref"],
    ["ref -c core.sshCommand", () => ({ source: "url", url: "https://example.com/x.git", ref: hostile().configRef }), "EGIT_REF", "/plugins/0/source/ref"],
    ["sha not hex", () => ({ source: "url", url: "https://example.com/x.git", sha: "--upload-pack=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }), "ESHA", "/plugins/0/source/sha"],
    ["github owner -o", () => ({ source: "github", repo: "-oProxyCommand/x" }), "ESOURCE_INVALID", "/plugins/0/source/repo"],
    ["git-subdir ../../victim", () => ({ source: "git-subdir", url: "acme/mono", path: "../../victim" }), "EENTRY_ESCAPE", "/plugins/0/source/path"],
    ["git-subdir url -oProxyCommand", () => ({ source: "git-subdir", url: hostile().proxy, path: "p" }), "EGIT_URL", "/plugins/0/source/url"],
    ["npm version option-shaped", () => ({ source: "npm", package: "left-pad", version: "--registry=http://127.0.0.1:9/" }), "EVERSION", "/plugins/0/source/version"],
  ];
  it.each(cases)("%s", async (_label, source, code, at) => {
    const dir = await folderMarketplace(source());
    const r = await cli(["validate", dir, "--json"]);
    expect(r.code).not.toBe(0);
    const errors = r.json().errors as { code: string; path: string; file: string }[];
    expect(errors).toContainEqual(expect.objectContaining({ code, path: at }));
    await world.assertUntouched();
  });
});

describe("marketplace add, then install: a skipped entry is refused with its own code", () => {
  const cases: [string, () => unknown, string][] = [
    ["url --upload-pack", () => ({ source: "url", url: hostile().uploadPack }), "EGIT_URL"],
    ["url ext::", () => ({ source: "url", url: hostile().ext }), "EGIT_URL"],
    ["github ref -c core.sshCommand", () => ({ source: "github", repo: "acme/x", ref: hostile().configRef }), "EGIT_REF"],
    ["git-subdir ../../victim", () => ({ source: "git-subdir", url: "acme/mono", path: "../../victim" }), "EENTRY_ESCAPE"],
    ["npm version --registry", () => ({ source: "npm", package: "left-pad", version: "--registry=http://127.0.0.1:9/" }), "EVERSION"],
  ];
  it.each(cases)("%s", async (_label, source, code) => {
    const dir = await folderMarketplace(source());
    const add = await cli(["marketplace", "add", dir, "--json"]);
    expect(add.code, add.stderr).toBe(0);
    // Added without the entry, and saying why.
    expect(add.json().plugins).toEqual([]);
    expect(add.json().warnings).toEqual([expect.stringContaining(`(${code}); this plugin entry is skipped`)]);
    const install = await cli(["install", "evil@mkt", "--json"]);
    const error = errorOf(install);
    expect(error.code).toBe(code);
    expect(error.file).toMatch(/marketplace\.json$/);
    expect(error.path).toMatch(/^\/plugins\/0\/source/);
    await world.assertUntouched();
  });
});

describe("a catalog from a remote never reaches the local disk", () => {
  it("an http catalog naming file:///<private repo> is refused at add and at install", async () => {
    const env = isolatedGitEnv(world.home);
    const secret = await makeGitRemote(world.root, "private", pluginFiles("", "evil", ["t"]), env);
    http ??= await startHttpServer();
    http.set("/remote/marketplace.json", catalog("remote", [{ name: "evil", source: { source: "url", url: secret.url } }]));
    const add = await cli(["marketplace", "add", `${http.url}/remote/marketplace.json`, "--json"]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.json().warnings).toEqual([expect.stringMatching(/local disk.*\(EGIT_URL\)/)]);
    // The cached catalog keeps only valid entries: the entry is not there to install.
    const install = await cli(["install", "evil@remote", "--json"]);
    expect(errorOf(install).code).toBe("EPLUGIN_NOT_FOUND");
    // A cache edited to bring it back is refused with the entry's own code.
    const list = (await cli(["marketplace", "list", "--json"])).json();
    const cached = JSON.stringify(list).match(/"catalogPath":"([^"]+)"/)![1]!;
    const doc = JSON.parse(await readFile(cached, "utf8"));
    doc.plugins = [{ name: "evil", source: { source: "url", url: secret.url } }];
    await writeFile(cached, JSON.stringify(doc));
    const again = errorOf(await cli(["install", "evil@remote", "--json"]));
    expect(again.code).toBe("EGIT_URL");
    expect(again.message).toContain("local disk");
    await world.assertUntouched();
  });

  it("the same entry in a marketplace cloned from the local disk installs (the tests' own rule)", async () => {
    const env = isolatedGitEnv(world.home);
    const plugin = await makeGitRemote(world.root, "plug", pluginFiles("", "good", ["good_tool"]), env);
    const market = await makeGitRemote(world.root, "localmkt", { ".xcsh-plugin/marketplace.json": catalog("localmkt", [{ name: "good", source: { source: "url", url: plugin.url } }]) }, env);
    expect((await cli(["marketplace", "add", market.url])).code).toBe(0);
    const install = await cli(["install", "good@localmkt", "--json"]);
    expect(install.code, install.stdout + install.stderr).toBe(0);
    await world.assertUntouched();
  });
});

describe("marketplace add: hostile typed sources", () => {
  const cases: [string, () => string, string][] = [
    ["--upload-pack as the source", () => hostile().uploadPack, "EGIT_URL"],
    ["ext:: remote helper", () => hostile().ext, "EGIT_URL"],
    ["ssh host -oProxyCommand", () => hostile().sshProxy, "EGIT_URL"],
    ["git URL #ref --upload-pack", () => `https://127.0.0.1:9/x.git#${hostile().uploadPack}`, "EGIT_REF"],
    ["github shorthand owner -o", () => "github:-oProxyCommand/x", "ESOURCE_INVALID"],
  ];
  it.each(cases)("%s", async (_label, source, code) => {
    const r = await cli(["marketplace", "add", "--json", "--", source()]);
    expect(errorOf(r).code).toBe(code);
    await world.assertUntouched();
  });
});

/** A git marketplace `gm` with plugin `good` (a url source), installed; returns the cached catalog file. */
async function installedGitPlugin(): Promise<string> {
  const env = isolatedGitEnv(world.home);
  const plugin = await makeGitRemote(world.root, "plug", pluginFiles("", "good", ["good_tool"]), env);
  const market = await makeGitRemote(world.root, "gm", { ".xcsh-plugin/marketplace.json": catalog("gm", [{ name: "good", source: { source: "url", url: plugin.url } }]) }, env);
  expect((await cli(["marketplace", "add", market.url])).code).toBe(0);
  const install = await cli(["install", "good@gm"]);
  expect(install.code, install.stderr).toBe(0);
  const list = (await cli(["marketplace", "list", "--json"])).json();
  return JSON.stringify(list).match(/"catalogPath":"([^"]+)"/)![1]!;
}

/**
 * `installedGitPlugin()` for the tests that tamper with its result: made once by the CLI in the
 * first test's world, saved whole, and restored at the same paths (its state names them) for each
 * later test, whose own fresh world is then not used. The copy's files have new inodes, so the
 * boot index is re-recorded, as every mutation ends (crash-helpers.ts restores so too).
 */
let gitPluginTemplate: { world: HostileWorld; file: string; copy: string } | undefined;
afterAll(async () => {
  if (gitPluginTemplate) await rm(gitPluginTemplate.copy, { recursive: true, force: true });
});
async function restoredGitPlugin(): Promise<string> {
  const options = { recursive: true, verbatimSymlinks: true, preserveTimestamps: true } as const;
  if (!gitPluginTemplate) {
    const file = await installedGitPlugin();
    const copy = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-git-plugin-template-"));
    await cp(world.root, copy, options);
    gitPluginTemplate = { world, file, copy };
    return file;
  }
  await world.cleanup();
  world = gitPluginTemplate.world;
  await rm(world.root, { recursive: true, force: true });
  await cp(gitPluginTemplate.copy, world.root, options);
  await refreshBootIndex({ home: world.home, xcshHome: world.xcshHome, env: hermeticEnv(world.home, GIT_ISOLATION), cwd: world.cwd });
  return gitPluginTemplate.file;
}

/** Rewrite the cached catalog's entry `good` (a state file edited behind our back). */
async function tamperCachedEntry(file: string, source: unknown): Promise<void> {
  const doc = JSON.parse(await readFile(file, "utf8"));
  doc.plugins[0].source = source;
  await writeFile(file, JSON.stringify(doc));
}

describe("update, outdated, doctor on a tampered cached catalog", () => {
  it("update refuses the hostile url with EGIT_URL", async () => {
    const file = await restoredGitPlugin();
    await tamperCachedEntry(file, { source: "url", url: hostile().uploadPack });
    const r = await cli(["update", "good@gm", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().failed).toEqual([expect.objectContaining({ id: "good@gm", error: expect.objectContaining({ code: "EGIT_URL" }) })]);
    await world.assertUntouched();
  });

  it("outdated refuses a hostile ref with EGIT_REF", async () => {
    const file = await restoredGitPlugin();
    // Before: `git ls-remote <url> --upload-pack=<canary>` (git parses options after operands).
    const pluginUrl = JSON.parse(await readFile(file, "utf8")).plugins[0].source.url as string;
    await tamperCachedEntry(file, { source: "url", url: pluginUrl, ref: hostile().uploadPack });
    const r = await cli(["outdated", "good@gm", "--json"]);
    const rows = r.json().marketplacePlugins as { id: string; error?: { code: string } }[];
    expect(rows).toEqual([expect.objectContaining({ id: "good@gm", error: expect.objectContaining({ code: "EGIT_REF" }) })]);
    await world.assertUntouched();
  });

  it("doctor reports the hostile entry with its code", async () => {
    const file = await restoredGitPlugin();
    await tamperCachedEntry(file, { source: "url", url: hostile().ext });
    const r = await cli(["doctor", "--json"]);
    expect(r.stdout).toContain("EGIT_URL");
    expect(r.code).not.toBe(0);
    await world.assertUntouched();
  });

  it("marketplace update refuses a registry whose sourceUri is a remote helper", async () => {
    await restoredGitPlugin();
    const registry = path.join(world.xcshHome, "marketplaces.json");
    const doc = JSON.parse(await readFile(registry, "utf8"));
    doc.marketplaces[0].sourceUri = hostile().extNoSpace;
    await writeFile(registry, JSON.stringify(doc));
    const error = errorOf(await cli(["marketplace", "update", "gm", "--json"]));
    expect(error.code).toBe("EREGISTRY_FILE");
    expect(error.path).toBe("/marketplaces/0/sourceUri");
    expect(error.message).toContain("remote-helper");
    await world.assertUntouched();
  });
});

describe("marketplace import-claude: Claude's known marketplaces are untrusted", () => {
  it("refuses every hostile source with its code and imports nothing", async () => {
    const known = {
      helper: { source: { source: "git", url: hostile().extNoSpace }, installLocation: "/x" },
      option: { source: { source: "git", url: hostile().uploadPack }, installLocation: "/x" },
      owner: { source: { source: "github", repo: "-oProxyCommand/x" }, installLocation: "/x" },
      ref: { source: { source: "git", url: "https://127.0.0.1:9/x.git", ref: hostile().configRef }, installLocation: "/x" },
      fd: { source: { source: "git", url: "fd::3" }, installLocation: "/x" },
      spaced: { source: { source: "git", url: `https://127.0.0.1:9/x.git ${hostile().uploadPack}` }, installLocation: "/x" },
    };
    await world.write(path.join(world.home, ".claude", "plugins", "known_marketplaces.json"), known);
    const r = await cli(["marketplace", "import-claude", "--json"]);
    expect(r.code).toBe(1);
    const rows = r.json().marketplaces as { name: string; status: string; error?: { code: string } }[];
    const codes = Object.fromEntries(rows.map((row) => [row.name, `${row.status}:${row.error?.code}`]));
    expect(codes).toEqual({ helper: "failed:EGIT_URL", option: "failed:EGIT_URL", owner: "failed:ESOURCE_INVALID", ref: "failed:EGIT_REF", fd: "failed:EGIT_URL", spaced: "failed:EGIT_URL" });
    const list = await cli(["marketplace", "list", "--json"]);
    expect(JSON.stringify(list.json())).not.toContain("helper");
    await world.assertUntouched();
  });
});

describe("install: hostile git specs", () => {
  const cases: [string, () => string, string][] = [
    ["git+ssh host -oProxyCommand", () => `git+ssh://-oProxyCommand=${world.canary}/x`, "EGIT_URL"],
    ["git+https committish --upload-pack", () => `git+https://127.0.0.1:9/x.git#${hostile().uploadPack}`, "EGIT_REF"],
    ["github: owner -o", () => "github:-oProxyCommand/x", "ESOURCE_INVALID"],
    ["github shorthand committish --output", () => `acme/x#${hostile().outputRef}`, "EGIT_REF"],
    ["git+https semver range option-shaped", () => "git+https://127.0.0.1:9/x.git#semver:--x", "EVERSION"],
  ];
  it.each(cases)("%s", async (_label, spec, code) => {
    const r = await cli(["install", "--json", "--", spec()]);
    expect(errorOf(r).code).toBe(code);
    await world.assertUntouched();
  });
});

describe("specs are never silently reinterpreted", () => {
  let reg: (RegistryHandle & { dispose(): Promise<void> }) | undefined;
  const pkg = `gs${Date.now().toString(36)}-tagged`;
  beforeAll(async () => {
    reg = await useGlobalRegistry();
    const tool = (v: string) => `export default (api) => ({ name: "gs_tagged", label: "t", description: "v${v}", parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`;
    await reg.publish({ name: pkg, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": tool("1") } });
    await reg.publish({ name: pkg, version: "2.0.0-beta.1", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": tool("2") } }, { tag: "beta" });
  }, 120_000);
  afterAll(async () => {
    await reg?.dispose();
  });

  it("name@beta with no marketplace beta is EUNKNOWN_MARKETPLACE, listing the added ones; npm:name@beta installs the dist-tag", async () => {
    await writeUserNpmrc(world.home, reg!.url);
    const mkt = await folderMarketplace({ source: "npm", package: pkg }, "shop");
    expect((await cli(["marketplace", "add", mkt])).code).toBe(0);
    const error = errorOf(await cli(["install", `${pkg}@beta`, "--json"]));
    expect(error.code).toBe("EUNKNOWN_MARKETPLACE");
    expect(error.message).toContain("shop");
    expect(error.hint).toContain(`npm:${pkg}@beta`);
    expect(errorOf(await cli(["uninstall", `${pkg}@beta`, "--json"])).code).toBe("EUNKNOWN_MARKETPLACE");
    const tagged = await cli(["install", `npm:${pkg}@beta`, "--json"]);
    expect(tagged.code, tagged.stdout + tagged.stderr).toBe(0);
    expect(tagged.json().plugins).toEqual([expect.objectContaining({ name: pkg, version: "2.0.0-beta.1" })]);
    // `latest` is npm's default tag, the same as the bare name: it stays npm.
    const latest = await cli(["install", `${pkg}@latest`, "--json"]);
    expect(latest.code, latest.stdout + latest.stderr).toBe(0);
    expect(latest.json().plugins).toEqual([expect.objectContaining({ name: pkg, version: "1.0.0" })]);
    await world.assertUntouched();
  });
});

describe("the git runner: operands after --, protocol.ext.allow=never, checks before the call", () => {
  let fakeDir: string;
  let log: string;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    fakeDir = path.join(world.root, "fake-git");
    log = path.join(world.root, "git-argv.jsonl");
    await mkdir(fakeDir, { recursive: true });
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    // A `git` first on PATH (PATH is the user's trusted environment) that records its argv.
    await writeFile(
      path.join(fakeDir, "git"),
      `#!${process.execPath}\nconst { appendFileSync } = require("node:fs");\nconst { spawnSync } = require("node:child_process");\nappendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + "\\n");\nconst r = spawnSync(${JSON.stringify(realGit)}, process.argv.slice(2), { stdio: "inherit" });\nprocess.exit(r.status ?? 1);\n`,
    );
    await chmod(path.join(fakeDir, "git"), 0o755);
    env = { ...isolatedGitEnv(world.home), PATH: `${fakeDir}${path.delimiter}${process.env.PATH ?? ""}` };
  });

  async function calls(): Promise<string[][]> {
    try {
      return (await readFile(log, "utf8")).trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as string[]);
    } catch {
      return [];
    }
  }

  function expectHardened(argv: string[], url: string | undefined): void {
    const settings = argv.flatMap((a, i) => (argv[i - 1] === "-c" ? [a] : []));
    expect(settings).toContain("protocol.ext.allow=never");
    expect(settings).toContain("protocol.fd.allow=never");
    expect(settings).toContain("core.fsmonitor=false");
    if (url !== undefined && argv.includes(url)) expect(argv.indexOf("--")).toBeGreaterThan(-1);
    if (url !== undefined && argv.includes(url)) expect(argv.indexOf("--")).toBeLessThan(argv.indexOf(url));
  }

  it("clone, sha-pinned fetch, checkout and ls-remote all carry the settings and --", async () => {
    const gitEnv = isolatedGitEnv(world.home);
    const remote = await makeGitRemote(world.root, "r", { "a.txt": "1" }, gitEnv);
    const first = await remote.head();
    await remote.commit({ "a.txt": "2" });
    const options = { env, timeoutMs: 30_000, allowLocal: true };
    expect(await cloneAt(remote.url, path.join(world.root, "c1"), {}, options)).toBe(await remote.head());
    expect(await cloneAt(remote.url, path.join(world.root, "c2"), { sha: first }, options)).toBe(first);
    expect(await remoteHead(remote.url, "main", options)).toBe(await remote.head());
    const argvs = await calls();
    const ops = argvs.map((argv) => argv.find((a, i) => !a.startsWith("-") && argv[i - 1] !== "-c"));
    expect(ops).toEqual(expect.arrayContaining(["clone", "init", "remote", "fetch", "checkout", "rev-parse", "ls-remote"]));
    for (const argv of argvs) expectHardened(argv, remote.url);
    const fetch = argvs.find((argv) => argv.includes("fetch"))!;
    expect(fetch.indexOf("--")).toBeLessThan(fetch.indexOf(first));
    await world.assertUntouched();
  });

  it("a remote URL runs with protocol.file.allow=never", async () => {
    await expect(cloneAt("https://127.0.0.1:9/x.git", path.join(world.root, "c3"), {}, { env, timeoutMs: 30_000 })).rejects.toMatchObject({ code: "EGIT" });
    const [argv] = await calls();
    expect(argv).toContain("protocol.file.allow=never");
    const error = (await cloneAt("https://user:tok3n@127.0.0.1:9/x.git", path.join(world.root, "c4"), {}, { env, timeoutMs: 30_000 }).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain("git clone of https://***@127.0.0.1:9/x.git");
    expect(error.message).not.toContain("tok3n");
  });

  const refused: [string, () => [string, { ref?: string; sha?: string }, boolean], string][] = [
    ["option-shaped URL", () => [hostile().uploadPack, {}, true], "EGIT_URL"],
    ["ext:: URL", () => [hostile().extNoSpace, {}, true], "EGIT_URL"],
    ["ssh host -oProxyCommand", () => [hostile().sshProxy, {}, false], "EGIT_URL"],
    ["file:// where local is not allowed", () => [`file://${world.victim}`, {}, false], "EGIT_URL"],
    ["option-shaped ref", () => ["https://127.0.0.1:9/x.git", { ref: hostile().outputRef }, false], "EGIT_REF"],
    ["short or non-hex sha", () => ["https://127.0.0.1:9/x.git", { sha: "--detach" }, false], "ESHA"],
  ];
  it.each(refused)("cloneAt and remoteHead refuse a %s before git runs", async (_label, make, code) => {
    const [url, pin, allowLocal] = make();
    await expect(cloneAt(url, path.join(world.root, "never"), pin, { env, timeoutMs: 30_000, allowLocal })).rejects.toMatchObject({ code });
    if (!pin.sha) await expect(remoteHead(url, pin.ref, { env, timeoutMs: 30_000, allowLocal })).rejects.toMatchObject({ code });
    expect(await calls()).toEqual([]);
    await world.assertUntouched();
  });

  it("the plugin source kinds check the entry again (a catalog that skipped validation)", async () => {
    const marketplace: MarketplaceEntry = { name: "m", sourceType: "url", sourceUri: "https://example.com/m.json", catalogPath: path.join(world.root, "m.json"), addedAt: "", updatedAt: "" };
    const world2 = { cwd: world.cwd, roots: { home: world.home, xcshHome: world.xcshHome }, env, gitTimeoutMs: 30_000, fetchTimeoutMs: 30_000 };
    const sources: [unknown, string][] = [
      [{ source: "url", url: hostile().uploadPack }, "EGIT_URL"],
      [{ source: "url", url: `file://${world.victim}` }, "EGIT_URL"],
      [{ source: "github", repo: "-oProxyCommand/x" }, "ESOURCE_INVALID"],
      [{ source: "github", repo: "acme/x", sha: "abc" }, "ESHA"],
      [{ source: "git-subdir", url: "acme/mono", path: "../../victim" }, "EENTRY_ESCAPE"],
      [{ source: "git-subdir", url: "acme/mono" }, "EENTRY_ESCAPE"],
      [{ source: "git-subdir", url: hostile().proxy, path: "p" }, "EGIT_URL"],
      [{ source: "npm", package: "left-pad", version: "--registry=http://127.0.0.1:9/" }, "EVERSION"],
    ];
    for (const [source, code] of sources) {
      const entry = { name: "evil", source } as never;
      const input = { entry, catalog: { name: "m", owner: { name: "o" }, plugins: [entry] } as never, marketplace, root: undefined };
      const kind = pluginSourceOf(source, "evil");
      await expect(kind.fetch(input, path.join(world.root, "scratch"), world2 as never), JSON.stringify(source)).rejects.toMatchObject({ code, file: marketplace.catalogPath });
      if (kind.probe) await expect(kind.probe(input, world2 as never)).rejects.toMatchObject({ code });
    }
    expect(await calls()).toEqual([]);
    await world.assertUntouched();
  });

  it("a github entry's stray `path` (not in its schema) is not read: the whole repository is the plugin, as Claude Code installs it", async () => {
    const marketplace: MarketplaceEntry = { name: "m", sourceType: "url", sourceUri: "https://example.com/m.json", catalogPath: path.join(world.root, "m.json"), addedAt: "", updatedAt: "" };
    const world2 = { cwd: world.cwd, roots: { home: world.home, xcshHome: world.xcshHome }, env, gitTimeoutMs: 30_000, fetchTimeoutMs: 30_000 };
    const sha = "a".repeat(40);
    const source = { source: "github", repo: "acme/x", sha, path: "../../victim" };
    const entry = { name: "gh", source } as never;
    const input = { entry, catalog: { name: "m", owner: { name: "o" }, plugins: [entry] } as never, marketplace, root: undefined };
    // A pinned sha needs no git call to probe; a `path` read as a subfolder would be refused here.
    await expect(pluginSourceOf(source, "gh").probe!(input, world2 as never)).resolves.toEqual({ gitCommitSha: sha });
    expect(await calls()).toEqual([]);
  });
});
