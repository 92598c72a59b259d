/**
 * What a host may inject into the loader and discovery. Everything is optional: a host that
 * passes nothing gets a working loader (our TypeBox, a silent logger, a real `exec`, the
 * user's `~/.xcsh`).
 */
import type { ProjectTrustOption } from "./trust.js";
import type { CustomToolLogger, ExecOptions, ExecResult, ToolLoadError } from "./contract.js";

export type { ProjectTrustOption };

/** Provider ids, in discovery order (docs/library-api.md). */
export const PROVIDER_IDS = ["native", "claude", "codex", "claude-plugins", "xcsh-plugins", "npm", "config"] as const;
export type ProviderId = (typeof PROVIDER_IDS)[number];

/** Options of `loadCustomTools` and `CustomToolLoader`. */
export interface LoadCustomToolsOptions {
  /** The host's exports, handed to factories as `api.pi`. */
  pi?: Record<string, unknown>;
  /** Where tools log; silent by default. */
  logger?: CustomToolLogger;
  /** Replaces the built-in `exec` (no shell, signal and timeout honoured). */
  exec?: (command: string, args: string[], options?: ExecOptions) => Promise<ExecResult>;
  /**
   * Modules that tools import by bare name and that must be the host's instances, e.g.
   * `{"@sinclair/typebox": typebox, "@f5-sales-demo/xcsh": hostExports}`. `@sinclair/typebox`
   * and `xcsh-tools` default to our own copies.
   */
  modules?: Record<string, object>;
  /** Milliseconds a factory may take before it is reported as hanging. Default 5000. */
  factoryTimeoutMs?: number;
  /** Milliseconds a module import may take before it is reported as hanging. Default 10000. */
  importTimeoutMs?: number;
  /** The user's home (`~`). Default `os.homedir()`. */
  home?: string;
  /** The xcsh root. Default `$XCSH_HOME`, else `<home>/.xcsh`. */
  xcshHome?: string;
  /**
   * With `xcshHome`: the host's folders as already resolved (core/paths.ts `XcshRoots`): the
   * config folder name, the plugins folder and the agent folder. Without `xcshHome` they come
   * from `PI_CONFIG_DIR`, `$XDG_DATA_HOME/xcsh` and `PI_CODING_AGENT_DIR`.
   */
  configDirName?: string;
  pluginsDir?: string;
  agentDir?: string;
  /**
   * Environment to read `XCSH_HOME`, `PI_CONFIG_DIR`, `PI_CODING_AGENT_DIR`, `XDG_DATA_HOME` and
   * `XCSH_PLUGIN_SEED_DIR` (read-only plugin seeds, docs/fleets.md; read with `xcshHome` too) from.
   * Default `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /** Folder for the TypeScript transpile cache. Default under the xcsh root's plugins folder. */
  cacheDir?: string;
}

/** Options of `discoverAndLoadCustomTools`: the loader's, plus which sources to scan. */
export interface DiscoverCustomToolsOptions extends LoadCustomToolsOptions {
  /** Scan only these providers (default: all of `PROVIDER_IDS`). */
  providers?: ProviderId[];
  /** Skip these providers. */
  disabledProviders?: ProviderId[];
  /**
   * Use the boot index (`<xcshHome>/plugins/.xcsh-tools/boot-index.json`) when it is fresh and
   * rewrite it after a scan. Default true; false always scans and writes nothing.
   */
  bootIndex?: boolean;
  /**
   * Lazy tools (docs/lazy-tools.md): tools of plugins that declare `staticTools` and whose boot
   * index records are valid for their current bytes are built from those records, and their
   * module is imported at first `execute`, `onSession` or render. Default false (every module is
   * imported at boot). Needs the boot index (ignored with `bootIndex: false`).
   */
  lazyTools?: boolean;
  /** Called with the coded error when a lazy tool's module fails at first use (import, factory, `ELAZY_DEFINITION`). */
  onLazyToolError?: (error: ToolLoadError) => void;
  /**
   * Whether the project at `cwd` may bring code (workspace trust). Project-level sources — the
   * tools folders `<cwd>/.xcsh/tools`, `.claude/tools`, `.codex/tools`, the project's marketplace
   * installs, Claude Code plugins installed for the project, `<cwd>/.xcsh/plugin-overrides.json`
   * — are read only in a trusted project; otherwise they are left out unread and listed in the
   * result's `untrusted`. `true`/`false` is the host's decision; a function is asked once per
   * discovery with the project's real path (e.g. the host's own dialog; a throw or a non-`true`
   * answer trusts nothing). Default: the user's record (`xcsh-tools trust`), the home folder
   * always trusted. User-level sources and configured paths do not depend on it.
   */
  projectTrust?: ProjectTrustOption;
}
