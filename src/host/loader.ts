/**
 * The boot-time loader: paths in, tools and error records out, in the host's positional API
 * but without its failure modes (docs/host-parity.md). The model:
 *
 * - ONE shared `CustomToolAPI` per loader, handed to every factory; `setUIContext` mutates it, so
 *   factories that captured it see the real UI once the host has one.
 * - Paths are resolved like the host's `resolvePath`, then deduplicated by real path (a symlink
 *   and its target are one tool; first wins, silently). A folder stands for its `index.ts|js|mjs`.
 * - Every module goes import → factory → shape check → name check, each step raced against a
 *   timeout and wrapped so that a failure becomes one `ToolLoadError` with a stable code, the path
 *   and the source. `load()` never throws and never hangs, and a bad tool never hides its siblings.
 * - Imports run concurrently (they are independent), within `IMPORT_CONCURRENCY` slots and
 *   started in input order: under Bun in batches started together, on Node in a pool of slots;
 *   factories run, and results, conflicts and errors are recorded, strictly in input order, so
 *   the outcome is exactly the sequential loader's (first wins).
 *   The bound matters beyond memory: an import's timeout starts when that import starts, so a
 *   thousand queued imports never time out for waiting behind each other.
 *
 * Messages keep the host's texts as prefixes (`Failed to load tool: …`, `Tool must export a
 * default function`, `Tool name "x" conflicts with existing tool`) so existing log greps still work.
 */
import { errorMessage, isXcshToolsError } from "../core/errors.js";
import { resolveRoots, resolveUserPath } from "../core/paths.js";
import { execCommand } from "./exec.js";
import { isBun } from "./import/strategy.js";
import { registerModules, resolveTypeBox } from "./import/module-map.js";
import { importToolModule, importToolModulesUnderBun, selectImportStrategy, type ImportedToolModule, type ImportOutcome, type ImportToolModuleOptions } from "./module-import.js";
import type { LoadCustomToolsOptions } from "../core/host-options.js";
import { emptyHostExports, hostExportReadCount, hostExportsFailure } from "./host-exports.js";
import { raceTimeout } from "./timeout.js";
import { checkTool, readToolName } from "./tool-shape.js";
import { locateModule } from "./module-key.js";
import { DECLARATIVE_MESSAGE, ToolClaims } from "./tool-claims.js";
import type {
  CustomTool,
  CustomToolAPI,
  CustomToolLogger,
  CustomToolPendingAction,
  CustomToolsLoadResult,
  CustomToolUIContext,
  LoadedCustomTool,
  PushPendingAction,
  ToolLoadError,
  ToolPathWithSource,
} from "../core/contract.js";

export const DEFAULT_FACTORY_TIMEOUT_MS = 5000;

/**
 * Import slots in flight at once. Under Bun many in flight pay: its module loader overlaps reading
 * and parsing them (bench/boot.js). On Node, native imports pay too (200 seed-style tools: 7–12 ms
 * less CPU in flight by 32 than by 8, docs/benchmarks.md, session 28), but a jiti import
 * transpiles synchronously on the one main thread, and more of those cost more than they hide: each
 * takes `JITI_IMPORT_SLOTS` slots, so at most 8 are in flight. Bounded either way because an
 * import's timeout starts when the import starts: the work queued ahead of the last import in
 * flight must stay far below it.
 */
export const IMPORT_CONCURRENCY = isBun() ? 256 : 32;

/** The slots a jiti import takes (Node without type stripping, TypeScript under node_modules). */
export const JITI_IMPORT_SLOTS = 4;

/** Loader error codes (public API; the table in docs/library-api.md). */
export const LOADER_ERROR_CODES = [
  "EDECLARATIVE",
  "EIMPORT",
  "EIMPORT_TIMEOUT",
  "ENOT_A_FACTORY",
  "EFACTORY_THROW",
  "EFACTORY_TIMEOUT",
  "EFACTORY_RESULT",
  /** The factory failed after reading host exports from an empty `api.pi` (host/host-exports.ts). */
  "EHOST_EXPORTS",
  "ETOOL_SHAPE",
  "ETOOL_NAME",
  "ECONFLICT_BUILTIN",
  "ECONFLICT",
  /** A lazy tool's module, imported at first use, defines the tool differently from its record (docs/lazy-tools.md). */
  "ELAZY_DEFINITION",
] as const;
export type LoaderErrorCode = (typeof LOADER_ERROR_CODES)[number];

