/**
 * The messages between `xcsh-tools validate` and its module-checking child process (IPC, JSON).
 * Tools may print to stdout, so nothing travels over stdio.
 */

import type { DefinitionProblem, LazyPart } from "../host/lazy-definition.js";

/** Parent → child: check these modules, in order. */
export interface CheckRequest {
  type: "check";
  modules: string[];
  cwd: string;
  importTimeoutMs: number;
  factoryTimeoutMs: number;
  /** Roots for the transpile cache, so the child never writes to the real HOME in tests. */
  home?: string;
  xcshHome?: string;
  cacheDir?: string;
  /** `api.pi`: the module `--pi` names (a path or package, resolved from `cwd`); default the host package if it resolves. */
  piModule?: string;
  /**
   * The folders a bare import of a checked module may resolve in (host/import/fence.ts); a
   * package found only above them is refused (`EIMPORT_OUTSIDE`). Absent: no fence.
   */
  confineTo?: string[];
  /** Modules of plugins that declare `staticTools`: their definitions are recorded and proved static (docs/lazy-tools.md). */
  staticModules?: string[];
}

/**
 * The roots a checker started ahead prepares its imports for (argv[2] of the child: a
 * `PrepareRequest` without its `type`, as JSON; or a later `prepare` message): the module map,
 * Node's resolve hooks and shims. A request with the same roots finds them ready; any
 * other request works as well, only without the head start.
 */
export interface ImportRoots {
  home?: string;
  xcshHome?: string;
  cacheDir?: string;
}

/**
 * Parent → child, at most once and before any `check`: prepare the imports for `roots` now. A
 * checker started before its roots were known (the install's transaction folder does not exist
 * while specs are resolved) gets them this way, so its start and its preparation both overlap
 * the parent's work.
 */
export interface PrepareRequest {
  type: "prepare";
  roots: ImportRoots;
}

/** Just the roots of `options` (a request, a warm-up's options), without empty ones. */
export function importRootsOf(options: ImportRoots): ImportRoots {
  return {
    ...(options.home ? { home: options.home } : {}),
    ...(options.xcshHome ? { xcshHome: options.xcshHome } : {}),
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
  };
}

/** What the child learned about one returned tool (functions reduced to booleans). */
export interface ToolDescriptor {
  /** Index in the factory's returned array; `undefined` when it returned one tool. */
  index?: number;
  name?: string;
  label?: unknown;
  description?: unknown;
  /** `parameters` as JSON (TypeBox symbols dropped), or `undefined` when not serialisable. */
  parameters?: unknown;
  hasExecute: boolean;
  hidden?: unknown;
  deferrable?: unknown;
  /** For a module in `staticModules` whose tool proved static: what a lazy tool needs besides the fields above. */
  lazy?: LazyPart;
  /** For a module in `staticModules`: why this tool's definition is not static. */
  staticProblem?: DefinitionProblem;
  /** Problems found by the loader's shape check (`checkTool`). */
  problems: { code: string; field: string; message: string }[];
}

/** A module-level failure (import, export, factory). */
export interface ModuleFailure {
  code: string;
  message: string;
}

/** Child → parent messages. */
export type ChildMessage =
  | { type: "ready" }
  | { type: "start"; index: number }
  | { type: "result"; index: number; tools: ToolDescriptor[]; failure?: ModuleFailure; ms: number }
  | { type: "done" };
