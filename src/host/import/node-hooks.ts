/**
 * Node's native loader learns the module map through a resolve hook that maps a registered bare
 * name to its shim file (see module-map.ts). Two flavours, registered once per process:
 *
 * - `module.registerHooks` (Node >= 22.15): synchronous and in-thread, so the hook reads the
 *   registry itself and is exact.
 * - `module.register` (Node >= 20.6): the hook runs on a separate thread that cannot see our
 *   `globalThis`, so it gets the shim folder and the registered names through `data`, and later
 *   names through a MessagePort with an acknowledgement (an import never races a name it needs).
 *   Only names registered in this process are mapped, so a stale shim left by an earlier process
 *   never hijacks an import the host makes itself.
 *
 * The off-thread hook is a `data:` URL module, so it works from the TypeScript sources, from
 * dist and from a bundle alike.
 */
import { existsSync } from "node:fs";
import nodeModule from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { MessagePort } from "node:worker_threads";
import { BARE_PREFIX, fenceMessage, fenceViolation, importFence } from "./fence.js";
import { getModuleRegistry, shimPath } from "./module-map.js";
import { formatMemoHook } from "./format-memo.js";
import { stripCacheHook, type SyncLoad } from "./strip-cache.js";

type SyncResolve = (
  specifier: string,
  context: unknown,
  nextResolve: (specifier: string, context?: unknown) => unknown,
) => unknown;
type RegisterHooks = (hooks: { resolve?: SyncResolve; load?: SyncLoad }) => unknown;

let state:
  | { kind: "in-thread"; shimDir: string }
  | { kind: "off-thread"; shimDir: string; port: MessagePort; sent: Set<string>; fence: string; nextId: number }
  | { kind: "unavailable" }
  | undefined;

/** The shim folder the registered hook reads, once registered (later callers must write there). */
export function getNodeHookShimDir(): string | undefined {
  return state && state.kind !== "unavailable" ? state.shimDir : undefined;
}

/** Which hook flavour this process uses, once registered. */
export function getNodeHookKind(): "in-thread" | "off-thread" | "unavailable" | undefined {
  return state?.kind;
}

let compileCache: "tried" | undefined;

/**
 * Turn on Node's on-disk compile cache (`module.enableCompileCache`, Node >= 22.8) in `cacheDir`,
 * once per process, before the first tool module is imported natively (`ensureNodeHooks` does it
 * when given the transpile cache's folder). Why: compiling is most of
 * a boot. Node 24 keeps there both V8's code cache and its type-stripped TypeScript (amaro, the
 * largest single cost of importing a `.ts` tool), so a warm boot of 200 seed-style tools costs
 * well under half of a plain `import()` of them (docs/benchmarks.md, issue 44); the install's
 * validation child imports through here too, so the first boot after an install is warm already.
 * Entries are keyed by file and checked against the source's hash: an edited tool is compiled
 * anew. Node decides the rest: a host that enabled its own cache keeps it (Node answers
 * ALREADY_ENABLED), `NODE_DISABLE_COMPILE_CACHE=1` turns it off, and a folder it cannot write
 * only means no cache. It is process-wide: modules the host imports later are cached there too.
 */
function enableCompileCache(cacheDir: string): void {
  if (compileCache) return;
  compileCache = "tried";
  const enable = (nodeModule as unknown as { enableCompileCache?: (dir: string) => unknown }).enableCompileCache;
  try {
    enable?.(path.join(cacheDir, "node-compile"));
  } catch {
    // An older Node or an unusable folder: tools load as before, without a cache.
  }
}

/**
 * Write what the compile cache holds now: Node writes it when the process ends normally, and a
 * process that is killed once its work is reported (the validation child) would lose it.
 */
export function flushCompileCache(): void {
  if (!compileCache) return;
  try {
    (nodeModule as unknown as { flushCompileCache?: () => void }).flushCompileCache?.();
  } catch {
    // A cache is never worth a failure.
  }
}

/**
 * Make every registry name resolvable by Node's native loader. `shimDir` must already hold the
 * shims (writeShims); the first caller's folder wins for the life of the process. With
 * `cacheDir` (the transpile cache's folder), also turn on the compile caches below it: Node's,
 * and on Node 22 the strip cache's load hook (strip-cache.ts), registered with the resolve hook.
 */
export async function ensureNodeHooks(shimDir: string, cacheDir?: string): Promise<void> {
  if (cacheDir !== undefined) enableCompileCache(cacheDir);
  if (!state) state = registerOnce(shimDir, cacheDir);
  if (state.kind === "off-thread") await sendNames(state);
}

