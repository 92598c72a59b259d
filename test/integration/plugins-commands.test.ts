/**
 * The npm plugin commands end to end (built CLI, temp HOME, the shared Verdaccio): every spec
 * kind, list/outdated/update/uninstall/link/unlink, features, scripts policy, and the state files
 * read back by the host-format loader (`discoverAndLoadCustomTools`).
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, readlink, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { makePluginWorld, publishFixtures, toolName, toolSource, type FixtureNames, type PluginWorld } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: FixtureNames;
let w: PluginWorld;
let cacheDir: string;

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  n = await publishFixtures(reg, `pc${Date.now().toString(36)}`);
  cacheDir = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-plugins-cache-"));
}, 180_000);
afterAll(async () => {
  await reg?.dispose();
  await rm(cacheDir, { recursive: true, force: true });
});
beforeEach(async () => {
  w = await makePluginWorld(reg);
});
afterEach(async () => {
  await w.cleanup();
});

async function localPlugin(name: string, version = "0.1.0"): Promise<string> {
  const dir = path.join(w.root, "dev", name);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name, version, type: "module", xcsh: { tools: "./t.js" } }, null, 2));
  await writeFile(path.join(dir, "t.js"), toolSource(toolName(name)));
  return dir;
}

describe("install: every spec kind", () => {
  it("a registry name with its dependency, then list, and the host loads it", async () => {
    const r = await w.cli(["install", n.basic, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const doc = r.json();
    expect(doc.actions).toEqual([expect.objectContaining({ type: "ADD", name: n.basic })]);
    expect(doc.plugins).toEqual([expect.objectContaining({ name: n.basic, version: "2.0.0" })]);
    expect(await w.readJson("package.json")).toEqual({ name: "xcsh-plugins", private: true, dependencies: { [n.basic]: "^2.0.0" } });
    expect(await w.readJson("xcsh-plugins.lock.json")).toEqual({ plugins: { [n.basic]: { version: "2.0.0", enabledFeatures: null, enabled: true } }, settings: {} });
    const lock = await w.readJson("package-lock.json");
    expect(lock.packages[`node_modules/${n.basic}`]).toMatchObject({ version: "2.0.0", integrity: expect.stringMatching(/^sha512-/) });
    expect(lock.packages[`node_modules/${n.dep}`]).toMatchObject({ version: "1.0.0" });
    // The host's loader finds it exactly as if the host had installed it.
    const loaded = await discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, cacheDir });
    expect(loaded.errors).toEqual([]);
    expect(loaded.tools.map((t) => t.tool.name)).toEqual([toolName(n.basic)]);

    const list = await w.cli(["list", "--json"]);
    expect(list.json().plugins).toEqual([expect.objectContaining({ name: n.basic, version: "2.0.0", enabled: true, features: null, spec: n.basic, linked: false, scripts: [] })]);
  });

  it("versions, ranges, dist-tags", async () => {
    expect((await w.cli(["install", `${n.basic}@1.0.0`])).code).toBe(0);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.basic].version).toBe("1.0.0");
    expect((await w.cli(["install", `${n.basic}@~1.1`])).code).toBe(0);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.basic].version).toBe("1.1.0");
    expect((await w.readJson("package.json")).dependencies[n.basic]).toBe("~1.1");
    // A dist-tag is asked for explicitly (`npm:`): a bare name@next would name a marketplace.
    const tag = await w.cli(["install", `npm:${n.basic}@next`, "--json"]);
    expect(tag.code, tag.stderr).toBe(0);
    expect(tag.json().actions[0]).toMatchObject({ type: "CHANGE", from: { version: "1.1.0" }, to: { version: "3.0.0-beta.1" } });
  });

  it("a tarball file, a tarball URL served by the registry, a folder and a git URL", async () => {
    const dir = await localPlugin(`${n.basic}-local`);
    execFileSync("npm", ["pack", "--silent", "--ignore-scripts"], { cwd: dir, env: { ...process.env, npm_config_cache: path.join(w.home, ".npm") } });
    const tgz = path.join(dir, `${n.basic}-local-0.1.0.tgz`);

    const folder = await w.cli(["install", dir, "--json"]);
    expect(folder.code, folder.stderr).toBe(0);
    const dep = (await w.readJson("package.json")).dependencies[`${n.basic}-local`];
    expect(dep).toMatch(/^file:\.xcsh-tools\/packed\/.+\.tgz$/);
    // Self-contained: the source folder may go away.
    await rm(path.join(dir, "t.js"));
    expect((await w.cli(["list", "--json"])).json().plugins[0]).toMatchObject({ version: "0.1.0", source: "directory" });
    await writeFile(path.join(dir, "t.js"), toolSource(toolName(`${n.basic}-local`)));

    const file = await w.cli(["install", tgz]);
    expect(file.code, file.stderr).toBe(0);
    expect((await w.cli(["list", "--json"])).json().plugins[0]).toMatchObject({ source: "tarball", spec: tgz });

    const url = `${reg.url}${n.extra[0]}/-/${n.extra[0]}-1.0.0.tgz`;
    const remote = await w.cli(["install", url]);
    expect(remote.code, remote.stderr).toBe(0);
    expect((await w.readJson("package.json")).dependencies[n.extra[0]!]).toBe(url);

    const repo = path.join(w.root, "repo.git");
    const git = (args: string[], cwd: string) => execFileSync("git", args, { cwd, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
    const gitDir = await localPlugin(`${n.basic}-git`);
    git(["init", "-q"], gitDir);
    git(["add", "-A"], gitDir);
    git(["commit", "-qm", "init"], gitDir);
    git(["clone", "-q", "--bare", gitDir, repo], w.root);
    const fromGit = await w.cli(["install", `git+file://${repo}`]);
    expect(fromGit.code, fromGit.stderr).toBe(0);
    expect((await w.readJson("package-lock.json")).packages[`node_modules/${n.basic}-git`].resolved).toMatch(/^git\+file:\/\/.+#[0-9a-f]{40}$/);

    const loaded = await discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, cacheDir });
    expect(loaded.errors).toEqual([]);
    expect(loaded.tools.map((t) => t.tool.name).sort()).toEqual([toolName(`${n.basic}-git`), toolName(`${n.basic}-local`), toolName(n.extra[0]!)].sort());
  });

  it("tools that import the host's modules by bare name, with no copy of their own, validate as the host loads them", async () => {
    // No plugin in the tree has @sinclair/typebox or xcsh-tools: the validation child serves them
    // from its module map, as the host does at boot.
    const name = `${n.basic}-mapped`;
    const dir = await localPlugin(name);
    const identity = `if (api.typebox.Type !== Type) throw new Error("two TypeBox instances"); if (typeof xcsh.loadCustomTools !== "function") throw new Error("not the host's API");`;
    await writeFile(
      path.join(dir, "t.js"),
      `import { Type } from "@sinclair/typebox";\nimport * as xcsh from "xcsh-tools";\nexport default (api) => { ${identity} return { name: ${JSON.stringify(toolName(name))}, label: "m", description: "d", parameters: Type.Object({}), async execute() { return { content: [] }; } }; };\n`,
    );
    const ok = await w.cli(["install", dir]);
    expect(ok.code, ok.stderr).toBe(0);

    // A subpath is no mapped name: it fails here as it does at boot, and nothing is installed.
    const subpath = `${n.basic}-subpath`;
    const bad = await localPlugin(subpath);
    await writeFile(path.join(bad, "t.js"), `import { Value } from "@sinclair/typebox/value";\nvoid Value;\n${toolSource(toolName(subpath))}`);
    const refused = await w.cli(["install", bad]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("EVALIDATE");
    expect(refused.stderr).toContain("@sinclair/typebox");
    expect(Object.keys((await w.readJson("package.json")).dependencies)).toEqual([name]);

    const loaded = await discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, cacheDir });
    expect(loaded.errors).toEqual([]);
    expect(loaded.tools.map((t) => t.tool.name)).toEqual([toolName(name)]);
  });

  it("refuses specs that are none of these, writing nothing", async () => {
    for (const spec of ["x;rm -rf ~", "ftp://example.com/x.tgz", `${n.basic}@npm:other`, `${n.basic}[a]b`, "$(whoami)"]) {
      const r = await w.cli(["install", spec, "--json"]);
      expect(r.code, spec).toBe(2);
      expect(r.json().error.code).toBe("ESPEC");
    }
    expect(await w.snapshot()).toEqual(w.fresh);
  });

  it("a package that is not there is ENOT_FOUND; a plugin that fails validation is not left behind", async () => {
    const missing = await w.cli(["install", `${n.basic}-nope`, "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.json().error.code).toBe("ENOT_FOUND");
    expect((await w.cli(["install", n.extra[1]!])).code).toBe(0);
    const before = await w.snapshot();
    const broken = await w.cli(["install", n.broken, "--json"]);
    expect(broken.code).toBe(1);
    expect(broken.json().error).toMatchObject({ code: "EVALIDATE" });
    expect(broken.json().error.message).toContain("this factory always fails");
    expect(await w.snapshot()).toEqual(before);
  });

  it("a plugin whose dependency is not on the registry is ENOT_FOUND naming it, and nothing changes", async () => {
    // Resolving fetches the dependency tree ahead (dependency-warmup.ts) and drops that failure;
    // npm's installer meets it again and it is reported as it was before.
    const name = `${n.basic}-lost-dep`;
    await reg.publish({ name, version: "1.0.0", packageJson: { type: "module", dependencies: { [`${name}-gone`]: "^1.0.0" }, xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(name)) } });
    expect((await w.cli(["install", n.extra[1]!])).code).toBe(0);
    const before = await w.snapshot();
    const r = await w.cli(["install", name, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error.code).toBe("ENOT_FOUND");
    expect(r.json().error.message).toContain(`${name}-gone`);
    expect(await w.snapshot()).toEqual(before);
  });
});

describe("features, enabled state and settings", () => {
  it("brackets set features; unknown ones list the available ones; reinstall keeps state", async () => {
    const bad = await w.cli(["install", `${n.features}[web,nope]`, "--json"]);
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: "EUNKNOWN_FEATURE", hint: expect.stringContaining("web, cache") });
    expect(await w.snapshot()).toEqual(w.fresh);

    expect((await w.cli(["install", `${n.features}[cache]`])).code).toBe(0);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.features]).toEqual({ version: "1.0.0", enabledFeatures: ["cache"], enabled: true });
    // What the host would do to the file meanwhile: disable it and set a setting.
    const lock = await w.readJson("xcsh-plugins.lock.json");
    lock.plugins[n.features].enabled = false;
    lock.settings = { [n.features]: { limit: 5 } };
    lock.hostOwnKey = { kept: true };
    await writeFile(path.join(w.plugins, "xcsh-plugins.lock.json"), JSON.stringify(lock, null, 2));
    // A reinstall without brackets keeps everything (the host would reset it, §9 #24).
    const again = await w.cli(["install", n.features, "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().actions[0].type).toBe("NOOP");
    const force = await w.cli(["install", `${n.features}[*]`]);
    expect(force.code, force.stderr).toBe(0);
    expect(await w.readJson("xcsh-plugins.lock.json")).toEqual({
      plugins: { [n.features]: { version: "1.0.0", enabledFeatures: ["web", "cache"], enabled: false } },
      settings: { [n.features]: { limit: 5 } },
      hostOwnKey: { kept: true },
    });
    expect((await w.cli(["install", `${n.features}[]`])).code).toBe(0);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.features].enabledFeatures).toEqual([]);
    // Uninstall removes its runtime state and settings, as the host does.
    expect((await w.cli(["uninstall", n.features])).code).toBe(0);
    expect(await w.readJson("xcsh-plugins.lock.json")).toEqual({ plugins: {}, settings: {}, hostOwnKey: { kept: true } });
    expect((await w.readJson("package.json")).dependencies).toEqual({});
  });

  it("a malformed runtime lock is a coded error, never treated as empty", async () => {
    expect((await w.cli(["install", n.extra[2]!])).code).toBe(0);
    await writeFile(path.join(w.plugins, "xcsh-plugins.lock.json"), "{ not json");
    const before = await w.snapshot();
    const r = await w.cli(["install", n.extra[3]!, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({ code: "ESTATE_FILE", file: path.join(w.plugins, "xcsh-plugins.lock.json") });
    expect(await w.snapshot()).toEqual(before);
    expect((await w.cli(["list", "--json"])).json().error.code).toBe("ESTATE_FILE");
  });
});

describe("lifecycle scripts", () => {
  it("do not run without --allow-scripts, run with it, and list shows them", async () => {
    const marker = path.join(w.root, "marker");
    const r = await w.cli(["install", n.scripts]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("NOT run");
    await expect(readFile(marker, "utf8")).rejects.toThrow();
    expect((await w.cli(["list", "--json"])).json().plugins[0]).toMatchObject({ scripts: ["postinstall"], scriptsRan: false });
    // Scripts are asked about like hooks (issue 41): without a terminal or --yes, refused and none ran.
    const unasked = await w.cli(["install", n.scripts, "--allow-scripts", "--json"]);
    expect(unasked.json().error.code).toBe("EUNCONFIRMED");
    await expect(readFile(marker, "utf8")).rejects.toThrow();
    const allowed = await w.cli(["install", n.scripts, "--allow-scripts", "--yes"]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(await readFile(marker, "utf8")).toBe("ran");
    expect((await w.cli(["list", "--json"])).json().plugins[0]).toMatchObject({ scripts: ["postinstall"], scriptsRan: true });
  });

  it("settings allowScripts turns them on too", async () => {
    await writeFile(path.join(w.xcshHome, "xcsh-tools.json"), JSON.stringify({ allowScripts: true })).catch(async () => {
      await mkdir(w.xcshHome, { recursive: true });
      await writeFile(path.join(w.xcshHome, "xcsh-tools.json"), JSON.stringify({ allowScripts: true }));
    });
    expect((await w.cli(["install", n.scripts, "--json"])).json().error.code).toBe("EUNCONFIRMED");
    await expect(readFile(path.join(w.root, "marker"), "utf8")).rejects.toThrow();
    expect((await w.cli(["install", n.scripts, "--yes"])).code).toBe(0);
    expect(await readFile(path.join(w.root, "marker"), "utf8")).toBe("ran");
  });
});

describe("outdated and update", () => {
  it("current / wanted / latest, update within the range, --latest beyond it", async () => {
    expect((await w.cli(["install", `${n.basic}@1.0.0`])).code).toBe(0);
    expect((await w.readJson("package.json")).dependencies[n.basic]).toBe("^1.0.0");
    const out = await w.cli(["outdated", "--json"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.json()).toEqual({ plugins: { [n.basic]: { current: "1.0.0", wanted: "1.1.0", latest: "2.0.0", dependency: "^1.0.0", source: "registry", outdated: true } } });
    const human = await w.cli(["outdated"]);
    expect(human.stdout).toMatch(new RegExp(`${n.basic}\\s+1\\.0\\.0\\s+1\\.1\\.0\\s+2\\.0\\.0`));

    const dry = await w.cli(["update", "--dry-run", "--json"]);
    expect(dry.json().actions[0]).toMatchObject({ type: "CHANGE", to: { version: "1.1.0" } });
    const up = await w.cli(["update"]);
    expect(up.code, up.stderr).toBe(0);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.basic].version).toBe("1.1.0");
    expect((await w.cli(["update", "--json"])).json().actions[0]).toMatchObject({ type: "NOOP" });

    const latest = await w.cli(["update", "--latest", n.basic]);
    expect(latest.code, latest.stderr).toBe(0);
    expect((await w.readJson("package.json")).dependencies[n.basic]).toBe("^2.0.0");
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.basic].version).toBe("2.0.0");
  });

  it("a registry that cannot be reached is EREGISTRY, never up to date", async () => {
    expect((await w.cli(["install", `${n.basic}@1.0.0`])).code).toBe(0);
    for (const command of [["outdated"], ["update"]]) {
      const r = await w.cli([...command, "--registry", "http://127.0.0.1:9/", "--json"]);
      expect(r.code, command.join(" ")).toBe(1);
      expect(r.json().error.code).toBe("EREGISTRY");
    }
  });
});

describe("link and unlink", () => {
  it("link adds a file: dependency the host sees; unlink restores the installed version", async () => {
    expect((await w.cli(["install", `${n.extra[3]}@1.0.0`])).code).toBe(0);
    // `list` (run below, while linked) writes the boot index's component inventory: a cache, as
    // the index's other files are, so the state to return to is the one after a `list` too.
    expect((await w.cli(["list", "--json"])).code).toBe(0);
    const before = await w.snapshot();
    const dir = path.join(w.root, "dev", "over");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: n.extra[3], version: "9.9.9", type: "module", xcsh: { tools: "./t.js" } }));
    await writeFile(path.join(dir, "t.js"), toolSource(`${toolName(n.extra[3]!)}_linked`));
    const link = await w.cli(["link", dir]);
    expect(link.code, link.stderr).toBe(0);
    expect((await w.readJson("package.json")).dependencies[n.extra[3]!]).toBe(`file:${dir}`);
    expect(path.resolve(path.join(w.plugins, "node_modules"), await readlink(path.join(w.plugins, "node_modules", n.extra[3]!)))).toBe(dir);
    expect((await w.cli(["list", "--json"])).json().plugins[0]).toMatchObject({ linked: true, linkTarget: dir, version: "9.9.9" });
    const loaded = await discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, cacheDir });
    expect(loaded.tools.map((t) => t.tool.name)).toEqual([`${toolName(n.extra[3]!)}_linked`]);

    const unlink = await w.cli(["unlink", n.extra[3]!]);
    expect(unlink.code, unlink.stderr).toBe(0);
    expect((await w.readJson("package.json")).dependencies[n.extra[3]!]).toBe("^1.0.0");
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.extra[3]!].version).toBe("1.0.0");
    const after = await w.snapshot();
    // Same files as before the link (installedAt in our record and lock mtimes aside).
    expect(Object.keys(after).sort()).toEqual(Object.keys(before).sort());
    expect(after[`plugins/node_modules/${n.extra[3]}/t.js`]).toEqual(before[`plugins/node_modules/${n.extra[3]}/t.js`]);
    expect(after["plugins/package.json"]).toEqual(before["plugins/package.json"]);
  });

  it("a linked folder whose dependencies were never installed fails with a hint to run npm install there", async () => {
    const dir = path.join(w.root, "dev", "no-deps");
    await mkdir(dir, { recursive: true });
    const name = `${n.basic}-nodeps`;
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name, version: "0.1.0", type: "module", dependencies: { [n.basic]: "^1.0.0" }, xcsh: { tools: "./t.js" } }));
    await writeFile(path.join(dir, "t.js"), `import "${n.basic}";\n${toolSource(toolName(name))}`);
    const before = await w.snapshot();
    const r = await w.cli(["link", dir, "--json"]);
    expect(r.code).toBe(1);
    const { error } = r.json();
    expect(error.code).toBe("EVALIDATE");
    expect(error.message).toContain(n.basic);
    expect(error.hint).toBe(`Nothing was changed. ${dir} has no ${n.basic} in its node_modules: a link uses the folder as it is, so run \`npm install\` there first, then link again.`);
    expect(await w.snapshot()).toEqual(before);
    // Any other failure of a linked folder keeps the general hint.
    await writeFile(path.join(dir, "t.js"), `export default () => { throw new Error("nope"); };\n`);
    const other = await w.cli(["link", dir, "--json"]);
    expect(other.code).toBe(1);
    expect(other.json().error.hint).toBe("Nothing was changed. See every problem with `xcsh-tools validate <the plugin's folder>`.");
  });

  it("unlink of a link over nothing removes it; unlink of a non-link is ENOT_LINKED", async () => {
    const dir = await localPlugin(`${n.basic}-dev`);
    expect((await w.cli(["link", dir])).code).toBe(0);
    expect((await w.cli(["unlink", `${n.basic}-dev`])).code).toBe(0);
    expect((await w.readJson("package.json")).dependencies).toEqual({});
    expect((await w.cli(["install", n.extra[2]!])).code).toBe(0);
    const r = await w.cli(["unlink", n.extra[2]!, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error.code).toBe("ENOT_LINKED");
    expect((await w.cli(["uninstall", "not-there", "--json"])).json().error.code).toBe("ENOT_INSTALLED");
  });
});
