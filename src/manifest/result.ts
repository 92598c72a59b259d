/**
 * Validation results. Pure validators return `{ok, value, warnings}` or `{ok: false, issues}`;
 * readers wrap them and throw a coded error. Issues carry a JSON path (`/plugins/foo/0/installPath`),
 * a stable code, what was expected, what was found and, when we know it, how to fix it.
 *
 * Reading is tolerant, validation strict: the TypeBox schemas describe the shape a reader needs
 * (unknown keys allowed and kept), and each format's `validate…` function layers the rules a
 * reader can live without (name rules, typos, cross-field consistency) on top.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { Value, ValueErrorType, type ValueError } from "@sinclair/typebox/value";

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
  /** How to fix it. */
  hint?: string;
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

/** Words for what a TypeBox schema accepts, better than "Expected union value". */
function expectedOf(schema: TSchema): string {
  const s = schema as Record<string, unknown> & { type?: unknown; anyOf?: TSchema[]; const?: unknown };
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.anyOf)) return s.anyOf.map(expectedOf).join(" or ");
  switch (s.type) {
    case "string":
      return typeof s.pattern === "string" ? `a string matching ${s.pattern}` : "a string";
    case "number":
    case "integer":
      return "a number";
    case "boolean":
      return "true or false";
    case "array":
      return "an array";
    case "object":
      return "an object";
    case "null":
      return "null";
    default:
      return "a valid value";
  }
}

const TYPE_ERRORS = new Set<ValueErrorType>([
  ValueErrorType.String,
  ValueErrorType.Number,
  ValueErrorType.Integer,
  ValueErrorType.Boolean,
  ValueErrorType.Object,
  ValueErrorType.Array,
  ValueErrorType.Null,
  ValueErrorType.Literal,
  ValueErrorType.Union,
]);

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value === "number" ? "number" : typeof value;
}

function unionHasJsonType(schema: TSchema, value: unknown): boolean {
  const branches = ((schema as { anyOf?: TSchema[] }).anyOf ?? []) as (TSchema & { type?: string; const?: unknown })[];
  const type = jsonType(value);
  return branches.some((b) => (b.const !== undefined ? false : b.type === type || (b.type === "integer" && type === "number")));
}

function issueFromValueError(error: ValueError, base: string): ValidationIssue {
  const at = base + error.path;
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    const field = error.path.split("/").pop() ?? "";
    return {
      path: at,
      code: "EREQUIRED",
      message: `${at || "(root)"}: required field "${field}" is missing`,
      expected: expectedOf(error.schema),
      found: "nothing",
      hint: `Add "${field}" (${expectedOf(error.schema)}).`,
    };
  }
  // A union fails as a whole; it is a type error only when no branch has the value's JSON type.
  const isType = error.type === ValueErrorType.Union ? !unionHasJsonType(error.schema, error.value) : TYPE_ERRORS.has(error.type);
  const expected = (isType ? expectedOf(error.schema) : error.message).replace(/^Expected /, "").replace(/^expected /, "");
  const field = error.path.split("/").pop() || "the document";
  return {
    path: at,
    code: isType ? "ETYPE" : "ESCHEMA",
    message: `${at || "(root)"}: expected ${expected}, found ${describeValue(error.value)}`,
    expected,
    found: describeValue(error.value),
    hint: isType ? `Change "${field}" to ${expected}.` : `Fix "${field}": it must be ${expected}.`,
  };
}

/**
 * Check `value` against `schema`. Unknown keys are allowed (files other programs write keep
 * theirs); the first error per path is kept so messages stay readable. `base` prefixes every
 * issue's path when `value` sits inside a larger document.
 */
export function checkSchema<S extends TSchema>(schema: S, value: unknown, base = ""): ValidationResult<Static<S>> {
  if (Value.Check(schema, value)) return { ok: true, value: value as Static<S>, warnings: [] };
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const error of Value.Errors(schema, value)) {
    // A missing field is also reported at its parent as "object" noise by some schemas: keep the first.
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    issues.push(issueFromValueError(error, base));
    if (issues.length >= 50) break;
  }
  return { ok: false, issues, warnings: [] };
}

/** Escape one JSON-pointer segment. */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Join a pointer and segments. */
export function pointer(base: string, ...segments: (string | number)[]): string {
  return base + segments.map((s) => `/${pointerSegment(s)}`).join("");
}

/** Collects issues and warnings while a validator walks a document. */
export class IssueCollector {
  readonly issues: ValidationIssue[] = [];
  readonly warnings: ValidationIssue[] = [];

  error(issue: ValidationIssue): void {
    this.issues.push(issue);
  }

  warn(issue: ValidationIssue): void {
    this.warnings.push(issue);
  }

  /** Add the issues and warnings of another result. */
  absorb(result: { issues?: ValidationIssue[]; warnings: ValidationIssue[] } | ValidationResult<unknown>): void {
    if ("issues" in result && result.issues) this.issues.push(...result.issues);
    this.warnings.push(...result.warnings);
  }

  /** The result: ok when no error was collected. */
  result<T>(value: T): ValidationResult<T> {
    return this.issues.length === 0
      ? { ok: true, value, warnings: this.warnings }
      : { ok: false, issues: this.issues, warnings: this.warnings };
  }
}

/** True for a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
