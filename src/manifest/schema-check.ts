/**
 * Checking a document against a TypeBox schema, with issues in the form of result.ts (JSON path,
 * code, expected, found, hint). Apart from result.ts because it loads TypeBox's value module,
 * which the CLI's start and the boot path do not need.
 */
import { Value, ValueErrorType, type Static, type TSchema, type ValueError } from "./typebox.js";
import { describeValue, type ValidationIssue, type ValidationResult } from "./result.js";

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

