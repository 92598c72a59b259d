/**
 * Validation results. Pure validators return `{ok, value, warnings}` or `{ok: false, issues}`;
 * readers wrap them and throw a coded error. Issues carry a JSON path (`/plugins/foo/0/installPath`),
 * a stable code, what was expected, what was found and, when we know it, how to fix it.
 *
 * Reading is tolerant, validation strict: the TypeBox schemas describe the shape a reader needs
 * (unknown keys allowed and kept), and each format's `validate…` function layers the rules a
 * reader can live without (name rules, typos, cross-field consistency) on top. The schema check
 * itself is in schema-check.ts, so that code needing only these types and helpers (the CLI's
 * start, the boot path) does not load TypeBox's value module.
 */

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
  /**
   * What it means for someone who installed the package and cannot change it (`doctor`), when
   * `hint` is advice only its author can follow ("remove the key").
   */
  forUser?: string;
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