const PENDING_UNAVAILABLE = "Pending action store unavailable for custom tools in this runtime.";

/** A logger that drops everything: the library is silent unless the host gives it a logger. */
export const silentLogger: CustomToolLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** The UI tools see before the host calls `setUIContext`: answers nothing, shows nothing. */
export function createNoOpUIContext(): CustomToolUIContext {
  // Frozen: it is shared by every tool until the host sets its own UI.
  return Object.freeze({
    select: async () => undefined,
    confirm: async () => false,
    input: async () => undefined,
    notify: () => {},
    setStatus: () => {},
    custom: async () => undefined as never,
    setEditorText: () => {},
    getEditorText: () => "",
    editor: async () => undefined,
    get theme() {
      return undefined;
    },
  });
}

/** What one input entry turned into before any import: a module to import, a failure, or a duplicate. */
type PreparedEntry =
  | { kind: "import"; entry: ToolPathWithSource; file: string; key: string; module?: Record<string, unknown> }
  | { kind: "fail"; entry: ToolPathWithSource; code: LoaderErrorCode; error: string }
  | { kind: "duplicate" };

/**
 * For `load`: a module to use instead of importing an entry (`file` as the loader imports it,
 * `key` its real path), or undefined to import it. A rejection imports it. The library's lazy
 * boot passes one (`discoverAndLoadCustomTools` with `lazyTools`); a host leaves it out.
 */
export type StandIn = (entry: ToolPathWithSource, file: string, key: string) => Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>;

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Loads tool modules into `tools`, recording every failure in `errors`. */
export class CustomToolLoader {
  readonly tools: LoadedCustomTool[] = [];
  readonly #claims: ToolClaims;
  readonly #api: CustomToolAPI;
  #ui: CustomToolUIContext = createNoOpUIContext();
  #hasUI = false;
  readonly #options: LoadCustomToolsOptions;
  readonly #importOptions: ImportToolModuleOptions;
  readonly #cwd: string;
  readonly #home: string;
  readonly #seenFiles = new Set<string>();

