/**
 * The plugin manifest: the `xcsh` field of a plugin's `package.json` (fallback `pi`, never
 * merged), as the host reads it (docs/file-formats.md).
 *
 * The schemas are what a reader needs (discovery reads manifests of installed plugins with them);
 * `validatePluginManifest` and `validatePluginPackageJson` add what an author must get right
 * before publishing: setting schemas that agree with themselves, feature names that survive the
 * `pkg[a,b]` install syntax, entries that are relative paths inside the package, typo warnings.
 * Whether entries exist on disk (and stay inside through symlinks) is checked by `src/validate`.
 */
import path from "node:path";
import { relativePathClimbsOut } from "../core/contain.js";
import { Type, type Static, type TSchema } from "./typebox.js";
import { semver } from "../core/npm-spec.js";
import { npmNameProblem } from "./names.js";
import { IssueCollector, describeValue, isRecord, pointer, type ValidationIssue, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { closestKey, unknownKeyWarnings } from "./unknown-keys.js";

const EntryList = Type.Array(Type.String({ minLength: 1 }));
const EntryOrList = Type.Union([Type.String({ minLength: 1 }), EntryList]);

export const PluginFeatureSchema = Type.Object({
  description: Type.Optional(Type.String()),
  default: Type.Optional(Type.Boolean()),
  tools: Type.Optional(EntryList),
  hooks: Type.Optional(EntryList),
  extensions: Type.Optional(EntryList),
  commands: Type.Optional(EntryList),
});

const settingBase = {
  description: Type.Optional(Type.String()),
  secret: Type.Optional(Type.Boolean()),
  env: Type.Optional(Type.String()),
};

export const StringSettingSchema = Type.Object({ type: Type.Literal("string"), default: Type.Optional(Type.String()), ...settingBase });
export const NumberSettingSchema = Type.Object({
  type: Type.Literal("number"),
  default: Type.Optional(Type.Number()),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
  step: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  ...settingBase,
});
export const BooleanSettingSchema = Type.Object({ type: Type.Literal("boolean"), default: Type.Optional(Type.Boolean()), ...settingBase });
export const EnumSettingSchema = Type.Object({
  type: Type.Literal("enum"),
  values: Type.Array(Type.String(), { minItems: 1 }),
  default: Type.Optional(Type.String()),
  ...settingBase,
});

export const PluginSettingSchemaSchema = Type.Union([StringSettingSchema, NumberSettingSchema, BooleanSettingSchema, EnumSettingSchema]);
export type PluginSettingSchema = Static<typeof PluginSettingSchemaSchema>;

/** The four setting types and their schemas, for checks that dispatch on `type`. */
export const SETTING_TYPES = {
  string: StringSettingSchema,
  number: NumberSettingSchema,
  boolean: BooleanSettingSchema,
  enum: EnumSettingSchema,
} as const;

export const PluginManifestSchema = Type.Object({
  name: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  tools: Type.Optional(EntryOrList),
  hooks: Type.Optional(EntryOrList),
  extensions: Type.Optional(EntryList),
  commands: Type.Optional(EntryList),
  features: Type.Optional(Type.Record(Type.String(), PluginFeatureSchema)),
  settings: Type.Optional(Type.Record(Type.String(), PluginSettingSchemaSchema)),
  /**
   * The definitions of every tool the plugin ships (name, label, description, parameters, other
   * data fields) do not depend on cwd, environment or settings, and the factory does no work: a
   * host that asks for lazy tools gets them from the boot index without importing the module
   * until first use (docs/lazy-tools.md). `validate` checks the claim.
   */
  staticTools: Type.Optional(Type.Boolean()),
});
export type PluginManifest = Static<typeof PluginManifestSchema>;

/** A plugin's `package.json`, as far as we read it; every other key is npm's or other tools'. */
export const PluginPackageJsonSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  version: Type.String({ minLength: 1 }),
  xcsh: Type.Optional(Type.Unknown()),
  pi: Type.Optional(Type.Unknown()),
});
export type PluginPackageJson = Static<typeof PluginPackageJsonSchema>;

