/**
 * A team restore into an empty plugins folder places the locked packages without npm's installer
 * when the result is known exactly (plugins/pinned-placement.ts), and the staging copy is then
 * byte for byte, mode for mode, what arborist's reify makes of the same package.json and
 * package-lock.json (issue 42's restore target).
 *
 * Class 1, the placement equals arborist (arborist's reify never called during the restore; the
 * staging copy at `reify:done` compared with arborist's reify of the same two files in a folder of
 * its own): three plugins sharing a library; a library at two versions (one nested); a library with
 * a dependency of its own, two levels deep.
 *
 * Class 2, the placement notices what it cannot place exactly and leaves it to arborist (reify
 * called; the set installed as locked): a package with a `bin` (bin links); a package with an
 * optional dependency; a package with `engines`; a plugins folder that already holds a plugin.
 *
 * Class 3, the trees read around the placement are known without arborist and are arborist's
 * answers (session 29): in class 1's restores arborist's `loadActual` is never called, the tree
 * the closure check judged (`placedTopNodes` of the placed lock) equals what `loadActual` reads
 * from the placed staging copy, and in class 2's it is called (the reads stand aside too). Beside
 * them, without a registry: the live tree of a plugins folder with no packages (`emptyLiveTree`),
 * equal to `loadActual`'s (no children) for three such folders and standing aside for six that
 * are anything else; and a placement whose unpacked package says another name, version or
 * dependencies than its lock entry, or declares optional, peer or bundled ones, stands aside
 * (arborist would read the package's own).
 */
import { cp, mkdir, readdir, symlink, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadRegistryOptions } from "../../src/plugins/npmrc.js";
import { loadArborist, npmOptions, type NpmClientOptions } from "../../src/plugins/npm-client.js";
import { emptyLiveTree, exactPlacement, placedTopNodes, type PlacedNode } from "../../src/plugins/pinned-placement.js";
import { UnpackedFolders } from "../../src/plugins/unpacked.js";
import { restoreTeamSet, type TeamWorld } from "../../src/teamset/index.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { marketplaceCtx } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { lockedByAClonedByB } from "../helpers/team-project.js";
import { snapshotTree, type TreeSnapshot } from "../helpers/tree-snapshot.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
/** Calls of arborist's reify in this process. */
let reifies = 0;
/** Calls of arborist's loadActual in this process, but for the test's own (`readActual`). */
let loadActuals = 0;
let originalLoadActual: (...args: unknown[]) => Promise<unknown>;
let unspy: (() => void) | undefined;
beforeAll(async () => {
  reg = await useGlobalRegistry();
  const proto = (await loadArborist()).prototype as unknown as { reify: (...args: unknown[]) => unknown; loadActual: (...args: unknown[]) => Promise<unknown> };
  const original = proto.reify;
  originalLoadActual = proto.loadActual;
  proto.reify = function counted(this: unknown, ...args: unknown[]) {
    reifies += 1;
    return original.apply(this, args);
  };
  proto.loadActual = function counted(this: unknown, ...args: unknown[]) {
    loadActuals += 1;
    return originalLoadActual.apply(this, args);
  };
  unspy = () => {
    proto.reify = original;
    proto.loadActual = originalLoadActual;
  };
});
afterAll(async () => {
  unspy?.();
  await reg.dispose();
});
let tags = 0;
const tag = () => `${Math.random().toString(36).slice(2, 7)}${(tags += 1)}`;

async function client(w: TmpWorld): Promise<NpmClientOptions> {
  const registry = (await loadRegistryOptions({ home: w.home, env: {}, pluginsDir: path.join(w.xcshHome, "plugins") })).options;
  return { registry, home: w.home, allowScripts: false };
}

const pluginsDir = (w: TmpWorld) => path.join(w.xcshHome, "plugins");

