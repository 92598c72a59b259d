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
import { constants as fsConstants, lstatSync, mkdirSync, mkdtempSync } from "node:fs";
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
  symlink,
  unlink,
  utimes,
} from "node:fs/promises";
import path from "node:path";
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
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  // Write through a symlink to its target, as write-file-atomic does, rather than replacing
  // the link with a regular file.
  let target = path.resolve(file);
  try {
    target = await realpath(target);
  } catch {
    // does not exist yet: write the path itself
  }
  const dir = path.dirname(target);
  const existing = await lstatOrUndefined(target);
  const mode = existing?.isFile() ? existing.mode & 0o7777 : undefined;
  const temp = tempSibling(target);
  let handle;
  try {
    handle = await open(temp, "wx", mode ?? STATE_FILE_MODE);
    await handle.writeFile(data);
    // open()'s mode is filtered by the umask; a preserved mode must be exact.
    await handle.chmod(mode ?? STATE_FILE_MODE);
    await handle.sync();
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
  await fsyncDir(dir);
}

/** How every JSON file of ours is written: 2-space JSON and a final newline, as npm and the host write. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, jsonText(value));
}

/** Create a folder (and parents) and fsync its parent so the creation is durable. */
export async function mkdirDurable(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true });
  if (created !== undefined) await fsyncDir(path.dirname(dir));
}

/**
 * Copy a file, folder or symlink to `dest` (which must not exist), keeping modes, symlinks as
 * symlinks and file times. With `sync`, every copied file and folder is fsynced.
 */
export async function copyTree(src: string, dest: string, options: { sync?: boolean } = {}): Promise<void> {
  const info = await lstat(src);
  if (info.isSymbolicLink()) return symlink(await readlink(src), dest);
  if (info.isDirectory()) {
    await mkdir(dest, { mode: 0o700 });
    for (const name of await readdir(src)) await copyTree(path.join(src, name), path.join(dest, name), options);
  } else if (info.isFile()) {
    await copyFile(src, dest, fsConstants.COPYFILE_EXCL);
  } else {
    throw new XcshToolsError("EUNSUPPORTED_FILE", `Cannot copy ${src}: it is not a file, folder or symlink`, {
      file: src,
      hint: "Remove the special file (socket, FIFO, device) from the folder.",
    });
  }
  await chmod(dest, info.mode & 0o7777);
  await utimes(dest, info.atime, info.mtime);
  if (options.sync) await (info.isDirectory() ? fsyncDir : fsyncFile)(dest);
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