  constructor(
    pi: Record<string, unknown> | undefined,
    cwd: string,
    builtInToolNames: string[],
    pushPendingAction?: PushPendingAction,
    options: LoadCustomToolsOptions = {},
  ) {
    this.#options = options;
    this.#importOptions = {
      modules: options.modules,
      cacheDir: options.cacheDir,
      home: options.home,
      xcshHome: options.xcshHome,
      env: options.env,
      importTimeoutMs: options.importTimeoutMs,
    };
    this.#cwd = cwd;
    this.#home = resolveRoots(options).home;
    this.#claims = new ToolClaims(builtInToolNames);
    const exec = options.exec ?? execCommand;
    const api = {
      cwd,
      exec: (command: string, args: string[], execOptions?: Parameters<CustomToolAPI["exec"]>[2]) => exec(command, args, { ...execOptions, cwd: execOptions?.cwd ?? cwd }),
      logger: options.logger ?? silentLogger,
      // Without the host's exports, an empty `api.pi` that notes what a factory reads from it.
      pi: pi ?? options.pi ?? emptyHostExports(),
      pushPendingAction: (action: CustomToolPendingAction) => {
        if (!pushPendingAction) throw new Error(PENDING_UNAVAILABLE);
        pushPendingAction({
          label: action.label,
          sourceToolName: action.sourceToolName ?? "custom_tool",
          apply: action.apply,
          reject: action.reject,
        });
      },
    } as Omit<CustomToolAPI, "ui" | "hasUI" | "typebox"> as CustomToolAPI;
    // One shared API, frozen: a factory that reassigns `api.exec`, deletes `api.typebox` or
    // replaces `api.ui` cannot change what the next tool receives (in a module that is strict
    // code, the attempt throws and is reported as EFACTORY_THROW). `ui` and `hasUI` are read
    // through getters, so `setUIContext` still reaches every captured reference.
    Object.defineProperty(api, "ui", { get: () => this.#ui, enumerable: true });
    // Read when a factory asks, after its module's import registered the process's TypeBox
    // (module-map.ts `defaultTypeBox`), so `api.typebox` is the instance the tool's bare import got.
    Object.defineProperty(api, "typebox", { get: () => resolveTypeBox(options.modules), enumerable: true });
    Object.defineProperty(api, "hasUI", { get: () => this.#hasUI, enumerable: true });
    this.#api = Object.freeze(api);
  }

  /** Every failure so far, in input order. */
  get errors(): ToolLoadError[] {
    return this.#claims.errors;
  }

  /** The API object every factory of this loader receives. */
  get api(): CustomToolAPI {
    return this.#api;
  }

  /**
   * Load `pathsWithSources` in order; never throws. May be called again with more paths.
   *
   * Three passes. (1) In input order, resolve each path and drop declarative files and
   * duplicates: cheap, synchronous, and what decides which entry of a duplicate pair counts.
   * (2) Import the remaining modules through a bounded pool, started in input order. (3) In input
   * order, wait for each import and run its factory, checks and conflict rules, recording every
   * outcome at its entry's turn — so `tools` and `errors` come out exactly as if every entry had
   * been imported and instantiated one after the other.
   *
   * Factories stay sequential, one at a time in input order, as the host calls them: they share
   * one API object (`setUIContext`, `pushPendingAction`, `logger`) and may have side effects
   * whose order a user sees (pending actions, log lines, processes they `exec`), and a factory
   * that is slow or hangs is charged to itself by its own timeout. They are also cheap compared
   * with imports, so running them concurrently would buy little and cost determinism.
   *
   * `regular`: paths this boot found, moments ago, to be regular files that are not links
   * (module-key.ts `locateModule`); a host leaves it out.
   */
  async load(pathsWithSources: ToolPathWithSource[], standIn?: StandIn, regular?: ReadonlySet<string>): Promise<void> {
    const prepared: PreparedEntry[] = [];
    const realFolders = new Map<string, string>();
    for (const entry of pathsWithSources ?? []) {
      try {
        const item = this.#prepare(entry, realFolders, regular);
        // A stand-in module (lazy tools, boot/lazy-tools.ts) goes through the same factory, checks and conflict rules, unimported.
        const offered = item.kind === "import" && standIn ? standInFor(standIn, entry, item.file, item.key) : undefined;
        const module = offered instanceof Promise ? await offered : offered;
        if (module && item.kind === "import") item.module = module;
        prepared.push(item);
      } catch (error) {
        prepared.push({ kind: "fail", entry, code: "EIMPORT", error: `Failed to load tool: ${errorMessage(error)}` });
      }
    }
    const toImport = prepared.filter((item): item is Extract<PreparedEntry, { kind: "import" }> => item.kind === "import" && !item.module);
    const outcomeAt = isBun() ? importInBatches(toImport, IMPORT_CONCURRENCY, this.#importOptions) : importInPool(toImport, this.#importOptions);
    let next = 0;
    for (const item of prepared) {
      if (item.kind === "duplicate") continue;
      if (item.kind === "fail") {
        this.#fail(item.entry, item.code, item.error);
        continue;
      }
      try {
        // A stand-in is instantiated synchronously (no promise per entry: a lazy boot has a thousand) unless its factory returns one.
        if (item.module) {
          const pending = this.#instantiate(item.entry, item.file, item.module);
          if (pending) await pending;
        } else {
          const outcome = outcomeAt(next++);
          const pending = this.#loadOne(item.entry, item.file, outcome instanceof Promise ? await outcome : outcome);
          if (pending) await pending;
        }
      } catch (error) {
        // #loadOne records its own failures; this is the last line of defence.
        this.#fail(item.entry, "EIMPORT", `Failed to load tool: ${errorMessage(error)}`);
      }
    }
  }

  /** Give tools the host's UI; mutates the shared API so captured references see it. */
  setUIContext(uiContext: CustomToolUIContext, hasUI: boolean): void {
    this.#ui = uiContext;
    this.#hasUI = hasUI;
  }

  #prepare(entry: ToolPathWithSource, realFolders: Map<string, string>, regular: ReadonlySet<string> | undefined): PreparedEntry {
    const resolved = resolveUserPath(String(entry.path), this.#cwd, this.#home);
    if (resolved.endsWith(".md") || resolved.endsWith(".json")) {
      return { kind: "fail", entry, code: "EDECLARATIVE", error: DECLARATIVE_MESSAGE };
    }
    const { file, key } = locateModule(resolved, realFolders, regular);
    if (this.#seenFiles.has(key)) return { kind: "duplicate" };
    this.#seenFiles.add(key);
    return { kind: "import", entry, file, key };
  }

  /**
   * Load the tools of a factory the caller already holds (a bundled tool, a unit test) with the
   * same checks, timeouts and conflict rules as a module's default export; never throws.
   * `entry.path` names it in results and errors.
   */
  async loadFactory(factory: unknown, entry: ToolPathWithSource): Promise<void> {
    try {
      // No import registers the module map here: do it, so the factory's `api.typebox` is the one a module of this loader gets.
      await registerModules(this.#options.modules);
      await this.#instantiate(entry, String(entry.path), { default: factory });
    } catch (error) {
      this.#fail(entry, "EFACTORY_THROW", `Failed to load tool: ${errorMessage(error)}`);
    }
  }

  /** A promise only when the factory returned one (`#instantiate`). */
  #loadOne(entry: ToolPathWithSource, file: string, imported: Settled<ImportedToolModule>): Promise<void> | undefined {
    if (!imported.ok) {
      const failure = importFailure(imported.error);
      this.#fail(entry, failure.code, failure.error);
      return undefined;
    }
    return this.#instantiate(entry, file, imported.value.module);
  }

  /**
   * Import `file` and call its factory with this loader's API, imports and timeouts, outside
   * `tools` and `errors`: a lazy tool's first use (boot/lazy-tools.ts) gets exactly what the
   * eager load would have, or the code it would have recorded.
   */
  async instantiateDetached(file: string): Promise<{ ok: true; tools: unknown[] } | { ok: false; code: LoaderErrorCode; error: string }> {
    let module: Record<string, unknown>;
    try {
      module = (await importToolModule(file, this.#importOptions)).module;
    } catch (error) {
      return { ok: false, ...importFailure(error) };
    }
    const called = await this.#callFactory(file, module);
    return called.ok ? { ok: true, tools: called.list } : called;
  }

  /** Factory → tools → shape and name checks → conflicts, for one imported module; a promise only when the factory returned one. */
  #instantiate(entry: ToolPathWithSource, file: string, module: Record<string, unknown>): Promise<void> | undefined {
    const called = this.#callFactory(file, module);
    if (called instanceof Promise) return called.then((settled) => this.#record(entry, file, settled));
    this.#record(entry, file, called);
    return undefined;
  }

  #record(entry: ToolPathWithSource, file: string, called: Called): void {
    if (!called.ok) {
      this.#fail(entry, called.code, called.error);
      return;
    }
    called.list.forEach((candidate, index) => this.#accept(entry, file, candidate, called.many ? index : undefined));
  }

  /** The factory's tools, or its failure; synchronous unless the factory returned a promise (most return their tools). */
  #callFactory(file: string, module: Record<string, unknown>): Called | Promise<Called> {
    let factory: unknown;
    try {
      factory = module.default ?? module;
    } catch (error) {
      return { ok: false, code: "ENOT_A_FACTORY", error: `Tool must export a default function (${errorMessage(error)})` };
    }
    if (typeof factory !== "function") {
      return { ok: false, code: "ENOT_A_FACTORY", error: `Tool must export a default function: ${file} exports ${describeExport(factory)} as its default` };
    }

    const piReads = hostExportReadCount(this.#api.pi);
    let called: unknown;
    try {
      // Most factories return their tools synchronously: only a promise needs a timer (one per
      // tool adds up at boot, under Bun most of all).
      called = (factory as (api: CustomToolAPI) => unknown)(this.#api);
      if (isThenable(called)) return this.#settleFactory(file, called, piReads);
    } catch (error) {
      return this.#factoryFailure(error, false, file, piReads);
    }
    return factoryResult(file, called);
  }

  async #settleFactory(file: string, called: PromiseLike<unknown>, piReads: number): Promise<Called> {
    const timeoutMs = this.#options.factoryTimeoutMs ?? DEFAULT_FACTORY_TIMEOUT_MS;
    let timedOut = false;
    let result: unknown;
    try {
      const call = Promise.resolve(called);
      call.catch(() => undefined);
      result = await raceTimeout(call, timeoutMs, () => {
        timedOut = true;
        return new Error(`factory did not settle within ${timeoutMs} ms`);
      });
    } catch (error) {
      return this.#factoryFailure(error, timedOut, file, piReads);
    }
    return factoryResult(file, result);
  }

  #factoryFailure(error: unknown, timedOut: boolean, file: string, piReads: number): Called {
    const timeoutMs = this.#options.factoryTimeoutMs ?? DEFAULT_FACTORY_TIMEOUT_MS;
    const needsHost = timedOut ? undefined : hostExportsFailure(this.#api.pi, piReads, errorMessage(error));
    if (timedOut) return { ok: false, code: "EFACTORY_TIMEOUT", error: `Failed to load tool: factory of ${file} did not settle within ${timeoutMs} ms` };
    if (needsHost) return { ok: false, code: "EHOST_EXPORTS", error: `Failed to load tool: ${needsHost}` };
    return { ok: false, code: "EFACTORY_THROW", error: `Failed to load tool: ${errorMessage(error)}` };
  }

  #accept(entry: ToolPathWithSource, file: string, candidate: unknown, index: number | undefined): void {
    const name = readToolName(candidate);
    if (!this.#claims.accept(entry, file, index, name, checkTool(candidate))) return;
    this.tools.push({ path: entry.path, resolvedPath: file, tool: withDefaultLabel(candidate as CustomTool, name), source: entry.source });
  }

  #fail(entry: ToolPathWithSource, code: LoaderErrorCode, error: string): void {
    this.#claims.fail(entry, code, error);
  }
}

type Called = { ok: true; list: unknown[]; many: boolean } | { ok: false; code: LoaderErrorCode; error: string };

/** What a factory returned (or its promise gave), as a list of candidate tools. */
function factoryResult(file: string, result: unknown): Called {
    if (result === null || result === undefined || typeof result !== "object") {
      return { ok: false, code: "EFACTORY_RESULT", error: `Failed to load tool: the factory of ${file} returned ${describeExport(result)}; expected a tool or an array of tools` };
    }
    return { ok: true, list: Array.isArray(result) ? (result as unknown[]) : [result], many: Array.isArray(result) };
}

/** Load `pathsWithSources` with a fresh loader (the host's `loadCustomTools`, plus `options`). */
export function loadCustomTools(
  pathsWithSources: ToolPathWithSource[],
  cwd: string,
  builtInToolNames: string[],
  pushPendingAction?: PushPendingAction,
  options: LoadCustomToolsOptions = {},
): Promise<CustomToolsLoadResult> {
  return loadDiscoveredTools(pathsWithSources, cwd, builtInToolNames, pushPendingAction, options);
}

/** `loadCustomTools` for the library's own discovery, which may know the `regular` files (`CustomToolLoader.load`). */
export async function loadDiscoveredTools(
  pathsWithSources: ToolPathWithSource[],
  cwd: string,
  builtInToolNames: string[],
  pushPendingAction: PushPendingAction | undefined,
  options: LoadCustomToolsOptions,
  regular?: ReadonlySet<string>,
): Promise<CustomToolsLoadResult> {
  const loader = new CustomToolLoader(options.pi, cwd, builtInToolNames, pushPendingAction, options);
  await loader.load(pathsWithSources, undefined, regular);
  return {
    tools: loader.tools,
    errors: loader.errors,
    setUIContext: (uiContext, hasUI) => loader.setUIContext(uiContext, hasUI),
  };
}

/**
 * Start `work(item)` for every item in item order, each taking `slots(item)` of `limit` slots
 * until it settles (an item waits for room even when a later, lighter one would fit; one alone
 * always starts); one promise per item, in item order, that settles with the outcome and never
 * rejects, so outcomes nobody awaits yet are never unhandled rejections.
 */
function startInOrder<T, R>(items: readonly T[], limit: number, slots: (item: T) => number, work: (item: T) => Promise<R>): Promise<Settled<R>>[] {
  const resolvers: ((outcome: Settled<R>) => void)[] = [];
  const outcomes = items.map(() => new Promise<Settled<R>>((resolve) => resolvers.push(resolve)));
  let next = 0;
  let used = 0;
  const settled = (index: number, taken: number, outcome: Settled<R>): void => {
    used -= taken;
    (resolvers[index] as (outcome: Settled<R>) => void)(outcome);
    startMore();
  };
  const startMore = (): void => {
    while (next < items.length) {
      const item = items[next] as T;
      const taken = Math.min(Math.max(1, slots(item)), limit);
      if (used > 0 && used + taken > limit) return;
      const index = next++;
      used += taken;
      let running: Promise<R>;
      try {
        running = work(item);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (value) => settled(index, taken, { ok: true, value }),
        (error: unknown) => settled(index, taken, { ok: false, error }),
      );
    }
  };
  startMore();
  return outcomes;
}

/** Each import's outcome by its index among the imports, read at its turn (`load`); a promise only while it is pending. */
type OutcomeAt = (index: number) => Settled<ImportedToolModule> | Promise<Settled<ImportedToolModule>>;

/** Node: each file through `importToolModule` (which may fall back to jiti), in the slot pool. */
function importInPool(items: readonly { file: string }[], options: ImportToolModuleOptions): OutcomeAt {
  const outcomes = startInOrder(items, IMPORT_CONCURRENCY, importSlots, (item) => importToolModule(item.file, options));
  return (index) => outcomes[index] as Promise<Settled<ImportedToolModule>>;
}

/**
 * Bun: batches of up to `size` files, each started together (`importToolModulesUnderBun`, one
 * deadline and one set-up per batch, the same deadline each import would get), a batch once the
 * one before it settled, so no more than `size` are ever in flight; one promise per batch, not one
 * per file.
 */
function importInBatches(items: readonly { file: string }[], size: number, options: ImportToolModuleOptions): OutcomeAt {
  const batches: Promise<ImportOutcome[]>[] = [];
  for (let from = 0; from < items.length; from += size) {
    const files = items.slice(from, from + size).map((item) => item.file);
    const previous = batches[batches.length - 1];
    batches.push(previous ? previous.then(() => importToolModulesUnderBun(files, options)) : importToolModulesUnderBun(files, options));
  }
  const settled: ImportOutcome[][] = [];
  return (index) => {
    const batch = Math.floor(index / size);
    const known = settled[batch];
    if (known) return known[index % size] as ImportOutcome;
    return (batches[batch] as Promise<ImportOutcome[]>).then((outcomes) => (settled[batch] = outcomes)[index % size] as ImportOutcome);
  };
}

/** A jiti import's slots, else one (`IMPORT_CONCURRENCY`). */
function importSlots(item: { file: string }): number {
  return selectImportStrategy(item.file) === "jiti" ? JITI_IMPORT_SLOTS : 1;
}

/** `standIn`'s module for an entry, awaited only when it is a promise (a lazy boot asks this of every entry); a failure imports the entry. */
function standInFor(standIn: StandIn, entry: ToolPathWithSource, file: string, key: string): Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined> {
  try {
    const module = standIn(entry, file, key);
    return module instanceof Promise ? module.catch(() => undefined) : module;
  } catch {
    return undefined;
  }
}

function importFailure(error: unknown): { code: LoaderErrorCode; error: string } {
  return { code: isXcshToolsError(error, "EIMPORT_TIMEOUT") ? "EIMPORT_TIMEOUT" : "EIMPORT", error: `Failed to load tool: ${errorMessage(error)}` };
}

/** The host always shows a label; a tool without one gets its name. */
function withDefaultLabel(tool: CustomTool, name: string): CustomTool {
  let label: unknown;
  try {
    label = tool.label;
  } catch {
    label = undefined;
  }
  if (typeof label === "string" && label !== "") return tool;
  try {
    (tool as { label: string }).label = name;
    if (tool.label === name) return tool;
  } catch {
    // frozen or a setter that throws: shadow it instead
  }
  return Object.create(tool, { label: { value: name, enumerable: true } }) as CustomTool;
}

export function describeExport(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  return `a value of type ${typeof value}`;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}
