/**
 * Checking one settings layer (a file, the environment, the command line) against the settings
 * schema. A key we do not know is a warning with a did-you-mean (a newer xcsh-tools may know it);
 * a known key with a wrong value is `ECONFIG` naming the file (or variable, or flag) and the field.
 */
import { closestKey } from "../manifest/unknown-keys.js";
import { describeValue, type ValidationIssue, type ValidationResult } from "../manifest/result.js";
import type { XcshToolsSettingsFile } from "../manifest/xcsh-tools-settings.js";
import { XcshToolsError, isXcshToolsError } from "./errors.js";
import { SETTING_KEYS } from "./settings-keys.js";

/** A non-fatal finding, e.g. an unknown key. */
export interface ConfigWarning {
  code: string;
  /** The file, `env` or `flags`. */
  source: string;
  /** Dotted field. */
  path: string;
  message: string;
}

/** How a layer names itself in messages and how a field is spelled there. */
export interface LayerSource {
  /** "the file /p/.xcsh-toolsrc", "the environment", "the command line". */
  label: string;
  /** For warnings: the file path, `env` or `flags`. */
  id: string;
  file?: string;
  /** How to name a dotted field in this layer ("timeouts.gitMs", "XCSH_TOOLS_GIT_TIMEOUT_MS"). */
  field(dotted: string): string;
}

/** The layer of a settings file, whose fields are spelled as in the file. */
export function fileSource(file: string): LayerSource {
  return { label: file, id: file, file, field: (dotted) => dotted };
}

/** The keys of a settings document and of each group, from the dotted leaves. */
const TOP_KEYS = ["$schema", ...new Set(SETTING_KEYS.map((key) => key.split(".")[0]!))];
const NESTED_KEYS: Record<string, string[]> = {};
for (const key of SETTING_KEYS) {
  const [head, tail] = key.split(".") as [string, string | undefined];
  if (tail !== undefined) (NESTED_KEYS[head] ??= []).push(tail);
}

/*
 * The schema check of a settings layer is loaded on first need: most commands run with no
 * settings file, no XCSH_TOOLS_* variable and no setting flag, and loading TypeBox for nothing
 * made up a third of a `tools` query. `validateSettingsLayer` is synchronous (it is also the
 * pure check `validate` runs), so an asynchronous caller prepares the check first; an empty
 * layer needs none.
 */
type SettingsCheck = (doc: unknown) => ValidationResult<XcshToolsSettingsFile>;
let settingsCheck: SettingsCheck | undefined;

/** Load the settings schema check (idempotent). Call before validating a non-empty layer. */
export async function prepareSettingsCheck(): Promise<void> {
  if (settingsCheck) return;
  const [{ checkSchema }, { XcshToolsSettingsFileSchema }] = await Promise.all([import("../manifest/schema-check.js"), import("../manifest/xcsh-tools-settings.js")]);
  settingsCheck = (doc) => checkSchema(XcshToolsSettingsFileSchema, doc);
}

function checkSettingsDocument(doc: Record<string, unknown>): ValidationResult<XcshToolsSettingsFile> {
  if (Object.keys(doc).length === 0) return { ok: true, value: doc as XcshToolsSettingsFile, warnings: [] };
  if (!settingsCheck) throw new Error("internal: prepareSettingsCheck() must run before a settings layer is validated");
  return settingsCheck(doc);
}

/** "/timeouts/gitMs" → "timeouts.gitMs". */
function pointerToDotted(pointer: string): string {
  return pointer.replace(/^\//, "").split("/").filter(Boolean).join(".");
}

/** "timeouts.gitMs" → "/timeouts/gitMs". */
function dottedToPointer(dotted: string): string {
  return dotted ? `/${dotted.split(".").join("/")}` : "";
}

/**
 * Check one layer's document: unknown keys become warnings, a wrong value throws `ECONFIG`.
 * Pure; exported for `config validate` and tests.
 */
export function validateSettingsLayer(
  document: unknown,
  source: LayerSource,
): { value: XcshToolsSettingsFile; warnings: ConfigWarning[] } {
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw new XcshToolsError("ECONFIG", `${source.label}: settings must be an object, found ${describeValue(document)}`, {
      file: source.file,
      path: "",
      hint: `Make ${source.file ?? source.label} contain an object like {"lockWaitMs": 30000}.`,
      exitCode: 2,
    });
  }
  const doc = document as Record<string, unknown>;
  const warnings = unknownKeyWarnings(doc, source);
  const result = checkSettingsDocument(doc);
  if (!result.ok) throw schemaError(result.issues, source);
  checkRegistryUrl(result.value, source);
  return { value: result.value, warnings };
}

