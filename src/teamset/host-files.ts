/**
 * The files the host reads, generated per machine from the set (docs/design/team-sets.md (a), (c)):
 * the project's marketplace registry `.xcsh/plugins/installed_plugins.json` (absolute paths of this
 * machine, which is why it is generated and never committed), `.xcsh/plugin-overrides.json` (the
 * host's only per-project switch of npm plugins), and the text of `.xcsh/.gitignore`. Pure: the
 * restore (WP3) hands in where it put each plugin and writes the results.
 */
import { XcshToolsError } from "../core/errors.js";
import { teamOffFolder } from "../core/paths.js";
import { splitPluginId, type InstalledPluginEntry } from "../manifest/installed-plugins.js";
import type { PluginOverrides } from "../manifest/plugin-overrides.js";
import type { EffectiveSet } from "../manifest/team-set.js";
import { compareKeys, knownFirst, orderedJson, sortedKeys } from "./canonical-json.js";

/** Where the restore put an enabled marketplace plugin of the set. */
export interface MarketplaceInstall {
  /** `<pluginCache>/<mkt>___<name>___<version>-<hash12>`. */
  installPath: string;
  version: string;
  gitCommitSha?: string;
}

/** What the host files are made of. */
export interface HostFileInputs {
  set: EffectiveSet;
  /** `xcshPaths(roots).pluginCache`: where the `___off` folders live. */
  pluginCache: string;
  /** Every enabled marketplace plugin of the set → where it is installed. */
  installs: ReadonlyMap<string, MarketplaceInstall>;
  /** The project registry as it is now: ids the set does not mention (the host's, the user's) are kept. */
  existingRegistry?: { plugins: Record<string, unknown[]> } & Record<string, unknown>;
  /** npm plugins declared with `features: "*"` → every feature the installed version has. */
  npmFeatures?: ReadonlyMap<string, readonly string[]>;
}

/** The generated files, as data and as the bytes to write. */
export interface HostFiles {
  registry: { version: 2; plugins: Record<string, InstalledPluginEntry[]> } & Record<string, unknown>;
  registryText: string;
  overrides: PluginOverrides;
  overridesText: string;
  /** The `___off` folders the registry points at (the restore creates them, empty). */
  offFolders: string[];
  /** Ids of the registry the set does not mention, kept as they were (`WTEAM_UNDECLARED`). */
  undeclared: string[];
}

/**
 * Render the registry and the overrides. A marketplace plugin that is off here (the team, Claude's
 * file or a personal choice) gets an enabled entry pointing at its empty `___off` folder: the host
 * loads nothing from it and it shadows the user's own copy, which a disabled entry would not
 * (design (a) 4.). npm plugins: `disabled` holds what is off here; features and settings of the
 * ones on (overrides can only switch off, never on: installing them is the restore's part).
 */
export function renderHostFiles(inputs: HostFileInputs): HostFiles {
  const { set } = inputs;
  const plugins: Record<string, InstalledPluginEntry[]> = {};
  const undeclared: string[] = [];
  const put = (id: string, entries: InstalledPluginEntry[]) => Object.defineProperty(plugins, id, { value: entries, enumerable: true, writable: true, configurable: true });
  for (const [id, entries] of Object.entries(inputs.existingRegistry?.plugins ?? {})) {
    if (set.plugins.has(id)) continue;
    undeclared.push(id);
    put(id, entries as InstalledPluginEntry[]);
  }
  const offFolders: string[] = [];
  const overrides: PluginOverrides = {};
  const disabled: string[] = [];
  const features: Record<string, string[]> = {};
  const settings: Record<string, Record<string, unknown>> = {};
  const record = <T>(target: Record<string, T>, key: string, value: T) => Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  for (const plugin of set.plugins.values()) {
    if (plugin.kind === "marketplace") {
      if (!plugin.enabled) {
        const id = splitPluginId(plugin.key)!;
        const off = teamOffFolder(inputs.pluginCache, id.marketplace, id.plugin);
        offFolders.push(off);
        put(plugin.key, [{ scope: "project", installPath: off, enabled: true }]);
        continue;
      }
      const install = inputs.installs.get(plugin.key);
      if (!install) throw new XcshToolsError("EINSTALL", `${plugin.key} is switched on in the project's set but was not installed`, { hint: "Run `xcsh-tools install` in the project." });
      put(plugin.key, [{ scope: "project", installPath: install.installPath, version: install.version, ...(install.gitCommitSha ? { gitCommitSha: install.gitCommitSha } : {}), enabled: true }]);
      continue;
    }
    if (!plugin.enabled) {
      disabled.push(plugin.key);
      continue;
    }
    const chosen = plugin.features === "*" ? inputs.npmFeatures?.get(plugin.key) : plugin.features;
    if (plugin.features === "*" && chosen === undefined) throw new XcshToolsError("EINSTALL", `${plugin.key} declares features "*" but its installed features are not known`, { hint: "Run `xcsh-tools install` in the project." });
    if (chosen !== undefined) record(features, plugin.key, [...chosen]);
    if (plugin.settings && Object.keys(plugin.settings).length > 0) record(settings, plugin.key, { ...plugin.settings });
  }
  if (disabled.length > 0) overrides.disabled = disabled.sort(compareKeys);
  if (Object.keys(features).length > 0) overrides.features = features;
  if (Object.keys(settings).length > 0) overrides.settings = settings;
  const registry = { ...inputs.existingRegistry, version: 2 as const, plugins };
  return {
    registry,
    registryText: orderedJson(registry, (object, at) => (at.length === 0 ? knownFirst(object, ["version", "plugins"]) : at.length === 1 && at[0] === "plugins" ? sortedKeys(object) : at.length === 3 ? knownFirst(object, REGISTRY_ENTRY_ORDER) : Object.keys(object))),
    overrides,
    overridesText: orderedJson(overrides, (object, at) => (at.length === 0 ? knownFirst(object, ["disabled", "features", "settings"]) : at.length === 1 ? sortedKeys(object) : Object.keys(object))),
    offFolders: offFolders.sort(compareKeys),
    undeclared: undeclared.sort(compareKeys),
  };
}

const REGISTRY_ENTRY_ORDER = ["scope", "installPath", "version", "gitCommitSha", "enabled"];

/** The lines of `.xcsh/.gitignore` that keep per-machine state out of git (design (b)). */
export const GITIGNORE_LINES = ["/plugins/", "/cache/", "/marketplaces.json", "/plugin-overrides.json", "/team.local.json"] as const;

/** The `.xcsh/.gitignore` written once, when there is none. */
export const GITIGNORE_TEXT = `# xcsh-tools: per-machine state generated from xcsh-team.json (see README "Share plugins with your team")\n${GITIGNORE_LINES.join("\n")}\n`;

/**
 * The lines an existing `.gitignore` lacks (`WTEAM_GITIGNORE`; `doctor --fix` appends them; it is
 * never rewritten). A line counts as present written with or without its leading or trailing slash.
 */
export function missingGitignoreLines(text: string): string[] {
  const present = new Set(text.split(/\r?\n/).map((line) => line.trim().replace(/^\//, "").replace(/\/$/, "")));
  return GITIGNORE_LINES.filter((line) => !present.has(line.replace(/^\//, "").replace(/\/$/, "")));
}
