/**
 * Render hooks are plugin code running inside the host's TUI loop; a throw there would break the
 * whole screen. `renderWithFallback` runs a hook and, when it throws, returns a plain-text
 * component instead. The fallback is the smallest thing the host's TUI can draw: an object with
 * `render(width): string[]` (the shape of the host's `Text` component), so the host can put it
 * where the hook's component would have gone without knowing it failed. An absent hook returns
 * `undefined`, which tells the host to use its default rendering.
 */
import { errorMessage } from "../core/errors.js";
import type { Component, CustomTool, CustomToolLogger, CustomToolResult, RenderResultOptions, Theme } from "../core/contract.js";

/** A plain-text TUI component: lines cut to the width the host asks for. */
export interface TextComponent {
  readonly text: string;
  render(width: number): string[];
  /** The host's components may be invalidated on resize; text has nothing cached. */
  invalidate(): void;
}

/** A `TextComponent` showing `text`, one line per `\n`, each line truncated to `width`. */
export function createTextComponent(text: string): TextComponent {
  return {
    text,
    render(width: number) {
      const max = Math.max(1, Math.floor(width));
      return text.split("\n").map((line) => (line.length > max ? `${line.slice(0, Math.max(0, max - 1))}…` : line));
    },
    invalidate() {},
  };
}

/** Run `render`; when it throws, log and return a text component of `fallbackText()`. */
export function renderWithFallback(
  render: () => Component,
  fallbackText: () => string,
  logger?: CustomToolLogger,
  hookName = "render",
): Component | TextComponent {
  try {
    return render();
  } catch (error) {
    try {
      logger?.warn(`Custom tool ${hookName} error`, { error: errorMessage(error) });
    } catch {
      // the fallback must still be returned
    }
    let text: string;
    try {
      text = fallbackText();
    } catch {
      text = "";
    }
    return createTextComponent(text);
  }
}

/** `tool.renderCall(args, options, theme)`, or text `name args` when it throws; undefined without a hook. */
export function renderCallWithFallback(
  tool: CustomTool,
  args: unknown,
  options: RenderResultOptions,
  theme: Theme,
  logger?: CustomToolLogger,
): Component | TextComponent | undefined {
  const hook = tool.renderCall;
  if (typeof hook !== "function") return undefined;
  return renderWithFallback(
    () => hook.call(tool, args as never, options, theme),
    () => `${tool.name} ${safeJson(args)}`,
    logger,
    "renderCall",
  );
}

/** `tool.renderResult(result, options, theme, args)`, or the result's text when it throws. */
export function renderResultWithFallback(
  tool: CustomTool,
  result: CustomToolResult,
  options: RenderResultOptions,
  theme: Theme,
  args?: unknown,
  logger?: CustomToolLogger,
): Component | TextComponent | undefined {
  const hook = tool.renderResult;
  if (typeof hook !== "function") return undefined;
  return renderWithFallback(
    () => hook.call(tool, result, options, theme, args as never),
    () => resultText(result),
    logger,
    "renderResult",
  );
}

/** The text parts of a tool result, images as `[image <mime>]`. */
export function resultText(result: CustomToolResult): string {
  if (!result || !Array.isArray(result.content)) return "";
  return result.content
    .map((part) => (part?.type === "text" ? part.text : part?.type === "image" ? `[image ${part.mimeType}]` : ""))
    .join("\n");
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "";
  } catch {
    return String(value);
  }
}