/** The staging copy of the restore's one transaction (its journal folder's `work`). */
async function workCopy(w: TmpWorld): Promise<string> {
  const journal = path.join(pluginsDir(w), ".xcsh-tools", "journal");
  const [id] = (await readdir(journal)).filter((name) => !name.endsWith(".done"));
  return path.join(journal, id!, "work");
}

/** Arborist's `loadActual` of `dir` (not counted in `loadActuals`): its top-level nodes. */
async function readActual(w: TmpWorld, dir: string): Promise<Map<string, PlacedNode>> {
  const Arborist = await loadArborist();
  const tree = (await originalLoadActual.call(new Arborist({ ...npmOptions(await client(w)), path: dir }))) as { children: Map<string, PlacedNode> };
  return tree.children;
}

/** What a closure walk reads of top-level nodes (team.ts `closureOf`, `differences`), as plain data. */
function closureView(tops: ReadonlyMap<string, PlacedNode>): unknown {
  const view = (node: PlacedNode, depth: number): unknown =>
    depth > 20
      ? "(deeper)"
      : {
          name: node.packageName,
          version: node.version,
          resolved: node.resolved ?? null,
          integrity: node.integrity ?? null,
          inBundle: Boolean(node.inBundle),
          edges: Object.fromEntries([...node.edgesOut].map(([name, edge]) => [name, edge.to ? view(edge.to, depth + 1) : null])),
        };
  return Object.fromEntries([...tops].map(([name, node]) => [name, view(node, 0)]).sort(([x], [y]) => String(x).localeCompare(String(y))));
}

/**
 * Restore in `w` (consent given), keeping what arborist would have been handed (the staging
 * copy's package.json and package-lock.json at `apply:packed`) in `handed`, a snapshot of the
 * staging copy once the packages are in (`reify:done`), and there the tree the placed lock
 * describes beside the tree arborist reads from the copy.
 */
async function restoreWatched(w: TmpWorld, root: string, handed: string): Promise<{ placed: TreeSnapshot; reified: number; loaded: number; known: unknown; read: unknown }> {
  let placed: TreeSnapshot | undefined;
  let known: unknown;
  let read: unknown;
  const onStep = async (step: string) => {
    if (step === "apply:packed") {
      await mkdir(handed, { recursive: true });
      for (const file of ["package.json", "package-lock.json"]) await cp(path.join(await workCopy(w), file), path.join(handed, file));
    }
    if (step === "reify:done") {
      const work = await workCopy(w);
      placed = await snapshotTree(work);
      const lock = JSON.parse(readFileSync(path.join(work, "package-lock.json"), "utf8")) as { packages: Record<string, Record<string, unknown>> };
      known = closureView(placedTopNodes(new Map(Object.entries(lock.packages).filter(([location]) => location !== ""))));
      read = closureView(await readActual(w, work));
    }
  };
  const world: TeamWorld = { ctx: marketplaceCtx(w, { cwd: root, approveExecutables: async () => undefined, onStep }), npm: await client(w) };
  const before = reifies;
  const loadedBefore = loadActuals;
  await restoreTeamSet(root, { world, approveAll: async () => undefined });
  return { placed: placed!, reified: reifies - before, loaded: loadActuals - loadedBefore, known, read };
}

/** What arborist's reify makes of the package.json and package-lock.json in `dir`, as the applier runs it. */
async function arboristOf(w: TmpWorld, dir: string): Promise<TreeSnapshot> {
  const Arborist = await loadArborist();
  await new Arborist({ ...npmOptions(await client(w)), path: dir }).reify({ save: true });
  return snapshotTree(dir);
}

