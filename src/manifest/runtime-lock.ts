/**
 * `~/.xcsh/plugins/xcsh-plugins.lock.json`: the host's runtime state of npm plugins — which are
 * enabled, which features, and their settings. Not a resolver lockfile.
 * The host writes it too, so unknown keys are kept; `validateRuntimeLock` adds the name rules.
 */
import { Type, type Static } from "./typebox.js";
import { npmNameProblem } from "./names.js";
import { IssueCollector, isRecord, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

export const RuntimePluginStateSchema = Type.Object({
  version: Type.Optional(Type.String()),
  /** `null`: the manifest's default features; `[]`: none; a list: exactly those. */
  enabledFeatures: Type.Optional(Type.Union([Type.Null(), Type.Array(Type.String())])),
  enabled: Type.Optional(Type.Boolean()),
});
export type RuntimePluginState = Static<typeof RuntimePluginStateSchema>;

export const RuntimeLockSchema = Type.Object({
  plugins: Type.Optional(Type.Record(Type.String(), RuntimePluginStateSchema)),
  settings: Type.Optional(Type.Record(Type.String(), Type.Record(Type.String(), Type.Unknown()))),
  /**
   * Ours: per plugin, the setting keys whose stored value was set while the plugin declared them
   * `secret: true`. Such a value stays secret on output whatever a later version declares.
   */
  secretSettings: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
});
export type RuntimeLock = Static<typeof RuntimeLockSchema>;

/**
 * Whether a plugin is enabled for the user by its runtime-lock entry, as the host decides it:
 * no entry is enabled, an entry is enabled only with `enabled: true` — an entry without
 * `enabled` is disabled (packages/coding-agent/src/extensibility/plugins/loader.ts:92-97,
 * `if (runtimeState && !runtimeState.enabled) continue`).
 */
export function runtimeEnabled(entry: { enabled?: boolean | undefined } | undefined): boolean {
  return entry === undefined || entry.enabled === true;
}

/** Strict check of a runtime lock: shape, package names, typos. */
export function validateRuntimeLock(value: unknown): ValidationResult<RuntimeLock> {
  const out = new IssueCollector();
  const shape = checkSchema(RuntimeLockSchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as RuntimeLock);
  const lock = shape.value;
  if (isRecord(value)) out.warnings.push(...unknownKeyWarnings(value, ["plugins", "settings", "secretSettings"], "", { onlyTypos: true, what: "the runtime lock" }));
  for (const section of ["plugins", "settings"] as const) {
    for (const [name, state] of Object.entries(lock[section] ?? {})) {
      const problem = npmNameProblem(name);
      if (problem) out.error({ path: pointer("", section, name), code: "EPACKAGE_NAME", message: `${pointer("", section, name)}: "${name}" is not an npm package name: ${problem}`, found: JSON.stringify(name), hint: "Remove the entry; run `xcsh-tools doctor --fix`." });
      if (section === "plugins" && isRecord(state)) out.warnings.push(...unknownKeyWarnings(state, ["version", "enabledFeatures", "enabled"], pointer("", section, name), { onlyTypos: true }));
    }
  }
  return out.result(lock);
}