function registerOnce(shimDir: string, cacheDir: string | undefined): NonNullable<typeof state> {
  const registerHooks = (nodeModule as unknown as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof registerHooks === "function") {
    const registry = getModuleRegistry();
    // A hook Node calls for every module: where the compile cache keeps no stripped TypeScript the
    // strip cache (strip-cache.ts), else the memo of detected formats (format-memo.ts).
    const load = cacheDir === undefined ? undefined : (stripCacheHook(path.join(cacheDir, "node-strip")) ?? formatMemoHook(path.join(cacheDir, "node-format")));
    registerHooks({
      ...(load ? { load } : {}),
      resolve(specifier, context, nextResolve) {
        if (registry.has(specifier)) {
          const file = shimPath(shimDir, specifier);
          if (existsSync(file)) return { url: pathToFileURL(file).href, shortCircuit: true };
        }
        const resolved = nextResolve(specifier, context) as { url?: string };
        // The fence is set only in the module checker: a host's boot converts no URLs here (two per import).
        if (importFence() !== undefined && typeof resolved?.url === "string" && resolved.url.startsWith("file:")) {
          const parent = (context as { parentURL?: string } | undefined)?.parentURL;
          const refused = fenceViolation(specifier, parent?.startsWith("file:") ? fileURLToPath(parent) : parent, fileURLToPath(resolved.url));
          if (refused) throw refused;
        }
        return resolved;
      },
    });
    return { kind: "in-thread", shimDir };
  }
  if (typeof nodeModule.register !== "function") return { kind: "unavailable" };
  // worker_threads only for this flavour (Node < 22.15): every other boot would load it for nothing.
  const { MessageChannel } = process.getBuiltinModule("node:worker_threads");
  const { port1, port2 } = new MessageChannel();
  port1.unref();
  const names = [...getModuleRegistry().keys()];
  nodeModule.register(OFF_THREAD_HOOK_URL, {
    parentURL: import.meta.url,
    data: { shimDir, names, port: port2 },
    transferList: [port2],
  });
  return { kind: "off-thread", shimDir, port: port1, sent: new Set(names), fence: "null", nextId: 1 };
}

/** Tell the hook thread about names registered after it started and the import fence (fence.ts), and wait until it knows. */
async function sendNames(off: { port: MessagePort; sent: Set<string>; fence: string; nextId: number }): Promise<void> {
  const fresh = [...getModuleRegistry().keys()].filter((name) => !off.sent.has(name));
  const fence = JSON.stringify(importFence() ?? null);
  if (fresh.length === 0 && fence === off.fence) return;
  for (const name of fresh) off.sent.add(name);
  off.fence = fence;
  const id = off.nextId++;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, 2000);
    function done() {
      clearTimeout(timer);
      off.port.off("message", onMessage);
      resolve();
    }
    function onMessage(message: unknown) {
      if ((message as { ack?: number } | null)?.ack === id) done();
    }
    off.port.on("message", onMessage);
    off.port.postMessage({ id, names: fresh, fence: JSON.parse(fence) as unknown });
  });
}

/** The hook module run on Node's loader thread (kept dependency-free: builtins only). */
const OFF_THREAD_HOOK_SOURCE = `
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
let shimDir = "";
const names = new Set();
let fence = null;
const encode = (name) => name.replace(/[^a-zA-Z0-9.-]/g, (c) => "_" + c.charCodeAt(0).toString(16).padStart(2, "0"));
const fenceMessage = ${fenceMessage.toString()};
const bare = (s) => !${BARE_PREFIX.toString()}.test(s);
const inside = (file) => fence.some((root) => file === root || file.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
export function initialize(data) {
  shimDir = data.shimDir;
  for (const name of data.names) names.add(name);
  data.port.on("message", (message) => {
    for (const name of message.names) names.add(name);
    if ("fence" in message) fence = message.fence;
    data.port.postMessage({ ack: message.id });
  });
  data.port.unref();
}
export async function resolve(specifier, context, nextResolve) {
  if (names.has(specifier)) {
    const file = path.join(shimDir, encode(specifier) + ".mjs");
    if (existsSync(file)) return { url: pathToFileURL(file).href, shortCircuit: true };
  }
  const resolved = await nextResolve(specifier, context);
  if (fence && bare(specifier) && typeof resolved.url === "string" && resolved.url.startsWith("file:")) {
    const found = fileURLToPath(resolved.url);
    const parent = context.parentURL && context.parentURL.startsWith("file:") ? fileURLToPath(context.parentURL) : context.parentURL;
    if (!inside(found)) throw Object.assign(new Error(fenceMessage(specifier, parent, found, fence)), { code: "EIMPORT_OUTSIDE" });
  }
  return resolved;
}
`;
const OFF_THREAD_HOOK_URL = `data:text/javascript,${encodeURIComponent(OFF_THREAD_HOOK_SOURCE)}`;
