import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { checkTool, isObjectSchema, readField, TOOL_NAME_PATTERN, type ToolShapeProblem } from "../../src/host/tool-shape.js";

const good = () => ({
  name: "my_tool",
  label: "My tool",
  description: "does things",
  parameters: Type.Object({ a: Type.String() }),
  execute: async () => ({ content: [] }),
});

describe("checkTool", () => {
  it("accepts a well-formed tool, also without a label", () => {
    expect(checkTool(good())).toEqual([]);
    const { label: _label, ...noLabel } = good();
    expect(checkTool(noLabel)).toEqual([]);
  });

  it.each([
    [null, "(tool)"],
    [undefined, "(tool)"],
    [42, "(tool)"],
    ["tool", "(tool)"],
    [[good()], "(tool)"],
  ])("rejects a non-object %j", (value, field) => {
    const problems = checkTool(value);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ code: "ETOOL_SHAPE", field });
  });

  it.each([
    ["name", undefined],
    ["name", "   "],
    ["name", 7],
    ["description", undefined],
    ["description", ""],
    ["execute", "not a function"],
    ["execute", undefined],
    ["parameters", undefined],
    ["parameters", { type: "string" }],
    ["parameters", "object"],
    ["parameters", []],
  ])("reports field %s = %j", (field, value) => {
    const tool: Record<string, unknown> = { ...good(), [field]: value };
    const problems = checkTool(tool);
    expect(problems.map((p) => p.field)).toEqual([field]);
    expect(problems[0]?.code).toBe("ETOOL_SHAPE");
    expect(problems[0]?.message).toContain(field);
  });

  it("accepts a plain JSON schema object and a TypeBox Object", () => {
    expect(isObjectSchema({ type: "object", properties: {} })).toBe(true);
    expect(isObjectSchema(Type.Object({}))).toBe(true);
    expect(isObjectSchema(Type.String())).toBe(false);
  });

  it.each(["a", "_x", "read-file", "A1_b-2", "x".repeat(64)])("accepts the name %s", (name) => {
    expect(TOOL_NAME_PATTERN.test(name)).toBe(true);
    expect(checkTool({ ...good(), name })).toEqual([]);
  });

  it.each(["1abc", "-x", "has space", "dots.no", "émoji", "x".repeat(65), "a/b"])("rejects the name %s with ETOOL_NAME", (name) => {
    const problems = checkTool({ ...good(), name });
    expect(problems).toEqual([expect.objectContaining({ code: "ETOOL_NAME", field: "name" })]);
  });

  it("reports several problems at once", () => {
    const problems = checkTool({ name: "ok" });
    expect(problems.map((p) => p.field).sort()).toEqual(["description", "execute", "parameters"]);
  });

  it("turns throwing getters into problems instead of exceptions", () => {
    const hostile = {
      ...good(),
      get name(): string {
        throw new Error("boom");
      },
      get parameters(): unknown {
        throw new Error("nope");
      },
    };
    const problems = checkTool(hostile);
    expect(problems.map((p) => p.field).sort()).toEqual(["name", "parameters"]);
    expect(problems[0]?.message).toMatch(/threw: (boom|nope)/);
  });

  it("survives a Proxy whose every trap throws", () => {
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error("trap");
        },
      },
    );
    expect(() => checkTool(proxy)).not.toThrow();
    expect(checkTool(proxy).length).toBeGreaterThan(0);
  });
});

/**
 * checkTool reads each field once without a closure or a result object per read (the loader
 * checks every tool of a boot, a thousand on a lazy boot). The long way it replaced is kept here:
 * the problems, their order and the reads a getter sees must be the same on every hostile tool.
 */
