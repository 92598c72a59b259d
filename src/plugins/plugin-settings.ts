/**
 * A plugin's settings: the values a user stores for the typed schema its manifest declares
 * (`xcsh.settings`). Pure: reading and writing the files that hold the
 * values is the caller's business (runtime lock `settings[name]`, project overrides `settings[name]`).
 *
 * Model. A setting's effective value is the first of: the project override
 * (`<cwd>/.xcsh/plugin-overrides.json`), the user value (the runtime lock), the environment
 * variable the schema names in `env` (when set and non-empty), the schema's `default`; else it
 * is unset. The host only displays `env` and never reads it; here it is a real fallback,
 * below stored values so that an explicit `config set` always wins. A `secret: true` setting never
 * takes the project's value (the project file is untrusted input, and is read at all only in a
 * trusted project): it is skipped, and `checkStoredSettings` reports it (`ESECRET_IN_PROJECT`).
 *
 * Strictness where the host is lax: a command-line value must parse as its type —
 * booleans are true/false/yes/no/1/0 (anything else is an error, never a silent `false`),
 * numbers are decimal literals (no "", "0x10", "1e", "Infinity") — and `step` is enforced
 * (value = (min ?? 0) + k·step). Stored values are checked by type, not coerced: a number stored
 * as the string "10" is a problem to report, not something to guess about.
 *
 * Secrets. Values of settings with `secret: true` never leave this module in clear text through
 * `describeSetting`, problem messages or errors: they are replaced by `SECRET_MASK`. Callers print
 * only what this module returns.
 */
import { XcshToolsError } from "../core/errors.js";
import type { PluginManifest, PluginSettingSchema } from "../manifest/plugin-manifest.js";
import { describeValue } from "../manifest/result.js";
import { closestKey } from "../manifest/unknown-keys.js";

/** What is printed instead of a secret value. */
export const SECRET_MASK = "••••";

/** Where an effective setting value comes from. */
export type PluginSettingOrigin = "project" | "user" | "env" | "default" | "unset";

/** One declared setting with its effective value (already masked when secret). */
export interface EffectiveSetting {
  key: string;
  type: PluginSettingSchema["type"];
  description?: string;
  secret: boolean;
  /** The value to show: masked for secrets, `undefined` when unset. */
  value: unknown;
  origin: PluginSettingOrigin;
  /** The environment variable (origin `env`) or the file (origins `user`, `project`). */
  via?: string;
  /** The schema's `env`, shown even when it is not set. */
  env?: string;
  default?: unknown;
  /** Constraints, for the listing. */
  min?: number;
  max?: number;
  step?: number;
  values?: string[];
}

const BOOLEAN_WORDS: Record<string, boolean> = { true: true, yes: true, "1": true, false: false, no: false, "0": false };
const DECIMAL_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Mask a value for output when the schema says it is secret. */
export function maskSetting(value: unknown, schema: PluginSettingSchema | undefined): unknown {
  if (value === undefined) return undefined;
  return schema?.secret === true ? SECRET_MASK : value;
}

function shown(value: unknown, schema: PluginSettingSchema): string {
  return schema.secret === true ? SECRET_MASK : describeValue(value);
}

/** In words, what a setting accepts ("a number from 1 to 100 in steps of 1"). */
export function describeAccepted(schema: PluginSettingSchema): string {
  switch (schema.type) {
    case "string":
      return "a string";
    case "boolean":
      return "true or false (or yes/no, 1/0)";
    case "enum":
      return `one of ${schema.values.join(", ")}`;
    case "number": {
      const range =
        schema.min !== undefined && schema.max !== undefined
          ? ` from ${schema.min} to ${schema.max}`
          : schema.min !== undefined
            ? ` >= ${schema.min}`
            : schema.max !== undefined
              ? ` <= ${schema.max}`
              : "";
      const step = schema.step !== undefined ? ` in steps of ${schema.step}${offGrid(schema) ? ` from ${schema.min}` : ""}` : "";
      return `a number${range}${step}`;
    }
  }
}

/** True when the step grid starts at `min` rather than at 0 (min is not itself a multiple of step): say so in messages. */
function offGrid(schema: { min?: number; step?: number }): boolean {
  return schema.step !== undefined && schema.min !== undefined && !onStep(schema.min, schema.step, 0);
}

