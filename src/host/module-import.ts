/**
 * Importing a tool module the way the host does, on every runtime the host may run on:
 *
 * | runtime                               | .ts / .mts / .cts                   | .js / .mjs / .cjs |
 * |---------------------------------------|-------------------------------------|-------------------|
 * | Bun                                   | native `import()`                   | native            |
 * | Node that strips types (22.18+)       | native, jiti when stripping refuses | native            |
 * | Node without stripping (20)           | jiti (one instance, on-disk cache)  | native            |
 *
 * Stripping refuses files under node_modules (npm plugins live there, so those go to jiti
 * directly), TypeScript-only syntax such as enums, and `./x.js` imports that only exist as `./x.ts`;
 * each of those falls back to jiti. Before any import the module map (module-map.ts) is made
 * visible to the chosen strategy, so bare `@sinclair/typebox`, `xcsh-tools` and host packages
 * resolve to the process's single instance from a folder without node_modules.
 *
 * Failures are `XcshToolsError`s: `EIMPORT` (the import threw) and `EIMPORT_TIMEOUT` (it never
 * settled within `importTimeoutMs`).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { XcshToolsError, errorMessage, nodeErrorCode } from "../core/errors.js";
import { resolveRoots, xcshPaths } from "../core/paths.js";
import { registerBunModules } from "./import/bun.js";
import { getModuleRegistry, registerModules, writeShims } from "./import/module-map.js";
import { currentRuntime, selectImportStrategy, TS_EXTENSIONS, type ImportStrategy } from "./import/strategy.js";
import { raceTimeout } from "./timeout.js";

export { detectRuntime, selectImportStrategy, type ImportStrategy, type RuntimeInfo } from "./import/strategy.js";

/** Options of `importToolModule` (a subset of the loader's options). */
export interface ImportToolModuleOptions {
  /** Bare names tools import that must be the host's instances (see `LoadCustomToolsOptions`). */
  modules?: Record<string, object>;
  /** jiti's transpile cache folder; shims go to `<cacheDir>/shims`. Default under the xcsh root. */
  cacheDir?: string;
  home?: string;
  xcshHome?: string;
  env?: NodeJS.ProcessEnv;
  /** Default 10000; 0 disables the timeout. */
  importTimeoutMs?: number;
}

/** A module namespace and the strategy that produced it. */
export interface ImportedToolModule {
  module: Record<string, unknown>;
  strategy: ImportStrategy;
}

export const DEFAULT_IMPORT_TIMEOUT_MS = 10_000;

/** Errors of Node's type stripping after which jiti can still load the file. */
const STRIP_FALLBACK_CODES = new Set([
  "ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING",
  "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX",
  "ERR_UNKNOWN_FILE_EXTENSION",
  "ERR_MODULE_NOT_FOUND",
]);

/**
 * Do ahead, writing nothing, what the first `importToolModule` with `options` would do before
 * importing: put the module map in place and, on Node, register the resolve hook. For a process
 * that imports later and is idle now: the validation child while an install fetches and
 * extracts. The shims are written by the first import.
 */
export async function prepareToolImports(options: ImportToolModuleOptions = {}): Promise<void> {
  await registerModulesOnce(options);
  if (currentRuntime().bun) {
    registerBunModules();
    return;
  }
  const dirs = importDirs(options);
  const { ensureNodeHooks, getNodeHookShimDir } = await loadNodeHooks();
  // The hook only maps a name once its shim file exists, so registering before writing is safe.
  if (getNodeHookShimDir() === undefined) await ensureNodeHooks(dirs.shimDir, dirs.cacheDir);
}

/** Where jiti caches transpiled files and where module shims are written. */
export function resolveImportDirs(options: ImportToolModuleOptions = {}): { cacheDir: string; shimDir: string } {
  if (options.cacheDir) return { cacheDir: options.cacheDir, shimDir: path.join(options.cacheDir, "shims") };
  const paths = xcshPaths(resolveRoots(options));
  return { cacheDir: paths.transpileCache, shimDir: paths.moduleShims };
}

/**
 * Import the tool module at `file` (an absolute path) with the host's module map in place.
 * Throws `XcshToolsError` `EIMPORT` or `EIMPORT_TIMEOUT`.
 */
export function importToolModule(file: string, options: ImportToolModuleOptions = {}): Promise<ImportedToolModule> {
  const timeoutMs = options.importTimeoutMs ?? DEFAULT_IMPORT_TIMEOUT_MS;
  // A promise chain, not an async function: a boot runs this once per tool, as cold code.
  let work: Promise<ImportedToolModule>;
  try {
    work = importWithStrategy(file, options);
  } catch (error) {
    work = Promise.reject(error);
  }
  return raceTimeout(work, timeoutMs, () => importTimeout(file, timeoutMs)).catch((error: unknown) => {
    if (!(error instanceof XcshToolsError && error.code === "EIMPORT_TIMEOUT")) throw new XcshToolsError("EIMPORT", errorMessage(error), { file, cause: error });
    // The import may still settle later; its outcome no longer matters.
    work.catch(() => undefined);
    throw error;
  });
}