describe("team restore into an empty plugins folder: placed without npm's installer, exactly as it places", () => {
  let a: TmpWorld;
  let b: TmpWorld;
  let t: string;

  beforeEach(async () => {
    a = await makeTmpWorld("xcsh-placement-a-");
    b = await makeTmpWorld("xcsh-placement-b-");
    await writeUserNpmrc(a.home, reg.url);
    await writeUserNpmrc(b.home, reg.url);
    t = tag();
  });
  afterEach(async () => {
    await Promise.all([a, b].map((w) => w.cleanup()));
  });

  const lib = (suffix = "") => `@placement/lib${suffix}-${t}`;
  const plugin = (i: number) => `@placement/p${i}-${t}`;
  const publishLib = (name: string, version: string, packageJson: Record<string, unknown> = {}) =>
    reg.publish({ name, version, packageJson: { type: "module", ...packageJson }, files: { "index.js": `export default ${JSON.stringify(version)};\n` } });
  const publishPlugin = (name: string, deps: Record<string, string>, packageJson: Record<string, unknown> = {}) =>
    reg.publish({ name, version: "1.0.0", packageJson: { type: "module", dependencies: deps, xcsh: { tools: "./t.js" }, ...packageJson }, files: { "t.js": toolSource(toolName(name)), "README.md": "# plugin\n" } });
  const declare = (names: string[]) => Object.fromEntries(names.map((name) => [name, { spec: "^1.0.0" }]));

  /** B restores A's lock of `names`: placed without reify, and the same tree arborist makes of the same files. */
  async function expectPlacedAsArborist(names: string[]): Promise<void> {
    const root = await lockedByAClonedByB(a, b, declare(names));
    const handed = path.join(b.root, "handed-to-arborist");
    const { placed, reified, loaded, known, read } = await restoreWatched(b, root, handed);
    expect(reified, "arborist's reify ran").toBe(0);
    expect(placed).toEqual(await arboristOf(b, handed));
    // Class 3: neither the live tree nor the closure check asked arborist, and the closure check's tree is arborist's.
    expect(loaded, "arborist's loadActual ran").toBe(0);
    expect(known).toEqual(read);
    for (const name of names) expect(Object.keys(known as object)).toContain(name);
    for (const name of names) expect(readFileSync(path.join(pluginsDir(b), "node_modules", name, "t.js"), "utf8")).toBe(toolSource(toolName(name)));
  }

  it("three plugins sharing one library", async () => {
    await publishLib(lib(), "1.0.0");
    for (const i of [1, 2, 3]) await publishPlugin(plugin(i), { [lib()]: "^1.0.0" });
    await expectPlacedAsArborist([1, 2, 3].map(plugin));
  });

  it("a library at two versions: one at the top, the other nested below the plugin that needs it", async () => {
    await publishLib(lib(), "1.0.0");
    await publishLib(lib(), "2.0.0");
    await publishPlugin(plugin(1), { [lib()]: "^1.0.0" });
    await publishPlugin(plugin(2), { [lib()]: "^2.0.0" });
    await expectPlacedAsArborist([plugin(1), plugin(2)]);
    expect(existsSync(path.join(pluginsDir(b), "node_modules", plugin(2), "node_modules", lib()))).toBe(true);
  });

  it("a library with a dependency of its own, two levels below the plugins", async () => {
    await publishLib(lib("-sub"), "1.0.0");
    await publishLib(lib(), "1.0.0", { dependencies: { [lib("-sub")]: "^1.0.0" } });
    for (const i of [1, 2]) await publishPlugin(plugin(i), { [lib()]: "^1.0.0" });
    await expectPlacedAsArborist([plugin(1), plugin(2)]);
  });

  /** B restores A's lock of `names`: arborist's reify ran (the placement stood aside) and every plugin is in place. */
  async function expectArborist(names: string[], root?: string): Promise<void> {
    const at = root ?? (await lockedByAClonedByB(a, b, declare(names)));
    const { reified, loaded } = await restoreWatched(b, at, path.join(b.root, `handed-${tag()}`));
    expect(reified, "arborist's reify ran").toBeGreaterThan(0);
    expect(loaded, "arborist's loadActual ran (the closure check of a reified copy)").toBeGreaterThan(0);
    for (const name of names) expect(readFileSync(path.join(pluginsDir(b), "node_modules", name, "t.js"), "utf8")).toBe(toolSource(toolName(name)));
  }

  it("a library with a bin: arborist links it", async () => {
    await reg.publish({ name: lib(), version: "1.0.0", packageJson: { bin: { [`placement-${t}`]: "./cli.js" } }, files: { "cli.js": "#!/usr/bin/env node\n" } });
    await publishPlugin(plugin(1), { [lib()]: "^1.0.0" });
    await expectArborist([plugin(1)]);
    expect(existsSync(path.join(pluginsDir(b), "node_modules", ".bin", `placement-${t}`))).toBe(true);
  });

  it("a plugin with an optional dependency: arborist decides", async () => {
    await publishLib(lib(), "1.0.0");
    await publishPlugin(plugin(1), {}, { optionalDependencies: { [lib()]: "^1.0.0" } });
    await expectArborist([plugin(1)]);
  });

  it("a library that declares engines: arborist checks them", async () => {
    await publishLib(lib(), "1.0.0", { engines: { node: ">=18" } });
    await publishPlugin(plugin(1), { [lib()]: "^1.0.0" });
    await expectArborist([plugin(1)]);
  });

  it("a plugins folder that already holds a plugin: arborist diffs against it", async () => {
    await publishLib(lib(), "1.0.0");
    for (const i of [1, 2]) await publishPlugin(plugin(i), { [lib()]: "^1.0.0" });
    const root = await lockedByAClonedByB(a, b, declare([plugin(1)]));
    const first = await restoreWatched(b, root, path.join(b.root, "handed-first"));
    expect(first.reified).toBe(0);
    // The team adds a second plugin; B restores again into the folder that holds the first.
    const rootA = path.join(a.root, "project");
    await a.write(path.join(rootA, "xcsh-team.json"), { version: 1, plugins: declare([plugin(1), plugin(2)]) });
    expect((await runCli(["install", "--yes"], { cwd: rootA, home: a.home, timeoutMs: 120_000 })).code).toBe(0);
    await b.write(path.join(root, "xcsh-team.json"), { version: 1, plugins: declare([plugin(1), plugin(2)]) });
    await cp(path.join(rootA, "xcsh-team.lock.json"), path.join(root, "xcsh-team.lock.json"));
    await expectArborist([plugin(1), plugin(2)], root);
  });
});

