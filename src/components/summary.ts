/**
 * Words for a plugin's components: the one-line summary `list` prints ("2 skills, 1 command,
 * 4 hooks, 1 MCP server") and the counts `--json` carries.
 */
import { COMPONENT_KINDS, KIND_WORDS, type Component, type ComponentKind } from "./types.js";

/** How many components of each kind, kinds with none left out. */
export function countByKind(components: readonly Pick<Component, "kind">[]): Partial<Record<ComponentKind, number>> {
  const counts: Partial<Record<ComponentKind, number>> = {};
  for (const c of components) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
  return counts;
}

/**
 * "2 skills, 1 command, 1 MCP server"; "no components" when empty. A pi package's own components
 * are said apart ("1 extension; pi only, not loaded by xcsh: 3 prompt templates"): counted with
 * the rest, a user would expect xcsh to load them.
 */
export function summarizeComponents(components: readonly Pick<Component, "kind" | "piOnly">[]): string {
  const pi = components.filter((c) => c.piOnly);
  if (pi.length === 0) return summarizeKinds(components);
  const rest = components.filter((c) => !c.piOnly);
  return `${rest.length ? `${summarizeKinds(rest)}; ` : ""}pi only, not loaded by xcsh: ${summarizeKinds(pi)}`;
}

function summarizeKinds(components: readonly Pick<Component, "kind">[]): string {
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
