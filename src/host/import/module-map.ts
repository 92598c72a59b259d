/**
 * The module map: bare names a tool may import (`@sinclair/typebox`, `xcsh-tools`, host packages)
 * that must resolve to ONE instance per process, whatever folder the tool lives in. A tools folder
 * usually has no node_modules, and a second copy of TypeBox or of the host would break identity
 * checks, so every runtime strategy reads the same process-global registry:
 *
 * - jiti gets it as `virtualModules` (the same object, mutated in place);
 * - Bun gets one `Bun.plugin` virtual module per name;
 * - Node's native loader gets a resolve hook that maps the name to a tiny shim file which
 *   re-exports the registry entry. Shims are written atomically and only when their text changes.
 *
 * The registry lives on `globalThis` under a registered symbol so that two copies of xcsh-tools in
 * one process (a host bundling one, a plugin importing another) still share it.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readTextBounded } from "../../core/bounded-read.js";
import type * as TypeBox from "@sinclair/typebox";

/** The symbol under which the registry (`Map<name, namespace>`) lives on `globalThis`. */
export const MODULE_REGISTRY_SYMBOL: unique symbol = Symbol.for("xcsh-tools.modules") as never;

type Registry = Map<string, object>;

/** The process-global registry, created on first use. */
export function getModuleRegistry(): Registry {
  const holder = globalThis as unknown as Record<symbol, Registry | undefined>;
  let registry = holder[MODULE_REGISTRY_SYMBOL];
  if (!registry) {
    registry = new Map();
    holder[MODULE_REGISTRY_SYMBOL] = registry;
  }
  return registry;
}

/** Names that get a default instance when the host does not pass one. */
export { DEFAULT_MODULE_NAMES } from "./module-names.js";

let loadOwnApi: (() => Promise<object>) | undefined;
let ownApi: Promise<object> | undefined;

/**
 * How to load our own public API (src/index.ts), the namespace a tool gets for `xcsh-tools`. The
 * package entry and the programs that load tools (the validation child, the testing kit) hand it
 * over, `provideOwnApi(() => import("./index.js"))`, because the loader sits below them and must
 * not import them (docs/architecture.md). The first one stays; it is loaded at the first
 * registration, as before.
 */
export function provideOwnApi(load: () => Promise<object>): void {
  loadOwnApi ??= load;
}

function importOwnApi(): Promise<object> | undefined {
  if (loadOwnApi) ownApi ??= loadOwnApi();
  return ownApi;
}

/**
 * Put the host's modules and our defaults into the registry and return the names that were new.
 * The first instance registered for a name stays for the life of the process: modules that already
 * imported it hold live bindings to it, so swapping it would give two instances after all.
 */
export async function registerModules(modules: Record<string, object> = {}): Promise<string[]> {
  const registry = getModuleRegistry();
  const added: string[] = [];
  const put = (name: string, namespace: object) => {
    if (registry.has(name)) return;
    registry.set(name, namespace);
    added.push(name);
  };
  for (const [name, namespace] of Object.entries(modules)) {
    if (namespace && (typeof namespace === "object" || typeof namespace === "function")) put(name, namespace);
  }
  if (!registry.has(TYPEBOX)) put(TYPEBOX, await defaultTypeBox());
  const own = registry.has("xcsh-tools") ? undefined : importOwnApi();
  if (own) put("xcsh-tools", await own);
  return added;
}

const TYPEBOX = "@sinclair/typebox";

/**
 * The TypeBox the package bundles (scripts/build.mjs), imported on first need: a host whose own
 * copy resolves never loads ours (see `defaultTypeBox`).
 */
let bundled: typeof TypeBox | undefined;
function loadBundledTypeBox(): Promise<typeof TypeBox> {
  return import("@sinclair/typebox").then((namespace) => (bundled = namespace));
}

let hostOrBundled: Promise<object> | undefined;