/** The manifest of a plugin `package.json`: `xcsh`, else `pi`, else none (not a plugin). */
export function pickManifest(pkg: unknown): { key: "xcsh" | "pi"; manifest: unknown } | undefined {
  if (!isRecord(pkg)) return undefined;
  if (pkg.xcsh !== undefined && pkg.xcsh !== null) return { key: "xcsh", manifest: pkg.xcsh };
  if (pkg.pi !== undefined && pkg.pi !== null) return { key: "pi", manifest: pkg.pi };
  return undefined;
}

/**
 * The kinds pi (badlogic/pi-mono, core/package-manager.ts `PiManifest`) reads from a `pi`
 * manifest besides `extensions`, which the xcsh host does not read from any manifest (its plugin
 * loader takes tools, hooks, extensions and commands only); and pi's package-gallery fields.
 */
export const PI_ONLY_KINDS = ["skills", "prompts", "themes"] as const;
export type PiOnlyKind = (typeof PI_ONLY_KINDS)[number];
const PI_GALLERY_KEYS = ["video", "image"];

/**
 * What a package that pi would load but the xcsh host will not means, for a package's author
 * (`hint`) and for whoever installed it (`forUser`): pi's own keys are right for pi, so the
 * advice to remove them is the author's alone.
 */
function piOnlyWarning(key: PiOnlyKind, at: string): ValidationIssue {
  const words = { skills: "skills", prompts: "prompt templates", themes: "themes" }[key];
  return {
    path: at,
    code: "WPI_ONLY",
    message: `${at}: the package brings pi ${words}, which only pi loads: the xcsh host does not read "${key}" from a manifest, so they are not available in xcsh`,
    hint: `Keep "${key}" for pi users. If xcsh users should get them too, ship them in a form xcsh loads (skills and commands of a marketplace plugin); remove the key only if the package is not meant for pi.`,
    forUser: `Nothing to do: the package's ${words} work in pi only; what xcsh loads from it is listed by \`xcsh-tools show\`.`,
  };
}

/**
 * The manifest as the xcsh host reads it (extensibility/plugins/loader.ts at 3226372), rewritten
 * into our schema's terms, with a `WHOST_*` warning for each shape the host takes that our schema
 * does not. One function so that install, validate, doctor, `show` and the loader agree:
 * - a feature `default` that is not a boolean counts as JavaScript counts it (`if (!feat.default)`,
 *   :163): `"yes"`, and `"no"` too, turn the feature on;
 * - a feature's `tools`/`hooks`/`extensions`/`commands` written as a string: the host iterates
 *   the string letter by letter (`for (const entry of feat[key])`, :152), so it never loads the
 *   file named; nothing is taken from it here either;
 * - a setting `type` the host does not know: its config command stores any value as text and
 *   checks none (manager.ts `parseSettingValue`/`validateSetting` :684-731): a string setting;
 * - an entry with a leading `/`: the host joins it under the package (`path.join(plugin.path,
 *   entry)`, :137), so `/tools/x.ts` is `./tools/x.ts`; one that then climbs out (`/../x`) becomes
 *   the `../x` it is, which the entry checks refuse (EENTRY_ESCAPE);
 * - a top-level `extensions`/`commands` string: the host wraps it in a list (:135), as for
 *   `tools`/`hooks`, so it is one entry, silently.
 * Anything else off the schema is left as is for the schema check to report. `raw` is not changed.
 */
export function hostManifest(raw: unknown, base = "/xcsh"): { value: unknown; warnings: ValidationIssue[] } {
  const warnings: ValidationIssue[] = [];
  if (!isRecord(raw)) return { value: raw, warnings };
  const value: Record<string, unknown> = { ...raw };
  for (const kind of ENTRY_KINDS) value[kind] = hostEntries(raw[kind], pointer(base, kind), warnings, kind === "extensions" || kind === "commands");
  if (isRecord(raw.features)) {
    const features: Record<string, unknown> = {};
    for (const [name, def] of Object.entries(raw.features)) features[name] = hostFeature(def, name, pointer(base, "features", name), warnings);
    value.features = features;
  }
  if (isRecord(raw.settings)) {
    const settings: Record<string, unknown> = {};
    for (const [key, setting] of Object.entries(raw.settings)) settings[key] = hostSetting(setting, key, pointer(base, "settings", key), warnings);
    value.settings = settings;
  }
  for (const key of Object.keys(value)) if (value[key] === undefined && !Object.hasOwn(raw, key)) delete value[key];
  return { value, warnings };
}

