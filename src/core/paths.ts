/**
 * Where things live. Every path is derived from an injected `home` (the user's home) and
 * `xcshHome` (the xcsh root: `--home`, else `$XCSH_HOME`, else `<home>/.xcsh`), never from
 * `os.homedir()` deep inside an engine, so tests and hosts can point us anywhere.
 */
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** The roots every other path is derived from. */
export interface XcshRoots {
  /** The user's home directory (for `~`, `~/.claude`, `~/.codex`). */
  home: string;
  /** The xcsh root, `~/.xcsh` by default. */
  xcshHome: string;
}

/** Resolve the roots from explicit options, then the environment, then the OS. */
export function resolveRoots(
  options: { home?: string; xcshHome?: string; env?: NodeJS.ProcessEnv } = {},
): XcshRoots {
  const env = options.env ?? process.env;
  const home = options.home ?? os.homedir();
  const xcshHome =
    options.xcshHome ?? (env.XCSH_HOME ? path.resolve(expandTilde(env.XCSH_HOME, home)) : path.join(home, ".xcsh"));
  return { home, xcshHome };
}

/** Every well-known path of the shared on-disk state (SPEC §3). */
export function xcshPaths(roots: XcshRoots) {
  const plugins = path.join(roots.xcshHome, "plugins");
  const ours = path.join(plugins, ".xcsh-tools");
  return {
    root: roots.xcshHome,
    userTools: path.join(roots.xcshHome, "agent", "tools"),
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
    /** The user's record of trusted projects (core/trust.ts): user state, never a project's. */
    trustedProjects: path.join(ours, "trusted-projects.json"),
    claudeRoot: path.join(roots.home, ".claude"),
    claudeInstalledPlugins: path.join(roots.home, ".claude", "plugins", "installed_plugins.json"),
    claudeKnownMarketplaces: path.join(roots.home, ".claude", "plugins", "known_marketplaces.json"),
    codexRoot: path.join(roots.home, ".codex"),
  };
}

export type XcshPaths = ReturnType<typeof xcshPaths>;

/** Paths of the project-level state under `cwd`. */
export function projectPaths(cwd: string) {
  return {
    xcshDir: path.join(cwd, ".xcsh"),
    tools: path.join(cwd, ".xcsh", "tools"),
    pluginOverrides: path.join(cwd, ".xcsh", "plugin-overrides.json"),
    installedPlugins: path.join(cwd, ".xcsh", "plugins", "installed_plugins.json"),
    marketplacesRegistry: path.join(cwd, ".xcsh", "marketplaces.json"),
    claudeTools: path.join(cwd, ".claude", "tools"),
    codexTools: path.join(cwd, ".codex", "tools"),
  };
}

/** `~` → home, `~/x` → home/x (the host's rule: any other `~x` is `home/x`, no user lookup). */
export function expandTilde(input: string, home: string): string {
  if (input === "~") return home;
  if (input.startsWith("~/") || input.startsWith("~\\")) return path.join(home, input.slice(2));
  if (input.startsWith("~")) return path.join(home, input.slice(1));
  return input;
}

/**
 * The host's `resolvePath` (xcsh-host-formats §2.2): strip a leading `@` before an absolute or
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
