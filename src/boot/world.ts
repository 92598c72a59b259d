/**
 * Where a boot index lives and which question one call asks of it: the roots and files
 * (`worldOf`), the view key (home, cwd, configured paths, providers, trusted), the trust decision
 * made once per call before anything is read, and the generator that stamps the files (an index
 * written by another version of xcsh-tools is rebuilt).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { projectFolder, resolveRoots, xcshPaths, type XcshPaths, type XcshRoots } from "../core/paths.js";
import { decideProjectTrustOf, trustWorldOf, type ProjectTrustOption } from "../core/trust.js";
import { selectProviders } from "../discovery/select.js";
import type { DiscoverCustomToolsOptions } from "../core/host-options.js";
import type { ViewKey } from "./format.js";

/** Where to look: the roots (as a host passes them to discovery), and the question (cwd, configured paths, providers). */
export interface BootIndexOptions extends Pick<DiscoverCustomToolsOptions, "home" | "xcshHome" | "configDirName" | "pluginsDir" | "agentDir" | "env" | "providers" | "disabledProviders" | "projectTrust"> {
  cwd?: string;
  configuredPaths?: readonly string[];
}

let generatorCache: string | undefined;
/** `xcsh-tools@<version>`: an index written by another version is rebuilt (discovery may differ). */
export function bootIndexGenerator(): string {
  if (generatorCache === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
      generatorCache = `xcsh-tools@${pkg.version ?? "unknown"}`;
    } catch {
      generatorCache = "xcsh-tools@unknown";
    }
  }
  return generatorCache;
}

// Read once: a lazy boot asks for every entry, and `process.versions` is not a cheap read in cold code.
const RUNTIME = process.versions.bun ? "bun" : "node";

/** The runtime a module record was made under (module-records.ts: when it answers another). */
export function runtimeName(): string {
  return RUNTIME;
}

export interface World {
  roots: XcshRoots;
  paths: XcshPaths;
  /** The views file (what a boot reads); the records are in `paths.bootModules`. */
  file: string;
}

export function worldOf(options: Pick<BootIndexOptions, "home" | "xcshHome" | "env" | "configDirName" | "pluginsDir" | "agentDir">): World {
  const roots = resolveRoots(options);
  const paths = xcshPaths(roots);
  return { roots, paths, file: paths.bootIndex };
}

export function keyOf(world: World, configuredPaths: readonly string[], cwd: string, options: Pick<BootIndexOptions, "providers" | "disabledProviders">, trusted: boolean): ViewKey {
  const seeds = world.roots.seedDirs;
  return { home: world.roots.home, cwd: path.resolve(cwd), configuredPaths: [...configuredPaths], providers: selectProviders(options), trusted, ...(seeds && seeds.length > 0 ? { seeds: [...seeds] } : {}) };
}

/** The trust decision for `cwd`, once per call (core/trust.ts: fails closed). */
export function decideTrust(world: World, cwd: string, option: ProjectTrustOption | undefined): boolean | Promise<boolean> {
  // About the project root found from cwd, as discovery decides it (discovery/index.ts).
  return decideProjectTrustOf(path.resolve(cwd), projectFolder(cwd, world.roots), option, trustWorldOf(world.roots));
}

/** Whether the user's own record trusts `cwd` now. */
export function userTrusts(world: World, cwd: string): boolean {
  return decideProjectTrustOf(cwd, projectFolder(cwd, world.roots), undefined, trustWorldOf(world.roots)) === true;
}
