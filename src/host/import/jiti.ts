/**
 * The jiti strategy: TypeScript on a Node without type stripping (Node 20), and the fallback when
 * Node's stripping refuses a file. One jiti instance per transpile-cache folder (in practice one per
 * process: a host has one xcsh root), and its file-system cache points at that folder, so the second boot reads
 * the transpiled output instead of compiling again (jiti keys entries by path and checks a hash of
 * the source, so an edited tool is recompiled).
 *
 * Bare names of the module map reach jiti as `virtualModules` (jiti >= 2.6): the registry object
 * itself, mutated in place, so names registered after the instance was created still resolve.
 *
 * jiti is loaded on first use, and through `require`: a host on Bun, or on a Node that strips
 * types and has no TypeScript tool under node_modules, never pays for it, and `require` of its
 * CommonJS build skips the export scan Node runs when ESM imports a CommonJS file (jiti is one
 * 190 kB file: that scan alone cost about half of its load time at boot).
 */
import { createRequire } from "node:module";
import type { Jiti, createJiti as CreateJiti } from "jiti";
import { fencedVirtualModules } from "./fence.js";
import { getModuleRegistry } from "./module-map.js";

// In the build's bundle, `require` is the bundler's and jiti is inside it (scripts/build.mjs).
const require = createRequire(import.meta.url); // unbundled only

let createJitiOnce: typeof CreateJiti | undefined;

function loadCreateJiti(): typeof CreateJiti {
  createJitiOnce ??= (require("jiti") as { createJiti: typeof CreateJiti }).createJiti;
  return createJitiOnce;
}

interface JitiInstance {
  jiti: Jiti;
  cacheDir: string;
  virtualModules: Record<string, unknown>;
}

// Keyed by cache folder: a process that loads from two xcsh roots (tests, a host serving two
// users) must not write one root's transpile output into the other's, nor keep using a folder
// that was removed.
const instances = new Map<string, JitiInstance>();

/** The jiti instance that caches into `cacheDir`. */
export function getJiti(cacheDir: string): Jiti {
  let instance = instances.get(cacheDir);
  if (!instance) {
    // Fenced (fence.ts): in the module checker, a bare name found only above the checked folders is refused.
    const virtualModules = fencedVirtualModules({});
    const jiti = loadCreateJiti()(import.meta.url, {
      fsCache: cacheDir,
      moduleCache: true,
      interopDefault: true,
      virtualModules,
    });
    instance = { jiti, cacheDir, virtualModules };
    instances.set(cacheDir, instance);
  }
  syncVirtualModules(instance.virtualModules);
  return instance.jiti;
}

function syncVirtualModules(target: Record<string, unknown>): void {
  for (const [name, namespace] of getModuleRegistry()) {
    if (!Object.hasOwn(target, name)) target[name] = namespace;
  }
}

/** Import `file` (absolute path) through jiti. */
export async function importWithJiti(file: string, cacheDir: string): Promise<Record<string, unknown>> {
  const jiti = getJiti(cacheDir);
  return (await jiti.import(file)) as Record<string, unknown>;
}
