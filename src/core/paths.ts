/**
 * Where things live. Every path is derived from an injected `home` (the user's home) and
 * `xcshHome` (the xcsh root: `--home`, else `$XCSH_HOME`, else `<home>/.xcsh`), never from
 * `os.homedir()` deep inside an engine, so tests and hosts can point us anywhere.
 */
import { lstatSync, statSync, type Stats } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { XcshToolsError } from "./errors.js";

/** The roots every other path is derived from. */
export interface XcshRoots {
  /** The user's home directory (for `~`, `~/.claude`, `~/.codex`). */
  home: string;
  /** The xcsh root, `~/.xcsh` by default. */
  xcshHome: string;
  /**
   * The name of the host's config folder (`PI_CONFIG_DIR`, default `.xcsh`): the folder below home
   * and the marker of a project root (`findProjectRoot`). Absent: `.xcsh`.
   */
  configDirName?: string;
  /** The plugins folder when it is not `<xcshHome>/plugins` (`$XDG_DATA_HOME/xcsh/plugins`). */
  pluginsDir?: string;
  /** The agent folder when it is not `<xcshHome>/agent` (`PI_CODING_AGENT_DIR`). */
  agentDir?: string;
  /** Read-only plugin seeds (`XCSH_PLUGIN_SEED_DIR`, docs/design/fleets.md), first wins; absent: none. */
  seedDirs?: string[];
}

/** The host's default config folder name (packages/utils/src/dirs.ts `CONFIG_DIR_NAME`). */
export const DEFAULT_CONFIG_DIR_NAME = ".xcsh";

/** Options of `resolveRoots`: explicit values win over the environment, which wins over the OS. */
export interface ResolveRootsOptions extends Partial<Pick<XcshRoots, "configDirName" | "pluginsDir" | "agentDir" | "seedDirs">> {
  home?: string;
  /**
   * The xcsh root outright; with it, `configDirName`, `pluginsDir` and `agentDir` are taken as
   * given, and `seedDirs` too when given (else `XCSH_PLUGIN_SEED_DIR` of `env` is still read: the
   * seeds are not part of the root, a host passing its root keeps its machine's seeds).
   */
  xcshHome?: string;
  env?: NodeJS.ProcessEnv;
  /** `process.platform` unless given (tests): XDG folders apply on Linux and macOS only. */
  platform?: NodeJS.Platform;
}

function envPathError(variable: string, value: string, expected: string, hostDoes: string): XcshToolsError {
  return new XcshToolsError("EENV_PATH", `${variable}=${JSON.stringify(value)} is not ${expected}`, {
    hint: `${hostDoes} Set ${variable} to ${expected}, or unset it.`,
    exitCode: 2,
  });
}

/**
 * `PI_CONFIG_DIR`: the host joins it to home (`path.join(os.homedir(), PI_CONFIG_DIR)`,
 * packages/utils/src/dirs.ts:106-107,140), so only a relative folder below home means the same
 * to both of us; an empty value is the default there too (`||`).
 */
function configDirNameFrom(env: NodeJS.ProcessEnv): string {
  const value = env.PI_CONFIG_DIR;
  if (value === undefined || value === "") return DEFAULT_CONFIG_DIR_NAME;
  const segments = value.split(/[\\/]+/).filter((s) => s !== "");
  if (path.isAbsolute(value) || /^[a-zA-Z]:/.test(value) || value.startsWith("~") || value.includes("\0") || segments.length === 0 || segments.some((s) => s === "." || s === "..")) {
    throw envPathError("PI_CONFIG_DIR", value, "a folder name relative to your home folder (like .xcsh-dev)", "xcsh joins PI_CONFIG_DIR to your home folder, so an absolute path, `~` or `..` would name a folder the host and xcsh-tools read differently.");
  }
  return segments.join(path.sep);
}

/** An absolute folder from the environment (`~` expanded), or `EENV_PATH`. */
function absoluteDirFrom(variable: string, value: string, home: string, hostDoes: string): string {
  const expanded = expandTilde(value, home);
  if (!path.isAbsolute(expanded) || value.includes("\0")) throw envPathError(variable, value, "an absolute path", hostDoes);
  return path.resolve(expanded);
}

