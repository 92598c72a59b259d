/**
 * `<project>/.xcsh/plugin-overrides.json`: a project's overrides of npm plugin state. The project wins over the user's runtime state.
 */
import { Type, type Static } from "./typebox.js";
import { npmNameProblem } from "./names.js";
import { IssueCollector, isRecord, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

export const PluginOverridesSchema = Type.Object({
  disabled: Type.Optional(Type.Array(Type.String())),
  features: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
  settings: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
});
export type PluginOverrides = Static<typeof PluginOverridesSchema>;

/** Strict check of an overrides file: shape, package names, typos. */
export function validatePluginOverrides(value: unknown): ValidationResult<PluginOverrides> {
  const out = new IssueCollector();
  const shape = checkSchema(PluginOverridesSchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as PluginOverrides);
  if (isRecord(value)) out.warnings.push(...unknownKeyWarnings(value, ["disabled", "features", "settings"], "", { what: "plugin-overrides.json" }));
  const names: { name: string; at: string }[] = [
    ...(shape.value.disabled ?? []).map((name, i) => ({ name, at: pointer("", "disabled", i) })),
    ...Object.keys(shape.value.features ?? {}).map((name) => ({ name, at: pointer("", "features", name) })),
    ...Object.keys(shape.value.settings ?? {}).map((name) => ({ name, at: pointer("", "settings", name) })),
  ];
  for (const { name, at } of names) {
    const problem = npmNameProblem(name);
    if (problem) out.error({ path: at, code: "EPACKAGE_NAME", message: `${at}: "${name}" is not an npm package name: ${problem}`, found: JSON.stringify(name), hint: "Use the plugin's package name as in `xcsh-tools list`." });
  }
  return out.result(shape.value);
}