/** True when `value` sits on the step grid (min ?? 0) + k·step, with float tolerance. */
function onStep(value: number, step: number, min: number | undefined): boolean {
  const k = (value - (min ?? 0)) / step;
  return Math.abs(k - Math.round(k)) <= 1e-9 * Math.max(1, Math.abs(k));
}

/**
 * Why `value` (a stored or parsed value) does not fit `schema`, or `undefined` when it does.
 * Secret values never appear in the message.
 */
export function settingValueProblem(value: unknown, schema: PluginSettingSchema): string | undefined {
  const found = shown(value, schema);
  switch (schema.type) {
    case "string":
      return typeof value === "string" ? undefined : `expected a string, found ${found}`;
    case "boolean":
      return typeof value === "boolean" ? undefined : `expected true or false, found ${found}`;
    case "enum":
      if (typeof value !== "string" || !schema.values.includes(value)) {
        const guess = typeof value === "string" && schema.secret !== true ? closestKey(value, schema.values) : undefined;
        return `expected one of ${schema.values.join(", ")}, found ${found}${guess ? ` (did you mean "${guess}"?)` : ""}`;
      }
      return undefined;
    case "number": {
      if (typeof value !== "number" || !Number.isFinite(value)) return `expected a number, found ${found}`;
      if (schema.min !== undefined && value < schema.min) return `must be >= ${schema.min}, found ${found}`;
      if (schema.max !== undefined && value > schema.max) return `must be <= ${schema.max}, found ${found}`;
      if (schema.step !== undefined && !onStep(value, schema.step, schema.min)) {
        return `must be ${offGrid(schema) ? `${schema.min} plus ` : ""}a multiple of ${schema.step}, found ${found}`;
      }
      return undefined;
    }
  }
}

/** The context of a setting, for messages: which plugin and key. */
export interface SettingRef {
  plugin: string;
  key: string;
}

function valueError(ref: SettingRef, schema: PluginSettingSchema, problem: string): XcshToolsError {
  return new XcshToolsError("ESETTING_VALUE", `Setting "${ref.key}" of plugin ${ref.plugin}: ${problem}`, {
    hint: `Pass ${describeAccepted(schema)}: xcsh-tools config set ${ref.plugin} ${ref.key} <value>`,
    path: ref.key,
    exitCode: 2,
  });
}

/**
 * Parse a value typed on the command line for `schema` and check it; throws `ESETTING_VALUE`
 * (exit 2) naming the plugin, key, what was expected and what was found (masked for secrets).
 */
export function parseSettingInput(raw: string, schema: PluginSettingSchema, ref: SettingRef): string | number | boolean {
  let value: string | number | boolean;
  switch (schema.type) {
    case "boolean": {
      const word = BOOLEAN_WORDS[raw.trim().toLowerCase()];
      if (word === undefined) throw valueError(ref, schema, `expected true/false, yes/no or 1/0, found ${schema.secret ? SECRET_MASK : JSON.stringify(raw)}`);
      value = word;
      break;
    }
    case "number": {
      const text = raw.trim();
      if (!DECIMAL_RE.test(text)) throw valueError(ref, schema, `expected a number, found ${schema.secret ? SECRET_MASK : JSON.stringify(raw)}`);
      value = Number(text);
      break;
    }
    default:
      value = raw;
  }
  const problem = settingValueProblem(value, schema);
  if (problem) throw valueError(ref, schema, problem);
  return value;
}

/**
 * The schema of `key`, or `EUNKNOWN_SETTING` (exit 2) with a did-you-mean and the declared keys.
 */
