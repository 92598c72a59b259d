/**
 * The module map served as packages (host/module-import.ts `packageShims`), as the install's
 * validation child does where Node's resolve hook would need a loader thread of its own: the
 * same modules checked once that way and once through the hook give the same outcomes, and the
 * packages are written only where they replace the hook. Then the install's choice
 * (plugins/module-map-packages.ts) on real staged trees.
 */
import { existsSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import nodeModule from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { packageShimsFolder, treeAllowsPackageShims, treeLikelyAllowsPackageShims } from "../../src/plugins/module-map-packages.js";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const moduleCheck = pathToFileURL(path.join(REPO, "dist", "validate", "module-check.js")).href;
/** Node before 22.15 runs the resolve hook on a thread of its own: there the packages replace it. */
const hookNeedsThread = typeof (nodeModule as { registerHooks?: unknown }).registerHooks !== "function";

/** Check `files` of one staged tree, with the packages or without (the hook), in a fresh process. */
const SCRIPT = `
import { checkModules } from ${JSON.stringify(moduleCheck)};
const { cwd, tx, files, packages } = JSON.parse(process.argv[2]);
const outcomes = await checkModules(files.map((f) => tx + "/work/node_modules/" + f), {
  cwd, home: tx + "/home", xcshHome: tx + "/scratch", cacheDir: tx + "/scratch/transpile",
  ...(packages ? { packageShims: tx + "/node_modules" } : {}),
});
console.log(JSON.stringify(outcomes.map((o) => ({ tools: o.tools.map((t) => t.name), failure: o.failure?.code ?? null, message: o.failure?.message ?? null }))));
`;

const tool = (name: string, head: string, check = "") => `${head}
export default (api) => { ${check}
  return { name: ${JSON.stringify(name)}, description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } };
};
`;

/** A staged plugin tree: the plugin's tools and a dependency, as arborist lays them out in work/. */
const TREE: Record<string, string> = {
  "plugin/package.json": JSON.stringify({ name: "plugin", version: "1.0.0", type: "module", dependencies: { dep: "1.0.0" } }),
  // The bare names reach the host's one instance: the same TypeBox as api.typebox, our own API.
  "plugin/tools/mapped.js": tool(
    "mapped_tool",
    `import { Type } from "@sinclair/typebox";\nimport * as xcsh from "xcsh-tools";`,
    `if (api.typebox.Type !== Type) throw new Error("two TypeBox instances"); if (typeof xcsh.loadCustomTools !== "function") throw new Error("not our API");`,
  ),
  // A dependency of the plugin imports a mapped name too: it resolves from the dependency's folder.
  "plugin/tools/through-dep.js": tool("through_dep_tool", `import { typeOf } from "dep";`, `if (typeOf() !== api.typebox.Type) throw new Error("the dependency sees another TypeBox");`),
  "dep/package.json": JSON.stringify({ name: "dep", version: "1.0.0", type: "module", exports: "./index.js" }),
  "dep/index.js": `import { Type } from "@sinclair/typebox";\nexport const typeOf = () => Type;\n`,
  // Only exact names are mapped: a subpath is not, and nothing installs it here.
  "plugin/tools/subpath.js": tool("subpath_tool", `import { Value } from "@sinclair/typebox/value";\nvoid Value;`),
  // The hook maps imports, never a CommonJS require.
  "plugin/tools/required.cjs": `const tb = require("@sinclair/typebox");\nmodule.exports = (api) => ({ name: "required_tool", description: "d", parameters: tb.Type.Object({}), async execute() { return { content: [] }; } });\n`,
};
const FILES = ["plugin/tools/mapped.js", "plugin/tools/through-dep.js", "plugin/tools/subpath.js", "plugin/tools/required.cjs"];

let w: TmpWorld;
beforeAll(buildDist, 120_000);
beforeEach(async () => {
  w = await makeTmpWorld();
});
afterEach(async () => w?.cleanup());

async function stageTree(tx: string): Promise<void> {
  for (const [file, text] of Object.entries(TREE)) {
    const at = path.join(tx, "work", "node_modules", file);
    await mkdir(path.dirname(at), { recursive: true });
    await writeFile(at, text);
  }
}

async function check(tx: string, packages: boolean) {
  const file = path.join(w.root, "check.mjs");
  await writeFile(file, SCRIPT);
  const r = await runProcess(process.execPath, [file, JSON.stringify({ cwd: w.cwd, tx, files: FILES, packages })], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  return r.json<{ tools: string[]; failure: string | null; message: string | null }[]>();
}

describe("the module map served as packages", () => {
  it("answers every import as the resolve hook does, and is written only where it replaces the hook", { timeout: 90_000 }, async () => {
    const viaPackages = path.join(w.root, "tx-packages");
    const viaHook = path.join(w.root, "tx-hook");
    await stageTree(viaPackages);
    await stageTree(viaHook);
    // The install would choose the packages for this layout (no folder above it holds a mapped name).
    expect(packageShimsFolder(viaPackages), "a node_modules above the temp folder holds @sinclair/typebox or xcsh-tools").toBe(path.join(viaPackages, "node_modules"));
    const [packages, hook] = await Promise.all([check(viaPackages, true), check(viaHook, false)]);

    expect(hook.map((o) => [o.tools, o.failure])).toEqual([
      [["mapped_tool"], null],
      [["through_dep_tool"], null],
      [[], "EIMPORT"],
      [[], "EIMPORT"],
    ]);
    expect(packages.map((o) => [o.tools, o.failure])).toEqual(hook.map((o) => [o.tools, o.failure]));
    expect(hook[2]!.message).toContain("@sinclair/typebox");
    expect(packages[2]!.message).toContain("@sinclair/typebox");

    expect(existsSync(path.join(viaPackages, "node_modules", "@sinclair", "typebox", "package.json"))).toBe(hookNeedsThread);
    expect(existsSync(path.join(viaPackages, "node_modules", "xcsh-tools", "index.mjs"))).toBe(hookNeedsThread);
    expect(existsSync(path.join(viaHook, "node_modules"))).toBe(false);
  });
});

describe("when an install may serve it as packages", () => {
  const node = (name: string, isLink = false) => ({ name, isLink });
  const tree = (...nodes: { name: string; isLink: boolean }[]) => ({ inventory: new Map(nodes.map((n, i) => [`node_modules/${i}`, n])) });

  it("from the staged tree: none of the mapped names in it, and no link", () => {
    expect(treeAllowsPackageShims(tree(node("xcsh-plugins"), node("plugin"), node("dep")))).toBe(true);
    expect(treeAllowsPackageShims(tree(node("xcsh-plugins"), node("plugin"), node("@sinclair/typebox")))).toBe(false);
    expect(treeAllowsPackageShims(tree(node("xcsh-plugins"), node("xcsh-tools")))).toBe(false);
    expect(treeAllowsPackageShims(tree(node("xcsh-plugins"), node("linked-plugin", true)))).toBe(false);
    expect(treeAllowsPackageShims({})).toBe(false);
  });

  it("ahead of the installer: the arriving plugins' dependencies and links", () => {
    expect(treeLikelyAllowsPackageShims([{ dependencyNames: ["dep"] }], false)).toBe(true);
    expect(treeLikelyAllowsPackageShims([{ dependencyNames: ["dep", "@sinclair/typebox"] }], false)).toBe(false);
    expect(treeLikelyAllowsPackageShims([], true)).toBe(false);
  });

  it("never when a node_modules above the transaction holds a mapped name (the live plugins folder, a user's ~/node_modules)", async () => {
    const tx = path.join(w.root, "plugins", ".xcsh-tools", "journal", "t1");
    await mkdir(tx, { recursive: true });
    expect(packageShimsFolder(tx)).toBe(path.join(tx, "node_modules"));
    await mkdir(path.join(w.root, "plugins", "node_modules", "xcsh-tools"), { recursive: true });
    expect(packageShimsFolder(tx)).toBeUndefined();
    await rm(path.join(w.root, "plugins", "node_modules"), { recursive: true });
    await mkdir(path.join(w.root, "node_modules", "@sinclair", "typebox"), { recursive: true });
    expect(packageShimsFolder(tx)).toBeUndefined();
    // A transaction folder that is gone: nothing to vouch for.
    expect(packageShimsFolder(path.join(w.root, "gone"))).toBeUndefined();
  });
});