function hostFeature(def: unknown, name: string, at: string, warnings: ValidationIssue[]): unknown {
  if (!isRecord(def)) return def;
  const out: Record<string, unknown> = { ...def };
  if (def.default !== undefined && typeof def.default !== "boolean") {
    const on = Boolean(def.default);
    warnings.push({
      path: pointer(at, "default"),
      code: "WHOST_FEATURE_DEFAULT",
      message: `${pointer(at, "default")}: feature "${name}" has default ${describeValue(def.default)}, not true or false: the host counts any value JavaScript takes as true ("no" and "false" included) as on, so the feature is ${on ? "on" : "off"} by default, here too`,
      hint: `Write "default": ${on}.`,
      forUser: `The feature is ${on ? "on" : "off"} by default; \`xcsh-tools features\` switches it.`,
    });
    out.default = on;
  }
  for (const kind of ENTRY_KINDS) {
    const entries = def[kind];
    if (typeof entries === "string") {
      warnings.push({
        path: pointer(at, kind),
        code: "WHOST_FEATURE_ENTRY_STRING",
        message: `${pointer(at, kind)}: feature "${name}" names its ${kind} as a string, "${entries}": the host reads a string there letter by letter and never loads that file (the letters "." and "/" make it import the package folder instead), so nothing of it is loaded here either`,
        expected: "a list of paths",
        found: JSON.stringify(entries),
        hint: `Write a list: "${kind}": [${JSON.stringify(entries)}].`,
        forUser: `The feature's ${kind} do not load in xcsh until the package's author writes them as a list; the rest of the package loads.`,
      });
      delete out[kind];
    } else out[kind] = hostEntries(entries, pointer(at, kind), warnings, false);
  }
  return out;
}

function hostSetting(setting: unknown, key: string, at: string, warnings: ValidationIssue[]): unknown {
  if (!isRecord(setting) || typeof setting.type !== "string" || setting.type in SETTING_TYPES) return setting;
  const guess = closestKey(setting.type, Object.keys(SETTING_TYPES));
  warnings.push({
    path: pointer(at, "type"),
    code: "WHOST_SETTING_TYPE",
    message: `${pointer(at, "type")}: setting "${key}" has type "${setting.type}", which the host does not know: it keeps any value given as text and checks none, so it is a string setting here too${guess ? ` (did you mean "${guess}"?)` : ""}`,
    expected: '"string", "number", "boolean" or "enum"',
    found: JSON.stringify(setting.type),
    hint: guess ? `Write "type": "${guess}".` : 'Use one of "string", "number", "boolean", "enum" (a whole number is a "number" with "step": 1).',
    forUser: `Any value is accepted for "${key}" and kept as text; the package's tools read it as such.`,
  });
  const { description, secret, env, default: def } = setting;
  return {
    type: "string",
    ...(description !== undefined ? { description } : {}),
    ...(secret !== undefined ? { secret } : {}),
    ...(env !== undefined ? { env } : {}),
    ...(["string", "number", "boolean"].includes(typeof def) ? { default: String(def) } : {}),
  };
}

/** A list (or, where the host wraps it, a string) of entries, leading-`/` entries joined under the package as the host joins them. */
function hostEntries(entries: unknown, at: string, warnings: ValidationIssue[], wrapString: boolean): unknown {
  if (typeof entries === "string") {
    const one = hostEntry(entries, at, warnings);
    return wrapString ? [one] : one;
  }
  return Array.isArray(entries) ? entries.map((entry, i) => (typeof entry === "string" ? hostEntry(entry, pointer(at, i), warnings) : entry)) : entries;
}

function hostEntry(entry: string, at: string, warnings: ValidationIssue[]): string {
  if (!entry.startsWith("/")) return entry;
  const joined = path.posix.normalize(entry.replace(/^\/+/, "") || ".");
  if (relativePathClimbsOut(joined)) return joined; // refused by the entry checks, as the path it really is
  const relative = joined === "." ? "./" : `./${joined}`;
  warnings.push({
    path: at,
    code: "WHOST_ENTRY_ROOTED",
    message: `${at}: "${entry}" starts with "/": the host joins it under the package, so it is "${relative}" (an absolute path elsewhere)`,
    found: JSON.stringify(entry),
    hint: `Write "${relative}".`,
    forUser: `It loads as "${relative}" of the package; nothing to do.`,
  });
  return relative;
}

