/**
 * Context cost: what a component adds to the model's context, as a token estimate.
 *
 * Method: one token per 4 characters of the text the model is given, rounded up
 * (`estimateTokens`). It is the usual rule of thumb for English prose and JSON with current
 * tokenizers; it needs no tokenizer (none of which is the host model's), and it errs the same
 * way for every plugin, which is what comparing plugins needs. What is counted:
 *
 * | component | always on (every session) | on invoke |
 * |---|---|---|
 * | tool | name + description + parameter schema (as JSON) | 0 (results vary) |
 * | skill, command | name + description (0 with `disable-model-invocation: true`) | the body |
 * | agent | name + description | the body (the subagent's prompt) |
 * | output style | 0 | the body, while the style is active |
 * | MCP server | unknown: its tools are listed by the server when it runs | 0 |
 * | hook, LSP server, monitor, bin/, extension | 0: they run outside the model's context | 0 |
 */
import type { Component, ComponentCost } from "./types.js";

/** Tokens of `text`: characters / 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The cost of a listed (model-visible) entry: its name and description. */
export function listingCost(name: string, description: string | undefined, body: string, options: { hidden?: boolean } = {}): ComponentCost {
  return { alwaysOn: options.hidden ? 0 : estimateTokens(`${name}: ${description ?? ""}`), onInvoke: estimateTokens(body) };
}

/** The cost of a tool: its name, description and parameter schema are sent with every request. */
export function toolCost(name: string, description: unknown, parameters: unknown): ComponentCost {
  const text = `${name} ${typeof description === "string" ? description : ""} ${parameters === undefined ? "" : JSON.stringify(parameters)}`;
  return { alwaysOn: estimateTokens(text), onInvoke: 0 };
}

/** Components that cost nothing in context. */
export const NO_COST: ComponentCost = Object.freeze({ alwaysOn: 0, onInvoke: 0 }) as ComponentCost;

/** Totals of a list of components; `unknown` counts those whose always-on cost is not knowable. */
export function totalCost(components: readonly Pick<Component, "cost">[]): { alwaysOn: number; onInvoke: number; unknown: number } {
  let alwaysOn = 0;
  let onInvoke = 0;
  let unknown = 0;
  for (const { cost } of components) {
    if (cost.alwaysOn === null) unknown++;
    else alwaysOn += cost.alwaysOn;
    onInvoke += cost.onInvoke;
  }
  return { alwaysOn, onInvoke, unknown };
}
