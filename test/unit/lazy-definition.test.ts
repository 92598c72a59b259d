/**
 * Static definitions (src/host/lazy-definition.ts): a TypeBox schema survives the JSON of the
 * boot index with every registered symbol, at any depth and under any property name; what cannot
 * be restored or forwarded is refused with the field, never recorded half.
 */
import * as typebox from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import { definitionDifference, describeDefinition, restoreSchema } from "../../src/host/lazy-definition.js";

const { Type } = typebox;
const tool = (parameters: unknown, extra: Record<string, unknown> = {}) => ({ name: "t", label: "T", description: "d", parameters, execute: async () => ({ content: [] }), ...extra });

/** Record a tool as the child does, through JSON, and restore its schema as a lazy boot does. */
function roundTrip(parameters: unknown) {
  const described = describeDefinition(tool(parameters));
  if (!described.ok) throw new Error(described.problem.message);
  const stored = JSON.parse(JSON.stringify(described.definition));
  return { described: described.definition, schema: restoreSchema(stored.parameters, stored.symbols) as typebox.TSchema };
}

describe("schemas come back as the host's TypeBox schemas", () => {
  it("restores Kind, Optional and Readonly symbols at every depth, under names with / and ~", () => {
    const parameters = Type.Object({
      "a/b": Type.Array(Type.Union([Type.Literal("x"), Type.Integer({ minimum: 1 })])),
      "c~d": Type.Optional(Type.Readonly(Type.Record(Type.String(), Type.Boolean()))),
      nested: Type.Object({ deep: Type.Optional(Type.Tuple([Type.String(), Type.Null()])) }),
    });
    const { schema } = roundTrip(parameters);
    expect(Value.Check(schema, { "a/b": ["x", 2], nested: {} })).toBe(true);
    expect(Value.Check(schema, { "a/b": [0], nested: {} })).toBe(false);
    expect(Value.Check(schema, { "a/b": [], "c~d": { k: "no" }, nested: {} })).toBe(false);
    expect(Value.Check(schema, { "a/b": [], nested: { deep: ["s", null] } })).toBe(true);
    // The same object, symbols included, as the factory's schema.
    expect(schema).toStrictEqual(parameters);
  });

  it("refuses a schema holding a symbol that is not registered, naming where", () => {
    const parameters = Type.Object({ q: Type.String() });
    (parameters.properties.q as unknown as Record<symbol, unknown>)[Symbol("private")] = "x";
    const described = describeDefinition(tool(parameters));
    expect(described.ok).toBe(false);
    expect(!described.ok && described.problem).toEqual({ field: "parameters", message: expect.stringContaining("/properties/q holds Symbol(private)") });
  });
});

describe("what a lazy tool cannot be is refused with its field", () => {
  it("a method other than execute, onSession, renderCall, renderResult (own or inherited)", () => {
    class Tool {
      name = "t";
      description = "d";
      parameters = Type.Object({});
      async execute() {
        return { content: [] };
      }
      helper() {
        return 1;
      }
    }
    const described = describeDefinition(new Tool());
    expect(!described.ok && described.problem.field).toBe("helper");
  });

  it("a field that cannot be written as JSON, or whose getter throws", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(describeDefinition(tool(Type.Object({}), { meta: cyclic })).ok).toBe(false);
    const throwing = Object.defineProperty(tool(Type.Object({})), "hidden", { get: () => { throw new Error("no"); }, enumerable: true });
    const described = describeDefinition(throwing);
    expect(!described.ok && described.problem.field).toBe("hidden");
  });

  it("two definitions differ in the first field that moved, symbols counting as parameters", () => {
    const a = describeDefinition(tool(Type.Object({ q: Type.String() })));
    const b = describeDefinition(tool(Type.Object({ q: Type.String() }), { hidden: true }));
    const c = describeDefinition(tool(Type.Object({ q: Type.Unsafe({ type: "string" }) })));
    if (!a.ok || !b.ok || !c.ok) throw new Error("described");
    expect(definitionDifference(a.definition, a.definition)).toBeUndefined();
    expect(definitionDifference(a.definition, b.definition)).toBe("hidden");
    expect(definitionDifference(a.definition, c.definition)).toBe("parameters");
  });
});