/**
 * The one place that picks the TypeBox tools get, as `api.typebox` and as a bare
 * `import "@sinclair/typebox"` alike (both read the registry: one TypeBox per load), when the
 * host passes none in `modules` (which always wins): the host's own copy if one resolves from
 * our package's folder, else the bundled one.
 *
 * Why not always the bundled copy: the package has no runtime dependencies, so TypeBox is inside
 * it, and a host that installed @sinclair/typebox (package.json declares it as an optional peer,
 * so `npm ls` shows the relation and pnpm links the host's copy beside us) builds its schemas
 * with that copy. TypeBox 0.34 marks schemas with `Symbol.for` keys, so schemas work across
 * copies, but TypeRegistry and FormatRegistry are per copy: a format or kind the host registered
 * would be unknown to a tool checking values with another copy. The specifier is a variable so
 * the bundler leaves the import to the runtime, which resolves it from the file it is in (inside
 * our package), as the host's own imports resolve beside it. A copy that does not resolve, fails
 * to load or is no TypeBox leaves the bundled one: a boot does not fail over an optional peer.
 */
export function defaultTypeBox(): Promise<object> {
  const specifier: string = TYPEBOX;
  hostOrBundled ??= import(specifier).then(
    (namespace: Record<string, unknown>) => (namespace.Type && namespace.Kind ? namespace : loadBundledTypeBox()),
    () => loadBundledTypeBox(),
  );
  return hostOrBundled;
}

/**
 * The TypeBox instance tools see: the host's `modules` entry, else the one registered for the
 * process (`registerModules` runs before any tool is imported, so a factory always finds one).
 */
export function resolveTypeBox(modules: Record<string, object> = {}): typeof TypeBox {
  const chosen = modules[TYPEBOX] ?? getModuleRegistry().get(TYPEBOX) ?? bundled;
  if (!chosen) throw new Error("xcsh-tools: api.typebox was read before the module map was registered (registerModules)");
  return chosen as typeof TypeBox;
}

const RESERVED = new Set(
  (
    "break case catch class const continue debugger default delete do else enum export extends false finally for " +
    "function if import in instanceof new null return super switch this throw true try typeof var void while with " +
    "yield let static implements interface package private protected public await arguments eval"
  ).split(" "),
);

/** Names the shim itself uses, which an export must not shadow; `default` is exported separately. */
const SHIM_LOCALS = new Set(["default", "globalThis", "__xcshToolsModule"]);

/** A file-name-safe, collision-free encoding of a module name (`@a/b` → `_40a_2fb`). */
export function encodeModuleName(name: string): string {
  return name.replace(/[^a-zA-Z0-9.-]/g, (c) => `_${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** The path of the shim file for `name` inside `shimDir`. */
export function shimPath(shimDir: string, name: string): string {
  return path.join(shimDir, `${encodeModuleName(name)}.mjs`);
}

/** The source of the shim that re-exports the registry entry `name` (pure, for tests). */
export function renderShimSource(name: string, namespace: object): string {
  const keys = Object.keys(namespace).filter(
    (key) => /^[A-Za-z_$][\w$]*$/.test(key) && !RESERVED.has(key) && !SHIM_LOCALS.has(key),
  );
  const literal = JSON.stringify(name);
  const lines = [
    "// Written by xcsh-tools: re-exports the host's single instance of this module.",
    // Exported names become module-scope bindings (TypeBox exports `Symbol`), so the shim
    // reaches globals through `globalThis` only and never exports that name.
    `const __xcshToolsModule = globalThis[globalThis.Symbol.for("xcsh-tools.modules")]?.get(${literal});`,
    `if (__xcshToolsModule === undefined) throw new globalThis.Error(${JSON.stringify(
      `xcsh-tools: module "${name}" is not provided by the host in this process`,
    )});`,
    "export default (__xcshToolsModule.default ?? __xcshToolsModule);",
  ];
  if (keys.length > 0) lines.push(`export const { ${keys.join(", ")} } = __xcshToolsModule;`);
  return `${lines.join("\n")}\n`;
}

/** Write (atomically, only when changed) the shim of every registered name; returns shimDir. */
export function writeShims(shimDir: string, names: Iterable<string> = getModuleRegistry().keys()): string {
  const registry = getModuleRegistry();
  mkdirSync(shimDir, { recursive: true });
  for (const name of names) {
    const namespace = registry.get(name);
    if (namespace) writeIfChanged(shimPath(shimDir, name), renderShimSource(name, namespace));
  }
  return shimDir;
}

function writeIfChanged(file: string, text: string): void {
  let current: string | undefined;
  try {
    current = readTextBounded(file);
  } catch {
    current = undefined;
  }
  if (current === text) return;
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}
