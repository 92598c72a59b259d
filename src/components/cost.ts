/**
 * Context cost: what a component adds to the model's context, as a token estimate.
 *
 * Method: Claude Code's own (`claude plugin details`, 2.1.332, when it cannot ask the API to
 * count): one token per 4 characters of the text the model is given, rounded
 * (`estimateTokens`). It needs no tokenizer (none of which is the host model's), errs the same
 * way for every plugin, and lets `show` agree with Claude Code within a few percent
 * (test/integration/conformance-inventory.test.ts). What is counted:
 *
 * | component | always on (every session) | on invoke |
 * |---|---|---|
 * | tool | name + description + parameter schema (as JSON) | 0 (results vary) |
 * | skill, command | `plugin:name description when_to_use` as the skill listing shows it (0 with `disable-model-invocation: true`) | the body, trimmed |
 * | agent | `name description when_to_use` | the body (the subagent's prompt), trimmed |
 * | output style | 0 | the body, while the style is active |
 * | MCP server | unknown: its tools are listed by the server when it runs | 0 |
 * | hook, LSP server, monitor, bin/, extension | 0: they run outside the model's context | 0 |
 *
 * The listing text is Claude Code's: a skill's or command's name carries the plugin's name
 * (`python-development:async-patterns`); a missing description is the body's first line
 * (headings unmarked, 100 characters at most); skill and command descriptions have runs of
 * control characters (newlines) made one space and `<`, `>` written as `&lt;`, `&gt;`.
 */
import type { Component, ComponentCost } from "./types.js";

/** Tokens of `text`: characters / 4, rounded (Claude Code's estimate without a tokenizer). */
export function estimateTokens(text: string): number {
  return Math.round(text.length / 4);
}

/** What a listed (model-visible) Markdown component shows the model and brings when invoked. */
export interface Listing {
  kind: "skill" | "command" | "agent";
  /** The name it is listed under (skills and commands: with the plugin's name in front). */
  listedName: string;
  description?: string;
  whenToUse?: string;
  body: string;
}

/** Claude Code's description when the frontmatter has none: the body's first line, heading marks off. */
function firstLine(body: string): string {
  for (const raw of body.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    const text = /^#+\s+(\S.*)$/.exec(line)?.[1] ?? line;
    return text.length > 100 ? `${text.slice(0, 97)}...` : text;
  }
  return "Skill";
}

/** A skill's or command's description as the skill listing carries it. */
function listedText(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, " ").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** The listing name of a skill or command: `plugin:name`, characters other than letters, digits, `_` and `-` made `-`. */
export function listedSkillName(plugin: string, name: string): string {
  return `${plugin}:${name.replace(/[^a-zA-Z0-9_-]/g, "-")}`;
}

/**
 * The cost of a listed entry, as `claude plugin details` prices it. A skill or command the model
 * may not invoke (`disable-model-invocation: true`) is priced always-on too, as details does
 * (issue 45: our estimates follow Claude Code's; docs/conformance.md says why it is kept).
 */
export function listingCost(entry: Listing): ComponentCost {
  const description = entry.description?.trim() || firstLine(entry.body);
  const shown = entry.kind === "agent" ? (t: string) => t : listedText;
  const text = [entry.listedName, shown(description), entry.whenToUse === undefined ? "" : shown(entry.whenToUse)].filter(Boolean).join(" ");
  return { alwaysOn: estimateTokens(text), onInvoke: estimateTokens(entry.body.trim()) };
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
