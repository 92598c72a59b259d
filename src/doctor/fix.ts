/**
 * `doctor --fix`: the repairs, each through the machinery every command uses, so that a fix
 * that fails leaves the previous state exactly:
 *
 *   1. a dead holder's lock   taken over by the lock's own guarded stale break (core/lock.ts),
 *                              then released: never a bare unlink that could race a new holder;
 *                              a live holder's lock is never touched
 *   2. the journal            `recoverBeforeRead`, the recovery every command runs first
 *   3. one transaction        `runMutation` (lock, recovery, journal, boot-index refresh) that
 *                              - rebuilds node_modules when it must (orphans, missing or wrong
 *                                packages, a lockfile out of step): arborist reifies a staged
 *                                copy of the folder (plugins/work-copy.ts, shared with the
 *                                applier) from package.json + package-lock.json, after the folders to
 *                                reinstall are deleted from the copy, so they come back from
 *                                their locked tarball (checked against its integrity);
 *                              - repairs the runtime lock and our record (runtime-repair.ts),
 *                                computed from the state read under the lock and the rebuilt tree;
 *                              - removes unreferenced marketplace cache folders;
 *                             and commits all of it at once, or nothing.
 *   4. the boot index          rebuilt by the transaction's own refresh, or alone when nothing
 *                              else changed.
 *
 * Named steps for the tests' fault injection: `doctor:copied`, `doctor:reified`, `doctor:staged`.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { placeOf } from "../core/state-places.js";
import { pathExists } from "../core/atomic-fs.js";
import { XcshToolsError, isXcshToolsError } from "../core/errors.js";
import { acquireLock } from "../core/lock.js";
import { xcshPaths } from "../core/paths.js";
import { loadInventory, type InstalledPlugin } from "../plugins/inventory.js";
import { recoverBeforeRead, runMutation, type Mutation, type MutationWorld } from "../plugins/mutation.js";
import { loadArborist, npmError, npmOptions, type NpmClientOptions } from "../plugins/npm-client.js";
import { isTypedLocalGit, stageStateWrites, stateFiles } from "../plugins/state.js";
import { copyToWork, stageWork } from "../plugins/work-copy.js";
import { failedCheck, readLockStatus } from "./checks-state.js";
import { repairRuntimeState } from "./runtime-repair.js";
import { repairGitignores } from "./team.js";
import type { Finding, Repair } from "./types.js";

/** What the fixer needs from outside. */
export interface FixWorld {
  mutation: MutationWorld;
  /** npm client options, built only when a reify is needed. */
  npmClient: () => Promise<NpmClientOptions>;
  /** Rebuild the boot index (under the lock), when the boot module exists. */
  rebuildBootIndex?: () => Promise<void>;
}

/** Why each kind of repair did not happen, when it did not. */
export type FixFailures = Map<Repair["kind"], string>;

/** A stale lock guard breaks only when the holder is dead, never for age. */
const NEVER_STALE_BY_AGE = Number.MAX_SAFE_INTEGER;

/** Steps 1 and 2: lock and journal. Returns what failed. */
export async function repairTransactions(findings: readonly Finding[], world: FixWorld, failures: FixFailures): Promise<boolean> {
  let changed = false;
  const oursLock = findings.find((f) => f.repair?.kind === "remove-dead-lock");
  if (oursLock) {
    try {
      const held = await acquireLock(xcshPaths(world.mutation.roots).ours, { waitMs: 0, staleMs: NEVER_STALE_BY_AGE, label: "doctor --fix", ...(world.mutation.signal ? { signal: world.mutation.signal } : {}) });
      await held.release();
      changed = true;
    } catch (error) {
      failures.set("remove-dead-lock", failedCheck(error));
    }
  }
  if (findings.some((f) => f.repair?.kind === "recover-journal")) {
    try {
      await recoverBeforeRead(world.mutation);
      changed = true;
    } catch (error) {
      failures.set("recover-journal", failedCheck(error));
    }
  }
  return changed;
}

/** Step 3: one transaction for the plugins folder and the caches; step 4 comes with it. */
export async function repairState(findings: readonly Finding[], world: FixWorld, failures: FixFailures): Promise<void> {
  // A project file of a team set, outside the plugins folder and its lock: appended on its own.
  await repairGitignores(findings, failures);
  const reify = findings.filter((f) => f.repair?.kind === "reify");
  const runtime = findings.some((f) => f.repair?.kind === "runtime");
  const caches = findings.flatMap((f) => (f.repair?.kind === "remove-cache" ? [f.repair.path] : []));
  const boot = findings.some((f) => f.repair?.kind === "boot-rebuild");
  if (reify.length === 0 && !runtime && caches.length === 0 && !boot) return;
  const held = await readLockStatus(xcshPaths(world.mutation.roots).ours);
  if (held?.alive) {
    // Waiting lockWaitMs for a running command to finish would only delay the same answer.
    const why = `the plugins folder is locked by pid ${held.owner?.pid} (a command is running); run \`xcsh-tools doctor --fix\` again when it has finished`;
    for (const kind of ["reify", "runtime", "remove-cache", "boot-rebuild"] as const) failures.set(kind, why);
    return;
  }
  const folderFailed = await repairFolder(world, failures, { reify, runtime, caches });
  // A failed repair leaves everything as it was, the index included.
  if (boot && folderFailed) failures.set("boot-rebuild", "the repair of the plugins folder failed first; nothing was changed");
  // The transaction's own refresh covers the views the index keeps; this adds the project's.
  if (boot && world.rebuildBootIndex && !failures.has("boot-rebuild")) {
    try {
      await world.rebuildBootIndex();
    } catch (error) {
      failures.set("boot-rebuild", failedCheck(error));
    }
  }
}

