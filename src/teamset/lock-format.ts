/**
 * The one writer of `xcsh-team.lock.json` (docs/design/team-sets.md (b)): canonical bytes — sections
 * in schema order, names and ids sorted by code point, fields in schema order, 2-space, trailing
 * newline — so `formatLock(parseLock(bytes)) === bytes` for any lock it wrote, and a no-op never
 * rewrites the file. Also the two sides of a lock a merge left conflicted, and their merge.
 */
import { SOURCE_FIELD_ORDER } from "../manifest/team-declaration.js";
import { conflictMarkersError, conflictMarkerLines, valueOrThrow } from "../manifest/team-file.js";
import {
  LOCK_SECTIONS,
  LockedMarketplacePluginSchema,
  LockedMarketplaceSchema,
  LockedNpmPluginSchema,
  NpmFromSchema,
  PluginFromSchema,
  TEAM_LOCK_FILE,
  fieldOrder,
  parseTeamLockText,
  validateTeamLock,
  type LockSection,
  type TeamLock,
} from "../manifest/team-lock.js";
import type { TSchema } from "../manifest/typebox.js";
import type { EffectiveSet, Satisfaction } from "../manifest/team-set.js";
import { knownFirst, orderedJson, sortedKeys } from "./canonical-json.js";
import { marketplacePluginVerdict, marketplaceVerdict, npmVerdict, satisfies, type SatisfyFacts } from "./satisfy.js";

/** The field order of each `kind` of a union of `{kind: Literal, ...}` objects. */
function kindOrders(union: TSchema): Record<string, string[]> {
  const branches = (union as unknown as { anyOf: { properties: { kind: { const: string } } }[] }).anyOf;
  return Object.fromEntries(branches.map((b) => [b.properties.kind.const, fieldOrder(b as unknown as TSchema)]));
}

const ORDER = {
  top: ["lockfileVersion", ...LOCK_SECTIONS],
  marketplace: fieldOrder(LockedMarketplaceSchema),
  marketplacePlugin: fieldOrder(LockedMarketplacePluginSchema),
  npm: fieldOrder(LockedNpmPluginSchema),
  pluginFrom: kindOrders(PluginFromSchema),
  npmFrom: kindOrders(NpmFromSchema),
};

function lockKeys(object: Record<string, unknown>, at: readonly string[]): string[] {
  const [section, , field] = at;
  switch (at.length) {
    case 0:
      return knownFirst(object, ORDER.top);
    case 1:
      return sortedKeys(object);
    case 2:
      return knownFirst(object, section === "marketplaces" ? ORDER.marketplace : section === "npm" ? ORDER.npm : ORDER.marketplacePlugin);
    case 3:
      if (field === "source") return knownFirst(object, SOURCE_FIELD_ORDER[object.source as keyof typeof SOURCE_FIELD_ORDER] ?? []);
      if (field === "from") return knownFirst(object, (section === "npm" ? ORDER.npmFrom : ORDER.pluginFrom)[String(object.kind)] ?? []);
      return sortedKeys(object);
    default:
      return sortedKeys(object);
  }
}

/**
 * The canonical bytes of `lock`, checked first: the writer never writes what the reader would
 * refuse (a machine path, a hostile URL, a malformed hash).
 */
export function formatLock(lock: TeamLock, file: string = TEAM_LOCK_FILE): string {
  valueOrThrow(validateTeamLock(lock), file, "ETEAM_LOCK_INVALID");
  return orderedJson(lock, lockKeys);
}

/** Parse lock bytes (no markers allowed: `splitConflictSides` first). */
export function parseLock(text: string, file: string = TEAM_LOCK_FILE): TeamLock {
  return parseTeamLockText(text, file);
}

/** True when `text` is exactly the canonical bytes of the lock it holds (else `--frozen` fails: the bytes would change). */
export function isCanonicalLock(text: string, file: string = TEAM_LOCK_FILE): boolean {
  return formatLock(parseLock(text, file), file) === text;
}