/**
 * `XCSH_PLUGIN_SEED_DIR`: absolute folders separated by the platform's delimiter (`:`, `;` on
 * Windows), as Claude Code's `CLAUDE_CODE_PLUGIN_SEED_DIR`; empty parts are skipped. A relative
 * part would name another seed in every folder the host starts in: `EENV_PATH`.
 */
function seedDirsFrom(env: NodeJS.ProcessEnv, home: string): string[] {
  const value = env.XCSH_PLUGIN_SEED_DIR;
  if (!value) return [];
  const hostDoes = "Each seed folder is read wherever the agent starts, so it must not depend on the folder it starts in.";
  return [...new Set(value.split(path.delimiter).filter((part) => part !== "").map((part) => absoluteDirFrom("XCSH_PLUGIN_SEED_DIR", part, home, hostDoes)))];
}

/** `p`'s stats, symlinks followed; `undefined` when it is missing or cannot be read. */
export function statOrUndefined(p: string): Stats | undefined {
  try {
    return statSync(p);
  } catch {
    return undefined;
  }
}

const isDirectory = (p: string) => statOrUndefined(p)?.isDirectory() === true;

/**
 * Resolve the roots from explicit options, then the environment, then the OS, as the host does
 * (packages/utils/src/dirs.ts `DirResolver`, :139-180):
 *
 * - `--home` or `$XCSH_HOME` (ours, not the host's) name the xcsh root outright; everything is
 *   below it and the host's variables below are not consulted (hermetic tests, sandboxes).
 * - Else the root is `<home>/$PI_CONFIG_DIR` (default `.xcsh`).
 * - `$PI_CODING_AGENT_DIR` moves the agent folder (user tools are `<agent>/tools`).
 * - `$XCSH_PLUGIN_SEED_DIR` (ours): read-only plugin seeds, with any root (docs/design/fleets.md).
 * - On Linux and macOS, with the default agent folder, when `$XDG_DATA_HOME/xcsh` exists the
 *   plugins folder is `$XDG_DATA_HOME/xcsh/plugins` (the host's `getPluginsDir()`).
 *
 * Values from the environment are checked (`EENV_PATH`): the host resolves a relative
 * `PI_CODING_AGENT_DIR` or `XDG_DATA_HOME` against whatever folder it was started in, so such a
 * value names a different folder per project, and the XDG specification calls relative values invalid.
 */
export function resolveRoots(options: ResolveRootsOptions = {}): XcshRoots {
  const env = options.env ?? process.env;
  const home = options.home ?? os.homedir();
  if (options.xcshHome !== undefined) {
    // Roots already resolved once (a CLI context handing them to discovery or the boot index).
    const { configDirName, pluginsDir, agentDir } = options;
    const seedDirs = options.seedDirs ?? seedDirsFrom(env, home);
    return { home, xcshHome: options.xcshHome, ...(configDirName !== undefined ? { configDirName } : {}), ...(pluginsDir !== undefined ? { pluginsDir } : {}), ...(agentDir !== undefined ? { agentDir } : {}), ...(seedDirs.length > 0 ? { seedDirs } : {}) };
  }
  const seedDirs = seedDirsFrom(env, home);
  const seeded = seedDirs.length > 0 ? { seedDirs } : {};
  if (env.XCSH_HOME) return { home, xcshHome: path.resolve(expandTilde(env.XCSH_HOME, home)), ...seeded };
  const configDirName = configDirNameFrom(env);
  const xcshHome = path.join(home, configDirName);
  const roots: XcshRoots = { home, xcshHome, ...seeded };
  if (configDirName !== DEFAULT_CONFIG_DIR_NAME) roots.configDirName = configDirName;
  const defaultAgent = path.join(xcshHome, "agent");
  if (env.PI_CODING_AGENT_DIR) {
    const agentDir = absoluteDirFrom("PI_CODING_AGENT_DIR", env.PI_CODING_AGENT_DIR, home, "xcsh resolves a relative PI_CODING_AGENT_DIR against the folder it starts in.");
    if (agentDir !== defaultAgent) roots.agentDir = agentDir;
  }
  const platform = options.platform ?? process.platform;
  if ((platform === "linux" || platform === "darwin") && roots.agentDir === undefined && env.XDG_DATA_HOME) {
    const data = absoluteDirFrom("XDG_DATA_HOME", env.XDG_DATA_HOME, home, "The XDG specification calls a relative XDG_DATA_HOME invalid, and xcsh would resolve it against the folder it starts in.");
    const xdg = path.join(data, "xcsh");
    if (isDirectory(xdg)) roots.pluginsDir = path.join(xdg, "plugins");
  }
  return roots;
}

