/**
 * Pure checks of what a factory returned, shared by the loader (which rejects a bad tool with
 * ETOOL_SHAPE / ETOOL_NAME and keeps the module's other tools) and by `xcsh-tools validate`.
 * Plugin objects may be hostile or just broken: every read goes through `readField` (`readOnce` in
 * `checkTool`, which runs for every tool of a boot), which turns a throwing getter into a problem
 * instead of an exception. A missing `label` is not a problem: the
 * host always shows one, so the loader defaults it to the name.
 */
import { errorMessage } from "../core/errors.js";

/** One thing wrong with a tool object. `field` is `"(tool)"` for the object itself. */
export interface ToolShapeProblem {
  code: "ETOOL_SHAPE" | "ETOOL_NAME";
  message: string;
  field: string;
}

/** Names an LLM function call accepts (OpenAI/Anthropic function-name rules). */
export const TOOL_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

const TYPEBOX_KIND = Symbol.for("TypeBox.Kind");

/** Read `key` of `value` without letting a throwing getter escape. */
export function readField(value: object, key: PropertyKey): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: (value as Record<PropertyKey, unknown>)[key] };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}

/** True for a JSON Schema / TypeBox object schema. */
export function isObjectSchema(value: unknown): boolean {
  if (!value || typeof value !== "object" || Array.isArray(value)) return false;
  try {
    const schema = value as Record<PropertyKey, unknown>;
    return schema.type === "object" || schema[TYPEBOX_KIND] === "Object";
  } catch {
    return false;
  }
}

/** What `readOnce` gives for a field whose getter threw (the problem is recorded). */
const THREW = Symbol("threw");

/** `value[field]`, or THREW with the problem recorded: no closure or result object per read (the loader checks every tool of a boot). */
function readOnce(value: object, field: string, problems: ToolShapeProblem[]): unknown {
  try {
    return (value as Record<string, unknown>)[field];
  } catch (error) {
    problems.push({ code: "ETOOL_SHAPE", field, message: `reading "${field}" threw: ${errorMessage(error)}` });
    return THREW;
  }
}

/** Every problem of `value` as a `CustomTool`; an empty list means the loader accepts it. Each field is read once, in this order. */
export function checkTool(value: unknown): ToolShapeProblem[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    return [{ code: "ETOOL_SHAPE", field: "(tool)", message: `expected a tool object, got ${got}` }];
  }
  const problems: ToolShapeProblem[] = [];
  const name = readOnce(value, "name", problems);
  if (name !== THREW) {
    if (typeof name !== "string" || name.trim() === "") {
      problems.push({ code: "ETOOL_SHAPE", field: "name", message: `"name" must be a non-empty string, got ${describe(name)}` });
    } else if (!TOOL_NAME_PATTERN.test(name)) {
      problems.push({
        code: "ETOOL_NAME",
        field: "name",
        message: `"name" ${JSON.stringify(name)} is not a valid tool name: use 1-64 letters, digits, "_" or "-", starting with a letter or "_"`,
      });
    }
  }
  const description = readOnce(value, "description", problems);
  if (description !== THREW && (typeof description !== "string" || description.trim() === "")) {
    problems.push({ code: "ETOOL_SHAPE", field: "description", message: `"description" must be a non-empty string, got ${describe(description)}` });
  }
  const execute = readOnce(value, "execute", problems);
  if (execute !== THREW && typeof execute !== "function") {
    problems.push({ code: "ETOOL_SHAPE", field: "execute", message: `"execute" must be a function, got ${describe(execute)}` });
  }
  const parameters = readOnce(value, "parameters", problems);
  if (parameters !== THREW && !isObjectSchema(parameters)) {
    problems.push({
      code: "ETOOL_SHAPE",
      field: "parameters",
      message: `"parameters" must be an object schema (Type.Object(...) or {type: "object"}), got ${describe(parameters)}`,
    });
  }
  const label = readOnce(value, "label", problems);
  if (label !== THREW && label !== undefined && typeof label !== "string") {
    problems.push({ code: "ETOOL_SHAPE", field: "label", message: `"label" must be a string when present, got ${describe(label)}` });
  }
  return problems;
}

/** The tool's `name` when it can be read as a string (for error records), else undefined. */
export function readToolName(value: unknown): string | undefined {
  if (!value || typeof value !== "object") return undefined;
  const name = readField(value, "name");
  return name.ok && typeof name.value === "string" ? name.value : undefined;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return value.trim() === "" ? "an empty string" : `a string`;
  if (typeof value === "object") {
    const type = readField(value, "type");
    return type.ok && typeof type.value === "string" ? `a schema of type "${type.value}"` : "an object";
  }
  return `a ${typeof value}`;
}
