/**
 * The import fence of the module checker (validate/child.ts): the folders a checked module's bare
 * imports (`lodash`, `@scope/pkg`, the host's own package) may resolve in. Node, Bun and jiti all
 * walk `node_modules` up to the filesystem's root, so a plugin checked in `/tmp/x` would load
 * `/tmp/node_modules/<pkg>`, which any local user can plant. With a fence set, a package found
 * only outside the fenced folders is refused with `EIMPORT_OUTSIDE`, naming the import and the
 * file that made it; module-map names (TypeBox, `xcsh-tools`) never get here, builtins pass.
 *
 * Every strategy asks the same question at its own hook: Node's resolve hook (node-hooks.ts, on
 * the result of Node's own resolution), jiti's module lookup (`fencedVirtualModules` below, which
 * has only the specifier, so the importer is read from the stack and the package folder found as
 * Node would find it). No library offers such a fence, hence the hand-written walk.
 *
 * Process-global (a `globalThis` symbol, like the module map) so every copy of this module in a
 * process sees the one fence; unset (hosts, the boot index, doctor) it checks nothing.
 */
import { existsSync, realpathSync } from "node:fs";
import { isBuiltin } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const FENCE_CODE = "EIMPORT_OUTSIDE";

const FENCE_SYMBOL = Symbol.for("xcsh-tools.import-fence");
type Holder = Record<symbol, readonly string[] | undefined>;

/** Fence bare imports to `roots` (real paths are kept); `undefined` lifts the fence. */
export function setImportFence(roots: readonly string[] | undefined): void {
  const real = roots?.map((root) => {
    try {
      return realpathSync(root);
    } catch {
      return path.resolve(root);
    }
  });
  (globalThis as unknown as Holder)[FENCE_SYMBOL] = real;
  if (real && typeof process.versions.bun === "string") fenceBunLoads(real);
}

interface BunLoadPlugin {
  plugin(plugin: { name: string; setup(builder: { onLoad(options: { filter: RegExp }, callback: (args: { path: string }) => never): void }): void }): unknown;
}

/**
 * Bun resolves a module's static imports without asking runtime plugins, but loads every file
 * through `onLoad`: a file under a `node_modules` outside the fence (and outside our own package)
 * is refused there. The filter matches only such files (an `onLoad` must return the file's
 * contents, so it cannot let the others pass). Bun plugins stay for the process: the checker
 * sets one fence per process.
 */
function fenceBunLoads(roots: readonly string[]): void {
  const bun = (globalThis as unknown as { Bun?: BunLoadPlugin }).Bun;
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const inside = [...roots, OWN_ROOT].map((root) => escape(root.endsWith(path.sep) ? root : root + path.sep)).join("|");
  bun?.plugin({
    name: "xcsh-tools:import-fence",
    setup(builder) {
      builder.onLoad({ filter: new RegExp(`^(?!(?:${inside})).*[\\\\/]node_modules[\\\\/]`) }, (args) => {
        const name = /[\\/]node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)[\\/](?!.*[\\/]node_modules[\\/])/.exec(args.path)?.[1] ?? args.path;
        throw Object.assign(new Error(fenceMessage(name.replace(/\\/g, "/"), undefined, args.path, roots)), { code: FENCE_CODE });
      });
    },
  });
}

/** The fenced folders (real paths), or `undefined` when nothing is fenced. */
export function importFence(): readonly string[] | undefined {
  return (globalThis as unknown as Holder)[FENCE_SYMBOL];
}

/** What starts a specifier that is no package name: `./`, `../`, `/`, `\\`, a URL scheme (`node:`, `file:`, `C:`), `#`. */
export const BARE_PREFIX = /^(\.{0,2}[\\/]|\.{1,2}$|[a-zA-Z][a-zA-Z0-9+.-]*:|#|[\\/])/;

/** A package name, not a path, URL, `#import` or builtin: what Node looks up in `node_modules`. */
export function isBareSpecifier(specifier: string): boolean {
  return !BARE_PREFIX.test(specifier) && !isBuiltin(specifier);
}

/**
 * The message of a refused import. Self-contained (no imports, no closure): node-hooks.ts puts
 * its source into the off-thread hook, so both hook flavours say the same.
 */
export function fenceMessage(specifier: string, importer: string | undefined, found: string, roots: readonly string[]): string {
  return (
    "EIMPORT_OUTSIDE: " +
    JSON.stringify(specifier) +
    (importer ? " imported by " + importer : "") +
    " resolves to " +
    found +
    ", outside " +
    roots.join(", ") +
    ": a plugin's packages must be in its own node_modules (the folders above it are not searched)"
  );
}

/** Whether `file` (a real path) is inside one of `roots`. */
export function insideFence(file: string, roots: readonly string[]): boolean {
  return roots.some((root) => file === root || file.startsWith(root.endsWith(path.sep) ? root : root + path.sep));
}

/** The error for `specifier` resolved to `found` when the fence refuses it, else `undefined`. */
export function fenceViolation(specifier: string, importer: string | undefined, found: string): Error | undefined {
  const roots = importFence();
  if (!roots || !isBareSpecifier(specifier) || insideFence(found, roots)) return undefined;
  return Object.assign(new Error(fenceMessage(specifier, importer, found, roots)), { code: FENCE_CODE });
}

/** `node_modules/<name>` as Node finds it from `fromDir` upward (a real path), or `undefined`. */
function packageFolderFrom(specifier: string, fromDir: string): string | undefined {
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== "node_modules") {
      const candidate = path.join(dir, "node_modules", name);
      if (existsSync(candidate)) return realpathSync(candidate);
    }
    if (path.dirname(dir) === dir) return undefined;
  }
}

// The folder of our own package (its package.json's): frames of our code and of the jiti bundled in it are not importers.
const OWN_ROOT = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = here; path.dirname(dir) !== dir; dir = path.dirname(dir)) if (existsSync(path.join(dir, "package.json"))) return dir;
  return here;
})();

/** The first file on the stack outside our package: the module whose `require`/`import` jiti is serving. */
function importerFromStack(): string | undefined {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 50;
  Error.captureStackTrace(holder);
  Error.stackTraceLimit = limit;
  for (const line of (holder.stack ?? "").split("\n").slice(1)) {
    const match = /(?:\(|at )((?:file:\/\/)?(?:\/|[A-Za-z]:\\)[^()]*?):\d+:\d+\)?$/.exec(line.trim());
    if (!match) continue;
    const file = match[1]!.startsWith("file:") ? fileURLToPath(match[1]!) : match[1]!;
    if (!insideFence(file, [OWN_ROOT])) return file;
  }
  return undefined;
}

/**
 * jiti's `virtualModules` with the fence: jiti asks `name in virtualModules` before it resolves
 * any `require`/`import`, so a bare name that is no module-map entry is looked up here the way
 * Node would find it from the importer (or, when the stack does not say, from the fenced folders)
 * and refused when found outside them. A name found nowhere is left to jiti's own "not found".
 */
export function fencedVirtualModules(target: Record<string, unknown>): Record<string, unknown> {
  return new Proxy(target, {
    has(object, key) {
      if (Reflect.has(object, key)) return true;
      const roots = importFence();
      if (!roots || typeof key !== "string" || !isBareSpecifier(key)) return false;
      const importer = importerFromStack();
      const from = importer ? [path.dirname(importer)] : roots;
      for (const dir of from) {
        const found = packageFolderFrom(key, dir);
        if (found === undefined || insideFence(found, roots)) continue;
        throw fenceViolation(key, importer, found)!;
      }
      return false;
    },
  });
}
