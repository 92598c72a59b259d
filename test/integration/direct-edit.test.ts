/**
 * `link` and `unlink` without npm's installer (src/plugins/direct-edit.ts) write exactly the files
 * arborist writes for the same change. The reference is the same command taking the reify path, in
 * a second home at the same depth (so relative paths agree), pushed onto that path by removing its
 * node_modules/.package-lock.json (which arborist rebuilds from the tree).
 */
import { cp, lstat, readdir, readFile, readlink, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

let w: TmpWorld;
let reg: RegistryHandle & { dispose(): Promise<void> };
/** The uninstall shapes' packages, published once. */
let pkgs: Record<"shared" | "own" | "peer" | "libOne" | "libTwo" | "withBin" | "a" | "b" | "c" | "d" | "e" | "f", string>;
beforeAll(async () => {
  await buildDist();
  reg = await useGlobalRegistry();
  const prefix = `de${Date.now().toString(36)}`;
  const at = (key: string) => `${prefix}-${key.toLowerCase()}`;
  pkgs = Object.fromEntries(["shared", "own", "peer", "libOne", "libTwo", "withBin", "a", "b", "c", "d", "e", "f"].map((key) => [key, at(key)])) as typeof pkgs;
  for (const key of ["shared", "own", "peer"] as const) await reg.publish({ name: pkgs[key], version: "1.0.0", files: { "index.js": "module.exports = 1;\n" } });
  await reg.publish({ name: pkgs.libOne, version: "1.0.0", files: { "index.js": "module.exports = 1;\n" } });
  await reg.publish({ name: pkgs.libOne, version: "2.0.0", files: { "index.js": "module.exports = 2;\n" } });
  await reg.publish({ name: pkgs.withBin, version: "1.0.0", packageJson: { bin: { [pkgs.withBin]: "./cli.js" } }, files: { "cli.js": "#!/usr/bin/env node\n" } });
  const plugin = (name: string, packageJson: Record<string, unknown>) =>
    reg.publish({ name, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./tools/t.js" }, ...packageJson }, files: { "tools/t.js": toolSource(toolName(name)) } });
  // a: a shared, an own and a peer dependency; b: the shared one; c and d: two majors of one library (one nested); e: a dependency with a bin.
  await plugin(pkgs.a, { dependencies: { [pkgs.shared]: "^1.0.0", [pkgs.own]: "^1.0.0" }, peerDependencies: { [pkgs.peer]: "^1.0.0" } });
  await plugin(pkgs.b, { dependencies: { [pkgs.shared]: "^1.0.0" } });
  await plugin(pkgs.c, { dependencies: { [pkgs.libOne]: "^2.0.0" } });
  await plugin(pkgs.d, { dependencies: { [pkgs.libOne]: "^1.0.0" } });
  await plugin(pkgs.e, { dependencies: { [pkgs.withBin]: "^1.0.0" } });
  // f: the shared library as a peer only (it becomes `peer: true` once b is gone).
  await plugin(pkgs.f, { peerDependencies: { [pkgs.shared]: "^1.0.0" } });
}, 180_000);
afterAll(async () => {
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-direct-");
  await writeUserNpmrc(w.home, reg.url);
}, 120_000);
afterEach(async () => {
  await w.cleanup();
});

const homes = () => ({ direct: w.home, reference: path.join(w.root, "ref") });
const pluginsOf = (home: string) => path.join(home, ".xcsh", "plugins");

async function cli(home: string, args: string[]) {
  const r = await runCli(args, { cwd: w.cwd, home });
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return `${r.stdout}\n${r.stderr}`;
}

/** A plugin folder at `<root>/dev/<folder>` with one tool and `extra` package.json fields. */
async function pluginFolder(folder: string, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const dir = path.join(w.root, "dev", folder);
  const tool = `t_${folder.replace(/\W/g, "_")}`;
  await w.write(path.join(dir, "tools", "index.js"), `export default (api) => ({ name: "${tool}", label: "T", description: "t", parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`);
  await w.write(path.join(dir, "package.json"), { name, version: "1.0.0", type: "module", xcsh: { tools: "./tools/index.js" }, ...extra });
  return dir;
}

/** node_modules as a sorted listing, links with what they say. */
async function listing(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of (await readdir(dir)).sort()) {
    const full = path.join(dir, entry);
    const info = await lstat(full);
    if (info.isSymbolicLink()) out.push(`${prefix}${entry} -> ${await readlink(full)}`);
    else if (info.isDirectory()) out.push(`${prefix}${entry}/`, ...(await listing(full, `${prefix}${entry}/`)));
    else out.push(`${prefix}${entry}`);
  }
  return out;
}

async function files(home: string) {
  const plugins = pluginsOf(home);
  const read = (file: string) => readFile(path.join(plugins, file), "utf8").catch(() => "(absent)");
  return {
    packageJson: await read("package.json"),
    packageLock: await read("package-lock.json"),
    hiddenLock: await read("node_modules/.package-lock.json"),
    runtimeLock: await read("xcsh-plugins.lock.json"),
    nodeModules: await listing(path.join(plugins, "node_modules")),
  };
}

/** A home with one link already (taken by the reify path: there is no lockfile yet) and `installed`, copied as the reference home. */
async function startingHomes(installed: string[] = []): Promise<void> {
  await cli(w.home, ["link", await pluginFolder("first", "x-first")]);
  if (installed.length > 0) await cli(w.home, ["install", ...installed]);
  await cp(w.home, homes().reference, { recursive: true, verbatimSymlinks: true });
}

/** Run `args` in both homes (the reference on the reify path) and compare what they leave; returns the direct run's output. */
async function sameAsArborist(args: string[]): Promise<string> {
  const { direct, reference } = homes();
  await rm(path.join(pluginsOf(reference), "node_modules", ".package-lock.json"));
  const ref = await cli(reference, args);
  expect(ref).toContain("npm's installer");
  const out = await cli(direct, args);
  expect(await files(direct)).toEqual(await files(reference));
  return out;
}

describe("link and unlink written by hand are what arborist writes", () => {
  const shapes: [string, string, string, Record<string, unknown>][] = [
    ["no dependencies", "plain", "x-plain", {}],
    ["a scoped name", "scoped", "@sc/scoped", {}],
    ["a name differing from the folder's", "somewhere", "x-named", {}],
    ["license object, funding, engines, os, an install script, empty devDependencies, a `_` key", "rich", "@sc/rich", { license: { type: "MIT" }, funding: "https://example.test/fund", engines: { node: ">=20" }, os: ["linux", "darwin"], scripts: { postinstall: "echo hi", test: "x" }, devDependencies: {}, _integrity: "sha512-x" }],
    // What `xcsh-tools new` writes (templates/plugin/package.json): arborist installs neither dev nor peer dependencies for a link's target.
    ["a scaffolded plugin: dev and peer dependencies", "scaffolded", "x-scaffolded", { description: "d", license: "MIT", keywords: ["xcsh-plugin"], files: ["tools", "features", "README.md"], scripts: { test: "vitest run && xcsh-tools validate", typecheck: "tsc -p tsconfig.json" }, peerDependencies: { "@sinclair/typebox": "^0.34.0" }, devDependencies: { "@sinclair/typebox": "^0.34.0", typescript: "^5.6.0", vitest: "^3.0.0", "xcsh-tools": "^0.1.0" } }],
    ["optional and required peers (peerDependenciesMeta) and a dev dependency, scoped", "peermeta", "@sc/peermeta", { peerDependencies: { zzz: "^1.0.0", aaa: "*" }, peerDependenciesMeta: { zzz: { optional: true } }, devDependencies: { aaa: "^2.0.0" } }],
  ];
  for (const [what, folder, name, extra] of shapes) {
    it(`${what}: link, then unlink, without npm's installer`, async () => {
      await startingHomes();
      const target = await pluginFolder(folder, name, extra);
      const linked = await sameAsArborist(["link", target]);
      expect(linked).not.toContain("npm's installer");
      const unlinked = await sameAsArborist(["unlink", name]);
      expect(unlinked).not.toContain("npm's installer");
    }, 120_000);
  }

  const reified: [string, string, Record<string, unknown>, (dir: string) => Promise<unknown>][] = [
    ["bin entries", "withbin", { bin: { "with-bin": "./cli.js" } }, (dir) => w.write(path.join(dir, "cli.js"), "#!/usr/bin/env node\n")],
    ["declared dependencies (arborist installs them in the folder)", "withdeps", { dependencies: { helper: "file:./helper" } }, (dir) => w.write(path.join(dir, "helper", "package.json"), { name: "helper", version: "1.0.0" })],
    ["a node_modules in the folder", "withnm", {}, (dir) => w.write(path.join(dir, "node_modules", "stray", "package.json"), { name: "stray", version: "1.0.0" })],
    ["a dev dependency that is not a semver range", "devurl", { devDependencies: { other: "github:someone/other" }, peerDependencies: { "@sinclair/typebox": "^0.34.0" } }, async () => undefined],
    ["an empty peerDependencies", "emptypeer", { peerDependencies: {}, devDependencies: { a: "^1.0.0" } }, async () => undefined],
  ];
  for (const [what, folder, extra, prepare] of reified) {
    it(`${what}: npm's installer, the same files`, async () => {
      await startingHomes();
      const target = await pluginFolder(folder, `x-${folder}`, extra);
      await prepare(target);
      expect(await sameAsArborist(["link", target])).toContain("npm's installer");
      // Unlinking it is written by hand again when nothing of it is locked (the files are compared either way).
      await sameAsArborist(["unlink", `x-${folder}`]);
    }, 120_000);
  }
});

describe("uninstall written by hand is what arborist writes", () => {
  const cases: [string, (p: typeof pkgs) => { installed: string[]; steps: string[][] }, boolean][] = [
    ["a plugin with an own, a shared and a peer dependency; then the last user of the shared one", (p) => ({ installed: [p.a, p.b, p.c], steps: [[p.a], [p.b]] }), true],
    ["two majors of one library, one nested under its plugin", (p) => ({ installed: [p.c, p.d, p.b], steps: [[p.c], [p.d]] }), true],
    ["a library left needed only as a peer: its flags change", (p) => ({ installed: [p.b, p.f], steps: [[p.b]] }), true],
    ["two plugins at once, and a linked one", (p) => ({ installed: [p.a, p.b, p.d], steps: [[p.a, p.d], ["x-first"]] }), true],
  ];
  for (const [what, shape, direct] of cases) {
    it(`${what}: without npm's installer, the same files`, async () => {
      const { installed, steps } = shape(pkgs);
      await startingHomes(installed);
      for (const names of steps) {
        const out = await sameAsArborist(["uninstall", ...names]);
        if (direct) expect(out).not.toContain("npm's installer");
      }
    }, 180_000);
  }

  it("a removed dependency with a bin (arborist removes its bin link): npm's installer, the same files", async () => {
    await startingHomes([pkgs.e, pkgs.b]);
    expect(await sameAsArborist(["uninstall", pkgs.e])).toContain("npm's installer");
  }, 180_000);
});

describe("a hostile lockfile never steers what an uninstall deletes", () => {
  it("an extraneous entry whose key climbs out of node_modules: the file it names stays", async () => {
    await startingHomes([pkgs.b]);
    const plugins = pluginsOf(w.home);
    const victim = await w.write(path.join(plugins, "victim.json"), { keep: true });
    const { lockfileText } = await import("../../src/plugins/direct-edit.js");
    for (const file of ["package-lock.json", "node_modules/.package-lock.json"]) {
      const lock = JSON.parse(await readFile(path.join(plugins, file), "utf8"));
      lock.packages["node_modules/x/../../victim.json"] = { version: "1.0.0", extraneous: true };
      await writeFile(path.join(plugins, file), lockfileText(lock));
    }
    await runCli(["uninstall", pkgs.b], { cwd: w.cwd, home: w.home });
    expect(JSON.parse(await readFile(victim, "utf8"))).toEqual({ keep: true });
  }, 120_000);
});