/**
 * The project root the host uses for project marketplace state: the nearest folder at or above
 * `cwd` holding a `<configDirName>/` folder, else the nearest holding `.git` (a folder, or the
 * file of a worktree or submodule), else none (packages/coding-agent/src/discovery/helpers.ts
 * `resolveActiveProjectRegistryPath`, :678-712). Both walks stop before `home`: home's
 * `.xcsh` is the user's folder, and home and the folders above it are never a project
 * (helpers.ts:681-683). The walk is lexical (`path.dirname`), so it ends at the filesystem root
 * and follows no link upward; a marker is a name that `stat`s, as the host checks it.
 */
export function findProjectRoot(cwd: string, home: string, configDirName: string = DEFAULT_CONFIG_DIR_NAME): string | undefined {
  const folders = foldersBelowHome(cwd, home);
  return folders.find((dir) => isDirectory(path.join(dir, configDirName))) ?? folders.find((dir) => statOrUndefined(path.join(dir, ".git")) !== undefined);
}

/** `cwd` and the folders above it, lexically, up to the file-system root and never `home` or above it. */
function foldersBelowHome(cwd: string, home: string): string[] {
  const out: string[] = [];
  const stop = path.resolve(home);
  for (let dir = path.resolve(cwd); dir !== stop; dir = path.dirname(dir)) {
    out.push(dir);
    if (path.dirname(dir) === dir) break;
  }
  return out;
}

/** Every marker `findProjectRoot` may look at from `cwd` (for the boot index's inputs). */
export function projectRootProbes(cwd: string, home: string, configDirName: string = DEFAULT_CONFIG_DIR_NAME): string[] {
  return foldersBelowHome(cwd, home).flatMap((dir) => [path.join(dir, configDirName), path.join(dir, ".git")]);
}

/** The project root found from `cwd` (`findProjectRoot` with the roots' config folder name); `undefined` outside any project. */
export function projectRootOf(cwd: string, roots: XcshRoots): string | undefined {
  return findProjectRoot(cwd, roots.home, roots.configDirName ?? DEFAULT_CONFIG_DIR_NAME);
}

/**
 * The project's marketplace registry, as the host finds it (helpers.ts:687,702): below the
 * project root, in the config folder named by `PI_CONFIG_DIR`; `undefined` outside any project.
 * A caller that found the root already passes it.
 */
export function projectRegistryFile(cwd: string, roots: XcshRoots, root: string | undefined = projectRootOf(cwd, roots)): string | undefined {
  return root === undefined ? undefined : path.join(root, roots.configDirName ?? DEFAULT_CONFIG_DIR_NAME, "plugins", "installed_plugins.json");
}

/**
 * The project folder of a command or a scan: the project root found from `cwd`, else `cwd`
 * itself (the host's `resolveOrDefaultProjectRegistryPath`, helpers.ts:725-733, for a project
 * not yet bootstrapped). Trust is decided about this folder. A caller that found the root already passes it.
 */
export function projectFolder(cwd: string, roots: XcshRoots, root: string | undefined = projectRootOf(cwd, roots)): string {
  return root ?? path.resolve(cwd);
}

