/**
 * Lazy tools (docs/lazy-tools.md): for a host that asks (`lazyTools: true`), the tools of plugins
 * that declare `staticTools` come from their module records instead of an import, so a boot costs
 * the same with 10 tools or 1,000. Each entry gets a stand-in module whose factory returns tool
 * objects built from the record; the loader runs it through the same checks and conflict rules as
 * any module (host/loader.ts `load(paths, stand)`). The real module is imported, once per entry,
 * at the first `execute`, `onSession`, `renderCall` or `renderResult`; from then on every call
 * goes to the real tool.
 *
 * Only a record that answers for the entry's bytes as they are now (module-records.ts
 * `prepareModules`: signature, else content hash) and that was made with the static check is
 * used; anything else (no record, a failure, a tool with a problem, a record that does not read
 * right, a host TypeBox whose `Kind` is not the registered symbol) loads the entry eagerly, as
 * without the option. At first use, the real tool's definition is compared with the record: a
 * difference (the module's bytes changed behind the record's back, a definition that was not
 * static after all) is `ELAZY_DEFINITION`; an import or factory failure is the loader's own code.
 * Either way the call rejects with that code, the host's `onLazyToolError` and logger get the
 * `ToolLoadError`, and the entry stays failed.
 */
import path from "node:path";
import { CustomToolLoader, type StandIn } from "../host/loader.js";
import { isResolvedPath } from "../host/module-key.js";
import { definitionDifference, describeDefinition, LAZY_METHODS, restoreSchema, type LazyPart, type StaticDefinition } from "../host/lazy-definition.js";
import type { CustomToolsLoadResult, PushPendingAction, ToolLoadError, ToolPathWithSource } from "../core/contract.js";
import type { LoadCustomToolsOptions } from "../core/host-options.js";
import type { BootView, ModuleRecord, ToolRecord } from "./format.js";
import { isObject } from "./format.js";
import { entryRecords } from "./module-records.js";
import { loadIndex, loadModuleRecords, writeIndex } from "./store.js";
import { worldOf, type BootIndexOptions, type World } from "./world.js";

/** What `discoverAndLoadCustomTools` passes on when the host asked for lazy tools. */
export interface LazyLoadOptions extends LoadCustomToolsOptions {
  onLazyToolError?: (error: ToolLoadError) => void;
}

/** `loadCustomTools`, with stand-ins for the entries whose records allow it. Never throws. */
export async function loadWithLazyTools(
  paths: ToolPathWithSource[],
  cwd: string,
  builtInToolNames: string[],
  pushPendingAction: PushPendingAction | undefined,
  options: LazyLoadOptions,
  roots: BootIndexOptions,
  checked?: BootView["inputs"],
  regular?: ReadonlySet<string>,
): Promise<CustomToolsLoadResult> {
  const { onLazyToolError, ...loadOptions } = options;
  const loader = new CustomToolLoader(loadOptions.pi, cwd, builtInToolNames, pushPendingAction, loadOptions);
  let stand: StandIn | undefined;
  try {
    stand = await standIns(paths, loader, roots, options, onLazyToolError, checked);
  } catch {
    stand = undefined; // the index is a cache: any problem loads everything eagerly
  }
  await loader.load(paths, stand, regular);
  return { tools: loader.tools, errors: loader.errors, setUIContext: (ui, hasUI) => loader.setUIContext(ui, hasUI) };
}

