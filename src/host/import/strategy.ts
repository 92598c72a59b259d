/**
 * Which way a tool module is imported on the current runtime (the table in module-import.ts), as
 * pure functions of the file and the runtime. Kept apart from the importing itself, which loads
 * the module map and TypeBox.
 */
import path from "node:path";

/** How a module was (or will be) imported. */
export type ImportStrategy = "bun" | "node-native" | "jiti";

/** What the strategy choice depends on; `detectRuntime()` reads the current process. */
export interface RuntimeInfo {
  bun: boolean;
  /** Node can import `.ts` natively (`process.features.typescript`). */
  stripsTypes: boolean;
}

export const TS_EXTENSIONS: ReadonlySet<string> = new Set([".ts", ".mts", ".cts"]);

/** True when running under Bun. */
export function isBun(): boolean {
  return typeof process.versions.bun === "string";
}

/** The current process's runtime. */
export function detectRuntime(): RuntimeInfo {
  const features = process.features as { typescript?: unknown };
  return { bun: isBun(), stripsTypes: Boolean(features.typescript) };
}

// The process's runtime does not change: read once, not before every import.
let runtimeOnce: RuntimeInfo | undefined;

/** `detectRuntime()`, read once per process. */
export function currentRuntime(): RuntimeInfo {
  runtimeOnce ??= detectRuntime();
  return runtimeOnce;
}

/** Pick the first strategy for `file` (pure). */
export function selectImportStrategy(file: string, runtime: RuntimeInfo = currentRuntime()): ImportStrategy {
  if (runtime.bun) return "bun";
  if (!TS_EXTENSIONS.has(path.extname(file).toLowerCase())) return "node-native";
  if (runtime.stripsTypes && !file.split(/[\\/]/).includes("node_modules")) return "node-native";
  return "jiti";
}
