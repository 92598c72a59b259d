/**
 * Whether the install's validation child may serve the module map (`@sinclair/typebox`,
 * `xcsh-tools`) as packages in the transaction folder instead of through a resolve hook
 * (host/module-import.ts `packageShims`). On Node before 22.15 that hook runs on a loader thread
 * of its own: about 100 ms of CPU to start, in the child, while this process fetches and
 * extracts on the same cores, and a round trip to it for every module the child imports (20
 * plugins validated in ~90 ms with it, ~50 ms without).
 *
 * The packages answer exactly as the hook does only when Node's own resolution, from every
 * module the child imports, reaches `<tx>/node_modules` for each mapped name. Arborist stages the
 * tree in `<tx>/work`, so `<tx>/node_modules` is the nearest `node_modules` above all of it; it
 * holds when the staged tree contains no package of a mapped name (Node would find that copy
 * first, where the hook hands over the host's instance) and no symlink (a linked folder resolves
 * from its real place, outside the transaction). Otherwise the child uses the hook, as before.
 *
 * The staged tree is only known after the installer ran; the child registers its hook ahead,
 * while the installer runs, unless `likelyPackageShims` expects the packages to do. A wrong
 * guess only costs time: the check itself carries the exact answer.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { DEFAULT_MODULE_NAMES } from "../host/import/module-names.js";

const MAPPED: ReadonlySet<string> = new Set(DEFAULT_MODULE_NAMES);

function folderIn(txDir: string): string {
  return path.join(txDir, "node_modules");
}

/** One node of arborist's tree, as far as this question goes. */
interface TreeNode {
  name: string;
  isLink: boolean;
}

/** The folder for `packageShims`, when the staged tree (arborist's, every node) allows it. */
export function packageShimsForTree(txDir: string, tree: { inventory: Map<string, TreeNode> }): string | undefined {
  for (const node of tree.inventory.values()) if (node.isLink || MAPPED.has(node.name)) return undefined;
  return folderIn(txDir);
}

/**
 * A guess before the installer runs: the live tree has no top-level package of a mapped name,
 * no plugin arriving names one among its dependencies, and nothing is linked.
 */
export function likelyPackageShims(txDir: string, liveNodeModules: string, incoming: readonly { dependencyNames: readonly string[] }[], links: boolean): string | undefined {
  if (links) return undefined;
  for (const name of MAPPED) if (existsSync(path.join(liveNodeModules, name))) return undefined;
  if (incoming.some((pkg) => pkg.dependencyNames.some((name) => MAPPED.has(name)))) return undefined;
  return folderIn(txDir);
}
