/**
 * Pure checks of what a factory returned, shared by the loader (which rejects a bad tool with
 * ETOOL_SHAPE / ETOOL_NAME and keeps the module's other tools) and by `xcsh-tools validate`.
 * Plugin objects may be hostile or just broken: every read goes through `readField`, which turns a
 * throwing getter into a problem instead of an exception. A missing `label` is not a problem: the
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

/** Every problem of `value` as a `CustomTool`; an empty list means the loader accepts it. */
export function checkTool(value: unknown): ToolShapeProblem[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    return [{ code: "ETOOL_SHAPE", field: "(tool)", message: `expected a tool object, got ${got}` }];
  }
  const problems: ToolShapeProblem[] = [];
  const shape = (field: string, message: string) => problems.push({ code: "ETOOL_SHAPE", field, message });
  const read = (field: string): { ok: boolean; value?: unknown } => {
    const result = readField(value, field);
    if (!result.ok) shape(field, `reading "${field}" threw: ${result.error}`);
    return result;
  };

  const name = read("name");
  if (name.ok) {
    if (typeof name.value !== "string" || name.value.trim() === "") {
      shape("name", `"name" must be a non-empty string, got ${describe(name.value)}`);
    } else if (!TOOL_NAME_PATTERN.test(name.value)) {
      problems.push({
        code: "ETOOL_NAME",
        field: "name",
        message: `"name" ${JSON.stringify(name.value)} is not a valid tool name: use 1-64 letters, digits, "_" or "-", starting with a letter or "_"`,
      });
    }
  }
  const description = read("description");
  if (description.ok && (typeof description.value !== "string" || description.value.trim() === "")) {
    shape("description", `"description" must be a non-empty string, got ${describe(description.value)}`);
  }
  const execute = read("execute");
  if (execute.ok && typeof execute.value !== "function") {
    shape("execute", `"execute" must be a function, got ${describe(execute.value)}`);
  }
  const parameters = read("parameters");
  if (parameters.ok && !isObjectSchema(parameters.value)) {
    shape(
      "parameters",
      `"parameters" must be an object schema (Type.Object(...) or {type: "object"}), got ${describe(parameters.value)}`,
    );
  }
  const label = read("label");
  if (label.ok && label.value !== undefined && typeof label.value !== "string") {
    shape("label", `"label" must be a string when present, got ${describe(label.value)}`);
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