describe("the trees around a placement, known without arborist (class 3, without a registry)", () => {
  let w: TmpWorld;
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-placement-known-");
  });
  afterEach(async () => {
    await w.cleanup();
  });

  /** `emptyLiveTree(dir)` and, when it answers, arborist's `loadActual` of the same folder. */
  async function liveTree(dir: string): Promise<{ empty: boolean; children: string[] }> {
    return { empty: await emptyLiveTree(dir), children: [...(await readActual(w, dir)).keys()] };
  }

  it("a plugins folder with no packages: no children, as arborist reads it (empty, our package.json naming plugins, one with no dependencies)", async () => {
    const empty = path.join(w.root, "empty");
    await mkdir(empty);
    const ours = path.join(w.root, "ours");
    await w.write(path.join(ours, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "not-installed": "^1.0.0" } });
    const bare = path.join(w.root, "bare");
    await w.write(path.join(bare, "package.json"), { name: "xcsh-plugins" });
    for (const dir of [empty, ours, bare]) expect(await liveTree(dir), dir).toEqual({ empty: true, children: [] });
  });

  it("anything else stands aside for arborist: no folder, a file; node_modules a folder, a link, a dangling link, a file; workspaces; a package.json that does not parse", async () => {
    const missing = path.join(w.root, "missing");
    expect(await emptyLiveTree(missing)).toBe(false);
    await expect(readActual(w, missing), "arborist fails on a missing folder: so must the restore").rejects.toThrow(/ENOENT/);
    await writeFile(path.join(w.root, "a-file"), "");
    expect(await emptyLiveTree(path.join(w.root, "a-file"))).toBe(false);
    const dirs: string[] = [];
    const at = async (name: string) => {
      const dir = path.join(w.root, name);
      await mkdir(dir, { recursive: true });
      dirs.push(dir);
      return dir;
    };
    await mkdir(path.join(await at("folder"), "node_modules"));
    const target = path.join(w.root, "elsewhere", "node_modules");
    await w.write(path.join(target, "lib", "package.json"), { name: "lib", version: "1.0.0" });
    await symlink(target, path.join(await at("link"), "node_modules"));
    await symlink(path.join(w.root, "nowhere"), path.join(await at("dangling"), "node_modules"));
    await writeFile(path.join(await at("file"), "node_modules"), "");
    await w.write(path.join(await at("workspaces"), "package.json"), { name: "x", private: true, workspaces: ["ws"], dependencies: {} });
    await writeFile(path.join(await at("unparsed"), "package.json"), "{ not json");
    for (const dir of dirs) expect(await emptyLiveTree(dir), dir).toBe(false);
    // The linked folder is one arborist reads a package through: the shortcut would have hidden it.
    expect([...(await readActual(w, path.join(w.root, "link"))).keys()]).toEqual(["lib"]);
  });

  /** A staging copy to place `lib@1.0.0` (depending on nothing) into, its unpacked folder's package.json being `manifest`. */
  async function placementOf(manifest: Record<string, unknown>) {
    const dir = path.join(w.root, `work-${tag()}`);
    const integrity = "sha512-" + Buffer.alloc(64, 7).toString("base64");
    await w.write(path.join(dir, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { lib: "^1.0.0" } });
    await w.write(path.join(dir, "package-lock.json"), {
      name: "xcsh-plugins",
      lockfileVersion: 3,
      requires: true,
      packages: { "": { name: "xcsh-plugins", dependencies: { lib: "^1.0.0" } }, "node_modules/lib": { version: "1.0.0", resolved: "http://127.0.0.1:1/lib/-/lib-1.0.0.tgz", integrity } },
    });
    const unpacked = path.join(w.root, `unpacked-${tag()}`);
    await w.write(path.join(unpacked, "package.json"), manifest);
    const offer = new UnpackedFolders();
    offer.offer(integrity, unpacked);
    return exactPlacement(dir, offer);
  }

  it("an unpacked package that says the lock's name, version and edges is placed; another name, version or edge stands aside", async () => {
    const placement = await placementOf({ name: "lib", version: "1.0.0" });
    expect(placement && closureView(placedTopNodes(placement.packages))).toEqual({
      lib: { name: "lib", version: "1.0.0", resolved: "http://127.0.0.1:1/lib/-/lib-1.0.0.tgz", integrity: "sha512-" + Buffer.alloc(64, 7).toString("base64"), inBundle: false, edges: {} },
    });
    expect(await placementOf({ name: "other", version: "1.0.0" }), "another name").toBeUndefined();
    expect(await placementOf({ name: "lib", version: "1.0.1" }), "another version").toBeUndefined();
    expect(await placementOf({ version: "1.0.0" }), "no name").toBeUndefined();
    expect(await placementOf({ name: "lib", version: "1.0.0", dependencies: {} }), "an empty dependencies is none").toBeDefined();
    // Edges the lock entry does not have: arborist would read them from the package (the closure check with them).
    expect(await placementOf({ name: "lib", version: "1.0.0", dependencies: { other: "^1.0.0" } }), "a dependency").toBeUndefined();
    expect(await placementOf({ name: "lib", version: "1.0.0", dependencies: "other" }), "dependencies not an object").toBeUndefined();
    for (const key of ["optionalDependencies", "peerDependencies", "bundleDependencies", "bundledDependencies"]) {
      expect(await placementOf({ name: "lib", version: "1.0.0", [key]: key.startsWith("bundle") ? ["other"] : { other: "^1.0.0" } }), key).toBeUndefined();
    }
  });
});
