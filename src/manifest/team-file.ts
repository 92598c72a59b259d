/**
 * What the three files of a team set (xcsh-team.json, xcsh-team.lock.json, .xcsh/team.local.json)
 * and the Claude Code settings read with them share: reading the text, finding the conflict
 * markers a merge leaves (before parsing: JSON.parse would only say "Unexpected token <" at some
 * offset, where the user needs "a merge conflict at line N"), parsing through json-file.ts, and
 * turning the first validation issue into a coded error naming file, JSON path, what was expected
 * and the fix.
 */
import path from "node:path";
import { EXIT_CODES, XcshToolsError } from "../core/errors.js";
import { parseJsonText, readJsonText } from "./json-file.js";
import type { ValidationIssue, ValidationResult } from "./result.js";

/** A line a merge tool writes around the two sides of a conflict (git's 7-character markers). */
const MARKER = /^(<{7}|={7}|>{7}|\|{7})(?:[ \t].*)?\r?$/;

/** The 1-based numbers of the lines of `text` that are conflict markers. */
export function conflictMarkerLines(text: string): number[] {
  const lines: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (MARKER.test(line)) lines.push(i + 1);
  });
  return lines;
}

/** `ETEAM_CONFLICT_MARKERS` naming the file and the first marker's line. */
export function conflictMarkersError(file: string, lines: readonly number[]): XcshToolsError {
  return new XcshToolsError("ETEAM_CONFLICT_MARKERS", `${file} has merge conflict markers at line ${lines.join(", ")}: expected a JSON file without "<<<<<<<", "=======", ">>>>>>>" lines`, {
    file,
    path: `line ${lines[0]}`,
    hint: `Resolve the conflict in ${path.basename(file)} like in any source file, then commit it.${path.basename(file) === "xcsh-team.lock.json" ? " `xcsh-tools install` (without --frozen) merges a conflicted lock by itself." : ""}`,
  });
}


/** Parse a team file's text: markers first (`ETEAM_CONFLICT_MARKERS`), then JSON (`invalidCode` naming the file). */
export function parseTeamText(text: string, file: string, invalidCode: string, hint: string): unknown {
  const markers = conflictMarkerLines(text);
  if (markers.length > 0) throw conflictMarkersError(file, markers);
  try {
    return parseJsonText(text, file);
  } catch (error) {
    if (error instanceof XcshToolsError && error.code === "EJSONPARSE") throw new XcshToolsError(invalidCode, error.message, { file, path: "", hint, cause: error });
    throw error;
  }
}

/**
 * The first issue of a failed result as a coded error: the issue's own code when the table knows
 * it (`ETEAM_SPEC`, `EGIT_URL`, ...), else `fallbackCode` (schema issues: `ETYPE`, `EREQUIRED`).
 */
export function teamIssueError(file: string, issues: readonly ValidationIssue[], fallbackCode: string): XcshToolsError {
  const first = issues[0]!;
  const more = issues.length - 1;
  const code = Object.hasOwn(EXIT_CODES, first.code) ? first.code : fallbackCode;
  const expected = first.expected && !first.message.includes("expected") ? ` (expected ${first.expected})` : "";
  return new XcshToolsError(code, `${file}: ${first.message}${expected}${more > 0 ? ` (and ${more} more problem${more > 1 ? "s" : ""})` : ""}`, {
    file,
    path: first.path,
    ...(first.hint ? { hint: first.hint } : {}),
    // Only codes outside the table (schema issues under the fallback) take this; the table decides the rest.
    exitCode: 2,
  });
}

/** The value of a result, or its first issue thrown (`teamIssueError`). */
export function valueOrThrow<T>(result: ValidationResult<T>, file: string, fallbackCode: string): T {
  if (!result.ok) throw teamIssueError(file, result.issues, fallbackCode);
  return result.value;
}

/** Read, check markers, parse and validate a team file; `undefined` when it does not exist. */
export function readTeamFile<T>(file: string, validate: (value: unknown) => ValidationResult<T>, invalidCode: string, hint: string): T | undefined {
  // Through the one bounded reader: a project file may be a FIFO or a device (never a hang).
  const text = readJsonText(file);
  if (text === undefined) return undefined;
  return valueOrThrow(validate(parseTeamText(text, file, invalidCode, hint)), file, invalidCode);
}
