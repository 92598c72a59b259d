/**
 * Durable file-system primitives for state files and the transaction journal.
 *
 * A state file is never rewritten in place: `writeFileAtomic` writes a uniquely named temp file
 * next to the target (same folder, so the same file system), fsyncs it, renames it over the
 * target and fsyncs the folder so the rename itself survives a power cut. Readers therefore see
 * either the whole old file or the whole new one, also with several writers at once (each has
 * its own temp name; the last rename wins). The temp file is removed on every failure path.
 *
 * The approach is `write-file-atomic`'s (npm's own), written here rather than depended on
 * because we also need the folder fsync, mode preservation without chown, and the tree helpers
 * below, and the whole thing is a few dozen lines.
 *
 * The tree helpers (`copyTree`, `removeTree`, `movePath`) exist for the journal and the staging
 * copies it swaps in: copying keeps modes and symlinks as they are (a staged copy must be byte-
 * and mode-identical), removal refuses obviously dangerous targets, and moving falls back to
 * copy + remove across file systems.
 */
import { constants as fsConstants, lstatSync, mkdirSync, mkdtempSync, type Stats } from "node:fs";
import os from "node:os";
import {
  chmod,
  copyFile,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  unlink,
  utimes,
} from "node:fs/promises";
import path from "node:path";
import { confinePath, isPathInside } from "./contain.js";
import { XcshToolsError, errorMessage, nodeErrorCode } from "./errors.js";
import { codedFailure } from "./failure.js";

/** `bytes` random bytes as hex, from Web Crypto: node:crypto stays out of the boot path (Bun loads it slowly). */
function randomHex(bytes: number): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

/** A unique sibling name for a temp file or folder next to `target`. */
export function tempSibling(target: string, tag = "tmp"): string {
  const base = path.basename(target);
  return path.join(path.dirname(target), `.${base}.${process.pid}.${randomHex(6)}.${tag}`);
}

export async function lstatOrUndefined(target: string) {
  try {
    return await lstat(target);
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw error;
  }
}

/** True when something (file, folder, symlink, even a dangling one) exists at `target`. */
export async function pathExists(target: string): Promise<boolean> {
  return (await lstatOrUndefined(target)) !== undefined;
}

/**
 * Fsync a folder so that renames and creations inside it are durable. Platforms that cannot
 * open or sync a folder (Windows, some network file systems) are tolerated: there the rename is
 * as durable as the OS makes it.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, fsConstants.O_RDONLY);
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code === "EISDIR" || code === "EPERM" || code === "EACCES" || code === "ENOENT") return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code !== "EINVAL" && code !== "EPERM" && code !== "EBADF" && code !== "ENOTSUP") throw error;
  } finally {
    await handle.close();
  }
}

/** Fsync one regular file by path. */
export async function fsyncFile(file: string): Promise<void> {
  const handle = await open(file, fsConstants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The mode of a state file we create: owner-only. State files hold URLs and specs that may carry
 * credentials (`https://user:token@…`, `?token=`), which are needed to fetch again, so they are
 * kept from other users rather than redacted (issue 41).
 */
export const STATE_FILE_MODE = 0o600;

/**
 * Write `data` to `file` atomically and durably (temp file, fsync, rename, fsync folder), keeping
 * an existing file's mode (a new one is STATE_FILE_MODE).
 *
 * A symlink at `file` is written through (its target is replaced, as write-file-atomic does, so a
 * link the user made stays a link) only when its real target stays inside `within`, the folder of
 * ours the file belongs to (default: the folder `file` is in): otherwise `EPATH_OUTSIDE` and
 * nothing is written (`confinePath`, core/contain.ts, says why).
 *
 * `durable: false` skips the two fsyncs (about 4 ms on a loaded disk) for a cache that checks
 * itself when read (the boot index: a file a power cut leaves empty or old reads as stale), never
 * for state: the rename still makes a reader see the old file or the new one.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, within: string = path.dirname(path.resolve(file)), options: { durable?: boolean } = {}): Promise<void> {
  const durable = options.durable !== false;
  const target = confinePath(file, within, { what: "state file" }, { scope: "user" });
  const dir = path.dirname(target);
  const existing = await lstatOrUndefined(target);
  // A state file replaced by a link to a device or a FIFO (`/dev/zero`) must not make the rename
  // below replace that device node: only a regular file (or nothing) is ever replaced (a folder
  // makes the rename itself fail: EWRITE).
  if (existing !== undefined && !existing.isFile() && !existing.isDirectory()) {
    throw new XcshToolsError("ENOT_A_FILE", `${file}${target !== path.resolve(file) ? ` (a link to ${target})` : ""} is not a regular file: it was not replaced`, {
      file,
      hint: `Remove ${file} (or the link that leads elsewhere); it is recreated when needed.`,
    });
  }
  const mode = existing?.isFile() ? existing.mode & 0o7777 : undefined;
  const temp = tempSibling(target);
  let handle;
  try {
    handle = await open(temp, "wx", mode ?? STATE_FILE_MODE);
    await handle.writeFile(data);
    // open()'s mode is filtered by the umask; a preserved mode must be exact.
    await handle.chmod(mode ?? STATE_FILE_MODE);
    if (durable) await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, target);
  } catch (error) {
    if (handle) await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    // A full disk or a refused permission says so, naming the file (core/failure.ts).
    throw codedFailure(error, { folder: dir }) ??
      new XcshToolsError("EWRITE", `Cannot write ${target}: ${errorMessage(error)}`, { file: target, hint: `Check that ${dir} exists and is writable.`, cause: error });
  }
  if (durable) await fsyncDir(dir);
}

/** How every JSON file of ours is written: 2-space JSON and a final newline, as npm and the host write. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export async function writeJsonAtomic(file: string, value: unknown, within?: string): Promise<void> {
  await writeFileAtomic(file, jsonText(value), within);
}

/** Create a folder (and parents) and fsync its parent so the creation is durable. */
export async function mkdirDurable(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true });
  if (created !== undefined) await fsyncDir(path.dirname(dir));
}

