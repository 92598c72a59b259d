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
import path from "node:path";
import type { ModuleOutcome } from "../validate/module-check.js";
import { hashFile } from "./fingerprint.js";
import type { ToolRecord } from "./format.js";
import { runtimeName } from "./world.js";

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

/** Keep the successful JavaScript outcomes of a validation run (staging paths are fine). */
export async function rememberValidated(outcomes: readonly ModuleOutcome[]): Promise<void> {
  await Promise.all(
    outcomes.map(async (outcome) => {
      if (outcome.failure || !JAVASCRIPT.has(path.extname(outcome.file))) return;
      const sha = await hashFile(outcome.file);
      const key = sha === undefined ? undefined : keyOf(outcome.file, sha);
      if (key !== undefined) remembered.set(key, outcome);
    }),
  );
}

/** The outcome validated earlier for these bytes at this place, re-addressed to `file`. */
export function recallValidated(file: string, sha: string | undefined): ModuleOutcome | undefined {
  const key = sha === undefined ? undefined : keyOf(file, sha);
  const outcome = key === undefined ? undefined : remembered.get(key);
  return outcome ? { ...outcome, file } : undefined;
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
