/**
 * Error records of discovery and the reading of state files. Discovery never throws on bad
 * input: a state file that is not JSON or has the wrong shape becomes one `ESTATE_FILE` record
 * naming the file and the JSON path, and the caller carries on without it (the host throws on
 * some of these and silently ignores others: xcsh-host-formats §9 #23, #28).
 *
 * Codes (public API, see the README's table):
 * - `ESTATE_FILE`       a state file is unreadable, not JSON, or has the wrong shape: ignored whole.
 * - `ESTATE_ENTRY`      one entry of a state file has the wrong shape: only that entry is skipped.
 * - `EPLUGIN_ID`        a marketplace plugin id is not `name@marketplace`.
 * - `EPLUGIN_NOT_FOUND` a registered plugin's folder (installPath, node_modules/<name>) is missing.
 * - `EPLUGIN_MANIFEST`  a plugin's package.json is not JSON, or its `xcsh`/`pi` manifest is malformed.
 * - `EUNKNOWN_FEATURE`  the lock or the overrides enable a feature the manifest does not declare.
 * - `EENTRY_NOT_FOUND`  a manifest tools entry, a configured path or a symlinked tool does not exist.
 * - `EENTRY_ESCAPE`     a manifest tools entry leaves its package (`../`, absolute, symlink out).
 * - `ENOT_A_MODULE`     an explicit entry is not a tool module (`.md`, `.json`, `.sh`, empty folder).
 * - `ETOOLS_DIR`        a tools directory exists but cannot be listed (a file, no permission).
 * - `EPROVIDER`         a provider failed unexpectedly (a bug of ours): its source is skipped.
 */
import type { TSchema, Static } from "@sinclair/typebox";
import { errorMessage, isXcshToolsError } from "../core/errors.js";
import type { ToolLoadError, ToolSource } from "../host/types.js";
import { readJsonFile } from "../manifest/json-file.js";
import { type ValidationIssue } from "../manifest/result.js";
import { checkSchema } from "../manifest/schema-check.js";
import type { DiscoverySink } from "./types.js";

/** Discovery error codes (public API; the README's table). */
export const DISCOVERY_ERROR_CODES = [
  "ESTATE_FILE",
  "ESTATE_ENTRY",
  "EPLUGIN_ID",
  "EPLUGIN_NOT_FOUND",
  "EPLUGIN_MANIFEST",
  "EUNKNOWN_FEATURE",
  "EENTRY_NOT_FOUND",
  "EENTRY_ESCAPE",
  "ENOT_A_MODULE",
  "ETOOLS_DIR",
  "EPROVIDER",
] as const;
export type DiscoveryErrorCode = (typeof DISCOVERY_ERROR_CODES)[number];

/** Build an error record. */
export function discoveryError(code: DiscoveryErrorCode, path: string, error: string, source: ToolSource): ToolLoadError {
  return { path, code, error, source };
}

/** The first few issues as one line: enough to fix the file, short enough to read. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  const shown = issues.slice(0, 3).map((issue) => issue.message);
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  return shown.join("; ") + more;
}

/** Result of reading a state file: missing is a normal state, bad has been recorded. */
export type StateFileRead<T> = { status: "missing" } | { status: "bad" } | { status: "ok"; value: T };

/**
 * Read a JSON state file and check it against `schema`. A missing file is `missing`; an
 * unreadable, unparsable or wrongly shaped one is recorded as `ESTATE_FILE` and is `bad`.
 */
export async function readStateFile<S extends TSchema>(
  file: string,
  schema: S,
  source: ToolSource,
  sink: DiscoverySink,
  /** What happens because the file is unusable, for the message. */
  consequence = "it was ignored",
): Promise<StateFileRead<Static<S>>> {
  let raw: unknown;
  try {
    raw = await readJsonFile(file);
  } catch (error) {
    const message = isXcshToolsError(error) ? error.message : `Cannot read ${file}: ${errorMessage(error)}`;
    sink.addError(discoveryError("ESTATE_FILE", file, `${message}; ${consequence}.`, source));
    return { status: "bad" };
  }
  if (raw === undefined) return { status: "missing" };
  const checked = checkSchema(schema, raw);
  if (!checked.ok) {
    sink.addError(
      discoveryError("ESTATE_FILE", file, `${file} has the wrong shape: ${formatIssues(checked.issues)}; ${consequence}.`, source),
    );
    return { status: "bad" };
  }
  return { status: "ok", value: checked.value };
}
