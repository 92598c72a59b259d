/**
 * `refreshBootIndex`: after every committed mutation, each kept view is scanned again and the
 * tool entries whose bytes are new are validated in the child (compiling their TypeScript into
 * the transpile cache), so the next boot and `tools` find a fresh index.
 */
import path from "node:path";
import { sameKey, type BootIndex, type BootView, type ViewKey } from "./format.js";
import { isPathInside } from "../core/contain.js";
import { currentSignature, hashFile } from "./fingerprint.js";
import { prepareModules, recordOfOutcome, validRecords, validateMissing, type PreparedEntry } from "./module-records.js";
import type { PreparedModule } from "./simulate.js";
import type { ModuleOutcome } from "../validate/module-check.js";
import { MAX_BOOT_VIEWS, emptyIndex, fsPromises, loadIndex, sameAnswers, sameModules, writeIndex } from "./store.js";
import { discovery, inputsModule, keptAfterLockChange, scanView } from "./views.js";
import { readShelf, reinstated, shelvedOf, updateShelf, type ShelvedView } from "./view-shelf.js";
import { decideTrust, keyOf, runtimeName, userTrusts, worldOf, type BootIndexOptions, type World } from "./world.js";

const atomicFs = () => import("../core/atomic-fs.js");
const prevalidated = () => import("./prevalidated.js");

/**
 * Load the modules a refresh uses, running nothing: for a process that refreshes soon and waits
 * meanwhile (an install, while its validation child imports the plugins).
 */
export function preloadRefresh(): void {
  const providers = () => import("../discovery/providers/index.js");
  for (const load of [discovery, providers, inputsModule, atomicFs, prevalidated, fsPromises]) void load().catch(() => undefined);
}

/** What `refreshBootIndex` did. */
export interface BootRefreshReport {
  file: string;
  views: number;
  /** Tool entries imported in the validation child (new or changed bytes). */
  validated: number;
  written: boolean;
}

/** What the caller of a refresh knows that spares work. */
export interface RefreshHints {
  /** false: validate no entry in the child (the caller did, or nobody will run them). */
  validate?: boolean;
  /**
   * The runtime lock's bytes before the mutation, read under the plugins lock: a view built from
   * them whose answer the lock's new bytes cannot change is kept without a scan (views.ts
   * `keptAfterLockChange`: `config set|delete`).
   */
  runtimeLockBefore?: Uint8Array;
  /** Folders the change added (a plugin linked or installed): their inputs are stat'ed before the scan (views.ts `addedInputs`). */
  added?: readonly string[];
  /**
   * With `runtimeLockBefore`: the refresh after a state change (plugins/state-change.ts), which a
   * later one may undo. Views it replaces go to the shelf, and a shelved view that reads as it did
   * is served instead of a scan (view-shelf.ts). Other refreshes neither read nor write the shelf.
   */
  shelf?: boolean;
}

/**
 * Rebuild the index after a mutation: scan every kept view again (and the view of `cwd`, or of
 * the home folder when the index is empty), validate entries whose bytes are new in the child
 * (compiling their TypeScript into the transpile cache), drop records nobody references, write.
 * Throws on a write failure (the mutation reports it as a warning).
 */