/** Every well-known path of the shared on-disk state (docs/file-formats.md). */
export function xcshPaths(roots: XcshRoots) {
  const plugins = roots.pluginsDir ?? path.join(roots.xcshHome, "plugins");
  const ours = path.join(plugins, ".xcsh-tools");
  return {
    root: roots.xcshHome,
    /** The host's config folder name (`PI_CONFIG_DIR`): the project-root marker. */
    configDirName: roots.configDirName ?? DEFAULT_CONFIG_DIR_NAME,
    /** The tools folder of the host's agent folder (`PI_CODING_AGENT_DIR`, default `<root>/agent`). */
    userTools: path.join(roots.agentDir ?? path.join(roots.xcshHome, "agent"), "tools"),
    marketplacesRegistry: path.join(roots.xcshHome, "marketplaces.json"),
    plugins,
    pluginsPackageJson: path.join(plugins, "package.json"),
    pluginsNodeModules: path.join(plugins, "node_modules"),
    runtimeLock: path.join(plugins, "xcsh-plugins.lock.json"),
    installedPlugins: path.join(plugins, "installed_plugins.json"),
    marketplaceCache: path.join(plugins, "cache", "marketplaces"),
    pluginCache: path.join(plugins, "cache", "plugins"),
    /** Our own folder: lock, journal, boot index, transpile cache. The host ignores it. */
    ours,
    transpileCache: path.join(ours, "transpile"),
    moduleShims: path.join(ours, "shims"),
    bootIndex: path.join(ours, "boot-index.json"),
    /** The boot index's module records, apart: a boot never reads them, `tools` does. */
    bootModules: path.join(ours, "boot-modules.json"),
    /** The boot index's component inventory of installed plugins: read by `listInstalledComponents`, `list`, `show`. */
    bootComponents: path.join(ours, "boot-components.json"),
    /** The user's record of trusted projects (core/trust.ts): user state, never a project's. */
    trustedProjects: path.join(ours, "trusted-projects.json"),
    claudeRoot: path.join(roots.home, ".claude"),
    claudeInstalledPlugins: path.join(roots.home, ".claude", "plugins", "installed_plugins.json"),
    claudeKnownMarketplaces: path.join(roots.home, ".claude", "plugins", "known_marketplaces.json"),
    codexRoot: path.join(roots.home, ".codex"),
    /** Read-only plugin seeds, first wins (docs/design/fleets.md). */
    seeds: roots.seedDirs ?? [],
  };
}

export type XcshPaths = ReturnType<typeof xcshPaths>;

/** Paths of the project-level state under `cwd`. */
export function projectPaths(cwd: string) {
  return {
    xcshDir: path.join(cwd, ".xcsh"),
    tools: path.join(cwd, ".xcsh", "tools"),
    pluginOverrides: path.join(cwd, ".xcsh", "plugin-overrides.json"),
    /**
     * The overrides the host reads after `.xcsh`'s, in order (config.ts:18-22 `priorityList`,
     * :264-267; extensibility/plugins/loader.ts:33-43): the first that parses is used.
     */
    otherPluginOverrides: [path.join(cwd, ".codex", "plugin-overrides.json"), path.join(cwd, ".gemini", "plugin-overrides.json")],
    installedPlugins: path.join(cwd, ".xcsh", "plugins", "installed_plugins.json"),
    marketplacesRegistry: path.join(cwd, ".xcsh", "marketplaces.json"),
    claudeTools: path.join(cwd, ".claude", "tools"),
    codexTools: path.join(cwd, ".codex", "tools"),
  };
}

/**
 * The project's overrides file: `.xcsh/plugin-overrides.json`, else `.codex/`'s, else
 * `.gemini/`'s, the first that is there — the host's order (config.ts:18-22, :264-267;
 * extensibility/plugins/loader.ts:33-43). The host skips a file that does not parse and takes the
 * next one (or none, and then loads plugins the project disabled); here the first file present is
 * the project's overrides, and a broken one fails closed (see `failClosed`).
 */
