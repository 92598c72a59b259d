/**
 * The jiti strategy: TypeScript on a Node without type stripping (Node 20), and the fallback when
 * Node's stripping refuses a file. ONE jiti instance per process, so its module cache is shared by
 * every loader, and its file-system cache points at our transpile folder, so the second boot reads
 * the transpiled output instead of compiling again (jiti keys entries by path and checks a hash of
 * the source, so an edited tool is recompiled).
 *
 * Bare names of the module map reach jiti as `virtualModules` (jiti >= 2.6): the registry object
 * itself, mutated in place, so names registered after the instance was created still resolve.
 */
import { createJiti, type Jiti } from "jiti";
import { getModuleRegistry } from "./module-map.js";

let instance: { jiti: Jiti; cacheDir: string; virtualModules: Record<string, unknown> } | undefined;

/** The process's jiti instance; the first caller's cache folder wins for the life of the process. */
export function getJiti(cacheDir: string): Jiti {
  if (!instance) {
    const virtualModules: Record<string, unknown> = {};
    const jiti = createJiti(import.meta.url, {
      fsCache: cacheDir,
      moduleCache: true,
      interopDefault: true,
      virtualModules,
    });
    instance = { jiti, cacheDir, virtualModules };
  }
  syncVirtualModules(instance.virtualModules);
  return instance.jiti;
}

/** The cache folder the process's jiti instance uses, if it exists yet. */
export function getJitiCacheDir(): string | undefined {
  return instance?.cacheDir;
}

function syncVirtualModules(target: Record<string, unknown>): void {
  for (const [name, namespace] of getModuleRegistry()) {
    if (!(name in target)) target[name] = namespace;
  }
}

/** Import `file` (absolute path) through jiti. */
export async function importWithJiti(file: string, cacheDir: string): Promise<Record<string, unknown>> {
  const jiti = getJiti(cacheDir);
  return (await jiti.import(file)) as Record<string, unknown>;
}
