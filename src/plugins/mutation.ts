/**
 * The one wrapper every command that changes the plugins folder runs in, and the one recovery
 * step every command that only reads it runs first.
 *
 *     runMutation(world, label, fn)
 *       withLock(<ours>)                 one writer at a time across processes; waiters print a line
 *         recoverPending(<ours>)         finish or undo whatever a killed command left in the journal
 *         state = loadPluginsState()     read under the lock, after recovery: never a stale view
 *         withTransaction(<ours>, fn)    fn stages / tracks every path it changes; commit or rollback
 *         refreshBootIndex()             the boot index follows the committed state (issue 7)
 *
 * Why the state is loaded here and handed to `fn`: a command that read the state before taking
 * the lock could compute its change from a view another process has since replaced (the host's
 * lost-update bug). Reading inside the lock makes every read-modify-write serial.
 *
 * Read-only commands call `recoverBeforeRead`: when a journal is pending (a command was killed)
 * it takes the lock and recovers, so that `list` never shows a half-applied change; when there
 * is nothing to recover it takes no lock and writes nothing (so `--dry-run` and `list` leave the
 * tree byte-identical).
 *
 * The boot index is refreshed from this one place, after commit and still under the lock
 * (src/boot: every kept view is scanned again, new tool entries are validated and compiled). When
 * the refresh fails the mutation still stands: a stale index is detected at the next boot, so a
 * refresh failure is a warning, not a failure.
 *
 * A `kill -9` between the commit and the refresh (or a commit that recovery completes) would leave
 * an index that lags the state until the next mutation. So every transaction also stages a marker
 * (`<ours>/boot-refresh-pending`) that the commit swaps in with the change and the refresh
 * removes; a marker found by the next command — read-only ones too, through `recoverBeforeRead` —
 * means "refresh now". A rolled-back transaction never swapped its marker in.
 */
import { readdir, rmdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathExists } from "../core/atomic-fs.js";
import { readFileBounded } from "../core/bounded-read.js";
import { XcshToolsError, errorMessage, nodeErrorCode } from "../core/errors.js";
import { codedFailure } from "../core/failure.js";
import { journalRoot, recoverPending, withTransaction, type RecoveryReport, type Transaction } from "../core/journal.js";
import { withLock, type LockOptions, type LockOwner } from "../core/lock.js";
import { policyForChange } from "../core/policy.js";
import type { XcshRoots } from "../core/paths.js";
import type { RefreshHints } from "../boot/refresh.js";
import { loadPluginsState, pluginsPaths, type PluginsPaths, type PluginsState } from "./state.js";

/** Where the plugins folder keeps what (for a caller that needs the paths, not the engine). */
export { pluginsPaths };

/** The world a mutation runs in (injected; the CLI builds it from its context). */
export interface MutationWorld {
  roots: XcshRoots;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT: the transaction rolls back and the command fails with EABORTED. */
  signal?: AbortSignal;
  /** How long to wait for another command's lock (settings `lockWaitMs`). */
  lockWaitMs?: number;
  /** Called once when the lock is held by someone else and we start waiting. */
  onWait?: (message: string) => void;
  /** Called when an interrupted transaction was recovered. */
  onRecovered?: (reports: RecoveryReport[]) => void;
  /** The project folder of the command: the boot index refresh also rebuilds its view. */
  cwd?: string;
  /** Non-fatal problems (boot index refresh failed…). */
  onWarning?: (message: string) => void;
  /** Named steps (fault injection in tests; progress). Thrown errors abort the mutation. */
  onStep?: (step: string) => void | Promise<void>;
}

/** What the body of a mutation gets. */
export interface Mutation {
  tx: Transaction;
  /** The state as read under the lock, after recovery. */
  state: PluginsState;
  paths: PluginsPaths;
  /** Report a named step (the world's `onStep`); await it. */
  step(name: string): Promise<void>;
  /** Combined abort signal (user interrupt or lock lost). */
  signal: AbortSignal;
  /**
   * The plugin folders (below node_modules) the change adds or replaces: the boot index refresh
   * after the commit stats what is in them before its scan, as it does the inputs it knew
   * (views.ts `addedInputs`), so a new plugin's files do not cost a second scan.
   */
  added: string[];
}

