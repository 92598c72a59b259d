/**
 * A plugin's optional features: which are on, and how a request
 * (`--enable`, `--disable`, `--set`) changes the stored selection. Pure.
 *
 * The stored selection has three forms and they mean different things:
 *   - `null` (or no entry) — "the defaults": base entries + every feature with `default: true`;
 *   - `[]` — none: base entries only;
 *   - `["a", "b"]` — exactly those (defaults not implied).
 * The host shows `null` as "none enabled" and `features --enable x` on a `null` plugin starts
 * from `[]`, silently dropping the defaults. Here the effective set is always resolved
 * first — `--enable` and `--disable` start from what is really on — and listings say "defaults".
 *
 * The result of a change is stored as an explicit list in manifest order (the host's loader
 * understands lists, not `"*"`), or left alone when it would not change what is on: enabling a
 * default feature of a `null` plugin keeps `null`, so the plugin keeps following its defaults.
 * Names the manifest does not declare are `EUNKNOWN_FEATURE` (exit 2) listing the available
 * ones — also when the manifest declares no features at all, which the host accepts silently.
 */
import { XcshToolsError } from "../core/errors.js";
import { defaultFeatures, type PluginManifest } from "../manifest/plugin-manifest.js";
import { closestKey } from "../manifest/unknown-keys.js";

/** How the stored selection reads. */
export type FeatureSelectionKind = "defaults" | "none" | "list";

/** One declared feature and whether it is on. */
export interface FeatureView {
  name: string;
  description?: string;
  default: boolean;
  enabled: boolean;
}

/** The features of a plugin under a stored selection. */
export interface FeatureReport {
  /** The stored selection as it is (null = defaults). */
  stored: string[] | null;
  kind: FeatureSelectionKind;
  /** The features that are on, in manifest order. */
  effective: string[];
  features: FeatureView[];
  /** Names in the stored selection that the manifest does not declare (doctor drops them). */
  unknown: string[];
}

/** Declared feature names, in manifest order. */
export function declaredFeatures(manifest: PluginManifest): string[] {
  return Object.keys(manifest.features ?? {});
}

/** The features that are on for a stored selection (`"*"` = all), in manifest order. */
export function effectiveFeatures(manifest: PluginManifest, stored: string[] | null): string[] {
  const declared = declaredFeatures(manifest);
  if (stored === null) return defaultFeatures(manifest);
  if (stored.includes("*")) return declared;
  return declared.filter((name) => stored.includes(name));
}

export function describeFeatures(manifest: PluginManifest, stored: string[] | null): FeatureReport {
  const effective = effectiveFeatures(manifest, stored);
  const declared = declaredFeatures(manifest);
  const features = manifest.features ?? {};
  return {
    stored,
    kind: stored === null ? "defaults" : stored.length === 0 ? "none" : "list",
    effective,
    features: declared.map((name) => ({
      name,
      ...(features[name]?.description !== undefined ? { description: features[name]!.description! } : {}),
      default: features[name]?.default === true,
      enabled: effective.includes(name),
    })),
    unknown: stored === null ? [] : stored.filter((name) => name !== "*" && !declared.includes(name)),
  };
}

/** A requested change; `set` replaces, then `enable` adds, then `disable` removes (`"*"` = every declared feature). */
export interface FeatureChange {
  enable?: string[] | "*";
  disable?: string[] | "*";
  set?: string[] | "*";
}

/** The outcome of a change: the selection to store, or `null`-kept / unchanged. */
export interface FeaturePlan {
  before: string[] | null;
  /** What to store. Equal to `before` (same reference) when nothing changes. */
  after: string[] | null;
  changed: boolean;
  /** Features that turn on / off. */
  added: string[];
  removed: string[];
  effectiveBefore: string[];
  effectiveAfter: string[];
}

/**
 * Parse a comma list flag value: `""` → `[]`, `"*"` → `"*"`, else trimmed names without empties.
 */
export function parseFeatureList(value: string): string[] | "*" {
  const trimmed = value.trim();
  if (trimmed === "*") return "*";
  return trimmed
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

/** `EUNKNOWN_FEATURE` naming the plugin, the unknown names and what is available. */
export function unknownFeatureError(plugin: string, unknown: string[], manifest: PluginManifest): XcshToolsError {
  const declared = declaredFeatures(manifest);
  const names = unknown.map((f) => `"${f}"`).join(", ");
  if (declared.length === 0) {
    return new XcshToolsError("EUNKNOWN_FEATURE", `Plugin ${plugin} declares no features, so ${names} cannot be selected`, {
      hint: `Features are declared by the plugin's manifest ("xcsh": {"features": {...}}); drop the feature names (install it without brackets). Nothing was changed.`,
      exitCode: 2,
    });
  }
  const guesses = unknown.map((f) => closestKey(f, declared)).filter((g): g is string => g !== undefined);
  return new XcshToolsError(
    "EUNKNOWN_FEATURE",
    `Plugin ${plugin} has no feature${unknown.length > 1 ? "s" : ""} ${names}${guesses.length ? `; did you mean ${guesses.map((g) => `"${g}"`).join(", ")}?` : ""}`,
    { hint: `Available features: ${declared.join(", ")}. Nothing was changed.`, exitCode: 2 },
  );
}

/**
 * Plan a change of `plugin`'s features from the stored selection `before`. Throws
 * `EUNKNOWN_FEATURE` for any requested name the manifest does not declare.
 */
export function planFeatureChange(plugin: string, manifest: PluginManifest, before: string[] | null, change: FeatureChange): FeaturePlan {
  const declared = declaredFeatures(manifest);
  const expand = (list: string[] | "*" | undefined): string[] => (list === "*" ? declared : (list ?? []));
  const requested = [...expand(change.set), ...expand(change.enable), ...expand(change.disable)];
  const unknown = [...new Set(requested.filter((name) => !declared.includes(name)))];
  if (unknown.length > 0) throw unknownFeatureError(plugin, unknown, manifest);

  const effectiveBefore = effectiveFeatures(manifest, before);
  let next = new Set(change.set === undefined ? effectiveBefore : expand(change.set));
  for (const name of expand(change.enable)) next.add(name);
  for (const name of expand(change.disable)) next.delete(name);
  const effectiveAfter = declared.filter((name) => next.has(name));
  next = new Set(effectiveAfter);

  const added = effectiveAfter.filter((name) => !effectiveBefore.includes(name));
  const removed = effectiveBefore.filter((name) => !effectiveAfter.includes(name));
  // `--set` states the selection explicitly, so it is stored even when the same features result
  // (e.g. `--set web` on a defaults plugin whose only default is web: it stops following
  // defaults). `--enable`/`--disable` that change nothing leave the stored form alone.
  const sameList = Array.isArray(before) && before.length === effectiveAfter.length && before.every((n, i) => n === effectiveAfter[i]);
  const changed = change.set !== undefined ? !sameList : added.length > 0 || removed.length > 0;
  return {
    before,
    after: changed ? effectiveAfter : before,
    changed,
    added,
    removed,
    effectiveBefore,
    effectiveAfter,
  };
}
