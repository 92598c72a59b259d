/**
 * Whether the install's validation child may serve the module map (`@sinclair/typebox`,
 * `xcsh-tools`) as packages in the transaction folder instead of through a resolve hook
 * (host/module-import.ts `packageShims`). On Node before 22.15 that hook runs on a loader thread
 * of its own: about 100 ms of CPU to start, in the child, while this process fetches and
 * extracts on the same cores, and a round trip to it for every module the child imports (20
 * plugins validated in ~90 ms with it, ~50 ms without).
 *
 * Arborist stages the tree in `<tx>/work`, so `<tx>/node_modules` is the nearest `node_modules`
 * above all of it, and Node's own resolution of a mapped name from any module there reaches the
 * packages exactly where the hook would send it, when:
 * - the staged tree holds no package of a mapped name (Node would find that copy first, where
 *   the hook hands over the host's instance) and no symlink (a linked folder resolves from its
 *   real place, outside the transaction);
 * - no folder Node would look in after `<tx>/node_modules` holds one either: the `node_modules`
 *   above the transaction (the live plugins folder among them) and `require`'s global folders
 *   (NODE_PATH, ~/.node_modules…). Under the hook a subpath (`@sinclair/typebox/value`) or a
 *   `require` of a mapped name resolves there; with the packages in between it would fail.
 * Otherwise the child uses the hook, as before.
 *
 * The staged tree is only known after the installer ran; the child registers its hook ahead,
 * while the installer runs, unless `treeLikelyAllowsPackageShims` expects the packages to do. A wrong
 * guess only costs time: the check itself carries the exact answer.
 */
import { existsSync, realpathSync } from "node:fs";
import nodeModule from "node:module";
import path from "node:path";
import { DEFAULT_MODULE_NAMES } from "../host/import/module-names.js";

const MAPPED: ReadonlySet<string> = new Set(DEFAULT_MODULE_NAMES);

/** One node of arborist's tree, as far as this question goes. */
interface TreeNode {
  name: string;
  isLink: boolean;
}

/**
 * `<tx>/node_modules`, unless a folder Node looks in after it holds a mapped package. Asked once
 * per install: the live plugins folder is under the install's lock.
 */
export function packageShimsFolder(txDir: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(txDir); // Node resolves from a module's real path
  } catch {
    return undefined;
  }
  for (const folder of foldersAfter(real)) for (const name of MAPPED) if (existsSync(path.join(folder, name))) return undefined;
  return path.join(txDir, "node_modules");
}

/** Whether the staged tree (arborist's, every node) holds no package of a mapped name and no link. */
export function treeAllowsPackageShims(tree: { inventory?: Map<string, TreeNode> }): boolean {
  if (!(tree.inventory instanceof Map)) return false; // not the arborist we know: the hook is always exact
  for (const node of tree.inventory.values()) if (node.isLink || MAPPED.has(node.name)) return false;
  return true;
}

/** A guess before the installer runs: no plugin arriving names a mapped package among its dependencies, nothing is linked. */
export function treeLikelyAllowsPackageShims(incoming: readonly { dependencyNames: readonly string[] }[], links: boolean): boolean {
  return !links && !incoming.some((pkg) => pkg.dependencyNames.some((name) => MAPPED.has(name)));
}

/** Where Node looks for a bare name after `<dir>/node_modules`: the `node_modules` above it, then `require`'s global folders. */
function foldersAfter(dir: string): string[] {
  const folders: string[] = [];
  for (let at = path.dirname(dir); ; at = path.dirname(at)) {
    if (path.basename(at) !== "node_modules") folders.push(path.join(at, "node_modules"));
    if (path.dirname(at) === at) break;
  }
  return [...folders, ...((nodeModule as { globalPaths?: string[] }).globalPaths ?? [])];
}
