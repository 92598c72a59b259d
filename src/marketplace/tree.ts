/**
 * Plugin folders as content: copying one into the cache without `.git` (in the host, cached
 * copies carried the clone's history), and hashing it so the cache is keyed by what is inside,
 * not by a version string (the stale-cache bug family of the host and Claude Code: same version,
 * different code, old folder reused).
 *
 * Symlinks inside the source that point inside its root are copied as the files they point at
 * (Claude Code follows them too), each real folder once (core/atomic-fs.ts `copyTree`); one that
 * leaves the root, or dangles, is an error: a plugin must not smuggle files from elsewhere on the
 * disk into the cache.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rmdir } from "node:fs/promises";
import path from "node:path";
import { copyTree, removeTree, type CopyLimits } from "../core/atomic-fs.js";

/** Names never copied into the cache. */
const SKIPPED = new Set([".git"]);

/**
 * The limits of copying a plugin or marketplace folder (core/atomic-fs.ts `copyTree`): the
 * unpacked-size default of a package tarball, more files than any real plugin, and a time well
 * past what copying that takes on a slow disk.
 */
export const PLUGIN_COPY_LIMITS: CopyLimits = { entries: 100_000, bytes: 512 * 1024 * 1024, ms: 120_000 };

/** Copy the folder `src` to `dest` (must not exist) without `.git`, resolving inner symlinks inside `within`. */
export async function copyPluginTree(src: string, dest: string, within = src): Promise<void> {
  await copyTree(src, dest, { within, skip: SKIPPED, limits: PLUGIN_COPY_LIMITS });
}

/**
 * A hash of a folder's content: every path (sorted), whether it is executable, and every file's
 * bytes; `.git` excluded, symlinks hashed as their target text. Modes other than the executable
 * bit and times do not count: git does not keep them either.
 *
 * Synchronous reads on purpose: the walk is one file at a time whatever the API (the hash is fed
 * in order), so promises bought no overlap, only a thread-pool round trip and a promise per call;
 * measured on a seed restore's 20 small plugins, 45 ms of CPU asynchronously against 9 ms (Node 20).
 */
export async function hashTree(root: string): Promise<string> {
  const hash = createHash("sha256");
  function walk(dir: string, rel: string): void {
    for (const name of readdirSync(dir).sort()) {
      if (SKIPPED.has(name)) continue;
      const abs = path.join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      const info = lstatSync(abs);
      if (info.isSymbolicLink()) hash.update(`L\0${relPath}\0${readlinkSync(abs)}\0`);
      else if (info.isDirectory()) {
        hash.update(`D\0${relPath}\0`);
        walk(abs, relPath);
      } else if (info.isFile()) {
        hash.update(`F\0${relPath}\0${info.mode & 0o111 ? "x" : "-"}\0${info.size}\0`);
        hash.update(readFileSync(abs));
      }
    }
  }
  walk(root, "");
  return hash.digest("hex");
}

const SCRATCH_NAME = /^\.xcsh-tools-[a-z]+-(\d+)-/;

/**
 * Remove the scratch folders in `near` whose process is gone (killed before its `dispose`). Only
 * those: without the lock, a scratch of a live command (a dry run, another fetch) stays.
 */
async function sweepAbandoned(near: string): Promise<void> {
  for (const name of await readdir(near).catch(() => [] as string[])) {
    const pid = Number(SCRATCH_NAME.exec(name)?.[1]);
    if (!pid || pid === process.pid || processAlive(pid)) continue;
    await removeTree(path.join(near, name)).catch(() => undefined);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * A scratch folder outside live state for one fetch, inside `near` (our own `tmp` folder beside
 * the journal, marketplace-cache.ts `scratchNear`); `dispose` removes it and the folders made for it.
 *
 * Never in the system temp folder: a plugin copy is validated where it lies, and module
 * resolution walks the folders above it (`/tmp/node_modules` is anyone's to write). Beside our
 * cache it also reaches the cache by `rename`, never by a copy across filesystems
 * (`npm run bench`, bench/marketplace.js).
 */
export async function makeScratch(label: string, near: string): Promise<{ dir: string; dispose(): Promise<void> }> {
  const created = await mkdir(near, { recursive: true, mode: 0o700 });
  await sweepAbandoned(near);
  // The pid in the name lets a later command tell an abandoned scratch (kill -9) from one in use.
  const prefix = path.join(near, `.xcsh-tools-${label}-${process.pid}-`);
  // Another command's dispose may remove `near` between our mkdir and mkdtemp: make it again once.
  const dir = await mkdtemp(prefix).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== "ENOENT") throw error;
    await mkdir(near, { recursive: true, mode: 0o700 });
    return mkdtemp(prefix);
  });
  return {
    dir,
    async dispose() {
      await removeTree(dir).catch(() => undefined);
      // Only the folders this scratch created, innermost first; a folder something else uses stays.
      if (created === undefined) return;
      for (let d = path.resolve(near); d.length >= created.length && d !== path.dirname(d); d = path.dirname(d)) {
        if (!(await rmdir(d).then(() => true, () => false))) break;
      }
    },
  };
}
