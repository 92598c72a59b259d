/**
 * Fixtures of the discovery tests: tool modules, plugin packages and registries written into a
 * temp world (test/helpers/tmp-home.ts), and a compact view of a discovery result.
 */
import path from "node:path";
import { expect } from "vitest";
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

/**
 * After a refresh that took a shortcut (kept a view, scanned once): a full refresh finds nothing
 * to write and the boot's check finds the index fresh, i.e. the index is what a scan gives.
 * `scans`: the test's counter of discovery scans (its mock of discoverToolPaths); the functions are
 * the test's imports, made after that mock.
 */
export async function expectIndexAsAScanLeavesIt(
  world: TmpWorld,
  scans: { calls: number },
  boot: { refreshBootIndex: typeof import("../../src/boot/index.js").refreshBootIndex; checkBootIndex: typeof import("../../src/boot/index.js").checkBootIndex },
): Promise<void> {
  const options = { home: world.home, xcshHome: world.xcshHome, env: {}, cwd: world.cwd };
  scans.calls = 0;
  const full = await boot.refreshBootIndex({ ...options, validate: false });
  expect(scans.calls).toBeGreaterThan(0);
  expect(full.written).toBe(false);
  expect(await boot.checkBootIndex(options)).toMatchObject({ fresh: true });
}
