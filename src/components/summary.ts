/**
 * Words for a plugin's components: the one-line summary `list` prints ("3 skills, 2 hooks,
 * 1 MCP server"), the counts `--json` carries and the inventory `show --json` carries, all as
 * Claude Code's `claude plugin details` files them: a commands/ Markdown file is a skill
 * (`filedAs`), and hooks count once per event however many handlers it has.
 */
import { COMPONENT_KINDS, KIND_WORDS, type Component, type ComponentKind } from "./types.js";

type Filed = Pick<Component, "kind" | "name"> & Partial<Pick<Component, "filedAs" | "event" | "hookType">>;

/** The kind a component is filed under. */
export function filedKind(c: Filed): ComponentKind {
  return c.filedAs ?? c.kind;
}

/**
 * What a component counts as, one per name and kind: a hooks.json handler is one of its event's
 * (Claude Code lists events); an xcsh hooks/pre|post script is its own hook.
 */
function countedName(c: Filed): string {
  return c.kind === "hook" && c.hookType !== "script" && c.event !== undefined ? c.event : c.name;
}

/** The names filed under each kind, in scan order, each once for hooks (by event). */
export function namesByKind(components: readonly Filed[]): Partial<Record<ComponentKind, string[]>> {
  const names: Partial<Record<ComponentKind, string[]>> = {};
  for (const c of components) {
    const kind = filedKind(c);
    const list = (names[kind] ??= []);
    const name = countedName(c);
    if (c.kind !== "hook" || !list.includes(name)) list.push(name);
  }
  return names;
}

/** How many components of each kind, kinds with none left out. */
export function countByKind(components: readonly Filed[]): Partial<Record<ComponentKind, number>> {
  return Object.fromEntries(Object.entries(namesByKind(components)).map(([kind, names]) => [kind, names.length]));
}

/**
 * The inventory as `claude plugin details` lists it: skills (commands among them), agents,
 * hook events, MCP and LSP servers by name. What Claude Code does not list (xcsh tools, output
 * styles, monitors, bin/) is left to the components list.
 */
export function claudeInventory(components: readonly Filed[]): { skills: string[]; agents: string[]; hooks: string[]; mcpServers: string[]; lspServers: string[] } {
  const names = namesByKind(components.filter((c) => c.kind !== "hook" || c.hookType !== "script"));
  return { skills: names.skill ?? [], agents: names.agent ?? [], hooks: names.hook ?? [], mcpServers: names["mcp-server"] ?? [], lspServers: names["lsp-server"] ?? [] };
}

/**
 * "2 skills, 1 command, 1 MCP server"; "no components" when empty. A pi package's own components
 * are said apart ("1 extension; pi only, not loaded by xcsh: 3 prompt templates"): counted with
 * the rest, a user would expect xcsh to load them.
 */
export function summarizeComponents(components: readonly (Filed & Pick<Component, "piOnly">)[]): string {
  const pi = components.filter((c) => c.piOnly);
  if (pi.length === 0) return summarizeKinds(components);
  const rest = components.filter((c) => !c.piOnly);
  return `${rest.length ? `${summarizeKinds(rest)}; ` : ""}pi only, not loaded by xcsh: ${summarizeKinds(pi)}`;
}

function summarizeKinds(components: readonly Filed[]): string {
  const counts = countByKind(components);
  const parts = COMPONENT_KINDS.flatMap((kind) => {
    const n = counts[kind];
    return n ? [`${n} ${KIND_WORDS[kind][n === 1 ? 0 : 1]}`] : [];
  });
  return parts.length ? parts.join(", ") : "no components";
}

/** "~1.2k tokens" style figure for a token estimate. */
export function formatTokens(tokens: number): string {
  return tokens >= 10_000 ? `~${Math.round(tokens / 1000)}k` : tokens >= 1000 ? `~${(tokens / 1000).toFixed(1)}k` : `~${tokens}`;
}
