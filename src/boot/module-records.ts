/**
 * Module records: what importing one tool entry and calling its factory produced, captured in
 * the validation child. `prepareModules` pairs a view's entries with their records while the
 * entry's bytes are unchanged; `validateMissing` validates the others out of process and keeps
 * their records.
 *
 * Records are kept per runtime, and a query takes its own runtime's record, else another
 * runtime's success: a success is a property of the bytes (the tools' names, descriptions and
 * schemas come from them), so a Bun query after a Node-run install need not import every tool
 * again; a failure may be the runtime's (a tool using `Bun.*` fails under Node), so it is checked
 * again under this one, and its record is kept beside the other's rather than replacing it.
 */
import path from "node:path";
import { locateModule } from "../host/module-key.js";
import type { ModuleOutcome } from "../validate/module-check.js";
import { captureFingerprints, currentSignature } from "./fingerprint.js";
import type { BootIndex, BootView, ModuleRecord, ModuleRecords } from "./format.js";
import type { PreparedModule } from "./simulate.js";
import { runtimeName, type World } from "./world.js";

const prevalidated = () => import("./prevalidated.js");

/** A view's entry with its records: `record` answers for this runtime, `records` are all still valid. */
export interface PreparedEntry extends PreparedModule {
  /** Every record of the entry still valid for its bytes, by runtime (a refresh keeps them all). */
  records: ModuleRecords;
}

/**
 * The records of `stored` made from the bytes `file` holds now (a record whose sig moved but whose
 * sha matches is re-signed). Synchronous when no signature moved (no file to hash): a lazy boot
 * asks this of every entry, and a promise for each costs more than the answer.
 */
export function validRecords(file: string, stored: ModuleRecords | undefined, known: string | undefined): ModuleRecords | Promise<ModuleRecords> {
  const valid: ModuleRecords = {};
  if (!stored) return valid;
  let current = known;
  let moved = false;
  for (const runtime in stored) {
    const record = stored[runtime]!;
    if (record.file !== file || record.runtime !== runtime) continue;
    current ??= currentSignature(file);
    if (current === record.sig) valid[runtime] = record;
    else if (current !== "missing" && record.sha !== undefined) moved = true;
  }
  return moved ? sameContent(file, stored, valid) : valid;
}

/** `valid` and the records of `stored` whose sig moved but whose sha is the file's: re-signed. */
async function sameContent(file: string, stored: ModuleRecords, valid: ModuleRecords): Promise<ModuleRecords> {
  const fingerprint = (await captureFingerprints([{ path: file, hash: true }]))[0];
  for (const runtime in stored) {
    const record = stored[runtime]!;
    if (valid[runtime] || record.file !== file || record.runtime !== runtime || record.sha === undefined) continue;
    if (fingerprint?.sha === record.sha) valid[runtime] = { ...record, sig: fingerprint.sig };
  }
  return valid;
}

/** The record that answers under this runtime: its own, else another runtime's success. */
function answeringRecord(records: ModuleRecords): ModuleRecord | undefined {
  const own = records[runtimeName()];
  if (own) return own;
  for (const runtime in records) if (!records[runtime]!.failure) return records[runtime];
  return undefined;
}

/**
 * The view's entries as the loader would take them, each with the record that answers for it, if
 * any. `unchanged`: the view's inputs were found unchanged (or taken) just now, so the entries'
 * signatures among them need no second stat.
 */
export async function prepareModules(view: Pick<BootView, "paths" | "inputs">, index: BootIndex, unchanged = false): Promise<PreparedEntry[]> {
  const folders = new Map<string, string>();
  const signatures = new Map<string, string>();
  if (unchanged) for (const input of view.inputs) if (input.kind === "stat") signatures.set(input.path, input.sig);
  return Promise.all(
    view.paths.map(async (entry) => {
      const file = path.resolve(entry.path);
      return entryRecords(entry, file, locateModule(file, folders).key, index, signatures.get(file));
    }),
  );
}

/**
 * One entry's records, as `prepareModules` gives them, for a caller that located it already
 * (`sig`: its signature, just checked); synchronous as `validRecords` is.
 */
export function entryRecords(entry: PreparedModule["entry"], file: string, key: string, index: Pick<BootIndex, "modules">, sig?: string): PreparedEntry | Promise<PreparedEntry> {
  const records = validRecords(file, index.modules[key], sig);
  return records instanceof Promise ? records.then((found) => preparedEntry(entry, file, key, found)) : preparedEntry(entry, file, key, records);
}

