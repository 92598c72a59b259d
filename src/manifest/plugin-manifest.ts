/**
 * The plugin manifest: the `xcsh` field of a plugin's `package.json` (fallback `pi`, never
 * merged) — xcsh-host-formats §5.1–§5.3.
 */
import { Type, type Static } from "@sinclair/typebox";

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
export type PluginFeature = Static<typeof PluginFeatureSchema>;

const settingBase = {
  description: Type.Optional(Type.String()),
  secret: Type.Optional(Type.Boolean()),
  env: Type.Optional(Type.String()),
};

export const PluginSettingSchemaSchema = Type.Union([
  Type.Object({ type: Type.Literal("string"), default: Type.Optional(Type.String()), ...settingBase }),
  Type.Object({
    type: Type.Literal("number"),
    default: Type.Optional(Type.Number()),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
    step: Type.Optional(Type.Number()),
    ...settingBase,
  }),
  Type.Object({ type: Type.Literal("boolean"), default: Type.Optional(Type.Boolean()), ...settingBase }),
  Type.Object({
    type: Type.Literal("enum"),
    values: Type.Array(Type.String(), { minItems: 1 }),
    default: Type.Optional(Type.String()),
    ...settingBase,
  }),
]);
export type PluginSettingSchema = Static<typeof PluginSettingSchemaSchema>;

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
});
export type PluginManifest = Static<typeof PluginManifestSchema>;

/** The manifest of a plugin `package.json`: `xcsh`, else `pi`, else none (not a plugin). */
export function pickManifest(pkg: unknown): { key: "xcsh" | "pi"; manifest: unknown } | undefined {
  if (!pkg || typeof pkg !== "object") return undefined;
  const record = pkg as Record<string, unknown>;
  if (record.xcsh !== undefined && record.xcsh !== null) return { key: "xcsh", manifest: record.xcsh };
  if (record.pi !== undefined && record.pi !== null) return { key: "pi", manifest: record.pi };
  return undefined;
}

/** Entries of one kind (`tools`, `hooks`, ...) as a list. */
export function entriesOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return typeof value === "string" ? [value] : value;
}

/**
 * Manifest entries of `kind` for a feature selection (§5.3): `null` → base + default features;
 * `[]` → base only; a list → base + exactly those features.
 */
export function selectEntries(
  manifest: PluginManifest,
  kind: "tools" | "hooks" | "extensions" | "commands",
  enabledFeatures: string[] | null,
): string[] {
  const entries = [...entriesOf(manifest[kind])];
  const features = manifest.features ?? {};
  const chosen =
    enabledFeatures === null
      ? Object.keys(features).filter((name) => features[name]?.default === true)
      : enabledFeatures;
  for (const name of chosen) entries.push(...(features[name]?.[kind] ?? []));
  return entries;
}
