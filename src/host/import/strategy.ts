/**
 * Which way a tool module is imported on the current runtime (the table in module-import.ts), as
 * pure functions of the file and the runtime. Kept apart from the importing itself, which loads
 * the module map and TypeBox, so that the installer can ask without loading either.
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
/** The extensions a tool module file may have; an entry with none of them names a folder. */
const MODULE_EXTENSIONS: ReadonlySet<string> = new Set([".js", ".mjs", ".cjs", ...TS_EXTENSIONS]);

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

/**
 * Whether importing the tools a manifest entry names (a file, or a folder of tool files) may go
 * through jiti on this runtime: a TypeScript file where Node cannot strip its types (Node 20, or
 * any file under node_modules), and a folder, whose files are not known yet. Never on Bun.
 */
export function mayImportWithJiti(entry: string, runtime: RuntimeInfo = currentRuntime()): boolean {
  if (runtime.bun) return false;
  if (!MODULE_EXTENSIONS.has(path.extname(entry).toLowerCase())) return true;
  return selectImportStrategy(entry, runtime) === "jiti";
}
