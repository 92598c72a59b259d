/**
 * The key the loader deduplicates a tool module by (its real path), shared with the boot index's
 * module records, which must be keyed exactly as the loader keys what it imports.
 */
import { lstatSync, realpathSync, statSync, type Stats } from "node:fs";
import path from "node:path";

const INDEX_FILES = ["index.ts", "index.js", "index.mjs"];

/*
 * Real paths by folder are exact only where names are case-sensitive: elsewhere (macOS, Windows)
 * realpath also gives the name's case on disk, which the folder's real path would not.
 */
const REAL_PATH_BY_FOLDER = process.platform === "linux";

/**
 * The file a resolved path stands for, and the key it is deduplicated by: its real path. A
 * regular file that is not a link has its folder's real path plus its name, so tools that share
 * a folder (a plugin's five tools) cost one realpath between them, in `realFolders`, instead of
 * one each (realpath walks every component of the path, the larger part of preparing the paths).
 * `regular`: paths an `lstat` of this same boot found to be regular files, not links, moments
 * ago (the lazy boot's freshness check, boot/fingerprint.ts `firstChange`): no second `lstat`.
 */
export function locateModule(resolved: string, realFolders: Map<string, string>, regular?: ReadonlySet<string>): { file: string; key: string } {
  if (REAL_PATH_BY_FOLDER) {
    let info: Stats | undefined;
    const known = regular?.has(resolved) === true;
    try {
      if (!known) info = lstatSync(resolved, { throwIfNoEntry: false });
    } catch {
      info = undefined;
    }
    if (known || info?.isFile()) {
      const folder = path.dirname(resolved);
      let realFolder = realFolders.get(folder);
      if (realFolder === undefined) {
        realFolder = realPathOrResolved(folder);
        realFolders.set(folder, realFolder);
      }
      return { file: resolved, key: inFolder(realFolder, resolved, folder) };
    }
  }
  const file = resolveIndexFile(resolved);
  return { file, key: realPathOrResolved(file) };
}

/**
 * Whether `p` is an absolute POSIX path that `path.resolve` returns unchanged (no `//`, `.` or
 * `..` part, no trailing `/`): one native regex test instead of `path.resolve`'s walk over every
 * character, which a lazy boot would pay for each of a thousand entries, in cold code.
 */
export function isResolvedPath(p: string): boolean {
  return path.sep === "/" && p.startsWith("/") && p.length > 1 && !UNRESOLVED.test(p);
}
const UNRESOLVED = /\/\.{0,2}(?:\/|$)/;

/** `path.join(realFolder, basename(file))`, joined by hand when `file` is resolved already (its folder part is `folder`). */
function inFolder(realFolder: string, file: string, folder: string): string {
  if (!isResolvedPath(file) || !isResolvedPath(realFolder)) return path.join(realFolder, path.basename(file));
  return realFolder + file.slice(folder.length);
}

/** A folder stands for its index file; anything else is returned unchanged. */
function resolveIndexFile(resolved: string): string {
  try {
    if (!statSync(resolved).isDirectory()) return resolved;
  } catch {
    return resolved;
  }
  for (const name of INDEX_FILES) {
    const candidate = path.join(resolved, name);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next one
    }
  }
  return resolved;
}

function realPathOrResolved(file: string): string {
  try {
    // One realpath(3) call instead of an lstat per path segment.
    return realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}