function describeHolder(holder: LockOwner | undefined): string {
  if (!holder) return "another xcsh-tools command";
  return `another xcsh-tools command (pid ${holder.pid}${holder.label ? `, ${holder.label}` : ""})`;
}

/**
 * Run `fn` as one locked, recovered, journaled mutation of the plugins folder. `shelf`: the change
 * is one a later change may undo (enable, disable, features, config): its boot index refresh keeps
 * the views it replaces aside and serves one back instead of scanning (boot/view-shelf.ts).
 */
export async function runMutation<T>(world: MutationWorld, label: string, fn: (m: Mutation) => Promise<T>, options: { shelf?: boolean } = {}): Promise<T> {
  // A policy file that exists but cannot be read or parsed stops every change (it never allows by failing).
  policyForChange();
  const paths = pluginsPaths(world.roots);
  const step = async (name: string) => {
    if (world.onStep) await world.onStep(name);
  };
  // The folders the lock and the journal are about to create, so that a first-ever command that
  // fails leaves the disk as it found it: each is removed when empty; anything else stays (a
  // journal a rollback could not finish, another command's lock file). A command that creates
  // one again meanwhile is safe: the lock makes its folder again when it finds it gone (lock.ts).
  const bookkeeping = [journalRoot(paths.ours), paths.ours, paths.plugins, world.roots.xcshHome];
  const created = (await Promise.all(bookkeeping.map(async (dir) => ((await pathExists(dir)) ? undefined : dir)))).filter((dir) => dir !== undefined);
  try {
    return await lockedMutation(world, label, fn, paths, step, options.shelf === true);
  } catch (error) {
    for (const dir of created) await rmdir(dir).catch(() => undefined);
    // A write through a file handle fails without a path (ENOSPC "write"): the change was in the plugins folder.
    throw codedFailure(error, { folder: paths.plugins }) ?? error;
  }
}

/** The lock as every mutation and recovery takes it: the settings' wait, the command's signal, a line while waiting. */
function lockOptions(world: MutationWorld, label: string): LockOptions {
  return {
    label,
    ...(world.lockWaitMs !== undefined ? { waitMs: world.lockWaitMs } : {}),
    ...(world.signal ? { signal: world.signal } : {}),
    onWait: (holder) => world.onWait?.(`Waiting for ${describeHolder(holder)} to finish…`),
  };
}

async function lockedMutation<T>(world: MutationWorld, label: string, fn: (m: Mutation) => Promise<T>, paths: PluginsPaths, step: (name: string) => Promise<void>, shelf: boolean): Promise<T> {
  return withLock(
    paths.ours,
    async (lock) => {
      const reports = await recoverPending(paths.ours);
      if (reports.length > 0) world.onRecovered?.(reports);
      const signals = [lock.signal, ...(world.signal ? [world.signal] : [])];
      const signal = AbortSignal.any(signals);
      if (signal.aborted) throw abortedError(signal);
      // The lock's bytes as the index's views may have been built from (refresh.ts `runtimeLockBefore`).
      const runtimeLockBefore = readLockBytes(paths.runtimeLock);
      const state = await loadPluginsState(world.roots);
      await step("state:loaded");
      const added: string[] = [];
      const value = await withTransaction(
        paths.ours,
        async (tx) => {
          const out = await fn({ tx, state, paths, step, signal, added });
          // Committed together with the change: a crash before the refresh below leaves it.
          await writeFile(await tx.stage(bootPendingFile(paths.ours)), "");
          return out;
        },
        { label, signal, ...(world.onStep ? { onStep: world.onStep } : {}) },
      );
      await step("mutation:committed");
      await refreshBootAndClear(world, { ...(runtimeLockBefore ? { runtimeLockBefore } : {}), added, ...(shelf ? { shelf } : {}) });
      return value;
    },
    lockOptions(world, label),
  );
}

