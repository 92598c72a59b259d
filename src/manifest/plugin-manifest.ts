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
import { Type, type Static } from "./typebox.js";
import { semver } from "../core/npm-spec.js";
import { npmNameProblem } from "./names.js";
import { IssueCollector, describeValue, isRecord, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

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
export function validatePluginManifest(manifest: unknown, base = "/xcsh"): ValidationResult<PluginManifest> {
  const out = new IssueCollector();
  if (!isRecord(manifest)) {
    out.error({ path: base, code: "ETYPE", message: `${base}: the plugin manifest must be an object, found ${describeValue(manifest)}`, expected: "an object", found: describeValue(manifest), hint: 'Write e.g. "xcsh": {"tools": "./tools"}.' });
    return out.result(manifest as PluginManifest);
  }
  out.warnings.push(...unknownKeyWarnings(manifest, MANIFEST_KEYS, base, { what: "the plugin manifest" }));
  const { settings, features, ...rest } = manifest;
  out.absorb(checkSchema(Type.Omit(PluginManifestSchema, ["settings", "features"]), rest, base));

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
  return out.result({ pkg: pkg as PluginPackage["pkg"], key: picked.key, manifest: picked.manifest as PluginManifest });
}
