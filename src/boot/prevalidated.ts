/**
 * Module outcomes this process already holds for bytes it validated elsewhere. An install
 * validates each new package in its staging copy before the commit moves it live; the boot-index
 * refresh right after that commit would otherwise start a second validation child to import the
 * very same files again at their live paths (about as long as the install's own validation).
 *
 * An outcome is reused only when all of these hold, so reuse never changes a record:
 * - the same bytes (sha256) at the same place inside the same package (the path from the last
 *   `node_modules/` on: `<name>/tools/x.js`), validated by this process (same runtime);
 * - the validation succeeded (a failure message names the staging path);
 * - the entry is JavaScript. A TypeScript entry still goes through the child at its live path:
 *   that import is what compiles it into the real transpile cache (issue 7, "compiled ahead"),
 *   and the cache is keyed by the file's path.
 *
 * A plugin seed carries the outcomes its build validated (`xcsh-seed-modules.json`, written by
 * `seed` from this same memory): a restore that uses the seed hands them back here
 * (`rememberRecorded`), under the same conditions: the recorded runtime must be this one, the
 * entry JavaScript, and the record answers only for bytes whose sha256 is the recorded one (an
 * edited file is imported in the child as any new file).
 */
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { locateModule } from "../host/module-key.js";
import type { ModuleOutcome } from "../validate/module-check.js";
import { currentSignature, hashFile, signatureOf } from "./fingerprint.js";
import { readModuleRecords, type BootIndex, type ToolRecord } from "./format.js";
import { bootIndexGenerator, runtimeName } from "./world.js";

const remembered = new Map<string, ModuleOutcome>();

const JAVASCRIPT = new Set([".js", ".mjs", ".cjs"]);
const MARK = `${path.sep}node_modules${path.sep}`;

function placeInPackage(file: string): string | undefined {
  const at = file.lastIndexOf(MARK);
  return at < 0 ? undefined : file.slice(at + MARK.length);
}

function keyOf(file: string, sha: string): string | undefined {
  const place = placeInPackage(path.resolve(file));
  return place === undefined || !JAVASCRIPT.has(path.extname(file)) ? undefined : `${sha}\0${place}`;
}

/**
 * Keep the successful outcomes of a validation run (staging paths are fine): the JavaScript ones
 * to be recalled, and for the modules of a linked folder (`linked`: module file → the folder's
 * signature before the import, see `linkedFolderSignature`, or undefined when it has none) by the
 * module's real path: the refresh after `link` recalls them there (the link's own paths name no
 * node_modules) and, with a signature, marks their records as `link` checked them. `places`:
 * module file → `<package>/<path in it>`, for a module checked where no node_modules names its
 * package (a link written by hand is checked in the folder itself); else read from its path.
 */
export async function rememberValidated(outcomes: readonly ModuleOutcome[], linked?: ReadonlyMap<string, string | undefined>, places?: ReadonlyMap<string, string>): Promise<void> {
  await Promise.all(
    outcomes.map(async (outcome) => {
      const signature = linked?.get(outcome.file);
      const javascript = JAVASCRIPT.has(path.extname(outcome.file));
      if (outcome.failure || (!javascript && signature === undefined)) return;
      const sha = await hashFile(outcome.file);
      if (sha === undefined) return;
      if (linked?.has(outcome.file)) {
        const realKey = locateModule(path.resolve(outcome.file), new Map()).key;
        const real = `${sha}\0${realKey}`;
        if (signature !== undefined) linkedSignatures.set(real, signature);
        if (javascript) rememberedLinked.set(real, outcome);
        const place = places?.get(outcome.file) ?? placeInPackage(path.resolve(outcome.file));
        if (signature !== undefined && place !== undefined) linkedChecks.set(realKey, { outcome, sha, signature, place });
      }
      const key = keyOf(outcome.file, sha);
      if (key !== undefined && javascript) remembered.set(key, outcome);
    }),
  );
}

/**
 * The outcome validated earlier for these bytes at this place, re-addressed to `file`; `realKey`
 * (the module's real path, its record key) also finds a linked folder's module validated at its
 * own path by `link`.
 */
export function recallValidated(file: string, sha: string | undefined, realKey?: string): ModuleOutcome | undefined {
  const key = sha === undefined ? undefined : keyOf(file, sha);
  const outcome = (key === undefined ? undefined : remembered.get(key)) ?? (sha !== undefined && realKey !== undefined && JAVASCRIPT.has(path.extname(file)) ? rememberedLinked.get(`${sha}\0${realKey}`) : undefined);
  return outcome ? { ...outcome, file } : undefined;
}

/** The linked folder's signature under which `link` validated these bytes (`realKey`: the module's real path), if it did in this process. */
export function linkedSignatureOf(realKey: string, sha: string | undefined): string | undefined {
  return sha === undefined ? undefined : linkedSignatures.get(`${sha}\0${realKey}`);
}

const rememberedLinked = new Map<string, ModuleOutcome>();
const linkedSignatures = new Map<string, string>();

/** A module of a linked folder that `link` checked in this process under the folder's `signature`; `place`: `<package>/<path in it>`. */
export interface LinkedCheck {
  outcome: ModuleOutcome;
  sha: string;
  signature: string;
  place: string;
}
const linkedChecks = new Map<string, LinkedCheck>();

/** Every module `link` checked in this process under a signature, by its real path (the refresh records those no view takes). */
export function linkedChecked(): ReadonlyMap<string, LinkedCheck> {
  return linkedChecks;
}