/**
 * A manifest read as the host reads it, then checked against our schema: what every reader of an
 * installed plugin (the loader, `list`, `show`, the inventory) uses, so none refuses a manifest
 * the host loads. Warnings are for `validate` and `doctor`, which report them.
 */
export function readHostManifest(raw: unknown, base = ""): ValidationResult<PluginManifest> {
  const host = hostManifest(raw, base);
  const checked = checkSchema(PluginManifestSchema, host.value, base);
  return checked.ok ? { ...checked, warnings: [...host.warnings, ...checked.warnings] } : checked;
}

/** Why a package.json without an `xcsh` or `pi` manifest is not a plugin the host loads, naming oh-my-pi's `omp` when it has one. */
export function notAPluginReason(pkg: unknown): string {
  return isRecord(pkg) && pkg.omp !== undefined && pkg.omp !== null
    ? 'an "omp" manifest (oh-my-pi\'s) and no "xcsh" or "pi" one: the host\'s plugin loader reads only "xcsh", else "pi"'
    : 'no "xcsh" or "pi" manifest: not an xcsh plugin';
}

/** Entries of one kind (`tools`, `hooks`, ...) as a list. */
export function entriesOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === "string" ? [value] : value;
}

/**
 * Manifest entries of `kind` for a feature selection: `null` → base + default features;
 * `[]` → base only; a list → base + exactly those features.
 */
export function selectEntries(
  manifest: PluginManifest,
  kind: "tools" | "hooks" | "extensions" | "commands",
  enabledFeatures: string[] | null,
): string[] {
  const entries = [...entriesOf(manifest[kind])];
  const features = manifest.features ?? {};
  for (const name of enabledFeatures ?? defaultFeatures(manifest)) entries.push(...(features[name]?.[kind] ?? []));
  return entries;
}

/** The features a manifest turns on by default, in manifest order. */
export function defaultFeatures(manifest: PluginManifest): string[] {
  const features = manifest.features ?? {};
  return Object.keys(features).filter((name) => features[name]?.default === true);
}

/** The entry kinds of a manifest. */
export const ENTRY_KINDS = ["tools", "hooks", "extensions", "commands"] as const;
export type EntryKind = (typeof ENTRY_KINDS)[number];

/** One path a manifest declares, with its JSON pointer. */
export interface ManifestEntry {
  kind: EntryKind;
  entry: string;
  pointer: string;
  /** The feature that declares it, if any. */
  feature?: string;
}

/** Every path the manifest declares (base and all features), with pointers under `base`. */
export function listManifestEntries(manifest: PluginManifest, base: string): ManifestEntry[] {
  const out: ManifestEntry[] = [];
  for (const kind of ENTRY_KINDS) {
    const value = manifest[kind];
    if (typeof value === "string") out.push({ kind, entry: value, pointer: pointer(base, kind) });
    else value?.forEach((entry, i) => out.push({ kind, entry, pointer: pointer(base, kind, i) }));
  }
  for (const [feature, def] of Object.entries(manifest.features ?? {})) {
    for (const kind of ENTRY_KINDS) {
      def[kind]?.forEach((entry, i) => out.push({ kind, entry, feature, pointer: pointer(base, "features", feature, kind, i) }));
    }
  }
  return out;
}

const MANIFEST_KEYS = Object.keys(PluginManifestSchema.properties);
const FEATURE_KEYS = Object.keys(PluginFeatureSchema.properties);

/** Feature names appear in install specs (`pkg[a,b]`): no brackets, commas, spaces or `*`. */
export const FEATURE_NAME_RE = /^[a-zA-Z0-9_][a-zA-Z0-9._-]*$/;
/** Setting keys are used as `config set <plugin> <key>` arguments and object keys. */
export const SETTING_KEY_RE = /^[a-zA-Z_][a-zA-Z0-9_.-]*$/;
const ENV_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Pure check of a path a manifest names: relative and inside `within` (the package, the repository...). */
export function entryPathProblem(entry: string, within = "package"): { code: string; reason: string } | undefined {
  if (path.isAbsolute(entry) || path.win32.isAbsolute(entry)) return { code: "EENTRY_ESCAPE", reason: "it is an absolute path" };
  if (relativePathClimbsOut(entry)) return { code: "EENTRY_ESCAPE", reason: `it leaves the ${within} with ../` };
  return undefined;
}

