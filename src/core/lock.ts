/**
 * One cross-process lock per folder: `<dir>/lock`, guarding everything that a command mutates
 * in the plugins folder (callers pass `xcshPaths(roots).ours`).
 *
 * Model. The lock file is created complete or not at all: the owner record (pid, hostname,
 * token, start time, label) is written to a unique temp file and hard-linked to `lock`; `link`
 * fails with EEXIST when the lock exists, so exactly one creator wins and nobody ever reads a
 * half-written record. (Where hard links are unsupported we fall back to an O_EXCL create;
 * a record that does not parse is then treated as held until it is older than `staleMs`.)
 * While held, a heartbeat touches the file's mtime every `staleMs / 4` and checks that the file
 * still carries our token; if it does not, the lock was taken from us (a stalled process
 * judged stale) and the `signal` handed to the critical section is aborted with `ELOCK_LOST`.
 *
 * Stale locks. A lock is stale when its owner is on this host and its pid is gone
 * (`process.kill(pid, 0)` → ESRCH, or the pid is our own but we do not hold it: pid reuse in
 * containers), or when its heartbeat is older than `staleMs` (owner on another host, or a pid
 * reused by an unrelated process). Taking over a stale lock must not let two waiters both
 * "win": naive unlink-then-create lets the slower waiter delete the faster one's fresh lock.
 * So breaking a lock whose identity is X requires first creating the guard `lock.break-X`
 * (same exclusive link). Only the guard's holder may unlink `lock`, and only after re-reading
 * it and seeing identity X still; nobody else ever unlinks a lock of identity X, so between that
 * check and the unlink the file cannot change. Afterwards everyone races for `lock` with the
 * ordinary exclusive create, which has one winner. A guard whose holder died is itself broken
 * the same way, one level down.
 *
 * Why hand-written: `proper-lockfile` (mkdir lock + mtime staleness) is the usual choice, but it
 * has no owner record (so ELOCKED could not name the holder pid), no pid-liveness check (a lock
 * left by `kill -9` blocks for the whole stale period), and its stale takeover is a remove-then-
 * mkdir that two waiters can interleave; `lockfile` and `fs-ext` flock are unmaintained or
 * native. The kernel's flock would be ideal but Node has no binding for it.
 *
 * Within one process every caller waits for the file like any other, nested calls included (one
 * at `waitMs: 0` gets ELOCKED rather than a deadlock): code that holds the lock never takes it again.
 */
import { randomBytes } from "node:crypto";
import { unlinkSync } from "node:fs";
import { link, mkdir, readdir, stat, unlink, utimes, writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import os from "node:os";
import path from "node:path";
import { readTextBounded } from "./bounded-read.js";
import { tempSibling } from "./atomic-fs.js";
import { XcshToolsError, nodeErrorCode } from "./errors.js";

/** Who holds a lock, as recorded in the lock file. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** Unique per acquisition; the lock's identity. */
  token: string;
  /** ISO time of acquisition. */
  createdAt: string;
  /** What the holder is doing ("install @acme/x"), for the ELOCKED message. */
  label?: string;
}

/** Options of `withLock` / `acquireLock`. */
export interface LockOptions {
  /** How long to wait for a held lock before ELOCKED. Default 30000; 0 fails at once. */
  waitMs?: number;
  /** Heartbeat age after which a lock is stale whatever its pid. Default 120000. */
  staleMs?: number;
  /** Called once, when the lock is found held and we start waiting (for a progress line). */
  onWait?: (holder: LockOwner | undefined) => void;
  /** Aborts the wait with EABORTED. */
  signal?: AbortSignal;
  /** Stored in the lock file and shown to waiters. */
  label?: string;
}

export interface HeldLock {
  readonly file: string;
  readonly owner: LockOwner;
  /** Aborted (reason: an `ELOCK_LOST` error) if the lock is taken from us while held. */
  readonly signal: AbortSignal;
  release(): Promise<void>;
}

const DEFAULT_WAIT_MS = 30_000;
const DEFAULT_STALE_MS = 120_000;
const MAX_POLL_MS = 500;
const MAX_BREAK_DEPTH = 4;

export function lockFilePath(dir: string): string {
  return path.join(dir, "lock");
}

interface Snapshot {
  owner: LockOwner | undefined;
  mtimeMs: number;
  /** The token, or for an unreadable record its inode and mtime. */
  identity: string;
}

/** Locks this process holds, for the exit hook. */
const heldByUs = new Map<string, HeldLock>();
/**
 * Tokens this process holds or is creating right now: a lock with our pid but another token is
 * a leftover of an earlier process that had our pid. Registered before the create so that a
 * concurrent acquire in this process never sees our fresh lock as such a leftover.
 */
