/**
 * A cache of Node's type stripping for the Node versions whose compile cache keeps only V8's code
 * (Node 22: the compile cache learnt TypeScript in 23.7, nodejs/node#56629). Stripping a `.ts`
 * tool (amaro, a WebAssembly build of swc) is the largest single cost of importing it natively:
 * about a third of a 200-tool boot's CPU (docs/benchmarks.md, issue 44). A synchronous load hook
 * (node-hooks.ts registers it with its resolve hook) hands Node the stripped text of a
 * `module-typescript` file as plain `module` source, under the file's own URL, so
 * `import.meta.url`, relative imports and stack traces are the file's as before.
 *
 * Entries are named by a hash of the Node version and the source text, so an edited tool, or
 * another Node, simply misses; a miss strips with Node's own `module.stripTypeScriptTypes` (what
 * its loader runs) and writes the entry atomically. Whatever the stripper refuses (an enum, a
 * file under node_modules) is left to Node, which refuses it with its own error and code, so the
 * jiti fallback (module-import.ts) sees exactly what it saw before. No library offers this for
 * Node's native loader, hence the few lines here.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import nodeModule from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

export type LoadResult = { format?: string | null; source?: string | ArrayBuffer | ArrayBufferView | null; shortCircuit?: boolean };
export type SyncLoad = (url: string, context: unknown, nextLoad: (url: string, context?: unknown) => LoadResult) => LoadResult;

type Strip = (code: string, options: { mode: "strip" }) => string;
type FindPackageJson = (specifier: string) => string | undefined;

/**
 * The load hook that caches stripping in `dir`, or `undefined` where it buys nothing: a Node
 * whose compile cache keeps stripped TypeScript itself (23.7 and later), or one without the APIs.
 *
 * A hit answers without asking Node's loader: for a `.ts` file in a folder whose package.json
 * sets no `type`, Node strips the file once more only to detect whether it is ESM, and that
 * detection costs as much as the stripping. So an entry is written only for what Node itself
 * loaded as `module-typescript`, and is named by everything that decision depends on: the
 * source, the `type` of the file's package scope, and the Node version. Anything else (`.cts`,
 * CommonJS TypeScript, import attributes, node_modules) goes to Node as before.
 */
export function stripCacheHook(dir: string): SyncLoad | undefined {
  const api = nodeModule as unknown as { stripTypeScriptTypes?: Strip; findPackageJSON?: FindPackageJson };
  const strip = api.stripTypeScriptTypes;
  const findPackageJson = api.findPackageJSON;
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (typeof strip !== "function" || typeof findPackageJson !== "function" || major > 23 || (major === 23 && minor >= 7)) return undefined;
  const scopeTypes = new Map<string, string>();
  /** The `type` of the package.json that rules `url` ("" when none says), as Node decides the format from it. */
  const scopeType = (url: string): string => {
    const manifest = findPackageJson(url);
    if (manifest === undefined) return "";
    let type = scopeTypes.get(manifest);
    if (type === undefined) {
      const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { type?: unknown };
      type = typeof parsed.type === "string" ? parsed.type : "";
      scopeTypes.set(manifest, type);
    }
    return type;
  };
  // node:crypto only once this hook is in use (Node < 23.7): the module is loaded on every Node.
  const { createHash } = process.getBuiltinModule("node:crypto");
  const entryOf = (url: string, source: string) =>
    path.join(dir, `${createHash("sha256").update(`${process.version}\0${scopeType(url)}\0`).update(source).digest("hex")}.js`);
  let made = false;
  return (url, context, nextLoad) => {
    if (!(url.endsWith(".ts") || url.endsWith(".mts")) || !cacheableModule(url, context)) return nextLoad(url, context);
    try {
      const entry = entryOf(url, readFileSync(fileURLToPath(url), "utf8"));
      return { format: "module", source: readFileSync(entry, "utf8"), shortCircuit: true };
    } catch {
      // Not cached yet (or unreadable: Node says why below).
    }
    const loaded = nextLoad(url, context);
    if (loaded.format !== "module-typescript" || loaded.source == null) return loaded;
    const source = typeof loaded.source === "string" ? loaded.source : Buffer.from(loaded.source as ArrayBuffer).toString("utf8");
    let code: string;
    // Node 22 warns that the API is experimental; the user asked for no experiment, so the one
    // warning it would print is not passed on (Node's own stripping prints none there).
    const emitWarning = process.emitWarning;
    process.emitWarning = () => undefined;
    try {
      code = strip(source, { mode: "strip" });
    } catch {
      return loaded;
    } finally {
      process.emitWarning = emitWarning;
    }
    try {
      const entry = entryOf(url, source);
      if (!made) mkdirSync(dir, { recursive: true });
      made = true;
      const tmp = `${entry}.${process.pid}.tmp`;
      writeFileSync(tmp, code);
      renameSync(tmp, entry);
    } catch {
      // A read-only root: the tool still loads, stripped this once.
    }
    return { format: "module", source: code, shortCircuit: true };
  };
}

/** A module whose load a cache of ours may answer: a file URL outside node_modules, imported without attributes. */
export function cacheableModule(url: string, context: unknown): boolean {
  if (!url.startsWith("file:") || url.includes("/node_modules/")) return false;
  const attributes = (context as { importAttributes?: Record<string, unknown> } | undefined)?.importAttributes;
  return attributes === undefined || Object.keys(attributes).length === 0;
}
