/**
 * Validation results. Pure validators return `{ok, value, warnings}` or `{ok: false, issues}`;
 * readers wrap them and throw a coded error. Issues carry a JSON path (`/plugins/foo/0/installPath`),
 * a stable code, what was expected and what was found.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { Value, type ValueError } from "@sinclair/typebox/value";

/** One problem found in a document. */
export interface ValidationIssue {
  /** JSON pointer into the document ("" for the root). */
  path: string;
  code: string;
  message: string;
  /** What was expected, in words. */
  expected?: string;
  /** What was found, shortened. */
  found?: string;
}

export type ValidationResult<T> =
  | { ok: true; value: T; warnings: ValidationIssue[] }
  | { ok: false; issues: ValidationIssue[]; warnings: ValidationIssue[] };

/** A short printable form of any JSON value, for "found" fields. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array (${value.length} items)`;
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
  return `${typeof value} ${String(value)}`;
}

function issueFromValueError(error: ValueError): ValidationIssue {
  return {
    path: error.path,
    code: "ESCHEMA",
    message: `${error.path || "(root)"}: ${error.message}, found ${describeValue(error.value)}`,
    expected: error.message,
    found: describeValue(error.value),
  };
}

/**
 * Check `value` against `schema`. Unknown keys are allowed (files other programs write keep
 * theirs); the first error per path is kept so messages stay readable.
 */
export function checkSchema<S extends TSchema>(schema: S, value: unknown): ValidationResult<Static<S>> {
  if (Value.Check(schema, value)) return { ok: true, value: value as Static<S>, warnings: [] };
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const error of Value.Errors(schema, value)) {
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    issues.push(issueFromValueError(error));
    if (issues.length >= 50) break;
  }
  return { ok: false, issues, warnings: [] };
}

/** Escape one JSON-pointer segment. */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}
