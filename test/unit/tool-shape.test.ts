import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { checkTool, isObjectSchema, TOOL_NAME_PATTERN } from "../../src/host/tool-shape.js";

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