/** The one transaction; true when it failed (and so changed nothing). */
async function repairFolder(world: FixWorld, failures: FixFailures, wanted: { reify: readonly Finding[]; runtime: boolean; caches: readonly string[] }): Promise<boolean> {
  const { reify, runtime, caches } = wanted;
  if (reify.length === 0 && !runtime && caches.length === 0) return false;
  const reinstall = [...new Set(reify.flatMap((f) => (f.repair?.kind === "reify" ? f.repair.reinstall : [])))];
  let client: NpmClientOptions | undefined;
  try {
    if (reify.length > 0) client = await world.npmClient();
    await runMutation(world.mutation, "doctor --fix", async (m) => {
      let inventory = await loadInventory(m.state);
      if (reify.length > 0) {
        const dangling = inventory.filter((p) => p.linked && p.linkTarget === undefined).map((p) => p.name);
        if (dangling.length > 0) {
          failures.set("reify", `npm's installer cannot rebuild node_modules while ${dangling.join(", ")} link${dangling.length === 1 ? "s" : ""} to a folder that is gone; restore it or \`xcsh-tools unlink ${dangling[0]}\` first`);
        } else {
          inventory = await reifyCopy(m, client!, reinstall);
        }
      }
      const before = stateFiles(m.state);
      const { after } = repairRuntimeState(before, inventory);
      await stageStateWrites(m.tx, m.paths, before, after);
      // Only ever below a cache folder of ours: the paths come from listing them, but the check
      // is the deletion's own (a symlink planted in the cache is refused, not followed).
      for (const dir of caches) {
        if (!(await pathExists(dir))) continue;
        try {
          await m.tx.stageRemoval(dir, cacheRootOf(world, dir));
        } catch (error) {
          if (!isXcshToolsError(error, "EPATH_OUTSIDE")) throw error;
          failures.set("remove-cache", `${error.message}; it was kept`);
        }
      }
      await m.step("doctor:staged");
    });
  } catch (error) {
    const why = failedCheck(error);
    for (const kind of ["reify", "runtime", "remove-cache"] as const) if (!failures.has(kind)) failures.set(kind, `${why}; nothing was changed`);
    return true;
  }
  return false;
}

/** A copy of the folder, reified and moved into the journal's slots; the inventory of the rebuilt tree. */
async function reifyCopy(m: Mutation, client: NpmClientOptions, reinstall: readonly string[]): Promise<InstalledPlugin[]> {
  if (!m.state.packageJson) throw new XcshToolsError("EDOCTOR_FIX", `${m.paths.packageJson} is missing: there is nothing to rebuild node_modules from`, { hint: "Reinstall your plugins with `xcsh-tools install`." });
  const work = await copyToWork(m);
  // Folders to fetch again, and arborist's record of the old tree (it would trust it over the disk).
  for (const name of reinstall) await rm(path.join(work.nodeModules, name), { recursive: true, force: true });
  await rm(path.join(work.nodeModules, ".package-lock.json"), { force: true });
  await m.step("doctor:copied");
  const Arborist = await loadArborist();
  // A plugin the user installed from a local repository (git+file://…) is fetched again from it,
  // as its install did; every other git source of the tree was checked not to be local when the
  // state was read (plugins/state.ts), and nothing is added here.
  const localGit = Object.keys(m.state.packageJson.dependencies ?? {}).some((name) => isTypedLocalGit(m.state.record, name));
  const arb = new Arborist({ ...npmOptions(localGit ? { ...client, allowLocalGit: true } : client), path: work.dir });
  try {
    await arb.reify({});
  } catch (error) {
    throw npmError(error, reinstall.join(" ") || "the plugins folder", client);
  }
  if (m.signal.aborted) throw new XcshToolsError("EABORTED", "Interrupted; nothing was changed", { hint: "Run `xcsh-tools doctor --fix` again." });
  await m.step("doctor:reified");
  const inventory = await loadInventory({ ...m.state, paths: { ...m.paths, nodeModules: work.nodeModules } });
  // package.json is the user's as it was: a rebuild only brings node_modules and the lockfile in step.
  await stageWork(m, work, ["packageLock", "nodeModules"]);
  return inventory;
}

/** The cache folder a doctor cache removal must stay in: the plugin cache or a scope's catalog cache. */
function cacheRootOf(world: FixWorld, dir: string): string {
  const roots = world.mutation.roots;
  const cwd = world.mutation.cwd;
  const places = [placeOf("xcsh-install", { roots }), placeOf("user-catalog", { roots }), ...(cwd !== undefined ? [placeOf("project-catalog", { roots, cwd })] : [])];
  return places.find((place) => path.dirname(path.resolve(dir)) === path.resolve(place)) ?? places[0]!;
}
