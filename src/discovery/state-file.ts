/**
 * The reading of state files during discovery. Discovery never throws on bad input: a state file
 * that is not JSON or has the wrong shape becomes one `ESTATE_FILE` record naming the file and the
 * JSON path, and the caller carries on without it (the host throws on some of these and silently
 * ignores others).
 */
import type { TSchema, Static } from "../manifest/typebox.js";
import { errorMessage, isXcshToolsError } from "../core/errors.js";
import type { ToolSource } from "../core/contract.js";
import { parseJsonText, readJsonText } from "../manifest/json-file.js";
import { type ValidationIssue } from "../manifest/result.js";
import { checkSchema } from "../manifest/schema-check.js";
import { discoveryError } from "./records.js";
import type { DiscoverySink } from "./types.js";

/** The first few issues as one line: enough to fix the file, short enough to read. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  const shown = issues.slice(0, 3).map((issue) => issue.message);
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : "";
  return shown.join("; ") + more;
}

/** Where in `file` the first few issues of the entry at `pointer` are, and what was expected there. */
export function describeIssues(file: string, pointer: string, issues: readonly ValidationIssue[]): string {
  return `${file} ${issues.slice(0, 3).map((issue) => `${pointer}${issue.path}: ${issue.expected}, found ${issue.found}`).join("; ")}`;
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
  let text: string | undefined;
  try {
    text = readJsonText(file);
  } catch (error) {
    return unreadable(error, file, source, sink, consequence);
  }
  return stateFileFromText(text, file, schema, source, sink, consequence);
}

/**
 * `readStateFile` of the bytes `text` (`undefined`: the file is missing), as if read from `file`:
 * also how a refresh learns what discovery would take from a state file's earlier bytes.
 */
export function stateFileFromText<S extends TSchema>(text: string | undefined, file: string, schema: S, source: ToolSource, sink: DiscoverySink, consequence = "it was ignored"): StateFileRead<Static<S>> {
  if (text === undefined) return { status: "missing" };
  let raw: unknown;
  try {
    raw = parseJsonText(text, file);
  } catch (error) {
    return unreadable(error, file, source, sink, consequence);
  }
  const checked = checkSchema(schema, raw);
  if (!checked.ok) {
    sink.addError(
      discoveryError("ESTATE_FILE", file, `${file} has the wrong shape: ${formatIssues(checked.issues)}; ${consequence}.`, source),
    );
    return { status: "bad" };
  }
  return { status: "ok", value: checked.value };
}

function unreadable(error: unknown, file: string, source: ToolSource, sink: DiscoverySink, consequence: string): { status: "bad" } {
  const message = isXcshToolsError(error) ? error.message : `Cannot read ${file}: ${errorMessage(error)}`;
  sink.addError(discoveryError("ESTATE_FILE", file, `${message}; ${consequence}.`, source));
  return { status: "bad" };
}
