/**
 * What is installed, read the way the host reads it: for each key of
 * `<plugins>/package.json#dependencies`, `node_modules/<name>/package.json` (through a symlink
 * for linked plugins), its manifest (`xcsh`, else `pi`), joined with the runtime lock entry and
 * our record. Read-only; `list`, `outdated` and the planners use it.
 *
 * A missing or unreadable plugin folder is reported on the item (`problem`), not thrown: `list`
 * must still show the others, and doctor repairs it.
 */
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { errorMessage } from "../core/errors.js";
import { notAPluginReason, pickManifest, readHostManifest, type PluginManifest } from "../manifest/plugin-manifest.js";
import { isRecord } from "../manifest/result.js";
import type { RuntimePluginState } from "../manifest/runtime-lock.js";
import { dependenciesOf, runtimeEntry, type InstallRecordEntry, type PluginsState } from "./state.js";

/** Lifecycle scripts that npm runs at install time. */
export const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"] as const;

/** The install scripts a package.json declares. */
export function declaredScripts(pkg: unknown): string[] {
  if (!isRecord(pkg) || !isRecord(pkg.scripts)) return [];
  const scripts = pkg.scripts;
  return INSTALL_SCRIPTS.filter((name) => typeof scripts[name] === "string" && scripts[name] !== "");
}

/** The packages a package.json has npm install beside it: dependencies, optional and peer ones. */
export function dependencyNames(pkg: unknown): string[] {
  if (!isRecord(pkg)) return [];
  const names = new Set<string>();
  for (const field of ["dependencies", "optionalDependencies", "peerDependencies"]) {
    const value = pkg[field];
    if (isRecord(value)) for (const name of Object.keys(value)) names.add(name);
  }
  return [...names];
}

/** One installed plugin (or a dependency that is not one). */
export interface InstalledPlugin {
  name: string;
  /** The package.json dependency value (`^1.2.0`, `file:…`, a git URL). */
  dependency: string;
  dir: string;
  version: string | undefined;
  linked: boolean;
  linkTarget: string | undefined;
  pkg: Record<string, unknown> | undefined;
  manifest: PluginManifest | undefined;
  runtime: RuntimePluginState | undefined;
  record: InstallRecordEntry | undefined;
  scripts: string[];
  /** Why the folder could not be read, when it could not. */
  problem: string | undefined;
}

/**
 * Read the plugin folder of `name`. The file system calls are synchronous on purpose, as in
 * discovery's folder scans (discovery/tools-dir.ts): an lstat and one small package.json per
 * plugin, where each fs/promises call is a thread-pool round trip costing more than the call
 * itself (an install reads every plugin it brought before validating them).
 */
export async function readInstalledPackage(nodeModules: string, name: string): Promise<Pick<InstalledPlugin, "dir" | "version" | "linked" | "linkTarget" | "pkg" | "manifest" | "scripts" | "problem">> {
  const dir = path.join(nodeModules, name);
  let linked = false;
  let linkTarget: string | undefined;
  try {
    const info = lstatSync(dir);
    if (info.isSymbolicLink()) {
      linked = true;
      try {
        linkTarget = realpathSync.native(dir);
      } catch {
        linkTarget = undefined;
      }
    }
  } catch {
    return { dir, version: undefined, linked, linkTarget, pkg: undefined, manifest: undefined, scripts: [], problem: `${dir} is missing` };
  }
  let pkg: Record<string, unknown>;
  try {
    const parsed = JSON.parse(readTextBounded(path.join(dir, "package.json")) ?? "") as unknown;
    if (!isRecord(parsed)) throw new Error("not an object");
    pkg = parsed;
  } catch (error) {
    return { dir, version: undefined, linked, linkTarget, pkg: undefined, manifest: undefined, scripts: [], problem: `${path.join(dir, "package.json")} cannot be read: ${errorMessage(error)}` };
  }
  const picked = pickManifest(pkg);
  const checked = picked ? readHostManifest(picked.manifest) : undefined;
  return {
    dir,
    version: typeof pkg.version === "string" ? pkg.version : undefined,
    linked,
    linkTarget,
    pkg,
    manifest: checked?.ok ? checked.value : undefined,
    scripts: declaredScripts(pkg),
    problem: !picked ? notAPluginReason(pkg) : checked && !checked.ok ? "its xcsh manifest is malformed (run `xcsh-tools doctor`)" : undefined,
  };
}

/** Every dependency of the plugins folder, in package.json order. */
export async function loadInventory(state: PluginsState): Promise<InstalledPlugin[]> {
  const deps = dependenciesOf(state.packageJson);
  return Promise.all(
    Object.entries(deps).map(async ([name, dependency]) => ({
      name,
      dependency,
      ...(await readInstalledPackage(state.paths.nodeModules, name)),
      runtime: runtimeEntry(state.runtimeLock, name),
      record: Object.hasOwn(state.record.plugins, name) ? state.record.plugins[name] : undefined,
    })),
  );
}
