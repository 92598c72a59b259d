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
 */
import path from "node:path";
import type { ModuleOutcome } from "../validate/module-check.js";
import { hashFile } from "./fingerprint.js";

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