/** The limits of one copy: entries (files, folders and links), bytes of file content, wall time. */
export interface CopyLimits {
  entries: number;
  bytes: number;
  ms: number;
}

/** No limits: a copy of a folder of ours is as large as what is on disk, links are kept, nothing multiplies. */
const UNBOUNDED: CopyLimits = { entries: Infinity, bytes: Infinity, ms: Infinity };

export interface CopyTreeOptions {
  /** fsync every copied file and folder. */
  sync?: boolean;
  /**
   * Copy a folder we did not write (a plugin, a marketplace): symlinks that resolve inside
   * `within` are followed (the host's Claude Code-compatible behaviour: a plugin may link a shared
   * file from elsewhere in its repository, which only exists in the copy if it is materialized),
   * one that leaves it or dangles is an error, special files are skipped, and modes are kept
   * without times. Without it the copy is of our own state: links stay links, special files are
   * an error, modes and times are kept exactly (a staged copy must be identical).
   */
  within?: string;
  /** Names never copied (at any depth), e.g. `.git`. */
  skip?: ReadonlySet<string>;
  /** Limits (default: none, for our own folders; callers copying what they did not write set them). */
  limits?: Partial<CopyLimits>;
}

function copyLimitError(src: string, limit: keyof CopyLimits, max: number): XcshToolsError {
  const what = limit === "entries" ? `more than ${max} files and folders` : limit === "bytes" ? `more than ${max} bytes` : `longer than ${max / 1000} s`;
  return new XcshToolsError("ECOPY_LIMIT", `Copying ${src} stopped: it is ${what} (the limit of ${limit} of one copy); the partial copy was removed`, {
    file: src,
    hint: `A plugin folder is rarely this large: look in ${src} for symbolic links that lead to folders again and again (each followed link is copied), or build output that does not belong in the plugin, and remove them.`,
  });
}

/**
 * The one recursive copy (the journal's staging, the plugins folder's work copy, plugins and
 * marketplaces into the cache). Copies `src` (a file, folder or symlink) to `dest`, which must not
 * exist; on any failure the partial copy is removed and a full disk is `EDISK_FULL`.
 *
 * With `within`, followed links cannot make the copy exponential (a folder with two links to a
 * folder with two links to ..., 25 levels deep, is 2^25 folders if every link is copied as what
 * it points at): each real folder is copied once, and every further link to it becomes a relative
 * link to that first copy, which the host loads as the same files (the OS follows it; an import
 * resolves to the first copy's real path, inside the plugin). A link to a folder being copied
 * (a loop) is `ETREE_DEPTH`. Files are copied for each link: that is linear in the source's entries,
 * and the entry, byte and time limits (`ECOPY_LIMIT`) hold whatever the source is.
 */
