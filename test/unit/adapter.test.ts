import { Type } from "@sinclair/typebox";
import { describe, expect, it, vi } from "vitest";
import { CustomToolAdapter } from "../../src/host/adapter.js";
import type { CustomTool, CustomToolContext } from "../../src/core/contract.js";

const ctx = (tag: string) => ({ tag }) as unknown as CustomToolContext;

function makeTool(overrides: Partial<CustomTool> = {}): CustomTool {
  return {
    name: "t",
    label: "T",
    description: "first",
    parameters: Type.Object({}),
    execute: vi.fn(async () => ({ content: [{ type: "text" as const, text: "ok" }] })),
    ...overrides,
  };
}

describe("CustomToolAdapter", () => {
  it("reorders execute arguments: (id, params, signal, onUpdate, ctx) → (id, params, onUpdate, ctx, signal)", async () => {
    const tool = makeTool();
    const adapter = CustomToolAdapter.wrap(tool, () => ctx("default"));
    const signal = new AbortController().signal;
    const onUpdate = () => {};
    const given = ctx("given");
    await adapter.execute("call-1", { a: 1 }, signal, onUpdate, given);
    expect(tool.execute).toHaveBeenCalledWith("call-1", { a: 1 }, onUpdate, given, signal);
  });

  it("uses getContext() when no ctx is passed, at call time", async () => {
    const tool = makeTool();
    let current = ctx("one");
    const adapter = new CustomToolAdapter(tool, () => current);
    current = ctx("two");
    await adapter.execute("id", {});
    expect(tool.execute).toHaveBeenCalledWith("id", {}, undefined, current, undefined);
  });

  it("is strict and exposes members as live getters", () => {
    const tool = makeTool({ hidden: false });
    const adapter = CustomToolAdapter.wrap(tool, () => ctx("x"));
    expect(adapter.strict).toBe(true);
    expect(adapter.name).toBe("t");
    expect(adapter.label).toBe("T");
    tool.description = "changed later";
    tool.hidden = true;
    expect(adapter.description).toBe("changed later");
    expect(adapter.hidden).toBe(true);
    expect(Object.keys(adapter)).toEqual(expect.arrayContaining(["name", "description", "parameters"]));
  });

  it("exposes prototype members, skips constructor, and binds methods to the tool", () => {
    class ClassTool {
      name = "cls";
      label = "Cls";
      description = "d";
      parameters = Type.Object({});
      secret = 42;
      async execute() {
        return { content: [] };
      }
      renderCall() {
        return `secret ${this.secret}`;
      }
      get computed() {
        return this.secret + 1;
      }
    }
    const tool = new ClassTool();
    const adapter = CustomToolAdapter.wrap(tool as unknown as CustomTool, () => ctx("x"));
    const renderCall = adapter.renderCall as unknown as () => string;
    expect(renderCall()).toBe("secret 42");
    expect((adapter as unknown as { computed: number }).computed).toBe(43);
    expect(Object.getOwnPropertyNames(adapter)).not.toContain("constructor");
    expect(adapter.constructor).toBe(CustomToolAdapter);
  });

  it("forwards renderResult's optional 4th args and is absent when the tool has none", () => {
    const renderResult = vi.fn(() => "component");
    const adapter = CustomToolAdapter.wrap(makeTool({ renderResult }), () => ctx("x"));
    const result = { content: [] };
    const options = { expanded: true, isPartial: false };
    expect(adapter.renderResult?.(result, options, "theme", { a: 1 })).toBe("component");
    expect(renderResult).toHaveBeenCalledWith(result, options, "theme", { a: 1 });
    expect(CustomToolAdapter.wrap(makeTool(), () => ctx("x")).renderResult).toBeUndefined();
  });

  it("lets execute failures reject (the host turns them into error results)", async () => {
    const tool = makeTool({
      execute: async () => {
        throw new Error("tool failed");
      },
    });
    await expect(CustomToolAdapter.wrap(tool, () => ctx("x")).execute("id", {})).rejects.toThrow("tool failed");
  });
});