const ourTokens = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // process.exit() skips finally blocks: release synchronously so the next command does not
  // have to wait for the stale period.
  process.on("exit", () => {
    for (const held of heldByUs.values()) {
      try {
        const owner = JSON.parse(readTextBounded(held.file) ?? "") as LockOwner;
        if (owner.token === held.owner.token) unlinkSync(held.file);
      } catch {
        // already gone or unreadable: nothing of ours to remove
      }
    }
  });
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid === "number" && typeof value.token === "string" && typeof value.hostname === "string") {
      return value as LockOwner;
    }
  } catch {
    // a record being written through the O_EXCL fallback, or garbage
  }
  return undefined;
}

async function readSnapshot(file: string): Promise<Snapshot | undefined> {
  try {
    const text = readTextBounded(file);
    if (text === undefined) return undefined;
    const info = await stat(file);
    const owner = parseOwner(text);
    return { owner, mtimeMs: info.mtimeMs, identity: owner?.token ?? `ino${info.ino}-${Math.floor(info.mtimeMs)}` };
  } catch (error) {
    if (nodeErrorCode(error) === "ENOENT") return undefined;
    throw error;
  }
}

/** True when a process with this pid exists (on this host). */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return nodeErrorCode(error) === "EPERM";
  }
}

function isStale(snapshot: Snapshot, staleMs: number): boolean {
  const owner = snapshot.owner;
  if (owner && owner.hostname === os.hostname()) {
    if (owner.pid === process.pid) {
      if (!ourTokens.has(owner.token)) return true;
    } else if (!isPidAlive(owner.pid)) {
      return true;
    }
  }
  return Date.now() - snapshot.mtimeMs > staleMs;
}

/**
 * `createExclusive` as `owner`, its token registered in `ourTokens` from before the create (see
 * there) and kept only when the file was created.
 */
async function createAs(file: string, owner: LockOwner): Promise<boolean> {
  ourTokens.add(owner.token);
  let created = false;
  try {
    created = await createExclusive(file, owner);
    return created;
  } finally {
    if (!created) ourTokens.delete(owner.token);
  }
}

/** Create `file` holding `owner` if it does not exist; false when it does. */
async function createExclusive(file: string, owner: LockOwner): Promise<boolean> {
  const text = `${JSON.stringify(owner)}\n`;
  const temp = tempSibling(file);
  await writeFile(temp, text, { flag: "wx" });
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code === "EEXIST") return false;
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw error;
    // No hard links here (some FUSE and SMB mounts): exclusive create, briefly empty.
    try {
      await writeFile(file, text, { flag: "wx" });
      return true;
    } catch (inner) {
      if (nodeErrorCode(inner) === "EEXIST") return false;
      throw inner;
    }
  } finally {
    await unlink(temp).catch(() => undefined);
  }
}

/**
 * Remove `file` if it still has `identity`, under the guard described in the header. False when
 * another breaker is at it (the caller then backs off like any waiter).
 */