function abortedError(signal: AbortSignal): XcshToolsError {
  const reason = signal.reason;
  if (reason instanceof XcshToolsError) return reason;
  return new XcshToolsError("EABORTED", "Interrupted; nothing was changed", { hint: "Run the command again.", cause: reason });
}

/**
 * The marker of a committed change whose boot index refresh has not run yet. Each mutation
 * stages it into its transaction, so it appears exactly when the change does (also when recovery
 * completes a killed command's commit), and removes it once the refresh has run. A command
 * killed between its commit and that point leaves it, and the next command refreshes.
 */
function bootPendingFile(oursDir: string): string {
  return path.join(oursDir, "boot-refresh-pending");
}

/** The file's bytes, or undefined when it cannot be read (the refresh then scans, as without them). */
function readLockBytes(file: string): Buffer | undefined {
  try {
    return readFileBounded(file);
  } catch {
    return undefined;
  }
}

async function refreshBootAndClear(world: MutationWorld, hints: RefreshHints = {}): Promise<void> {
  await refreshBoot(world, hints);
  // Cleared also when the refresh failed (a warning): the index then says it is stale by itself,
  // and retrying at every command would make each one pay for the failure. Not fsynced: a removal
  // a power cut undoes only makes the next command refresh once more.
  const marker = bootPendingFile(pluginsPaths(world.roots).ours);
  await unlink(marker).catch((error: unknown) => {
    if (nodeErrorCode(error) !== "ENOENT") throw error;
  });
}

/**
 * True when a journal holds anything (an interrupted transaction or its leftovers), or a
 * committed change still waits for its boot index refresh.
 */
export async function hasPendingJournal(roots: XcshRoots): Promise<boolean> {
  const ours = pluginsPaths(roots).ours;
  if (await pathExists(bootPendingFile(ours))) return true;
  try {
    return (await readdir(journalRoot(ours))).length > 0;
  } catch (error) {
    if (nodeErrorCode(error) === "ENOENT" || nodeErrorCode(error) === "ENOTDIR") return false;
    throw error;
  }
}

/**
 * Before a read-only command: recover an interrupted transaction if there is one (under the
 * lock), and refresh the boot index when a committed change has not had its refresh. Writes
 * nothing when nothing is pending.
 */
export async function recoverBeforeRead(world: MutationWorld): Promise<RecoveryReport[]> {
  if (!(await hasPendingJournal(world.roots))) return [];
  const paths = pluginsPaths(world.roots);
  const reports = await withLock(paths.ours, async () => {
    const done = await recoverPending(paths.ours);
    if (await pathExists(bootPendingFile(paths.ours))) await refreshBootAndClear(world);
    return done;
  }, lockOptions(world, "recover"));
  if (reports.length > 0) world.onRecovered?.(reports);
  return reports;
}

/** Recover if needed, then read the state (for list, outdated, dry runs). */
export async function readStateForQuery(world: MutationWorld): Promise<PluginsState> {
  await recoverBeforeRead(world);
  return loadPluginsState(world.roots);
}

/** `hints`: what the committed change knows that spares the refresh work (boot/refresh.ts `RefreshHints`). */
async function refreshBoot(world: MutationWorld, hints: RefreshHints): Promise<void> {
  try {
    // Lazy: only a committed mutation pays for loading the boot module.
    const { refreshBootIndex } = await import("../boot/refresh.js");
    await refreshBootIndex({ ...world.roots, env: world.env, ...(world.cwd !== undefined ? { cwd: world.cwd } : {}), ...hints });
  } catch (error) {
    world.onWarning?.(`The change was made, but the boot index could not be refreshed: ${errorMessage(error)} (the host rebuilds it at its next start)`);
  }
}
