/**
 * Unknown keys. Files that other programs write keep their unknown keys (we never strip them), but
 * a key that is one or two edits away from a known one is almost always a typo that would load
 * silently — the pain point Claude Code's users report ("typos load silently"). Those become
 * warnings that say which key was meant.
 */
import { pointer, type ValidationIssue } from "./result.js";

/** Edit distance (Levenshtein), small strings only. */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = current;
    }
  }
  return row[b.length]!;
}

/** The known key `key` was most likely meant to be, if any. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  const allowed = key.length <= 4 ? 1 : 2;
  return bestDistance <= allowed ? best : undefined;
}

/**
 * Warnings for the keys of `object` that are not in `known`. With `onlyTypos`, keys that are not
 * close to a known key are accepted silently (package.json and other shared files carry many
 * legitimate keys of other tools).
 */
export function unknownKeyWarnings(
  object: Record<string, unknown>,
  known: readonly string[],
  base: string,
  options: { onlyTypos?: boolean; what?: string } = {},
): ValidationIssue[] {
  const warnings: ValidationIssue[] = [];
  for (const key of Object.keys(object)) {
    if (known.includes(key)) continue;
    const guess = closestKey(key, known);
    if (!guess && options.onlyTypos) continue;
    const at = pointer(base, key);
    warnings.push({
      path: at,
      code: "EUNKNOWN_KEY",
      message: guess
        ? `${at}: unknown key "${key}" in ${options.what ?? "this object"}; did you mean "${guess}"?`
        : `${at}: unknown key "${key}" in ${options.what ?? "this object"} is ignored`,
      expected: `one of ${known.join(", ")}`,
      found: JSON.stringify(key),
      hint: guess ? `Rename "${key}" to "${guess}".` : `Remove "${key}" or check the spelling against: ${known.join(", ")}.`,
    });
  }
  return warnings;
}