function preparedEntry(entry: PreparedModule["entry"], file: string, key: string, records: ModuleRecords): PreparedEntry {
  const record = answeringRecord(records);
  // An entry whose plugin now declares `staticTools` needs a record made with that check (docs/lazy-tools.md).
  return { entry, file, key, record: record && (entry.source?.staticTools !== true || record.static) ? record : undefined, records };
}

/**
 * Validate `modules` that have no record, in the validation child, and store their records.
 * Fingerprints are taken before the child imports anything. Returns how many were validated.
 */
export async function validateMissing(world: World, cwd: string, modules: PreparedModule[], index: BootIndex, piModule?: string): Promise<number> {
  const missing = new Map<string, PreparedModule>();
  for (const module of modules) if (!module.record && !missing.has(module.key)) missing.set(module.key, module);
  if (missing.size === 0) return 0;
  const list = [...missing.values()];
  const fingerprints = await captureFingerprints(list.map((m) => ({ path: m.file, hash: true })));
  const shaOf = (file: string) => fingerprints.find((f) => f.path === file)?.sha;
  // Bytes this process validated moments ago in an install's staging copy need no second child.
  const { recallValidated, linkedSignatureOf } = await prevalidated();
  const known = list.map((m) => recallValidated(m.file, shaOf(m.file), m.key));
  const toCheck = list.filter((_, i) => known[i] === undefined);
  let checked: ModuleOutcome[] = [];
  if (toCheck.length > 0) {
    const { checkModules } = await import("../validate/module-check.js");
    checked = await checkModules(
      toCheck.map((m) => m.file),
      { cwd, ...world.roots, cacheDir: world.paths.transpileCache, ...(piModule !== undefined ? { piModule } : {}), staticModules: toCheck.filter((m) => m.entry.source?.staticTools === true).map((m) => m.file) },
    );
  }
  const outcomes = known.map((outcome) => outcome ?? checked.shift()!);
  const runtime = runtimeName();
  outcomes.forEach((outcome, i) => {
    const module = list[i]!;
    const fingerprint = fingerprints.find((f) => f.path === module.file);
    if (!fingerprint || fingerprint.sig === "missing") return;
    // A checker that could not run says nothing about the module: no record, try again later.
    if (outcome.failure && (outcome.failure.code === "ECHILD" || outcome.failure.code === "EVALIDATE_TIMEOUT")) return;
    const record = recordOfOutcome(module.file, fingerprint, outcome, runtime, module.entry.source?.staticTools === true);
    // The same bytes passed `link`'s fenced check in this process: a later link may reuse the record.
    const linked = outcome.failure ? undefined : linkedSignatureOf(module.key, fingerprint.sha);
    if (linked !== undefined) record.linked = linked;
    // Records made with a stand-in for the host's exports (`--pi`), or that failed for want of
    // any (`EHOST_EXPORTS`: the host package may be installed later), answer this call only.
    if (piModule === undefined && outcome.failure?.code !== "EHOST_EXPORTS") keepRecord(index, module.key, record);
    module.record = record;
  });
  return list.length;
}

/**
 * The record of `outcome` for `file` (its stat signature and sha256 taken before the import);
 * `staticTools`: checked as a module whose plugin declares static definitions.
 */
export function recordOfOutcome(file: string, fingerprint: { sig: string; sha?: string | undefined }, outcome: ModuleOutcome, runtime: string, staticTools: boolean): ModuleRecord {
  return {
    file,
    sig: fingerprint.sig,
    ...(fingerprint.sha ? { sha: fingerprint.sha } : {}),
    runtime,
    tools: outcome.tools.map((tool) => ({
      ...(tool.index !== undefined ? { index: tool.index } : {}),
      ...(tool.name !== undefined ? { name: tool.name } : {}),
      ...(tool.label !== undefined ? { label: tool.label } : {}),
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
      ...(tool.lazy ? { lazy: tool.lazy } : {}),
      problems: tool.problems,
    })),
    ...(outcome.failure ? { failure: { code: outcome.failure.code, message: outcome.failure.message } } : {}),
    // Checked as a `staticTools` module (a tool without `lazy` had a problem and loads eagerly).
    ...(staticTools && outcome.tools.every((tool) => tool.lazy || tool.staticProblem) ? { static: true as const } : {}),
  };
}

/** Store `record` beside the other runtimes' records of the same bytes; records of other bytes go. */
function keepRecord(index: BootIndex, key: string, record: ModuleRecord): void {
  const records: ModuleRecords = {};
  for (const [runtime, other] of Object.entries(index.modules[key] ?? {})) {
    if (runtime !== record.runtime && other.file === record.file && other.sha !== undefined && other.sha === record.sha) records[runtime] = other;
  }
  records[record.runtime] = record;
  index.modules[key] = records;
}