export async function refreshBootIndex(options: BootIndexOptions & RefreshHints = {}): Promise<BootRefreshReport> {
  const world = worldOf(options);
  const { index, status, modulesProblem } = await loadIndex(world, true);
  const keys: ViewKey[] = [];
  if (options.cwd !== undefined) keys.push(keyOf(world, options.configuredPaths ?? [], options.cwd, options, await decideTrust(world, options.cwd, options.projectTrust)));
  const { stat } = await fsPromises();
  for (const view of index.views) {
    if (keys.some((k) => sameKey(k, view.key))) continue;
    if (!(await stat(view.key.cwd).then((s) => s.isDirectory(), () => false))) continue;
    // Rebuilding validates (imports) the view's tools: a project's only while the user trusts it.
    if (view.key.trusted && !userTrusts(world, view.key.cwd)) continue;
    keys.push(view.key);
  }
  if (keys.length === 0) keys.push(keyOf(world, [], world.roots.home, options, userTrusts(world, world.roots.home)));

  const fresh: BootIndex = { ...emptyIndex(), modules: {} };
  const views: BootView[] = [];
  // The views replaced by a scan or from the shelf (view-shelf.ts), read only when a view is not kept after a state change.
  let shelf: ShelvedView[] | undefined;
  const replaced: ShelvedView[] = [];
  for (const key of keys.slice(0, MAX_BOOT_VIEWS)) {
    const previous = index.views.find((view) => sameKey(view.key, key));
    const kept = previous && options.runtimeLockBefore ? await keptAfterLockChange(world, previous, options.runtimeLockBefore) : undefined;
    if (kept) {
      views.push(kept);
      continue;
    }
    // After a state change (RefreshHints `shelf`): where a view the change replaced goes, and from
    // where a view a change undone comes back.
    if (options.shelf === true && options.runtimeLockBefore !== undefined) {
      if (previous) replaced.push(await shelvedOf(world, previous, options.runtimeLockBefore));
      shelf ??= readShelf(world);
      const shelved = await reinstated(world, key, shelf);
      if (shelved) {
        views.push(shelved);
        continue;
      }
    }
    let scanned = await scanView(world, key, previous, options.added);
    // Something changed while scanning: once more, then keep what the second attempt saw.
    if (!scanned.consistent) scanned = await scanView(world, key, previous, options.added);
    if (scanned.consistent) views.push(scanned.view);
  }
  fresh.views = views;
  const prepared: PreparedEntry[] = [];
  for (const view of views) prepared.push(...(await prepareModules(view, index, true)));
  await dropOutdatedLinked(prepared);
  // Every runtime's records of unchanged bytes stay: a refresh under Node keeps what Bun found.
  for (const module of prepared) if (Object.keys(module.records).length > 0) fresh.modules[module.key] = { ...fresh.modules[module.key], ...module.records };
  await keepIdleRecords(world, index, fresh);
  await recordLinkedUntaken(world, fresh);
  const validated = options.validate === false ? 0 : await validateMissing(world, keys[0]!.cwd, prepared, fresh);
  // Nothing new (a mutation that changed no input, a second refresh): leave the file alone, so a
  // command that changed nothing changes no byte, the index included.
  if (sameAnswers(fresh, index)) return { file: world.file, views: views.length, validated, written: false };
  // The records file is rewritten only when its records change: a disable, a setting, a feature
  // turned off keep every record (keepIdleRecords), and the two files are read independently
  // (format.ts: no header of one is checked against the other).
  await writeIndex(world, fresh, status !== "ok" || modulesProblem !== undefined || !sameModules(fresh, index));
  if (shelf) await updateShelf(world, shelf, replaced, views);
  return { file: world.file, views: views.length, validated, written: true };
}


/**
 * The records of tool modules a state change is about to turn on (`enable`, `features`): from the
 * index while their bytes are unchanged, else made now in the validation child, which writes only
 * into `scratch` (a folder of the transaction: a refused or rolled-back change leaves no byte
 * behind, the index and the transpile cache included). What validated is remembered in this
 * process (prevalidated.ts), so the refresh after the commit records it without a second child;
 * a TypeScript module is imported again by that refresh at its live path, which compiles it into
 * the real transpile cache for the next boot, as after an install.
 */
export async function recordModules(options: BootIndexOptions & { cwd: string; scratch: string }, entries: BootView["paths"]): Promise<PreparedModule[]> {
  const world = worldOf(options);
  const { index } = await loadIndex(world, true);
  const prepared = await prepareModules({ paths: [...entries], inputs: [] }, index);
  const checker: World = { ...world, roots: { ...world.roots, xcshHome: options.scratch }, paths: { ...world.paths, transpileCache: path.join(options.scratch, "transpile") } };
  if ((await validateMissing(checker, options.cwd, prepared, index)) > 0) {
    // Only a record is made from these again (module-records.ts), which keeps exactly the record's fields.
    const outcomes = prepared.flatMap(({ file, record }) => (record && !record.failure ? [{ file, tools: record.tools as ModuleOutcome["tools"] }] : []));
    await (await prevalidated()).rememberValidated(outcomes);
  }
  return prepared;
}

