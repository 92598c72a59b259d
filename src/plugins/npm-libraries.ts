/**
 * npm's libraries (CommonJS packages), each evaluated on its first use: `outdated` never pays for
 * arborist. npm-client.ts imports this module on first use, so a command that never talks to a
 * registry never loads it. In the build's bundle each `require` below is the bundler's (the line
 * marked `unbundled only` is dropped by scripts/build.mjs): the package is inside the bundle, and
 * sigstore and @npmcli/run-script, which they require at load, are stand-ins there too.
 */
import { Module, createRequire } from "node:module";

const require = createRequire(import.meta.url); // unbundled only

type Pacote = typeof import("pacote");
type ArboristClass = typeof import("@npmcli/arborist").default;
type Tar = typeof import("tar");

export function pacote(): Pacote {
  deferUnusedRequires(); // unbundled only
  return require("pacote") as Pacote;
}

export function Arborist(): ArboristClass {
  deferUnusedRequires(); // unbundled only
  return require("@npmcli/arborist") as ArboristClass;
}

/** node-tar as pacote requires it (one instance, the one pacote extracts with: package.json pins the same range). */
export function tar(): Tar {
  return require("tar") as Tar;
}

/**
 * Unbundled (the tests run the TypeScript sources): two modules npm's libraries require at load
 * but only call for work we never or rarely ask for, `sigstore` (pacote's registry fetcher
 * requires it; only npm's `audit signatures` options call it) and `@npmcli/run-script` (run only
 * with `--allow-scripts` or a folder's `prepare`), get a CommonJS cache entry that loads the real
 * module on first use, as the bundle's stand-ins do. A runtime that does not honour the cache
 * entry simply loads the real module.
 */
function deferUnusedRequires(): void {
  if (deferred) return;
  deferred = true;
  for (const [name, shape] of [["sigstore", "object"], ["@npmcli/run-script", "function"]] as const) {
    try {
      const requireFromLibraries = createRequire(createRequire(import.meta.url).resolve("pacote"));
      const file = requireFromLibraries.resolve(name);
      const cache = requireFromLibraries.cache;
      if (cache[file]) continue;
      let real: object | undefined;
      const load = (): object => {
        if (!real) {
          delete cache[file];
          real = requireFromLibraries(name) as object;
        }
        return real;
      };
      // An arrow function has no non-configurable own keys, so the traps stay within a Proxy's invariants.
      const standIn = new Module(file);
      standIn.filename = file;
      standIn.loaded = true;
      standIn.exports = new Proxy(shape === "function" ? () => undefined : {}, {
        apply: (_target, thisArg, args: unknown[]) => Reflect.apply(load() as (...a: unknown[]) => unknown, thisArg, args),
        get: (_target, key) => Reflect.get(load(), key),
        has: (_target, key) => Reflect.has(load(), key),
        ownKeys: () => Reflect.ownKeys(load()),
        getOwnPropertyDescriptor: (_target, key) => {
          const descriptor = Reflect.getOwnPropertyDescriptor(load(), key);
          return descriptor && { ...descriptor, configurable: true };
        },
      });
      cache[file] = standIn;
    } catch {
      // Not resolvable, or no writable cache on this runtime: the libraries load it themselves.
    }
  }
}
let deferred = false;
