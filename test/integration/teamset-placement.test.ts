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
 */
import { cp, mkdir, readdir } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadRegistryOptions } from "../../src/plugins/npmrc.js";
import { loadArborist, npmOptions, type NpmClientOptions } from "../../src/plugins/npm-client.js";
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
let unspy: (() => void) | undefined;
beforeAll(async () => {
  reg = await useGlobalRegistry();
  const proto = (await loadArborist()).prototype as unknown as { reify: (...args: unknown[]) => unknown };
  const original = proto.reify;
  proto.reify = function counted(this: unknown, ...args: unknown[]) {
    reifies += 1;
    return original.apply(this, args);
  };
  unspy = () => {
    proto.reify = original;
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

/**
 * Restore in `w` (consent given), keeping what arborist would have been handed (the staging
 * copy's package.json and package-lock.json at `apply:packed`) in `handed`, and a snapshot of the
 * staging copy once the packages are in (`reify:done`).
 */
async function restoreWatched(w: TmpWorld, root: string, handed: string): Promise<{ placed: TreeSnapshot; reified: number }> {
  let placed: TreeSnapshot | undefined;
  const onStep = async (step: string) => {
    if (step === "apply:packed") {
      await mkdir(handed, { recursive: true });
      for (const file of ["package.json", "package-lock.json"]) await cp(path.join(await workCopy(w), file), path.join(handed, file));
    }
    if (step === "reify:done") placed = await snapshotTree(await workCopy(w));
  };
  const world: TeamWorld = { ctx: marketplaceCtx(w, { cwd: root, approveExecutables: async () => undefined, onStep }), npm: await client(w) };
  const before = reifies;
  await restoreTeamSet(root, { world, approveAll: async () => undefined });
  return { placed: placed!, reified: reifies - before };
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
    const { placed, reified } = await restoreWatched(b, root, handed);
    expect(reified, "arborist's reify ran").toBe(0);
    expect(placed).toEqual(await arboristOf(b, handed));
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
    const { reified } = await restoreWatched(b, at, path.join(b.root, `handed-${tag()}`));
    expect(reified, "arborist's reify ran").toBeGreaterThan(0);
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
