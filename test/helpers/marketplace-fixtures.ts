/**
 * Marketplace fixtures: catalogs in xcsh and Claude Code formats, plugin folders with tool
 * modules, and the engine context for a temp world (isolated git, loopback-only timeouts).
 */
import path from "node:path";
import type { MarketplaceContext } from "../../src/marketplace/index.js";
import { isolatedGitEnv } from "./git-remote.js";
import type { TmpWorld } from "./tmp-home.js";

/** Source of a `.js` tool module whose factory returns one tool named `name` (text `text`). */
export function toolModule(name: string, text = name): string {
  return `export default function factory() {
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(name)},
    description: "fixture tool " + ${JSON.stringify(name)},
    parameters: { type: "object", properties: {} },
    async execute() {
      return { content: [{ type: "text", text: ${JSON.stringify(text)} }] };
    },
  };
}
`;
}

/** Files of a plugin folder at `prefix`: `tools/<tool>.mjs` and a plugin.json in `flavour`'s folder. */
export function pluginFiles(prefix: string, name: string, tools: string[], options: { version?: string; flavour?: "xcsh" | "claude"; text?: string } = {}): Record<string, string | object> {
  const files: Record<string, string | object> = {};
  const folder = options.flavour === "claude" ? ".claude-plugin" : ".xcsh-plugin";
  files[path.posix.join(prefix, folder, "plugin.json")] = { name, ...(options.version ? { version: options.version } : {}), description: `the ${name} plugin` };
  for (const tool of tools) files[path.posix.join(prefix, "tools", `${tool}.mjs`)] = toolModule(tool, options.text ?? tool);
  return files;
}

/** A catalog document. */
export function catalog(name: string, plugins: Record<string, unknown>[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { name, owner: { name: "Fixture Owner", email: "owner@example.com" }, ...extra, plugins };
}

/** The catalog file's path in a repository of `flavour`. */
export function catalogPath(flavour: "xcsh" | "claude" = "xcsh"): string {
  return flavour === "claude" ? ".claude-plugin/marketplace.json" : ".xcsh-plugin/marketplace.json";
}

/** The engine context of a temp world. */
export function marketplaceCtx(w: TmpWorld, extra: Partial<MarketplaceContext> = {}): MarketplaceContext {
  return {
    roots: { home: w.home, xcshHome: w.xcshHome },
    cwd: w.cwd,
    env: isolatedGitEnv(w.home),
    gitTimeoutMs: 30_000,
    fetchTimeoutMs: 5_000,
    lockWaitMs: 5_000,
    // makeTmpWorld trusts its project (a hostile world's tests pass their own answer).
    projectTrusted: true,
    ...extra,
  };
}