/**
 * The two texts a conflicted file stands for: lines outside conflict hunks go to both, a hunk's
 * `<<<<<<<`..`=======` part to ours, `=======`..`>>>>>>>` to theirs, a diff3 base part
 * (`|||||||`..`=======`) to neither. `undefined` without markers; markers out of order are
 * `ETEAM_CONFLICT_MARKERS` (the file cannot be split, only resolved by hand).
 */
export function splitConflictSides(text: string, file: string = TEAM_LOCK_FILE): { ours: string; theirs: string } | undefined {
  if (conflictMarkerLines(text).length === 0) return undefined;
  const ours: string[] = [];
  const theirs: string[] = [];
  let state: "both" | "ours" | "base" | "theirs" = "both";
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    const marker = /^(<{7}|\|{7}|={7}|>{7})(?:[ \t].*)?\r?$/.exec(line)?.[1]?.[0];
    const next = marker === "<" ? (state === "both" ? "ours" : undefined) : marker === "|" ? (state === "ours" ? "base" : undefined) : marker === "=" ? (state === "ours" || state === "base" ? "theirs" : undefined) : marker === ">" ? (state === "theirs" ? "both" : undefined) : state;
    if (next === undefined) throw conflictMarkersError(file, [i + 1]);
    if (marker !== undefined) {
      state = next;
      return;
    }
    if (state !== "theirs" && state !== "base") ours.push(line);
    if (state !== "ours" && state !== "base") theirs.push(line);
  });
  if (state !== "both") throw conflictMarkersError(file, [lines.length]);
  return { ours: ours.join("\n"), theirs: theirs.join("\n") };
}

/**
 * Both sides of a conflicted lock, each parsed and checked. Approximate: git merged the lines
 * outside the conflict hunks already, so a side holds the other branch's clean changes too, and an
 * entry both branches changed may mix lines of both. Merge them with `exact: false`; the exact
 * locks of both branches are git's index stages (`git show :2:<file>`, `:3:<file>`), read-only.
 */
export function parseConflictedLock(text: string, file: string = TEAM_LOCK_FILE): { ours: TeamLock; theirs: TeamLock } | undefined {
  const sides = splitConflictSides(text, file);
  return sides && { ours: parseLock(sides.ours, `${file} (our side of the conflict)`), theirs: parseLock(sides.theirs, `${file} (their side of the conflict)`) };
}

/** Which side each entry of a merged lock came from. */
export interface LockMergeChoice {
  section: LockSection;
  key: string;
  took: "both" | "ours" | "theirs";
}

/** Options of `mergeLockSides`. */
export interface LockMergeOptions {
  /**
   * True when `ours` and `theirs` are the exact locks of both branches (git's index stages); false
   * (the default) when they were split from conflict markers: an entry that differs between such
   * sides may mix both branches' lines, so neither is trusted and it goes to the resolver.
   */
  exact?: boolean;
  facts?: SatisfyFacts;
  /** True when this side's entry is what is restored on this machine now (preferred: nothing to fetch). */
  isRestored?: (section: LockSection, key: string, entry: unknown) => boolean;
}

const same = (a: unknown, b: unknown) => orderedJson(a, sortedKeys) === orderedJson(b, sortedKeys);

/**
 * Merge the two sides of a conflicted lock for `set`: per entry, the side that satisfies the
 * declaration, the one restored here first, else ours (exact sides only; see `exact`). A plugin
 * taken from its marketplace's catalog (`from.kind: "relative"`) follows the side its marketplace
 * was taken from: its content hash holds only at that catalog commit. Entries the set no longer
 * wants are dropped; what neither side satisfies, or what differs between inexact sides, is left
 * for the resolver (`unresolved`), which re-resolves it as a missing entry.
 */