/** Entries a linked folder's signature takes at most: a bigger folder is checked in the child every time. */
const MAX_LINKED_ENTRIES = 5000;

/**
 * One signature of everything a linked folder's tools may import from it, taken before `link`
 * imports them and kept in their records (`ModuleRecord.linked`): a later `link` of the same
 * folder reuses the records only while it is still the same (issue 44: the author's loop, link,
 * unlink, link, starts no child then). The stat signature (`type:size:mtimeMs:ino`) of every
 * entry below the folder's real path but `.git`; of a `node_modules`, only its own entries (and
 * a scope's): npm's install, uninstall or update of any package changes them (and its
 * `.package-lock.json`), while hashing each package's files would cost more than the child.
 * A hand edit deep inside a dependency's folder is not seen (docs/security.md says so).
 * Undefined (checked in the child every time) when the folder cannot be read, has more than
 * MAX_LINKED_ENTRIES entries, or a symlink outside `node_modules`.
 */
export async function linkedFolderSignature(folder: string): Promise<string | undefined> {
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  let count = 0;
  const add = (rel: string, full: string) => {
    hash.update(`${rel}\0${signatureOf(lstatSync(full, { throwIfNoEntry: false }))}\n`);
    return ++count <= MAX_LINKED_ENTRIES;
  };
  const list = (dir: string) => readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const walk = (dir: string, rel: string, inNodeModules: boolean, depth: number): boolean => {
    for (const entry of list(dir)) {
      if (entry.name === ".git") continue;
      // A link in the folder's own files may lead to files whose edits its stat never shows: no signature.
      if (entry.isSymbolicLink() && !inNodeModules) return false;
      const full = path.join(dir, entry.name);
      const at = `${rel}/${entry.name}`;
      if (!add(at, full)) return false;
      if (!entry.isDirectory()) continue;
      // Below node_modules: its entries, and a scope's (depth 1); never a package's own files.
      if (inNodeModules ? depth === 0 && entry.name.startsWith("@") && !walk(full, at, true, 1) : !walk(full, at, entry.name === "node_modules", 0)) return false;
    }
    return true;
  };
  try {
    const root = realpathSync.native(folder);
    return add("", root) && walk(root, "", false, 0) ? hash.digest("hex") : undefined;
  } catch {
    return undefined;
  }
}

let recordsRead: { file: string; modules: BootIndex["modules"] } | undefined;

/**
 * What `link` validated before for `file`, a module of a linked folder whose signature is
 * `signature` now: this runtime's record in the boot index (`bootModules`) made under that same
 * signature, a success, for the entry's bytes as they are. Undefined otherwise (the child imports it).
 */
export function recordedLinkedOutcome(bootModules: string, file: string, signature: string): ModuleOutcome | undefined {
  if (recordsRead?.file !== bootModules) recordsRead = { file: bootModules, modules: readRecordsOrNone(bootModules) };
  const key = locateModule(path.resolve(file), new Map()).key;
  const record = recordsRead.modules[key]?.[runtimeName()];
  if (!record || record.linked !== signature || record.failure || currentSignature(key) !== record.sig) return undefined;
  // Only a record's fields are read back from an outcome (tool-checks.ts, module-records.ts).
  return { file, tools: record.tools as ModuleOutcome["tools"] };
}

/**
 * Whether the boot index (`bootModules`) holds records `link` made of `folder` as it is now: a
 * link that will likely start no child, so none is warmed up for it (`recordedLinkedOutcome`
 * decides, module by module).
 */
export async function linkRecorded(folder: string, bootModules: string): Promise<boolean> {
  const signature = await linkedFolderSignature(folder);
  if (signature === undefined) return false;
  if (recordsRead?.file !== bootModules) recordsRead = { file: bootModules, modules: readRecordsOrNone(bootModules) };
  return Object.values(recordsRead.modules).some((records) => records[runtimeName()]?.linked === signature);
}

function readRecordsOrNone(file: string): BootIndex["modules"] {
  try {
    return readModuleRecords(file, bootIndexGenerator()).modules;
  } catch {
    return {};
  }
}

/** A validated outcome as a seed records it: its place (`<package>/<path in it>`), its bytes' sha256, the runtime that validated it. */
export interface RecordedOutcome {
  place: string;
  sha: string;
  runtime: string;
  tools: ModuleOutcome["tools"];
}

/** Every outcome this process validated and remembered (for `seed`, which records them in the seed it builds). */
export function validatedOutcomes(): RecordedOutcome[] {
  return [...remembered].map(([key, outcome]) => {
    const [sha, place] = key.split("\0") as [string, string];
    return { place, sha, runtime: runtimeName(), tools: outcome.tools };
  });
}

/**
 * Take outcomes recorded elsewhere (a seed's build) for the files `file` names: only those of this
 * runtime and of JavaScript entries; each answers only for the recorded bytes (see `recallValidated`).
 */
export function rememberRecorded(outcomes: readonly { file: string; sha: string; runtime: string; tools: ToolRecord[] }[]): number {
  let taken = 0;
  for (const { file, sha, runtime, tools } of outcomes) {
    const key = runtime === runtimeName() ? keyOf(file, sha) : undefined;
    if (key === undefined) continue;
    // Only a record is made from these again (module-records.ts), which keeps exactly a record's fields.
    remembered.set(key, { file, tools: tools as ModuleOutcome["tools"] });
    taken++;
  }
  return taken;
}