export function effectiveOverridesFile(cwd: string): string {
  const project = projectPaths(cwd);
  const candidates = [project.pluginOverrides, ...project.otherPluginOverrides];
  for (const file of candidates) {
    try {
      if (lstatSync(file, { throwIfNoEntry: false }) !== undefined) return file;
    } catch {
      // ENOTDIR (`.codex` is a file): nothing there.
    }
  }
  return project.pluginOverrides;
}

/** `~` → home, `~/x` → home/x (the host's rule: any other `~x` is `home/x`, no user lookup). */
export function expandTilde(input: string, home: string): string {
  if (input === "~") return home;
  if (input.startsWith("~/") || input.startsWith("~\\")) return path.join(home, input.slice(2));
  if (input.startsWith("~")) return path.join(home, input.slice(1));
  return input;
}

/**
 * The host's `resolvePath`: strip a leading `@` before an absolute or
 * `~` path, fold unicode spaces, accept `file://` URLs, expand `~`, resolve relative to `cwd`.
 */
export function resolveUserPath(input: string, cwd: string, home: string): string {
  let p = input;
  if (p.startsWith("@")) {
    const rest = p.slice(1);
    if (rest.startsWith("/") || rest === "~" || rest.startsWith("~/") || /^[a-zA-Z]:[\\/]/.test(rest)) p = rest;
  }
  p = p.replace(/[\u00A0\u1680\u2000-\u200A\u202F\u205F\u3000]/g, " ");
  if (/^file:\/\//i.test(p)) {
    try {
      p = fileURLToPath(p);
    } catch {
      // keep as-is, as the host does
    }
  }
  p = expandTilde(p, home);
  return path.isAbsolute(p) ? p : path.resolve(cwd, p);
}

/**
 * The files of a team plugin set (docs/design/team-sets.md (b), (c)). Committed: the declaration
 * and its lock beside the config folder, and the config folder's `.gitignore`; per machine: the
 * personal file and the host files generated from the set. `configDirName` is the host's
 * `PI_CONFIG_DIR` folder, the marker that made `root` the project root.
 */
export function teamPaths(root: string, configDirName: string = DEFAULT_CONFIG_DIR_NAME) {
  const config = path.join(root, configDirName);
  return {
    root,
    declaration: path.join(root, "xcsh-team.json"),
    lock: path.join(root, "xcsh-team.lock.json"),
    claudeSettings: path.join(root, ".claude", "settings.json"),
    claudeLocalSettings: path.join(root, ".claude", "settings.local.json"),
    configDir: config,
    local: path.join(config, "team.local.json"),
    gitignore: path.join(config, ".gitignore"),
    installedPlugins: path.join(config, "plugins", "installed_plugins.json"),
    pluginOverrides: path.join(config, "plugin-overrides.json"),
    marketplacesRegistry: path.join(config, "marketplaces.json"),
    catalogCache: path.join(config, "cache", "marketplaces"),
  };
}

export type TeamPaths = ReturnType<typeof teamPaths>;

/**
 * The folder a project's registry points at to switch a marketplace plugin off there: an empty
 * folder the host loads nothing from, whose entry shadows the user's copy (a disabled entry would
 * not; design (a) 4.). Shared by every project, named like the content-keyed cache folders.
 */
export function teamOffFolder(pluginCache: string, marketplace: string, plugin: string): string {
  return path.join(pluginCache, `${marketplace}___${plugin}___off`);
}

/** Our per-user record of team restores: stamps keyed by project, the content hashes of cache folders. */
export function teamStatePaths(ours: string) {
  const dir = path.join(ours, "team");
  return { dir, contentHashes: path.join(dir, "content-hashes.json") };
}

/** The restore stamp of the project whose root's real path is `rootRealPath`: `<ours>/team/<sha256[0:16]>.json`. */
export function teamStampFile(ours: string, rootRealPath: string): string {
  // node:crypto on first use, not at import: this module is on every host's boot path, and loading
  // crypto costs 2-4 ms of CPU there (Node 24, Bun) for a hash only team restores need.
  const { createHash } = process.getBuiltinModule("node:crypto");
  return path.join(teamStatePaths(ours).dir, `${createHash("sha256").update(rootRealPath).digest("hex").slice(0, 16)}.json`);
}