async function standIns(
  paths: ToolPathWithSource[],
  loader: CustomToolLoader,
  roots: BootIndexOptions,
  options: LazyLoadOptions,
  onError: ((error: ToolLoadError) => void) | undefined,
  checked: BootView["inputs"] | undefined,
): Promise<StandIn | undefined> {
  if (!paths.some(declared) || !registeredKind(options.modules)) return undefined;
  const world = worldOf(roots);
  // The records file alone: discovery has just read (or written) the views.
  const index = { modules: loadModuleRecords(world) };
  // Inputs of the view discovery just found unchanged: their signatures are current, no second stat.
  const signatures = new Map<string, string>();
  for (const input of checked ?? []) if (input.kind === "stat") signatures.set(input.path, input.sig);
  const standIn = (entry: ToolPathWithSource, file: string, key: string, record: ModuleRecord | undefined) =>
    !record?.static || record.failure || record.tools.length === 0 || !record.tools.every(usable) ? undefined : standInModule(entry, file, record, loader, options, onError, () => forgetRecords(world, key));
  // Called by the loader with each entry located as it imports it (one lstat and realpath for both);
  // synchronous unless a record's signature moved and the file must be hashed.
  return (entry, file, key) => {
    if (!declared(entry)) return undefined;
    // Records name the entry as discovery gave it (a folder, not its index file), as prepareModules does.
    const entryFile = isResolvedPath(entry.path) ? entry.path : path.resolve(entry.path);
    const found = entryRecords(entry, entryFile, key, index, signatures.get(entryFile));
    return found instanceof Promise ? found.then((prepared) => standIn(entry, file, key, prepared.record)) : standIn(entry, file, key, found.record);
  };
}

const declared = (entry: ToolPathWithSource) => entry.source?.staticTools === true && path.isAbsolute(entry.path);

/**
 * Drop an entry's records after `ELAZY_DEFINITION`: they describe a tool its unchanged bytes no
 * longer make, and a refresh would keep them (they are valid for the bytes). Without a record the
 * next boot imports the entry, and the next validation (`xcsh-tools tools`, any plugin command)
 * records it again. Without the lock, as a boot writes its views: the index is a cache, a lost
 * race costs one more validation. Best effort.
 */
async function forgetRecords(world: World, key: string): Promise<void> {
  try {
    const loaded = await loadIndex(world, true);
    if (loaded.status !== "ok" || loaded.index.modules[key] === undefined) return;
    delete loaded.index.modules[key];
    await writeIndex(world, loaded.index, true);
  } catch {
    // a read-only root: the record stays, and every first use says ELAZY_DEFINITION again
  }
}

/**
 * The host's TypeBox marks schemas with the registered `Kind` symbol (TypeBox 0.x), as the
 * records assume; one that exports no such `Kind` gets every tool eagerly. Without a host
 * TypeBox the loader's own is used, which does.
 */
function registeredKind(modules: LoadCustomToolsOptions["modules"]): boolean {
  const typebox = modules?.["@sinclair/typebox"] as { Kind?: unknown } | undefined;
  return typebox === undefined || typebox.Kind === Symbol.for("TypeBox.Kind");
}

/** A record that reads right (the file is the user's to edit): no problems, and a lazy part of the expected shape. */
function usable(tool: ToolRecord): boolean {
  const lazy = tool.lazy as Partial<LazyPart> | undefined;
  return (
    tool.problems.length === 0 &&
    typeof tool.name === "string" &&
    isObject(tool.parameters) &&
    isObject(lazy) &&
    isObject(lazy.symbols) &&
    Object.values(lazy.symbols).every(isObject) &&
    isObject(lazy.data) &&
    // Data never stands for a method or a field the record holds itself (a hand-edited file).
    Object.keys(lazy.data).every((key) => !RESERVED.has(key)) &&
    Array.isArray(lazy.methods) &&
    lazy.methods.includes("execute") &&
    lazy.methods.every((m) => (LAZY_METHODS as readonly unknown[]).includes(m))
  );
}

const RESERVED = new Set<string>([...LAZY_METHODS, "name", "label", "description", "parameters"]);

type Loaded = { ok: true; tools: Record<string, (...args: unknown[]) => unknown>[] } | { ok: false; error: Error };