/**
 * A record `link` made of a folder as it was (`linked`), whose folder this process's `link` just
 * checked as it is now under another signature: the entry's bytes are the same, yet a file it
 * imports may not be (the record would say the old tools). Dropped, so that the new check's
 * outcome is recorded instead (recalled: no second import of a JavaScript entry).
 */
async function dropOutdatedLinked(prepared: PreparedEntry[]): Promise<void> {
  if (!prepared.some((module) => module.record?.linked !== undefined)) return;
  const { linkedSignatureOf } = await prevalidated();
  for (const module of prepared) {
    const now = module.record?.linked === undefined ? undefined : linkedSignatureOf(module.key, module.record.sha);
    if (now === undefined || now === module.record!.linked) continue;
    module.record = undefined;
    module.records = {};
  }
}

/**
 * Keep the records of installed plugins' modules that no view takes now (a disabled plugin, a
 * feature turned off) while their bytes are unchanged: turning them on again then needs no
 * validation child (issue 44). Only files inside the plugins folder: they go with the plugin
 * (a removed or changed file drops its record in `validRecords`), so the file cannot grow
 * with modules nobody will take again.
 *
 * An unlinked folder's records (`linked`: made by `link`'s check) stay too, checked at their
 * real path (the link itself is gone), so that linking the folder again imports nothing while
 * it is unchanged (`recordedLinkedOutcome`). At most MAX_IDLE_LINKED of them: a folder linked
 * once long ago must not make the file grow for ever.
 */
async function keepIdleRecords(world: World, index: BootIndex, fresh: BootIndex): Promise<void> {
  let linked = 0;
  for (const [key, stored] of Object.entries(index.modules)) {
    if (fresh.modules[key] !== undefined) continue;
    const file = Object.values(stored)[0]?.file;
    if (file === undefined || !isPathInside(file, world.paths.pluginsNodeModules)) continue;
    const records = await validRecords(file, stored, undefined);
    if (Object.keys(records).length > 0) fresh.modules[key] = records;
    else if (linked < MAX_IDLE_LINKED && !isPathInside(key, world.paths.plugins)) {
      const sig = currentSignature(key);
      const kept = Object.entries(stored).filter(([, record]) => record.linked !== undefined && record.sig === sig);
      if (kept.length > 0) (fresh.modules[key] = Object.fromEntries(kept)), linked++;
    }
  }
}
const MAX_IDLE_LINKED = 200;

/**
 * The modules `link` checked in this process that no view takes (a feature of the linked plugin
 * that is off: `link` checks every module the plugin declares), recorded as `link` checked them,
 * so that the next `link` of the unchanged folder (or turning the feature on) starts no child for
 * them either. Each record names the module's place below the plugins folder (where the link puts
 * it) and its real path's signature now, when its bytes are still the ones checked; a failure is
 * never recorded (the child answers again).
 *
 * Such a module's record from an earlier `link` of the folder, kept by `keepIdleRecords` because
 * its own bytes did not change, names the folder as it was then (`linked`): after an edit of any
 * other file, every later `link` of the unchanged folder would find that old signature and import
 * the module again. This check, made of the folder as it is now, replaces it (as
 * `dropOutdatedLinked` does for the modules a view takes); other runtimes' records stay.
 */
async function recordLinkedUntaken(world: World, fresh: BootIndex): Promise<void> {
  const { linkedChecked } = await prevalidated();
  for (const [key, check] of linkedChecked()) {
    const kept = fresh.modules[key]?.[runtimeName()];
    const outdated = kept?.linked !== undefined && kept.linked !== check.signature;
    if ((fresh.modules[key] !== undefined && !outdated) || check.outcome.failure) continue;
    // The stat first, then the bytes: a change after the stat shows as another stat at the next read.
    const sig = currentSignature(key);
    if (sig === "missing" || (await hashFile(key)) !== check.sha) continue;
    const record = recordOfOutcome(path.join(world.paths.pluginsNodeModules, check.place), { sig, sha: check.sha }, check.outcome, runtimeName(), false);
    record.linked = check.signature;
    fresh.modules[key] = { ...fresh.modules[key], [record.runtime]: record };
  }
}