export function mergeLockSides(ours: TeamLock, theirs: TeamLock, set: EffectiveSet, options: LockMergeOptions = {}): { lock: TeamLock; choices: LockMergeChoice[]; unresolved: Satisfaction } {
  const merged: TeamLock = { lockfileVersion: ours.lockfileVersion, marketplaces: {}, marketplacePlugins: {}, npm: {} };
  const choices: LockMergeChoice[] = [];
  const conflicted = new Set<string>();
  const marketplaceSide = new Map<string, "ours" | "theirs">();
  const fits = (section: LockSection, key: string, entry: unknown): boolean => {
    if (section === "marketplaces") {
      const declared = set.marketplaces.get(key);
      return declared !== undefined && marketplaceVerdict(declared.source, entry as TeamLock["marketplaces"][string]).state === "ok";
    }
    const plugin = set.plugins.get(key);
    if (!plugin?.teamEnabled) return false;
    if (section === "npm") return npmVerdict(plugin, entry as TeamLock["npm"][string], options.facts).state === "ok";
    return marketplacePluginVerdict(plugin, entry as TeamLock["marketplacePlugins"][string], { state: "ok" }).state === "ok";
  };
  for (const section of LOCK_SECTIONS) {
    const a = ours[section] as Record<string, unknown>;
    const b = theirs[section] as Record<string, unknown>;
    for (const key of sortedKeys({ ...a, ...b })) {
      const mine = Object.hasOwn(a, key) ? a[key] : undefined;
      const other = Object.hasOwn(b, key) ? b[key] : undefined;
      let took: LockMergeChoice["took"];
      if (mine !== undefined && other !== undefined && same(mine, other)) took = "both";
      else if (other === undefined) took = "ours";
      else if (mine === undefined) took = "theirs";
      else if (!options.exact) {
        conflicted.add(`${section}\0${key}`);
        continue;
      } else took = pickSide(section, key, mine, other, fits, options, followSide(section, key, mine, marketplaceSide));
      const entry = took === "theirs" ? other : mine;
      Object.defineProperty(merged[section], key, { value: entry, enumerable: true, writable: true, configurable: true });
      if (section === "marketplaces" && took !== "both") marketplaceSide.set(key, took);
      choices.push({ section, key, took });
    }
  }
  // Drop what the set does not want; what is missing or stale stays for the resolver to fix.
  const satisfaction = satisfies(set, merged, options.facts);
  for (const entry of satisfaction) {
    if (entry.state === "extra") delete (merged[entry.section] as Record<string, unknown>)[entry.key];
  }
  const unresolved = satisfaction
    .filter((e) => e.state === "missing" || e.state === "stale")
    .map((e) => (conflicted.has(`${e.section}\0${e.key}`) ? { ...e, why: "changed on both sides of the merge" } : e));
  return { lock: merged, choices: choices.filter((c) => Object.hasOwn(merged[c.section], c.key)), unresolved };
}

/** The side a catalog-relative plugin must follow (its marketplace's), if the marketplaces differed. */
function followSide(section: LockSection, key: string, entry: unknown, marketplaceSide: ReadonlyMap<string, "ours" | "theirs">): "ours" | "theirs" | undefined {
  if (section !== "marketplacePlugins" || (entry as { from?: { kind?: string } }).from?.kind !== "relative") return undefined;
  return marketplaceSide.get(key.slice(key.lastIndexOf("@") + 1));
}

function pickSide(section: LockSection, key: string, mine: unknown, other: unknown, fits: (s: LockSection, k: string, e: unknown) => boolean, options: LockMergeOptions, forced: "ours" | "theirs" | undefined): "ours" | "theirs" {
  if (forced) return forced;
  const candidates = (["ours", "theirs"] as const).filter((side) => fits(section, key, side === "ours" ? mine : other));
  if (candidates.length === 1) return candidates[0]!;
  const restored = (candidates.length > 0 ? candidates : (["ours", "theirs"] as const)).find((side) => options.isRestored?.(section, key, side === "ours" ? mine : other));
  return restored ?? "ours";
}