async function breakStale(file: string, identity: string, staleMs: number, depth = 0): Promise<boolean> {
  const guard = `${file}.break-${identity.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const me = newOwner("break stale lock");
  if (await createAs(guard, me)) {
    try {
      const now = await readSnapshot(file);
      if (now && now.identity === identity) await unlink(file).catch(() => undefined);
    } finally {
      await unlink(guard).catch(() => undefined);
      ourTokens.delete(me.token);
    }
    return true;
  }
  // Someone else is breaking it. If that breaker died mid-way, break its guard first.
  const guardSnapshot = await readSnapshot(guard);
  if (guardSnapshot === undefined) return true; // that breaker just finished: retry at once
  if (depth < MAX_BREAK_DEPTH && isStale(guardSnapshot, staleMs)) {
    return breakStale(guard, guardSnapshot.identity, staleMs, depth + 1);
  }
  return false;
}

function newOwner(label: string | undefined): LockOwner {
  return {
    pid: process.pid,
    hostname: os.hostname(),
    token: randomBytes(12).toString("hex"),
    createdAt: new Date().toISOString(),
    ...(label === undefined ? {} : { label }),
  };
}

/**
 * Remove leftovers of dead processes (only while we hold the lock): break guards, and the temp
 * files of atomic writes into this folder (`.<name>.<pid>.<hex>.tmp`: the lock's own link files,
 * the boot index a killed command was rewriting). A temp file of a live process is its write in
 * flight (a host boot rewrites the boot index without the lock) and is left alone.
 */
async function sweepLeftovers(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    // A guard for any identity but ours is moot: its holder's re-check fails now.
    if (name.startsWith("lock.break-")) {
      await unlink(path.join(dir, name)).catch(() => undefined);
      continue;
    }
    const temp = /^\..+\.(\d+)\.[0-9a-f]{12}\.tmp$/.exec(name);
    if (temp && Number(temp[1]) !== process.pid && !isPidAlive(Number(temp[1]))) {
      await unlink(path.join(dir, name)).catch(() => undefined);
    }
  }
}

function describeHolder(holder: LockOwner | undefined): string {
  if (!holder) return "an unknown process";
  const what = holder.label ? `, running "${holder.label}"` : "";
  return `pid ${holder.pid} on ${holder.hostname}${what}, since ${holder.createdAt}`;
}

/** Acquire the lock on `dir` (created if missing); prefer `withLock`. */
export async function acquireLock(dir: string, options: LockOptions = {}): Promise<HeldLock> {
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const file = lockFilePath(dir);
  await mkdir(dir, { recursive: true });
  const deadline = Date.now() + waitMs;
  let delay = 20;
  let notified = false;
  let lastHolder: LockOwner | undefined;
  let remade = 0;
  for (;;) {
    if (options.signal?.aborted) {
      throw new XcshToolsError("EABORTED", `Stopped waiting for the lock on ${dir}`, { hint: "The command was interrupted; nothing was changed.", cause: options.signal.reason });
    }
    const owner = newOwner(options.label);
    let created: boolean;
    try {
      created = await createAs(file, owner);
    } catch (error) {
      // A failed first command removes the folders it made (plugins/mutation.ts): make it again
      // (a few times at most: a folder that keeps vanishing is someone else's problem to report).
      if (nodeErrorCode(error) !== "ENOENT" || ++remade > 5) throw error;
      await mkdir(dir, { recursive: true });
      continue;
    }
    if (created) return startHolding(dir, file, owner, staleMs);
    const snapshot = await readSnapshot(file);
    if (!snapshot) continue; // released between our attempt and the read: try again at once
    lastHolder = snapshot.owner;
    if (isStale(snapshot, staleMs) && (await breakStale(file, snapshot.identity, staleMs))) continue;
    if (!notified) {
      notified = true;
      options.onWait?.(snapshot.owner);
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new XcshToolsError(
        "ELOCKED",
        `${dir} is locked by another xcsh-tools command (${describeHolder(lastHolder)})`,
        {
          file,
          hint:
            `Wait for that command to finish and retry. If no such process is running, delete ${file}. ` +
            `Waited ${waitMs} ms; raise lockWaitMs (XCSH_TOOLS_LOCK_WAIT_MS) to wait longer.`,
        },
      );
    }
    // Jittered backoff so that waiters released together do not retry in lockstep.
    // An abort ends the sleep early; the loop's first check then throws EABORTED.
    await sleep(Math.min(left, delay * (0.75 + Math.random() / 2)), undefined, { signal: options.signal }).catch(() => undefined);
    delay = Math.min(delay * 1.5, MAX_POLL_MS);
  }
}

async function startHolding(dir: string, file: string, owner: LockOwner, staleMs: number): Promise<HeldLock> {
  const lost = new AbortController();
  let released = false;
  const beat = async () => {
    try {
      const now = await readSnapshot(file);
      if (now?.owner?.token !== owner.token) {
        lost.abort(
          new XcshToolsError("ELOCK_LOST", `The lock on ${dir} was taken over while this command held it`, {
            file,
            hint: "This process stalled longer than the stale period; retry the command.",
          }),
        );
        clearInterval(timer);
        return;
      }
      const t = new Date();
      await utimes(file, t, t);
    } catch {
      // A failed heartbeat is not fatal: the next one retries; the lock ages meanwhile.
    }
  };
  const timer = setInterval(() => void beat(), Math.max(50, Math.floor(staleMs / 4)));
  timer.unref();
  const held: HeldLock = {
    file,
    owner,
    signal: lost.signal,
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      heldByUs.delete(owner.token);
      const now = await readSnapshot(file).catch(() => undefined);
      if (now?.owner?.token === owner.token) await unlink(file).catch(() => undefined);
      ourTokens.delete(owner.token);
    },
  };
  heldByUs.set(owner.token, held);
  installExitHook();
  // Awaited: the command that follows a crash must end with the crash's leftovers gone.
  await sweepLeftovers(dir);
  return held;
}

/**
 * Run `fn` while holding the lock on `dir`; released on every exit path. Throws ELOCKED (with the
 * holder's pid and a hint) after `waitMs`, also to a caller in this process that already holds it.
 */
export async function withLock<T>(
  dir: string,
  fn: (lock: HeldLock) => Promise<T> | T,
  options: LockOptions = {},
): Promise<T> {
  const held = await acquireLock(path.resolve(dir), options);
  try {
    return await fn(held);
  } finally {
    await held.release();
  }
}

/** The current holder of the lock on `dir`, if any (for `doctor` and messages). */
export async function readLockOwner(dir: string): Promise<LockOwner | undefined> {
  return (await readSnapshot(lockFilePath(dir)))?.owner;
}