/** `ECONFIG_UNKNOWN_KEY` for each key (top-level or in a group) the settings do not have. */
function unknownKeyWarnings(doc: Record<string, unknown>, source: LayerSource): ConfigWarning[] {
  const warnings: ConfigWarning[] = [];
  const unknown = (dotted: string, key: string, known: readonly string[]) => {
    const suggestion = closestKey(key, known);
    warnings.push({
      code: "ECONFIG_UNKNOWN_KEY",
      source: source.id,
      path: dotted,
      message:
        `${source.label}: unknown setting "${source.field(dotted)}"` +
        (suggestion ? `; did you mean "${source.field(dotted.replace(/[^.]+$/, suggestion))}"?` : " (ignored)"),
    });
  };
  for (const key of Object.keys(doc)) {
    if (!TOP_KEYS.includes(key)) {
      unknown(key, key, TOP_KEYS.filter((k) => k !== "$schema"));
      continue;
    }
    const nested = NESTED_KEYS[key];
    const inner = doc[key];
    if (nested && inner && typeof inner === "object" && !Array.isArray(inner)) {
      for (const innerKey of Object.keys(inner)) {
        if (!nested.includes(innerKey)) unknown(`${key}.${innerKey}`, innerKey, nested);
      }
    }
  }
  return warnings;
}

/** `ECONFIG` for the first schema issue of a layer, the others named in the hint. */
function schemaError(issues: ValidationIssue[], source: LayerSource): XcshToolsError {
  const first = issues[0]!;
  const field = source.field(pointerToDotted(first.path));
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  return new XcshToolsError(
    "ECONFIG",
    `${source.label}: "${field}" is invalid: expected ${first.expected ?? "a valid value"}, found ${first.found ?? "something else"}${more}`,
    {
      file: source.file,
      path: pointerToDotted(first.path),
      hint:
        `Fix "${field}" in ${source.file ?? source.label}.` +
        (issues.length > 1 ? ` Also: ${issues.slice(1).map((i) => i.message).join("; ")}` : ""),
      exitCode: 2,
    },
  );
}

/** `registry` must be an http(s) URL. */
function checkRegistryUrl(value: XcshToolsSettingsFile, source: LayerSource): void {
  if (value.registry === undefined) return;
  let ok = false;
  try {
    const url = new URL(value.registry);
    ok = url.protocol === "http:" || url.protocol === "https:";
  } catch {
    ok = false;
  }
  if (ok) return;
  const field = source.field("registry");
  throw new XcshToolsError("ECONFIG", `${source.label}: "${field}" must be an http(s) URL, found ${describeValue(value.registry)}`, {
    file: source.file,
    path: "registry",
    hint: `Set "${field}" to a URL like https://registry.npmjs.org/ in ${source.file ?? source.label}.`,
    exitCode: 2,
  });
}

/** Pure check of one settings file's document, as `validate` reports it (no throw). */
export function validateSettingsFile(document: unknown, file: string): ValidationResult<XcshToolsSettingsFile> {
  try {
    const checked = validateSettingsLayer(document, fileSource(file));
    const warnings = checked.warnings.map((w) => ({ path: dottedToPointer(w.path), code: w.code, message: w.message }));
    return { ok: true, value: checked.value, warnings };
  } catch (error) {
    if (!isXcshToolsError(error)) throw error;
    const issue = { path: dottedToPointer(error.path ?? ""), code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
    return { ok: false, issues: [issue], warnings: [] };
  }
}