function longCheck(value: unknown): ToolShapeProblem[] {
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
  const kind = (v: unknown) => (v === undefined ? "nothing" : v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "string" ? (v.trim() === "" ? "an empty string" : "a string") : typeof v === "object" ? (typeof (v as { type?: unknown }).type === "string" ? `a schema of type "${(v as { type: string }).type}"` : "an object") : `a ${typeof v}`);
  const name = read("name");
  if (name.ok) {
    if (typeof name.value !== "string" || name.value.trim() === "") shape("name", `"name" must be a non-empty string, got ${kind(name.value)}`);
    else if (!TOOL_NAME_PATTERN.test(name.value)) problems.push({ code: "ETOOL_NAME", field: "name", message: `"name" ${JSON.stringify(name.value)} is not a valid tool name: use 1-64 letters, digits, "_" or "-", starting with a letter or "_"` });
  }
  const description = read("description");
  if (description.ok && (typeof description.value !== "string" || description.value.trim() === "")) shape("description", `"description" must be a non-empty string, got ${kind(description.value)}`);
  const execute = read("execute");
  if (execute.ok && typeof execute.value !== "function") shape("execute", `"execute" must be a function, got ${kind(execute.value)}`);
  const parameters = read("parameters");
  if (parameters.ok && !isObjectSchema(parameters.value)) shape("parameters", `"parameters" must be an object schema (Type.Object(...) or {type: "object"}), got ${kind(parameters.value)}`);
  const label = read("label");
  if (label.ok && label.value !== undefined && typeof label.value !== "string") shape("label", `"label" must be a string when present, got ${kind(label.value)}`);
  return problems;
}

describe("checkTool without closures says what the closure-per-read check said, with the same reads", () => {
  const fields = ["name", "description", "execute", "parameters", "label"] as const;
  const bad: Record<(typeof fields)[number], unknown[]> = {
    name: [undefined, null, "", "  ", 3, "1bad", "x".repeat(65), {}, []],
    description: [undefined, null, "", " ", 0, {}, []],
    execute: [undefined, null, "run", {}, []],
    parameters: [undefined, null, "s", [], {}, { type: "string" }, { type: 3 }],
    label: [null, 1, {}, [], false],
  };
  /** A tool whose getters log each read and give `values[field]`, or throw for the fields in `throwing`. */
  const logged = (values: Record<string, unknown>, throwing: readonly string[], log: string[]) => {
    const tool = {};
    for (const field of fields) {
      Object.defineProperty(tool, field, {
        enumerable: true,
        get() {
          log.push(field);
          if (throwing.includes(field)) throw new Error(`${field} refused`);
          return values[field];
        },
      });
    }
    return tool;
  };
  const same = (values: Record<string, unknown>, throwing: readonly string[] = []) => {
    const shortLog: string[] = [];
    const longLog: string[] = [];
    const short = checkTool(logged(values, throwing, shortLog));
    expect(short).toEqual(longCheck(logged(values, throwing, longLog)));
    expect(shortLog).toEqual(longLog);
    expect(shortLog).toEqual([...fields]);
    return short;
  };

  it("every wrong value of every field, alone", () => {
    for (const field of fields) for (const value of bad[field]) expect(same({ ...good(), [field]: value }).length, `${field}=${JSON.stringify(value)}`).toBeGreaterThan(0);
  });

  it("every field throwing, alone, together, and beside wrong values", () => {
    for (const field of fields) same(good(), [field]);
    expect(same(good(), fields)).toHaveLength(5);
    same({ name: 7, description: "", execute: undefined, parameters: [], label: 1 }, ["description", "label"]);
  });

  it("a getter that answers differently each time is read once", () => {
    let n = 0;
    const fickle = { ...good(), get name() { return n++ === 0 ? "ok_name" : "not ok"; } };
    expect(checkTool(fickle)).toEqual([]);
    expect(n).toBe(1);
  });

  it("a good tool, a tool with no fields, a Proxy that throws on every read, and non-objects", () => {
    expect(same(good())).toEqual([]);
    same({});
    const proxy = new Proxy({}, { get() { throw new Error("trap"); } });
    expect(checkTool(proxy)).toEqual(longCheck(proxy));
    for (const value of [null, undefined, 1, "tool", [], () => {}]) expect(checkTool(value)).toEqual(longCheck(value));
  });
});
