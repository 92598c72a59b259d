/**
 * Fixtures of the discovery tests: tool modules, plugin packages and registries written into a
 * temp world (test/helpers/tmp-home.ts), and a compact view of a discovery result.
 */
import path from "node:path";
import type { TmpWorld } from "../helpers/tmp-home.js";
import type { ToolDiscoveryResult } from "../../src/discovery/index.js";

/** Source of a `.ts` tool module whose factory returns one tool named `name`. */
export function tsTool(name: string): string {
  return `import type {} from "node:fs";
const parameters: { type: "object"; properties: Record<string, never> } = { type: "object", properties: {} };
export default function factory() {
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(name)},
    description: "fixture tool " + ${JSON.stringify(name)},
    parameters,
    async execute() {
      return { content: [{ type: "text" as const, text: ${JSON.stringify(name)} }] };
    },
  };
}
`;
}

/** Source of a `.js`/`.mjs` tool module whose factory returns one tool named `name`. */
export function jsTool(name: string): string {
  return `export default function factory() {
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(name)},
    description: "fixture tool " + ${JSON.stringify(name)},
    parameters: { type: "object", properties: {} },
    async execute() {
      return { content: [{ type: "text", text: ${JSON.stringify(name)} }] };
    },
  };
}
`;
}

/** Write a tool module at `file` (relative to the world root or absolute); content from the extension. */
export function writeTool(world: TmpWorld, file: string, name: string): Promise<string> {
  return world.write(file, file.endsWith(".ts") ? tsTool(name) : jsTool(name));
}

/** An installed_plugins.json entry. */
export function installEntry(installPath: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    scope: "user",
    installPath,
    version: "1.0.0",
    installedAt: "2025-01-01T00:00:00.000Z",
    lastUpdated: "2025-01-01T00:00:00.000Z",
    ...extra,
  };
}

/** Paths relative to the world root, in order, with provider and level: easy to compare. */
export function summarize(world: TmpWorld, result: ToolDiscoveryResult): string[] {
  return result.paths.map(
    (p) => `${p.source.provider}/${p.source.level}${p.source.plugin ? `/${p.source.plugin}` : ""}: ${rel(world, p.path)}`,
  );
}

/** Errors as `CODE relative-path`. */
export function errorSummary(world: TmpWorld, result: Pick<ToolDiscoveryResult, "errors">): string[] {
  return result.errors.map((e) => `${e.code} ${rel(world, e.path)}`);
}

export function rel(world: TmpWorld, p: string): string {
  return path.relative(world.root, p).split(path.sep).join("/");
}