/** One import's outcome, which never rejects: a boot awaits it at its turn, maybe after later ones failed. */
export type ImportOutcome = { ok: true; value: ImportedToolModule } | { ok: false; error: unknown };

/**
 * Import `files` under Bun all started together, as Bun's own floor does (`Promise.all` of
 * `import()`): the module map is put in place once for the batch and each file is one bare
 * `import()` with one settle callback, where `importToolModule` per file paid an async strategy
 * step, a timeout race and an error wrapper each, as cold code (~10 ms of CPU over 200 seed-style
 * tools, docs/benchmarks.md sessions 28 and 30). Every guarantee of `importToolModule` is kept per
 * file: one deadline for the batch is the deadline each import would have had, started at the same
 * moment; a file that never settles by then is `EIMPORT_TIMEOUT` and one that throws `EIMPORT`,
 * each naming its own file, without touching its siblings' outcomes. Resolves once every import
 * settled or the deadline passed, with one outcome per file, in order. Bun only: on Node an import
 * may fall back to jiti, which the per-file path decides (`importToolModule`).
 */
export function importToolModulesUnderBun(files: readonly string[], options: ImportToolModuleOptions = {}): Promise<ImportOutcome[]> {
  const timeoutMs = options.importTimeoutMs ?? DEFAULT_IMPORT_TIMEOUT_MS;
  const outcomes: (ImportOutcome | undefined)[] = new Array<ImportOutcome | undefined>(files.length);
  let left = files.length;
  let closed = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const settle = (index: number, outcome: ImportOutcome): void => {
    // After the deadline an outcome no longer counts (the batch answered EIMPORT_TIMEOUT for it).
    if (closed || outcomes[index]) return;
    outcomes[index] = outcome;
    if (--left === 0) finish();
  };
  const failed = (file: string, error: unknown): ImportOutcome => ({ ok: false, error: new XcshToolsError("EIMPORT", errorMessage(error), { file, cause: error }) });
  const start = (): void => {
    registerBunModules();
    files.forEach((file, index) => {
      let work: Promise<Record<string, unknown>>;
      try {
        work = importNatively(file, true);
      } catch (error) {
        work = Promise.reject(error);
      }
      work.then(
        (module) => settle(index, { ok: true, value: { module, strategy: "bun" } }),
        (error: unknown) => settle(index, failed(file, error)),
      );
    });
  };
  if (left === 0) return Promise.resolve([]);
  if (registered.get(options) === true) start();
  else registerModulesOnce(options).then(start, (error: unknown) => files.forEach((file, index) => settle(index, failed(file, error))));
  const answer = (): ImportOutcome[] => {
    closed = true;
    // Array.from, not map: map skips the holes, which are exactly the imports still pending.
    return Array.from(outcomes, (outcome, index) => outcome ?? { ok: false, error: importTimeout(files[index] as string, timeoutMs) });
  };
  return raceTimeout(finished, timeoutMs, () => new Error("deadline")).then(answer, answer);
}

function importTimeout(file: string, timeoutMs: number): XcshToolsError {
  const hint = "Look for a top-level await that never resolves in the module or one of its imports.";
  return new XcshToolsError("EIMPORT_TIMEOUT", `Importing ${file} did not settle within ${timeoutMs} ms`, { file, hint });
}

// Per-options memo: a loader passes one options object for all of its imports, and resolving the
// xcsh root's paths for each of a thousand tools showed up in boot profiles.
const dirsByOptions = new WeakMap<ImportToolModuleOptions, { cacheDir: string; shimDir: string }>();

function importDirs(options: ImportToolModuleOptions): { cacheDir: string; shimDir: string } {
  let dirs = dirsByOptions.get(options);
  if (!dirs) {
    dirs = resolveImportDirs(options);
    dirsByOptions.set(options, dirs);
  }
  return dirs;
}

// Per-options memo of the module map being in place: a loader passes one options object for all
// of its imports, and the registry only grows (a name's first instance stays), so once is enough.
// The registration in flight is shared too (a boot starts all of its imports before it settles);
// `true` once it is done, and a failed one is forgotten, so the next import tries again.
const registered = new WeakMap<ImportToolModuleOptions, Promise<void> | true>();