function checkSetting(key: string, value: unknown, at: string, out: IssueCollector): void {
  if (!SETTING_KEY_RE.test(key)) {
    out.error({
      path: at,
      code: "ESETTING_KEY",
      message: `${at}: setting key "${key}" is not a valid key`,
      expected: `a key matching ${SETTING_KEY_RE}`,
      found: JSON.stringify(key),
      hint: "Use letters, digits, '_', '.' and '-', starting with a letter or '_'.",
    });
  }
  if (!isRecord(value)) {
    out.error({ path: at, code: "ETYPE", message: `${at}: expected a setting object, found ${describeValue(value)}`, expected: "an object", found: describeValue(value), hint: 'Write e.g. {"type": "string", "description": "…"}.' });
    return;
  }
  const type = value.type;
  if (typeof type !== "string" || !(type in SETTING_TYPES)) {
    out.error({
      path: pointer(at, "type"),
      code: "ESETTING_TYPE",
      message: `${pointer(at, "type")}: setting type must be "string", "number", "boolean" or "enum", found ${describeValue(type)}`,
      expected: '"string", "number", "boolean" or "enum"',
      found: describeValue(type),
      hint: 'Set "type" to one of "string", "number", "boolean", "enum".',
    });
    return;
  }
  const kind = type as keyof typeof SETTING_TYPES;
  const shape = checkSchema(SETTING_TYPES[kind], value, at);
  out.absorb(shape);
  out.warnings.push(...unknownKeyWarnings(value, Object.keys(SETTING_TYPES[kind].properties), at, { what: `a ${kind} setting` }));
  if (!shape.ok) return;
  if (typeof value.env === "string" && !ENV_NAME_RE.test(value.env)) {
    out.warn({ path: pointer(at, "env"), code: "ESETTING_ENV", message: `${pointer(at, "env")}: "${value.env}" is not an environment variable name`, found: JSON.stringify(value.env), hint: "Use letters, digits and '_' (e.g. ACME_API_KEY)." });
  }
  if (kind === "number") {
    const { min, max, default: def } = value as { min?: number; max?: number; default?: number };
    if (min !== undefined && max !== undefined && min > max) {
      out.error({ path: pointer(at, "min"), code: "ESETTING_RANGE", message: `${at}: min (${min}) is greater than max (${max})`, expected: "min <= max", found: `min ${min}, max ${max}`, hint: "Swap min and max." });
    }
    if (def !== undefined && ((min !== undefined && def < min) || (max !== undefined && def > max))) {
      out.error({ path: pointer(at, "default"), code: "ESETTING_DEFAULT", message: `${pointer(at, "default")}: default ${def} is outside [${min ?? "-∞"}, ${max ?? "∞"}]`, expected: "a default within min and max", found: String(def), hint: "Change the default or the bounds." });
    }
  }
  if (kind === "enum") {
    const { values, default: def } = value as { values: string[]; default?: string };
    const dup = values.find((v, i) => values.indexOf(v) !== i);
    if (dup !== undefined) {
      out.error({ path: pointer(at, "values"), code: "ESETTING_VALUES", message: `${pointer(at, "values")}: "${dup}" is listed twice`, found: JSON.stringify(dup), hint: "List each value once." });
    }
    if (def !== undefined && !values.includes(def)) {
      out.error({ path: pointer(at, "default"), code: "ESETTING_DEFAULT", message: `${pointer(at, "default")}: default "${def}" is not one of the values (${values.join(", ")})`, expected: `one of ${values.join(", ")}`, found: JSON.stringify(def), hint: `Use one of: ${values.join(", ")}.` });
    }
  }
  if (value.secret === true && value.default !== undefined) {
    out.warn({ path: pointer(at, "default"), code: "ESETTING_SECRET_DEFAULT", message: `${pointer(at, "default")}: a secret setting has a default, which is published with the package`, hint: "Remove the default of secret settings." });
  }
}