export async function copyTree(src: string, dest: string, options: CopyTreeOptions = {}): Promise<void> {
  const limits = { ...UNBOUNDED, ...options.limits };
  const foreign = options.within !== undefined;
  const rootReal = foreign ? await realpath(options.within!) : "";
  const started = Date.now();
  let entries = 0;
  let bytes = 0;
  /** Real folders copied, and where their first copy is; folders being copied now. */
  const done = new Map<string, string>();
  const open = new Set<string>();
  let made = false;
  /** One more entry, or `size` more bytes of file content; `ECOPY_LIMIT` past a limit. */
  const count = (size?: number) => {
    if (size === undefined) entries += 1;
    else bytes += size;
    if (entries > limits.entries) throw copyLimitError(src, "entries", limits.entries);
    if (bytes > limits.bytes) throw copyLimitError(src, "bytes", limits.bytes);
    if (Date.now() - started > limits.ms) throw copyLimitError(src, "ms", limits.ms);
  };
  async function copy(from: string, to: string): Promise<void> {
    count();
    let info = await lstat(from);
    if (info.isSymbolicLink()) {
      if (!foreign) {
        await symlink(await readlink(from), to);
        made = true;
        return;
      }
      const real = await realpath(from).catch(() => undefined);
      if (!real) throw new XcshToolsError("EENTRY_NOT_FOUND", `${from} is a dangling symbolic link (${await readlink(from)})`, { file: from, hint: "Remove the link or commit the file it points at." });
      if (!isPathInside(real, rootReal)) {
        throw new XcshToolsError("EENTRY_ESCAPE", `${from} links to ${real}, outside ${rootReal}`, { file: from, hint: "A plugin is copied on its own: put the shared files inside the plugin instead of linking to them." });
      }
      info = await stat(real);
      if (info.isDirectory()) {
        if (open.has(real)) throw new XcshToolsError("ETREE_DEPTH", `${from} links to ${real}, a folder that contains it (a symlink loop)`, { file: from, hint: "Remove the symlink loop from the plugin." });
        const first = done.get(real);
        if (first !== undefined) {
          await symlink(path.relative(path.dirname(to), first), to);
          made = true;
          return;
        }
      }
      from = real;
    }
    if (info.isDirectory()) {
      await mkdir(to, { mode: 0o700 });
      made = true;
      const real = foreign ? await realpath(from) : "";
      open.add(real);
      for (const name of (await readdir(from)).sort()) {
        if (!options.skip?.has(name)) await copy(path.join(from, name), path.join(to, name));
      }
      open.delete(real);
      if (foreign && !done.has(real)) done.set(real, to);
    } else if (info.isFile()) {
      count(info.size);
      await copyFile(from, to, fsConstants.COPYFILE_EXCL);
      made = true;
    } else if (foreign) {
      return; // sockets, FIFOs and devices are not plugin content: skipped
    } else {
      throw new XcshToolsError("EUNSUPPORTED_FILE", `Cannot copy ${from}: it is not a file, folder or symlink`, {
        file: from,
        hint: "Remove the special file (socket, FIFO, device) from the folder.",
      });
    }
    await finish(to, info);
  }
  async function finish(to: string, info: Stats): Promise<void> {
    if (foreign) await chmod(to, (info.mode & 0o777) | (info.isDirectory() ? 0o700 : 0));
    else {
      await chmod(to, info.mode & 0o7777);
      await utimes(to, info.atime, info.mtime);
    }
    if (options.sync) await (info.isDirectory() ? fsyncDir : fsyncFile)(to);
  }
  try {
    await copy(src, dest);
  } catch (error) {
    // Only what this copy made: a `dest` that was already there (EEXIST) is someone else's.
    if (made) await removeTree(path.resolve(dest)).catch(() => undefined);
    throw codedFailure(error, { folder: path.dirname(path.resolve(dest)) }) ?? error;
  }
}

/**
 * Remove a file, symlink or folder tree; nothing there is fine. Refuses the file-system root
 * and relative paths, the two ways a bug here would destroy far more than intended.
 */
export async function removeTree(target: string): Promise<void> {
  if (!path.isAbsolute(target) || path.parse(target).root === target) {
    throw new XcshToolsError("EUNSAFE_REMOVE", `Refusing to remove ${JSON.stringify(target)}`, {
      hint: "This is a bug in xcsh-tools: removal targets must be absolute paths below the root.",
    });
  }
  await rm(target, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * Move `src` to `dest` (which must not exist). A rename when both are on one file system;
 * otherwise copy to a temp sibling of `dest`, rename it into place, then remove `src`, so that
 * `dest` appears whole or not at all.
 */
export async function movePath(src: string, dest: string): Promise<void> {
  try {
    await rename(src, dest);
    return;
  } catch (error) {
    if (nodeErrorCode(error) !== "EXDEV") throw error;
  }
  const temp = tempSibling(dest, "move");
  try {
    await copyTree(src, temp, { sync: true });
    await rename(temp, dest);
  } catch (error) {
    await removeTree(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDir(path.dirname(dest));
  // Make `src` vanish atomically before the (interruptible) tree removal, so that a crash never
  // leaves a half-deleted `src` that a retry would mistake for the real thing.
  const retired = tempSibling(src, "moved");
  await rename(src, retired);
  await fsyncDir(path.dirname(src));
  await removeTree(retired);
}

/**
 * `<system temp>/<name>`, a per-user folder other runs reuse (module shims, a transpile cache) —
 * but only when it is a real folder of this user that nobody else can write: its name is
 * predictable, so another local user may have made it first and would then choose the code we
 * import from it. Otherwise a fresh private folder (`mkdtemp`, 0700) of this process.
 */
export function privateTempDir(name: string): string {
  const dir = path.join(os.tmpdir(), name);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch {
    // Already there (checked below), or not makeable (a fresh folder below).
  }
  const info = lstatSync(dir, { throwIfNoEntry: false });
  const uid = process.getuid?.();
  if (info?.isDirectory() && (uid === undefined || info.uid === uid) && (info.mode & 0o022) === 0) return dir;
  return mkdtempSync(`${dir}-`);
}