/** The module a lazy entry stands in with: a factory returning the recorded tools. */
function standInModule(
  entry: ToolPathWithSource,
  file: string,
  record: ModuleRecord,
  loader: CustomToolLoader,
  options: LazyLoadOptions,
  onError: ((error: ToolLoadError) => void) | undefined,
  forget: () => Promise<void>,
): Record<string, unknown> {
  let loading: Promise<Loaded> | undefined;
  let done: Loaded | undefined;
  const fail = (code: string, message: string): Loaded => {
    const failure: ToolLoadError = { path: entry.path, error: message, code, ...(entry.source ? { source: entry.source } : {}) };
    options.logger?.error(message, { path: entry.path, code });
    try {
      onError?.(failure);
    } catch {
      // the host's callback must not change what the call answers
    }
    return { ok: false, error: Object.assign(new Error(message), { code, path: entry.path }) };
  };
  const load = (): Promise<Loaded> =>
    (loading ??= (async (): Promise<Loaded> => {
      const real = await loader.instantiateDetached(file);
      if (!real.ok) return fail(real.code, real.error);
      const recorded = record.tools.map((tool, i) => recordedDefinition(tool, tools[i]!));
      for (let i = 0; i < Math.max(recorded.length, real.tools.length); i++) {
        const tool = real.tools[i];
        const described = tool && typeof tool === "object" ? describeDefinition(tool) : undefined;
        const field = !recorded[i] ? "(number of tools)" : described?.ok ? definitionDifference(recorded[i]!, described.definition) : "(tool)";
        if (field !== undefined) {
          await forget();
          const what = recorded[i] ? `tool "${String(recorded[i]!.name)}"` : `${real.tools.length} tools, not ${recorded.length},`;
          return fail("ELAZY_DEFINITION", `Failed to load tool: ${file} defines ${what} differently from the boot index's record (${field}); the record was dropped, so the next start imports the module and shows its definition as it is now`);
        }
      }
      return { ok: true, tools: real.tools as Loaded extends { ok: true; tools: infer T } ? T : never };
    })().then((outcome) => (done = outcome)));
  const tools = record.tools.map((tool, i) => lazyTool(tool, i, load, () => done));
  const many = record.tools.some((tool) => tool.index !== undefined);
  return { default: () => (many ? tools : tools[0]) };
}

/**
 * The record's definition as `describeDefinition` gives it; made at first use, not at boot. The
 * schema is the lazy tool's without the restored symbols (JSON drops them): the recorded JSON.
 */
function recordedDefinition(tool: ToolRecord, lazyTool: Record<string, unknown>): StaticDefinition {
  const lazy = tool.lazy!;
  return { name: tool.name, label: tool.label, description: tool.description, parameters: JSON.parse(JSON.stringify(lazyTool.parameters)), symbols: lazy.symbols, data: lazy.data, methods: lazy.methods };
}

/** One tool object from its record; its methods load the module at first use and forward. */
function lazyTool(tool: ToolRecord, index: number, load: () => Promise<Loaded>, loaded: () => Loaded | undefined): Record<string, unknown> {
  const lazy = tool.lazy!;
  const object: Record<string, unknown> = { ...lazy.data, name: tool.name, description: tool.description, parameters: restoreSchema(tool.parameters, lazy.symbols) };
  if (tool.label !== undefined) object.label = tool.label;
  const real = async () => {
    const outcome = await load();
    if (!outcome.ok) throw outcome.error;
    return outcome.tools[index]!;
  };
  for (const method of lazy.methods) {
    if (method === "renderCall" || method === "renderResult") {
      // Synchronous in the host: before the module is loaded, start loading and let the host draw its default this time.
      object[method] = (...args: unknown[]) => {
        const now = loaded();
        if (now?.ok) return now.tools[index]![method]!(...args);
        void load();
        return undefined;
      };
    } else {
      object[method] = async (...args: unknown[]) => {
        const target = await real();
        return target[method]!(...args);
      };
    }
  }
  return object;
}