/**
 * Validate a manifest object (the value of `xcsh` or `pi`); `base` is its pointer in the
 * package.json (`/xcsh`).
 */
/** The manifest's schema without the parts checked one by one below; built once, on first use (a state change reads every plugin's manifest, twice more in the index refresh). */
let manifestWithoutEntries: TSchema | undefined;

export function validatePluginManifest(raw: unknown, base = "/xcsh"): ValidationResult<PluginManifest> {
  const out = new IssueCollector();
  if (!isRecord(raw)) {
    const manifest = raw;
    out.error({ path: base, code: "ETYPE", message: `${base}: the plugin manifest must be an object, found ${describeValue(manifest)}`, expected: "an object", found: describeValue(manifest), hint: 'Write e.g. "xcsh": {"tools": "./tools"}.' });
    return out.result(manifest as PluginManifest);
  }
  const isPi = base === "/pi";
  out.warnings.push(...unknownKeyWarnings(raw, isPi ? [...MANIFEST_KEYS, ...PI_ONLY_KINDS, ...PI_GALLERY_KEYS] : MANIFEST_KEYS, base, { what: "the plugin manifest" }));
  if (isPi) for (const key of PI_ONLY_KINDS) if (raw[key] !== undefined) out.warnings.push(piOnlyWarning(key, pointer(base, key)));
  const host = hostManifest(raw, base);
  out.warnings.push(...host.warnings);
  const manifest = host.value as Record<string, unknown>;
  const { settings, features, ...rest } = manifest;
  for (const key of isPi ? [...PI_ONLY_KINDS, ...PI_GALLERY_KEYS] : []) delete rest[key];
  out.absorb(checkSchema((manifestWithoutEntries ??= Type.Omit(PluginManifestSchema, ["settings", "features"])), rest, base));

  if (features !== undefined) {
    if (!isRecord(features)) {
      out.error({ path: pointer(base, "features"), code: "ETYPE", message: `${pointer(base, "features")}: expected an object of features, found ${describeValue(features)}`, expected: "an object", found: describeValue(features), hint: 'Write e.g. "features": {"web": {"default": true, "tools": ["./tools/web.ts"]}}.' });
    } else {
      for (const [name, def] of Object.entries(features)) {
        const at = pointer(base, "features", name);
        if (!FEATURE_NAME_RE.test(name)) {
          out.error({ path: at, code: "EFEATURE_NAME", message: `${at}: feature name "${name}" cannot be used in an install spec (pkg[${name}])`, expected: `a name matching ${FEATURE_NAME_RE}`, found: JSON.stringify(name), hint: "Use letters, digits, '_', '.' and '-' (no spaces, commas, brackets or '*')." });
        }
        out.absorb(checkSchema(PluginFeatureSchema, def, at));
        if (isRecord(def)) out.warnings.push(...unknownKeyWarnings(def, FEATURE_KEYS, at, { what: `feature "${name}"` }));
      }
    }
  }
  if (settings !== undefined) {
    if (!isRecord(settings)) {
      out.error({ path: pointer(base, "settings"), code: "ETYPE", message: `${pointer(base, "settings")}: expected an object of settings, found ${describeValue(settings)}`, expected: "an object", found: describeValue(settings), hint: 'Write e.g. "settings": {"apiKey": {"type": "string", "secret": true}}.' });
    } else {
      for (const [key, value] of Object.entries(settings)) checkSetting(key, value, pointer(base, "settings", key), out);
    }
  }
  if (out.issues.length === 0) {
    for (const item of listManifestEntries(manifest as PluginManifest, base)) {
      const problem = entryPathProblem(item.entry);
      if (problem) {
        out.error({ path: item.pointer, code: problem.code, message: `${item.pointer}: "${item.entry}" must stay inside the package, but ${problem.reason}`, expected: 'a relative path inside the package, e.g. "./tools/x.ts"', found: JSON.stringify(item.entry), hint: "Move the file into the package and point at it with a ./ path." });
      }
    }
    const m = manifest as PluginManifest;
    const hasAny = ENTRY_KINDS.some((k) => entriesOf(m[k]).length > 0) || Object.values(m.features ?? {}).some((f) => ENTRY_KINDS.some((k) => (f[k]?.length ?? 0) > 0));
    if (!hasAny) {
      out.warn({ path: base, code: "EEMPTY_MANIFEST", message: `${base}: the manifest declares no tools, hooks, extensions or commands`, hint: 'Add e.g. "tools": "./tools".' });
    }
  }
  return out.result(manifest as PluginManifest);
}