export function requireSetting(manifest: PluginManifest, ref: SettingRef): PluginSettingSchema {
  const settings = manifest.settings ?? {};
  const schema = Object.hasOwn(settings, ref.key) ? settings[ref.key] : undefined;
  if (schema) return schema;
  const known = Object.keys(settings);
  if (known.length === 0) {
    throw new XcshToolsError("EUNKNOWN_SETTING", `Plugin ${ref.plugin} declares no settings, so "${ref.key}" cannot be set`, {
      hint: `Settings are declared by the plugin's manifest ("xcsh": {"settings": {...}}); see xcsh-tools config list ${ref.plugin}.`,
      path: ref.key,
      exitCode: 2,
    });
  }
  const guess = closestKey(ref.key, known);
  throw new XcshToolsError(
    "EUNKNOWN_SETTING",
    `Plugin ${ref.plugin} has no setting "${ref.key}"${guess ? `; did you mean "${guess}"?` : ""}`,
    { hint: `Declared settings: ${known.join(", ")}.`, path: ref.key, exitCode: 2 },
  );
}

/** Values stored for one plugin, by layer, with the file each came from. */
export interface StoredSettings {
  user?: Record<string, unknown>;
  userFile?: string;
  /** Keys whose user value was stored as a secret: they stay secret whatever the manifest says now. */
  secretKeys?: readonly string[];
  project?: Record<string, unknown>;
  projectFile?: string;
}

function own(record: Record<string, unknown> | undefined, key: string): boolean {
  return record !== undefined && Object.hasOwn(record, key);
}

/**
 * `schema` as output must treat `key`: secret when the manifest says so, or when the stored value
 * was stored as a secret (a version that forgets `secret: true` must not print a stored token).
 */
export function storedSchema(key: string, schema: PluginSettingSchema, stored: Pick<StoredSettings, "secretKeys">): PluginSettingSchema {
  return schema.secret !== true && stored.secretKeys?.includes(key) ? { ...schema, secret: true } : schema;
}

/** Every declared setting with its effective value and origin (secrets masked). */
export function effectiveSettings(manifest: PluginManifest, stored: StoredSettings, env: NodeJS.ProcessEnv): EffectiveSetting[] {
  return Object.entries(manifest.settings ?? {}).map(([key, declared]) => {
    const schema = storedSchema(key, declared, stored);
    const base: EffectiveSetting = {
      key,
      type: schema.type,
      secret: schema.secret === true,
      value: undefined,
      origin: "unset",
      ...(schema.description !== undefined ? { description: schema.description } : {}),
      ...(schema.env !== undefined ? { env: schema.env } : {}),
      ...(schema.default !== undefined ? { default: maskSetting(schema.default, schema) } : {}),
      ...(schema.type === "number"
        ? {
            ...(schema.min !== undefined ? { min: schema.min } : {}),
            ...(schema.max !== undefined ? { max: schema.max } : {}),
            ...(schema.step !== undefined ? { step: schema.step } : {}),
          }
        : {}),
      ...(schema.type === "enum" ? { values: [...schema.values] } : {}),
    };
    const resolved = resolveSetting(key, schema, stored, env);
    if (resolved.origin === "unset") return base;
    return {
      ...base,
      value: maskSetting(resolved.value, schema),
      origin: resolved.origin,
      ...(resolved.via !== undefined ? { via: resolved.via } : {}),
    };
  });
}

/**
 * The effective value of one setting in clear text (for the code that needs the value, never for
 * printing): project > user > env > default.
 */
export function resolveSetting(
  key: string,
  schema: PluginSettingSchema,
  stored: StoredSettings,
  env: NodeJS.ProcessEnv,
): { value: unknown; origin: PluginSettingOrigin; via?: string } {
  // A secret never comes from the project's file: it is the project's, and a project that chose a
  // plugin's key or token could point the plugin at its own service (checkStoredSettings reports it).
  if (own(stored.project, key) && schema.secret !== true) return { value: stored.project![key], origin: "project", ...(stored.projectFile ? { via: stored.projectFile } : {}) };
  if (own(stored.user, key)) return { value: stored.user![key], origin: "user", ...(stored.userFile ? { via: stored.userFile } : {}) };
  if (schema.env !== undefined) {
    const raw = env[schema.env];
    if (raw !== undefined && raw !== "") {
      // An env value is text: give it the setting's type when it parses, else keep the text
      // (validation reports it rather than the fallback silently vanishing).
      let value: unknown = raw;
      try {
        value = parseSettingInput(raw, schema, { plugin: "", key });
      } catch {
        value = raw;
      }
      return { value, origin: "env", via: schema.env };
    }
  }
  if (schema.default !== undefined) return { value: schema.default, origin: "default" };
  return { value: undefined, origin: "unset" };
}

