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
 * lost-update bug, §9 #30). Reading inside the lock makes every read-modify-write serial.
 *
 * Read-only commands call `recoverBeforeRead`: when a journal is pending (a command was killed)
 * it takes the lock and recovers, so that `list` never shows a half-applied change; when there
 * is nothing to recover it takes no lock and writes nothing (so `--dry-run` and `list` leave the
 * tree byte-identical).
 *
 * The boot index is refreshed from this one place, after commit and still under the lock. It is
 * optional: until the boot module exists (or when it fails) the mutation still stands; a stale
 * index is the boot module's job to detect, so a refresh failure is a warning, not a failure.
 */
import { readdir } from "node:fs/promises";
import { XcshToolsError, errorMessage, nodeErrorCode } from "../core/errors.js";
import { journalRoot, recoverPending, withTransaction, type RecoveryReport, type Transaction } from "../core/journal.js";
import { withLock, type LockOwner } from "../core/lock.js";
import type { XcshRoots } from "../core/paths.js";
import { loadPluginsState, pluginsPaths, type PluginsPaths, type PluginsState } from "./state.js";

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
}

function describeHolder(holder: LockOwner | undefined): string {
  if (!holder) return "another xcsh-tools command";
  return `another xcsh-tools command (pid ${holder.pid}${holder.label ? `, ${holder.label}` : ""})`;
}

/** Run `fn` as one locked, recovered, journaled mutation of the plugins folder. */
export async function runMutation<T>(world: MutationWorld, label: string, fn: (m: Mutation) => Promise<T>): Promise<T> {
  const paths = pluginsPaths(world.roots);
  const step = async (name: string) => {
    if (world.onStep) await world.onStep(name);
  };
  const result = await withLock(
    paths.ours,
    async (lock) => {
      const reports = await recoverPending(paths.ours);
      if (reports.length > 0) world.onRecovered?.(reports);
      const signals = [lock.signal, ...(world.signal ? [world.signal] : [])];
      const signal = AbortSignal.any(signals);
      if (signal.aborted) throw abortedError(signal);
      const state = await loadPluginsState(world.roots);
      await step("state:loaded");
      const value = await withTransaction(paths.ours, (tx) => fn({ tx, state, paths, step, signal }), {
        label,
        signal,
        ...(world.onStep ? { onStep: world.onStep } : {}),
      });
      await step("mutation:committed");
      await refreshBoot(world);
      return value;
    },
    {
      label,
      ...(world.lockWaitMs !== undefined ? { waitMs: world.lockWaitMs } : {}),
      ...(world.signal ? { signal: world.signal } : {}),
      onWait: (holder) => world.onWait?.(`Waiting for ${describeHolder(holder)} to finish…`),
    },
  );
  return result;
}

function abortedError(signal: AbortSignal): XcshToolsError {
  const reason = signal.reason;
  if (reason instanceof XcshToolsError) return reason;
  return new XcshToolsError("EABORTED", "Interrupted; nothing was changed", { hint: "Run the command again.", cause: reason });
}

/** True when a journal holds anything (an interrupted transaction or its leftovers). */
export async function hasPendingJournal(roots: XcshRoots): Promise<boolean> {
  try {
    return (await readdir(journalRoot(pluginsPaths(roots).ours))).length > 0;
  } catch (error) {
    if (nodeErrorCode(error) === "ENOENT" || nodeErrorCode(error) === "ENOTDIR") return false;
    throw error;
  }
}

/**
 * Before a read-only command: recover an interrupted transaction if there is one (under the
 * lock). Writes nothing when nothing is pending.
 */
export async function recoverBeforeRead(world: MutationWorld): Promise<RecoveryReport[]> {
  if (!(await hasPendingJournal(world.roots))) return [];
  const paths = pluginsPaths(world.roots);
  const reports = await withLock(paths.ours, () => recoverPending(paths.ours), {
    label: "recover",
    ...(world.lockWaitMs !== undefined ? { waitMs: world.lockWaitMs } : {}),
    ...(world.signal ? { signal: world.signal } : {}),
    onWait: (holder) => world.onWait?.(`Waiting for ${describeHolder(holder)} to finish…`),
  });
  if (reports.length > 0) world.onRecovered?.(reports);
  return reports;
}

/** Recover if needed, then read the state (for list, outdated, dry runs). */
export async function readStateForQuery(world: MutationWorld): Promise<PluginsState> {
  await recoverBeforeRead(world);
  return loadPluginsState(world.roots);
}

type BootRefresh = (options: { home: string; xcshHome: string; env: NodeJS.ProcessEnv }) => Promise<unknown>;

/** The boot module's refresh function, when that module exists in this build. */
async function loadBootRefresh(): Promise<BootRefresh | undefined> {
  // A computed specifier: the boot module is built separately (issue 7) and may be absent.
  const specifier = ["..", "boot", "index.js"].join("/");
  try {
    const mod = (await import(/* @vite-ignore */ specifier)) as { refreshBootIndex?: BootRefresh };
    return typeof mod.refreshBootIndex === "function" ? mod.refreshBootIndex : undefined;
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code === "ERR_MODULE_NOT_FOUND" || /Cannot find module|Failed to load url|does not exist/i.test(errorMessage(error))) return undefined;
    throw error;
  }
}

async function refreshBoot(world: MutationWorld): Promise<void> {
  try {
    const refresh = await loadBootRefresh();
    if (refresh) await refresh({ home: world.roots.home, xcshHome: world.roots.xcshHome, env: world.env });
  } catch (error) {
    world.onWarning?.(`The change was made, but the boot index could not be refreshed: ${errorMessage(error)} (the host rebuilds it at its next start)`);
  }
}
