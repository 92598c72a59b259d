/**
 * A comparable picture of a folder tree: every file's sha256 and mode, every folder's mode,
 * every symlink's target, and "absent" for named paths that must not exist. Two snapshots are
 * equal exactly when the trees are byte- and mode-identical (times are ignored).
 */
import { createHash } from "node:crypto";
import { lstat, readFile, readdir, readlink } from "node:fs/promises";
import path from "node:path";

export type TreeSnapshot = Record<string, string>;

/** Snapshot `root`, skipping `exclude` (relative names at any depth) and noting `absent` paths. */
export async function snapshotTree(
  root: string,
  options: { exclude?: string[]; absent?: string[] } = {},
): Promise<TreeSnapshot> {
  const out: TreeSnapshot = {};
  const exclude = new Set(options.exclude ?? []);
  async function walk(abs: string, rel: string): Promise<void> {
    let info;
    try {
      info = await lstat(abs);
    } catch {
      out[rel || "."] = "absent";
      return;
    }
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isSymbolicLink()) {
      out[rel] = `symlink -> ${await readlink(abs)}`;
    } else if (info.isDirectory()) {
      out[rel || "."] = `dir ${mode}`;
      for (const name of (await readdir(abs)).sort()) {
        if (exclude.has(name)) continue;
        await walk(path.join(abs, name), rel ? `${rel}/${name}` : name);
      }
    } else {
      out[rel] = `file ${mode} ${createHash("sha256").update(await readFile(abs)).digest("hex")}`;
    }
  }
  await walk(root, "");
  for (const rel of options.absent ?? []) {
    if (!(rel in out)) out[rel] = "absent";
  }
  return out;
}
