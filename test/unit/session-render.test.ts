import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import {
  createTextComponent,
  renderCallWithFallback,
  renderResultWithFallback,
  renderWithFallback,
} from "../../src/host/render.js";
import { dispatchSessionEvent } from "../../src/host/session.js";
import type { CustomTool, CustomToolContext, CustomToolLogger } from "../../src/core/contract.js";

const ctx = {} as CustomToolContext;
const base = { label: "L", description: "d", parameters: Type.Object({}), execute: async () => ({ content: [] }) };

function recordingLogger() {
  const warnings: { message: string; context?: Record<string, unknown> }[] = [];
  const logger: CustomToolLogger = {
    debug() {},
    info() {},
    warn(message, context) {
      warnings.push({ message, context });
    },
    error() {},
  };
  return { logger, warnings };
}

describe("dispatchSessionEvent", () => {
  it("calls every onSession in order, isolating sync throws and rejections", async () => {
    const seen: string[] = [];
    const tools: CustomTool[] = [
      { ...base, name: "a", onSession: async () => void seen.push("a") },
      {
        ...base,
        name: "b",
        onSession: () => {
          seen.push("b");
          throw new Error("sync boom");
        },
      },
      { ...base, name: "no_hook" },
      {
        ...base,
        name: "c",
        onSession: async () => {
          seen.push("c");
          throw new Error("async boom");
        },
      },
      { ...base, name: "d", onSession: (event) => void seen.push(`d:${event.reason}`) },
    ];
    const { logger, warnings } = recordingLogger();
    const event = { reason: "start", previousSessionFile: undefined } as const;
    const summary = await dispatchSessionEvent(tools, event, ctx, logger);
    expect(seen).toEqual(["a", "b", "c", "d:start"]);
    expect(summary.called).toBe(4);
    expect(summary.failures).toEqual([
      { toolName: "b", error: "sync boom" },
      { toolName: "c", error: "async boom" },
    ]);
    expect(warnings.map((w) => w.context?.tool)).toEqual(["b", "c"]);
    expect(warnings[0]?.message).toBe("Custom tool onSession error");
  });

  it("accepts loaded records, awaits each hook, and survives a throwing logger", async () => {
    const order: string[] = [];
    const slow: CustomTool = {
      ...base,
      name: "slow",
      onSession: () => new Promise<void>((r) => setTimeout(() => (order.push("slow"), r()), 30)),
    };
    const bad: CustomTool = {
      ...base,
      name: "bad",
      onSession: () => {
        throw new Error("x");
      },
    };
    const fast: CustomTool = { ...base, name: "fast", onSession: () => void order.push("fast") };
    const throwingLogger = {
      debug() {},
      info() {},
      warn() {
        throw new Error("logger broke");
      },
      error() {},
    };
    const records = [slow, bad, fast].map((tool) => ({ path: "/p", resolvedPath: "/p", tool }));
    const summary = await dispatchSessionEvent(records, { reason: "shutdown", previousSessionFile: undefined }, ctx, throwingLogger);
    expect(order).toEqual(["slow", "fast"]);
    expect(summary.failures).toHaveLength(1);
  });
});

describe("render fallback", () => {
  it("returns the hook's component when it works", () => {
    const tool: CustomTool = { ...base, name: "r", renderCall: () => "COMPONENT" };
    expect(renderCallWithFallback(tool, { a: 1 }, { expanded: false, isPartial: false }, {})).toBe("COMPONENT");
  });

  it("falls back to a text component when renderCall throws", () => {
    const { logger, warnings } = recordingLogger();
    const tool: CustomTool = {
      ...base,
      name: "r",
      renderCall: () => {
        throw new Error("render boom");
      },
    };
    const out = renderCallWithFallback(tool, { a: 1 }, { expanded: false, isPartial: false }, {}, logger) as {
      render(width: number): string[];
    };
    expect(out.render(80)).toEqual(['r {"a":1}']);
    expect(warnings[0]?.context?.error).toBe("render boom");
  });

  it("falls back to the result's text when renderResult throws, and passes args", () => {
    let gotArgs: unknown;
    const tool: CustomTool = {
      ...base,
      name: "r",
      renderResult: (_result, _options, _theme, args) => {
        gotArgs = args;
        throw new Error("nope");
      },
    };
    const result = {
      content: [
        { type: "text" as const, text: "line one\nline two" },
        { type: "image" as const, data: "", mimeType: "image/png" },
      ],
    };
    const out = renderResultWithFallback(tool, result, { expanded: true, isPartial: false }, {}, { q: 1 }) as {
      render(width: number): string[];
    };
    expect(gotArgs).toEqual({ q: 1 });
    expect(out.render(80)).toEqual(["line one", "line two", "[image image/png]"]);
  });

  it("returns undefined without a hook (the host's default rendering applies)", () => {
    const tool: CustomTool = { ...base, name: "r" };
    expect(renderResultWithFallback(tool, { content: [] }, { expanded: false, isPartial: false }, {})).toBeUndefined();
  });

  it("never throws even when the fallback text itself throws", () => {
    const out = renderWithFallback(
      () => {
        throw new Error("a");
      },
      () => {
        throw new Error("b");
      },
    ) as { render(width: number): string[] };
    expect(out.render(10)).toEqual([""]);
  });

  it("text components cut lines to the width", () => {
    expect(createTextComponent("abcdefghij\nxy").render(5)).toEqual(["abcd…", "xy"]);
  });
});