/** One problem of a stored (or env-provided) value. */
export interface SettingProblem {
  plugin: string;
  key: string;
  /** Where the value is: a file path, or `env:NAME`. */
  source: string;
  severity: "error" | "warning";
  code: "ESETTING_VALUE" | "EUNKNOWN_SETTING" | "ESECRET_IN_PROJECT";
  message: string;
  hint: string;
}

/**
 * Check every stored value of one plugin against its schema. Wrong values are errors; keys the
 * manifest does not declare are warnings (a plugin update may have dropped a setting) with a
 * did-you-mean; an `env` fallback that does not parse is an error too, since it would be used.
 */
export function checkStoredSettings(plugin: string, manifest: PluginManifest, stored: StoredSettings, env: NodeJS.ProcessEnv): SettingProblem[] {
  const problems: SettingProblem[] = [];
  const settings = manifest.settings ?? {};
  const known = Object.keys(settings);
  const layers: [Record<string, unknown> | undefined, string][] = [
    [stored.user, stored.userFile ?? "the runtime lock"],
    [stored.project, stored.projectFile ?? "the project overrides"],
  ];
  for (const [values, source] of layers) {
    for (const [key, value] of Object.entries(values ?? {})) {
      const schema = Object.hasOwn(settings, key) ? storedSchema(key, settings[key]!, stored) : undefined;
      if (schema?.secret === true && values === stored.project) {
        problems.push(secretInProject(plugin, key, source));
        continue;
      }
      if (!schema) {
        const guess = closestKey(key, known);
        problems.push({
          plugin,
          key,
          source,
          severity: "warning",
          code: "EUNKNOWN_SETTING",
          message: `${source}: plugin ${plugin} declares no setting "${key}"${guess ? `; did you mean "${guess}"?` : ""}`,
          hint: guess
            ? `xcsh-tools config delete ${plugin} ${key} && xcsh-tools config set ${plugin} ${guess} <value>`
            : `xcsh-tools config delete ${plugin} ${key}${known.length ? ` (declared: ${known.join(", ")})` : ""}`,
        });
        continue;
      }
      const problem = settingValueProblem(value, schema);
      if (problem) {
        problems.push({
          plugin,
          key,
          source,
          severity: "error",
          code: "ESETTING_VALUE",
          message: `${source}: setting "${key}" of plugin ${plugin}: ${problem}`,
          hint: `xcsh-tools config set ${plugin} ${key} <${describeAccepted(schema)}>`,
        });
      }
    }
  }
  for (const [key, declared] of Object.entries(settings)) {
    const schema = storedSchema(key, declared, stored);
    if (schema.env === undefined || own(stored.user, key) || (own(stored.project, key) && schema.secret !== true)) continue;
    const raw = env[schema.env];
    if (raw === undefined || raw === "") continue;
    try {
      parseSettingInput(raw, schema, { plugin, key });
    } catch (error) {
      problems.push({
        plugin,
        key,
        source: `env:${schema.env}`,
        severity: "error",
        code: "ESETTING_VALUE",
        message: `the environment variable ${schema.env} (fallback of setting "${key}" of plugin ${plugin}): ${(error as XcshToolsError).message.replace(/^Setting "[^"]*" of plugin [^:]*: /, "")}`,
        hint: `Set ${schema.env} to ${describeAccepted(schema)}, or store a value: xcsh-tools config set ${plugin} ${key} <value>`,
      });
    }
  }
  return problems;
}

/** `ESECRET_IN_PROJECT`: a secret setting's value in the project's overrides file, which is ignored. */
export function secretInProject(plugin: string, key: string, file: string): SettingProblem {
  return {
    plugin,
    key,
    source: file,
    severity: "warning",
    code: "ESECRET_IN_PROJECT",
    message: `${file}: setting "${key}" of plugin ${plugin} is a secret and is ignored there: secrets never come from a project's file`,
    hint: `Remove /settings/${plugin}/${key} from ${file}; store the value for yourself: xcsh-tools config set ${plugin} ${key} <value>`,
  };
}
