/**
 * What xcsh-tools' settings are: every leaf key, its environment variable, its default, which a
 * project may never set, and how a dotted key reads and writes a nested settings document. The
 * shape itself is the TypeBox schema in `manifest/xcsh-tools-settings.ts`.
 */
import type { XcshToolsSettings, XcshToolsSettingsFile } from "../manifest/xcsh-tools-settings.js";

/** Where a setting's value came from. */
export type SettingOrigin = "flag" | "env" | "default" | `project:${string}` | `user:${string}`;

/** One setting's value with its origin; `via` names the variable or flag when there is one. */
export interface SettingValue<T = unknown> {
  value: T;
  origin: SettingOrigin;
  via?: string;
}

/** Every leaf setting, dotted, with its environment variable. */
export const SETTING_ENV_VARS = {
  registry: "XCSH_TOOLS_REGISTRY",
  allowScripts: "XCSH_TOOLS_ALLOW_SCRIPTS",
  builtInTools: "XCSH_TOOLS_BUILTIN_TOOLS",
  "timeouts.factoryMs": "XCSH_TOOLS_FACTORY_TIMEOUT_MS",
  "timeouts.importMs": "XCSH_TOOLS_IMPORT_TIMEOUT_MS",
  "timeouts.gitMs": "XCSH_TOOLS_GIT_TIMEOUT_MS",
  "timeouts.fetchMs": "XCSH_TOOLS_FETCH_TIMEOUT_MS",
  lockWaitMs: "XCSH_TOOLS_LOCK_WAIT_MS",
  disabledProviders: "XCSH_TOOLS_DISABLED_PROVIDERS",
  "output.color": "XCSH_TOOLS_COLOR",
  "output.json": "XCSH_TOOLS_JSON",
  "limits.tarballUnpackedBytes": "XCSH_TOOLS_TARBALL_UNPACKED_BYTES",
  "limits.tarballEntries": "XCSH_TOOLS_TARBALL_ENTRIES",
  "limits.tarballPathLength": "XCSH_TOOLS_TARBALL_PATH_LENGTH",
  contextWarnTokens: "XCSH_TOOLS_CONTEXT_WARN_TOKENS",
} as const;
export type SettingKey = keyof typeof SETTING_ENV_VARS;

/** Every leaf setting, dotted, in the order above (the order `doctor` lists them in). */
export const SETTING_KEYS = Object.keys(SETTING_ENV_VARS) as readonly SettingKey[];

/** The defaults (registry unset: npm's own `.npmrc` resolution decides). */
export const DEFAULT_SETTINGS: XcshToolsSettings = {
  allowScripts: false,
  builtInTools: [],
  timeouts: { factoryMs: 5_000, importMs: 10_000, gitMs: 120_000, fetchMs: 30_000 },
  lockWaitMs: 30_000,
  disabledProviders: [],
  output: { color: "auto", json: false },
  // Per tarball (plugins/tarball-check.ts). The largest packages on the npm registry (native
  // binaries for several platforms) unpack to a few hundred MB and hold tens of thousands of
  // files, and no real path inside a package comes near 1 KB; each default leaves room above
  // those and still refuses a 1 GB bomb.
  limits: { tarballUnpackedBytes: 512 * 1024 * 1024, tarballEntries: 100_000, tarballPathLength: 1024 },
  // A tenth of a 200k-token context window, spent before the user types anything.
  contextWarnTokens: 20_000,
};

/**
 * Settings a project file may never set, whoever trusts the project: a trusted project is one
 * whose tools may run, not one that may redirect the user's own machinery.
 *   - `registry`: where every plugin's code is downloaded from, and where npm sends the user's
 *     credentials for the default registry; a project naming its own would serve its own code.
 *   - `allowScripts`: runs the lifecycle scripts of every package an install brings, with the
 *     user's rights.
 * The others only change how long we wait, what checks report, or how output looks.
 */
export const PROJECT_SECRET_KEYS = ["registry", "allowScripts"] as const satisfies readonly SettingKey[];

/** The value of dotted `key` in a settings document. */
export function getLeaf(doc: XcshToolsSettingsFile, key: SettingKey): unknown {
  const [head, tail] = key.split(".") as [string, string | undefined];
  const top = (doc as Record<string, unknown>)[head];
  if (tail === undefined) return top;
  return top && typeof top === "object" ? (top as Record<string, unknown>)[tail] : undefined;
}

/** Set dotted `key` in a settings document, creating its group. */
export function setLeaf(target: Record<string, unknown>, key: SettingKey, value: unknown): void {
  const [head, tail] = key.split(".") as [string, string | undefined];
  if (tail === undefined) {
    target[head] = value;
    return;
  }
  const inner = (target[head] ??= {}) as Record<string, unknown>;
  inner[tail] = value;
}