/** A validated plugin package.json: the package and its chosen manifest. */
export interface PluginPackage {
  pkg: PluginPackageJson & Record<string, unknown>;
  key: "xcsh" | "pi";
  manifest: PluginManifest;
}

/** Validate a plugin's whole `package.json`: npm name and version, then its manifest. */
export function validatePluginPackageJson(pkg: unknown): ValidationResult<PluginPackage> {
  const out = new IssueCollector();
  if (!isRecord(pkg)) {
    out.error({ path: "", code: "ETYPE", message: `(root): package.json must be an object, found ${describeValue(pkg)}`, expected: "an object", found: describeValue(pkg), hint: "package.json must be a JSON object." });
    return out.result(pkg as unknown as PluginPackage);
  }
  out.absorb(checkSchema(PluginPackageJsonSchema, pkg));
  if (typeof pkg.name === "string" && pkg.name.length > 0) {
    const problem = npmNameProblem(pkg.name);
    if (problem) out.error({ path: "/name", code: "EPACKAGE_NAME", message: `/name: "${pkg.name}" is not a valid npm package name: ${problem}`, expected: "an npm package name (lowercase, URL-safe, optionally @scope/name)", found: JSON.stringify(pkg.name), hint: "Rename the package, e.g. @you/xcsh-my-tool." });
  }
  if (typeof pkg.version === "string" && pkg.version.length > 0 && !semver.valid(pkg.version)) {
    out.error({ path: "/version", code: "EVERSION", message: `/version: "${pkg.version}" is not a semver version`, expected: "a version like 1.0.0", found: JSON.stringify(pkg.version), hint: 'Use "MAJOR.MINOR.PATCH", e.g. "0.1.0".' });
  }
  const picked = pickManifest(pkg);
  if (!picked && pkg.omp !== undefined && pkg.omp !== null) {
    out.error({
      path: "/omp",
      code: "EOMP_MANIFEST",
      message: '/omp: package.json carries an "omp" manifest (oh-my-pi\'s), and no "xcsh" or "pi" one: the xcsh host\'s plugin loader reads only "xcsh", else "pi", so it would load nothing of this package',
      expected: 'an "xcsh" (or "pi") manifest',
      found: '"omp"',
      hint: 'The "xcsh" manifest has the same fields as "omp": its author can publish the package with "xcsh": <the same object> (or rename the key). Until then, the host loads the package\'s extensions only when started with the folder as an extension (xcsh --extension <folder>, or "extensions" in its settings), whose loader reads "omp" too.',
    });
    return out.result(pkg as unknown as PluginPackage);
  }
  if (!picked) {
    const typo = Object.keys(pkg).find((k) => k !== "xcsh" && ["xcsh", "xsch", "xcs", "xchs", "pi"].includes(k.toLowerCase()));
    out.error({
      path: "/xcsh",
      code: "ENOT_A_PLUGIN",
      message: `/xcsh: package.json has no "xcsh" (or "pi") manifest, so the host does not see a plugin${typo ? ` (found "${typo}": check the spelling)` : ""}`,
      expected: 'an "xcsh" object',
      found: "nothing",
      hint: 'Add "xcsh": {"tools": "./tools"} to package.json.',
    });
    return out.result(pkg as unknown as PluginPackage);
  }
  if (picked.key === "xcsh" && pkg.pi !== undefined && pkg.pi !== null) {
    out.warn({ path: "/pi", code: "EMANIFEST_SHADOWED", message: '/pi: both "xcsh" and "pi" are present; the host reads only "xcsh" (they are never merged)', hint: 'Move what you need from "pi" into "xcsh" and delete "pi".' });
  }
  const manifest = validatePluginManifest(picked.manifest, `/${picked.key}`);
  out.absorb(manifest);
  // The manifest as the host reads it (hostManifest): what an install records and loads.
  return out.result({ pkg: pkg as PluginPackage["pkg"], key: picked.key, manifest: (manifest.ok ? manifest.value : picked.manifest) as PluginManifest });
}
