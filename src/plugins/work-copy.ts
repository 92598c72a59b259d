/**
 * The staging copy of the plugins folder that npm's installer works on, for the applier
 * (apply.ts) and `doctor --fix` (doctor/fix.ts). Inside the transaction's own folder:
 *
 *     work/package.json, work/package-lock.json, work/node_modules, work/.xcsh-tools/packed
 *
 * copied from the live folder and rebased (tree-rebase.ts: links outside the tree stay right);
 * after the work, rebased back and moved piece by piece into the journal's slots, so that the
 * commit swaps them in together and a failure before it leaves the live folder untouched.
 */
import { chmod, copyFile, mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { STATE_FILE_MODE, copyTree, jsonText, pathExists } from "../core/atomic-fs.js";
import { EMPTY_PLUGINS_PACKAGE_JSON } from "../manifest/plugins-package.js";
import type { Mutation } from "./mutation.js";
import { rebaseTree } from "./tree-rebase.js";

/** Where local sources are kept, relative to the plugins folder (the same in work/ and live). */
export const PACKED_REL = ".xcsh-tools/packed";

/** The pieces of a work copy, each the counterpart of a live path. */
export interface WorkCopy {
  dir: string;
  packageJson: string;
  packageLock: string;
  nodeModules: string;
  packed: string;
}

type Piece = Exclude<keyof WorkCopy, "dir">;

const LIVE: Record<Piece, (m: Mutation) => string> = {
  packageJson: (m) => m.paths.packageJson,
  packageLock: (m) => m.paths.packageLock,
  nodeModules: (m) => m.paths.nodeModules,
  packed: (m) => m.paths.packed,
};

/** Copy the live plugins folder into `<transaction>/work` (an empty package.json when it has none). */
export async function copyToWork(m: Mutation): Promise<WorkCopy> {
  const dir = path.join(m.tx.dir, "work");
  const work: WorkCopy = {
    dir,
    packageJson: path.join(dir, "package.json"),
    packageLock: path.join(dir, "package-lock.json"),
    nodeModules: path.join(dir, "node_modules"),
    packed: path.join(dir, PACKED_REL),
  };
  await mkdir(dir, { recursive: true });
  if (m.state.packageJson) await copyFile(m.paths.packageJson, work.packageJson);
  else await writeFile(work.packageJson, jsonText(EMPTY_PLUGINS_PACKAGE_JSON));
  if (await pathExists(m.paths.packageLock)) await copyFile(m.paths.packageLock, work.packageLock);
  if (await pathExists(m.paths.nodeModules)) await copyTree(m.paths.nodeModules, work.nodeModules);
  if (await pathExists(m.paths.packed)) {
    await mkdir(path.dirname(work.packed), { recursive: true });
    await copyTree(m.paths.packed, work.packed);
  }
  await rebaseTree(dir, m.paths.plugins, dir);
  return work;
}

/**
 * Rebase the work copy back to the live location and move `pieces` into the journal's slots: a
 * piece the work no longer has is staged for removal where the live folder has it.
 */
export async function stageWork(m: Mutation, work: WorkCopy, pieces: readonly Piece[]): Promise<void> {
  await rebaseTree(work.dir, work.dir, m.paths.plugins);
  // npm writes its manifests and lockfiles readable by all, and they record every spec and
  // resolved URL, tokens included (`https://…/x.tgz?token=`): owner-only, as our state files.
  for (const file of [work.packageJson, work.packageLock, path.join(work.nodeModules, ".package-lock.json")]) {
    if (await pathExists(file)) await chmod(file, STATE_FILE_MODE);
  }
  for (const piece of pieces) {
    const source = work[piece];
    const target = LIVE[piece](m);
    const has = await pathExists(source);
    if (!has) {
      if (await pathExists(target)) await m.tx.stageRemoval(target, m.paths.plugins);
      continue;
    }
    await rename(source, await m.tx.stage(target));
  }
}
