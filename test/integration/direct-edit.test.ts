/**
 * `link` and `unlink` without npm's installer (src/plugins/direct-edit.ts) write exactly the files
 * arborist writes for the same change. The reference is the same command taking the reify path, in
 * a second home at the same depth (so relative paths agree), pushed onto that path by removing its
 * node_modules/.package-lock.json (which arborist rebuilds from the tree).
 */
import { cp, lstat, readdir, readFile, readlink, rm } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
beforeEach(async () => {
  await buildDist();
  w = await makeTmpWorld("xcsh-tools-direct-");
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

/** A home with one link already (taken by the reify path: there is no lockfile yet), copied as the reference home. */
async function startingHomes(): Promise<void> {
  await cli(w.home, ["link", await pluginFolder("first", "x-first")]);
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