function registerModulesOnce(options: ImportToolModuleOptions): Promise<void> {
  const known = registered.get(options);
  if (known) return known === true ? Promise.resolve() : known;
  const pending = registerModules(options.modules).then(() => void registered.set(options, true));
  pending.catch(() => registered.delete(options));
  registered.set(options, pending);
  return pending;
}

function importWithStrategy(file: string, options: ImportToolModuleOptions): Promise<ImportedToolModule> {
  const strategy = selectImportStrategy(file);
  // Under Bun, once the module map is in place, an import is the runtime's own and nothing more.
  if (strategy === "bun" && registered.get(options) === true) return importUnderBun(file);
  return importAfterRegistering(file, strategy, options);
}

function importUnderBun(file: string): Promise<ImportedToolModule> {
  registerBunModules();
  return importNatively(file, true).then((module) => ({ module, strategy: "bun" }));
}

/** jiti (and the module holding it) is loaded only when a file needs it: most boots on Node 22+ and Bun never do. */
async function importWithJiti(file: string, cacheDir: string): Promise<Record<string, unknown>> {
  return (await import("./import/jiti.js")).importWithJiti(file, cacheDir);
}

async function importAfterRegistering(file: string, strategy: ImportStrategy, options: ImportToolModuleOptions): Promise<ImportedToolModule> {
  await registerModulesOnce(options);
  if (strategy === "bun") return importUnderBun(file);
  const dirs = importDirs(options);
  if (strategy === "jiti") return { module: await importWithJiti(file, dirs.cacheDir), strategy };
  await prepareNodeHooks(dirs, options);
  try {
    return { module: await importNatively(file), strategy };
  } catch (error) {
    if (!isStripRefusal(file, error)) throw error;
    return { module: await importWithJiti(file, dirs.cacheDir), strategy: "jiti" };
  }
}

function isStripRefusal(file: string, error: unknown): boolean {
  if (!TS_EXTENSIONS.has(path.extname(file).toLowerCase())) return false;
  const code = nodeErrorCode(error);
  if (code === undefined || !STRIP_FALLBACK_CODES.has(code)) return false;
  // A missing tool file is a real error, not something jiti can fix.
  return code !== "ERR_MODULE_NOT_FOUND" || existsSync(file);
}

// Shims are checked once per options object (a loader passes one for all of its imports) and
// again when the registry grew (it only grows: a name's first instance stays), not once per
// tool. A later loader checks again, so a shim folder removed in between is written anew.
const shimsChecked = new WeakMap<ImportToolModuleOptions, { requested: string; dir: string; size: number }>();

// Loaded on first use: only Node's native strategy needs it (and it pulls in worker_threads).
let nodeHooks: Promise<typeof import("./import/node-hooks.js")> | undefined;

function loadNodeHooks(): Promise<typeof import("./import/node-hooks.js")> {
  nodeHooks ??= import("./import/node-hooks.js");
  return nodeHooks;
}

/** Write Node's compile cache now (node-hooks.ts), if this process imported tools natively. */
export async function flushToolCompileCache(): Promise<void> {
  if (nodeHooks) (await nodeHooks).flushCompileCache();
}

async function prepareNodeHooks(dirs: { cacheDir: string; shimDir: string }, options: ImportToolModuleOptions): Promise<void> {
  const { ensureNodeHooks, getNodeHookShimDir } = await loadNodeHooks();
  const shimDir = dirs.shimDir;
  const requested = getNodeHookShimDir() ?? shimDir;
  const size = getModuleRegistry().size;
  let checked = shimsChecked.get(options);
  if (checked?.requested !== requested || checked.size !== size) {
    let dir = requested;
    try {
      writeShims(dir);
    } catch {
      // A read-only xcsh root must not stop tools from loading: use a per-user temp folder.
      // Loaded only then: atomic-fs.ts pulls in node:fs/promises, ~3 ms of CPU under Bun, for a rare case.
      const { privateTempDir } = await import("../core/atomic-fs.js");
      dir = privateTempDir(`xcsh-tools-shims-${process.getuid?.() ?? "user"}`);
      writeShims(dir);
    }
    checked = { requested, dir, size };
    shimsChecked.set(options, checked);
  }
  await ensureNodeHooks(checked.dir, dirs.cacheDir);
}

/**
 * Bun imports an absolute path as it is; a file URL is built only for Node, or for a path Bun
 * could read as a URL (a `?` query, a `#` fragment, a `%` escape). Building a URL per tool cost
 * about 2 ms of a 200-tool boot under Bun.
 */
function importNatively(file: string, pathAsIs = false): Promise<Record<string, unknown>> {
  const specifier = pathAsIs && path.isAbsolute(file) && !/[?#%]/.test(file) ? file : pathToFileURL(file).href;
  return import(specifier) as Promise<Record<string, unknown>>;
}
