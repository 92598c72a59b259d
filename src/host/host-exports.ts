/**
 * `api.pi`: the host's own exports. The xcsh host hands every factory the namespace of its
 * package, `@f5-sales-demo/xcsh` (packages/coding-agent/package.json `name`; the loader's
 * constructor takes `pi: typeof import("@f5-sales-demo/xcsh")` and puts it in the shared API,
 * extensibility/custom-tools/loader.ts:87-106). Its own example `todo` tool reads
 * `pi.pi.StringEnum` (examples/custom-tools/todo/index.ts:26-28).
 *
 * Outside the host (`validate`, `tools`, the test harness) those exports are found, in order:
 * a module the user names (`--pi <module>`, the harness's `pi`), else the host package resolved
 * from the checked tool's own folder (an xcsh install beside or above it; never from the project
 * folder as such, which an untrusted repository fills). When there is none,
 * `api.pi` is an empty object that notes which names a factory read from it, so a factory that
 * then fails is reported as `EHOST_EXPORTS` — "it needs the host's exports, and there were none"
 * — rather than as a puzzling `StringEnum is not a function`.
 */
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { insideFence } from "./import/fence.js";

function realpathOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** The host's package name: what `api.pi` is the namespace of. */
export const HOST_PACKAGE = "@f5-sales-demo/xcsh";

/** How to get the host's exports, for hints. */
export const HOST_EXPORTS_HINT =
  `Give the host's exports: install ${HOST_PACKAGE} where the tool's folder resolves it, pass \`--pi <module>\` ` +
  "(a module whose exports stand in for the host's), or in tests `createToolHarness({ pi })`.";

const missingReads = new WeakMap<object, string[]>();

/**
 * An empty `api.pi` that records every name read from it (symbols and the names JavaScript itself
 * probes, like `then`, are not reads of a host export).
 */
export function emptyHostExports(): Record<string, unknown> {
  const reads: string[] = [];
  const target: Record<string, unknown> = {};
  const proxy = new Proxy(target, {
    get(object, key) {
      if (typeof key === "string" && !IGNORED.has(key) && !Object.hasOwn(object, key)) reads.push(key);
      return Reflect.get(object, key);
    },
  });
  missingReads.set(proxy, reads);
  return proxy;
}

const IGNORED = new Set(["then", "toJSON", "constructor", "valueOf", "toString", "inspect", "asymmetricMatch", "$$typeof", "nodeType", "@@__IMMUTABLE_ITERABLE__@@"]);

/** How many names have been read so far from an `emptyHostExports()` (0 for real exports). */
export function hostExportReadCount(pi: unknown): number {
  return (typeof pi === "object" && pi !== null ? missingReads.get(pi)?.length : undefined) ?? 0;
}

/**
 * The `EHOST_EXPORTS` message for a factory that failed after reading names from an empty
 * `api.pi` (reads since `since`), or undefined when it read none (then the failure is its own).
 */
export function hostExportsFailure(pi: unknown, since: number, failure: string): string | undefined {
  const reads = (typeof pi === "object" && pi !== null ? missingReads.get(pi) : undefined) ?? [];
  const names = [...new Set(reads.slice(since))];
  if (names.length === 0) return undefined;
  return (
    `the factory read ${names.map((n) => `api.pi.${n}`).join(", ")}, but no host exports were available ` +
    `(api.pi is empty outside xcsh unless given), and then failed: ${failure}`
  );
}

/** Where host exports come from. */
export interface HostExportsSource {
  /** The module named by the user (`--pi`): a path (relative to `cwd`) or a package name. */
  module?: string;
  /** The folder `module` is resolved from. */
  cwd: string;
  /** The folders the host package is looked for from (the checked tool modules' folders), in order. */
  alsoFrom?: readonly string[];
  /** Only a host package inside these folders counts (the module checker's fence, import/fence.ts). */
  within?: readonly string[];
}

/** Host exports found, and where they came from (a file). */
export interface LoadedHostExports {
  exports: Record<string, unknown>;
  file: string;
}

/** The file `spec` names, resolved from `cwd` (a path, or a package name as Node resolves it). */
function resolveModule(spec: string, cwd: string): string | undefined {
  const require = createRequire(path.join(path.resolve(cwd), "noop.js"));
  const asPath = spec.startsWith(".") || path.isAbsolute(spec) ? path.resolve(cwd, spec) : spec;
  try {
    return require.resolve(asPath);
  } catch {
    return undefined;
  }
}

/** `EHOST_EXPORTS_MODULE` unless `spec` resolves from `cwd`: checked before any child starts. */
export function assertHostExportsModule(spec: string, cwd: string): string {
  const file = resolveModule(spec, cwd);
  if (file === undefined) {
    throw new XcshToolsError("EHOST_EXPORTS_MODULE", `--pi ${spec}: no module of that name or path resolves from ${cwd}`, {
      hint: `Name a module file (./host-stub.mjs) or an installed package (${HOST_PACKAGE}).`,
      exitCode: 2,
    });
  }
  return file;
}

/**
 * Load the host's exports: the named module (`EHOST_EXPORTS_MODULE` when it cannot be resolved or
 * imported: the user asked for it), else `@f5-sales-demo/xcsh` from the tool modules' folders when
 * it resolves and imports, else `undefined` (then `api.pi` is `emptyHostExports()`).
 */
export async function loadHostExports(source: HostExportsSource): Promise<LoadedHostExports | undefined> {
  if (source.module !== undefined) {
    const file = assertHostExportsModule(source.module, source.cwd);
    try {
      return { exports: { ...((await import(pathToFileURL(file).href)) as Record<string, unknown>) }, file };
    } catch (error) {
      throw new XcshToolsError("EHOST_EXPORTS_MODULE", `--pi ${source.module}: importing ${file} failed: ${errorMessage(error)}`, {
        hint: "The module must import under Node (plain JavaScript, or TypeScript Node can strip).",
        exitCode: 2,
      });
    }
  }
  // The host package is looked for only from the folders of the modules being checked, whose
  // code runs anyway: never from the project folder as such, whose node_modules an untrusted
  // repository controls (`tools` checks the user's own tools from any folder it runs in).
  let file: string | undefined;
  const within = source.within?.map((root) => realpathOr(root));
  for (const folder of source.alsoFrom ?? []) {
    file = resolveModule(HOST_PACKAGE, folder);
    if (file !== undefined && within && !insideFence(realpathOr(file), within)) file = undefined;
    if (file !== undefined) break;
  }
  if (file === undefined) return undefined;
  try {
    return { exports: { ...((await import(pathToFileURL(file).href)) as Record<string, unknown>) }, file };
  } catch {
    // The host package runs under Bun; under Node its entry may not import. Then there are none.
    return undefined;
  }
}
