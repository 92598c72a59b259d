/**
 * "Did you mean" for a name the user typed that names nothing installed: the closest names by
 * edit distance. Hand-written because no dependency offers one: commander's `suggestSimilar` is
 * not exported by the package, and neither `leven` nor `fastest-levenshtein` is in the lockfile
 * (a dependency for thirty lines is not worth its supply chain).
 */

/** The most edits a suggestion may be away: a third of the typed name, between 1 and 3. */
function maxEdits(word: string): number {
  return Math.min(3, Math.max(1, Math.floor(word.length / 3)));
}

/**
 * The optimal string alignment distance (Damerau–Levenshtein where no substring is edited twice):
 * insertions, deletions, substitutions and swaps of two neighbours each cost one, so `hlelo` is
 * one edit from `hello`. Gives up (returns `limit + 1`) when the lengths alone differ by more.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  // Three rows are enough: a swap looks two rows back.
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      current[j] = d;
    }
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** The bare name of an npm name or a plugin id: `search` of `@acme/search` and of `search@market`. */
function bareName(name: string): string {
  const unscoped = name.startsWith("@") ? name.slice(name.indexOf("/") + 1) : name;
  const at = unscoped.lastIndexOf("@");
  return at > 0 ? unscoped.slice(0, at) : unscoped;
}

/**
 * The candidates closest to `word` (all at the smallest distance, sorted), case-insensitively:
 * within a few edits of the whole name, or, for a bare name typed, of the candidates' bare names
 * (a scope or `@marketplace` left off). Empty when none is close.
 */
export function closestNames(word: string, candidates: readonly string[]): string[] {
  const typed = word.toLowerCase();
  const limit = maxEdits(bareName(typed));
  let best = limit + 1;
  let found: string[] = [];
  for (const candidate of new Set(candidates)) {
    const c = candidate.toLowerCase();
    if (candidate === word) continue;
    // A typed bare name is compared with the bare names too (`search` for `@acme/search`);
    // a typed scope or marketplace must match as typed.
    const d = Math.min(editDistance(typed, c, limit), bareName(typed) === typed ? editDistance(typed, bareName(c), limit) : limit + 1);
    if (d < best) [best, found] = [d, [candidate]];
    else if (d === best) found.push(candidate);
  }
  return best <= limit ? found.sort() : [];
}

/** "Did you mean `x`? " (with a trailing space, to start a hint), or "" when nothing is close. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const close = closestNames(word, candidates);
  return close.length > 0 ? `Did you mean ${close.map((c) => `\`${c}\``).join(" or ")}? ` : "";
}
