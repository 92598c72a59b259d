/**
 * Migration of a project that used project scope before team sets (docs/design/team-sets.md (b)
 * "Migration"): the first `--scope project` change in a project without a declaration imports what
 * the host's per-machine project files hold — the project registry's ids at their installed
 * version, our project marketplaces (a folder inside the root becomes a relative `directory`
 * source, one outside is `ETEAM_MACHINE_PATH`; a marketplace of the user that a project plugin
 * comes from is declared with its source too) and the overrides of npm plugins this user has — and
 * says which of those generated files git tracks (`git rm --cached`, printed, never run).
 */
import path from "node:path";
import { semver } from "../core/npm-spec.js";
import { trackedFiles } from "../core/git.js";
import { xcshPaths, type TeamPaths } from "../core/paths.js";
import type { ClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { splitPluginId } from "../manifest/installed-plugins.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import type { DeclaredPlugin, DeclaredSource, TeamDeclaration } from "../manifest/team-declaration.js";
import type { CommandContext } from "./context.js";
import { declaredSourceOf } from "../teamset/index.js";

/** What was imported: one line per entry, the tracked generated files, the human report. */
export interface Imported {
  lines: string[];
  untrack: string[];
  human: string[];
}

/** `{name → entry}` of a marketplaces registry file (ours: `{marketplaces: [...]}`). */
function registryEntries(file: string): Map<string, { sourceType: string; sourceUri: string }> {
  const doc = readJsonOrUndefined(file);
  const out = new Map<string, { sourceType: string; sourceUri: string }>();
  const list = isRecord(doc) && Array.isArray(doc.marketplaces) ? doc.marketplaces : [];
  for (const m of list) if (isRecord(m) && typeof m.name === "string" && typeof m.sourceType === "string" && typeof m.sourceUri === "string") out.set(m.name, { sourceType: m.sourceType, sourceUri: m.sourceUri });
  return out;
}

function put<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * The declaration the project's legacy files describe, or `{}` when there is nothing to import
 * (then the change starts an empty declaration). Read only: the restore writes the result.
 */
export async function importLegacyState(ctx: CommandContext, root: string, paths: TeamPaths, claude: ClaudeTeamSettings | undefined): Promise<{ migrated?: TeamDeclaration; imported?: Imported }> {
  const registry = readJsonOrUndefined(paths.installedPlugins);
  const projectMarkets = registryEntries(paths.marketplacesRegistry);
  const overrides = readJsonOrUndefined(paths.pluginOverrides);
  const ids = isRecord(registry) && isRecord(registry.plugins) ? Object.entries(registry.plugins) : [];
  if (ids.length === 0 && projectMarkets.size === 0 && !isRecord(overrides)) return {};
  const userMarkets = registryEntries(xcshPaths(ctx.roots).marketplacesRegistry);
  const marketplaces: Record<string, { source: DeclaredSource }> = {};
  const plugins: Record<string, DeclaredPlugin> = {};
  const lines: string[] = [];
  const declareMarket = (name: string, entry: { sourceType: string; sourceUri: string }, from: string) => {
    if (Object.hasOwn(marketplaces, name) || claude?.marketplaces.has(name)) return;
    put(marketplaces, name, { source: declaredSourceOf({ kind: entry.sourceType, uri: entry.sourceUri }, root, paths.declaration) });
    lines.push(`marketplace ${name} (${entry.sourceType} ${entry.sourceUri}, from ${from})`);
  };
  for (const [name, entry] of projectMarkets) declareMarket(name, entry, path.relative(root, paths.marketplacesRegistry));
  for (const [id, entries] of ids) {
    const market = splitPluginId(id)?.marketplace;
    if (market === undefined) continue;
    const user = userMarkets.get(market);
    if (!Object.hasOwn(marketplaces, market) && user) declareMarket(market, user, "your marketplaces");
    const first = Array.isArray(entries) && isRecord(entries[0]) ? entries[0] : {};
    const version = typeof first.version === "string" && semver.valid(first.version) ? first.version : undefined;
    put(plugins, id, { ...(version ? { version } : {}), ...(first.enabled === false ? { enabled: false } : {}) });
    lines.push(`plugin ${id}${version ? ` ${version}` : ""}${first.enabled === false ? " (off)" : ""}`);
  }
  if (isRecord(overrides)) {
    const pkg = readJsonOrUndefined(xcshPaths(ctx.roots).pluginsPackageJson);
    const has = (name: string) => isRecord(pkg) && isRecord(pkg.dependencies) && Object.hasOwn(pkg.dependencies, name);
    // Declared at the range the user saved (a registry range); other sources stay at `latest` until edited.
    const savedRange = (name: string) => {
      const saved = isRecord(pkg) && isRecord(pkg.dependencies) ? pkg.dependencies[name] : undefined;
      return typeof saved === "string" && semver.validRange(saved) ? { spec: saved } : {};
    };
    const choice = (name: string, entry: DeclaredPlugin) => {
      if (!has(name)) return;
      put(plugins, name, { ...savedRange(name), ...(Object.hasOwn(plugins, name) ? plugins[name] : {}), ...entry });
    };
    for (const name of Array.isArray(overrides.disabled) ? overrides.disabled : []) if (typeof name === "string") choice(name, { enabled: false });
    for (const [name, list] of Object.entries(isRecord(overrides.features) ? overrides.features : {})) if (Array.isArray(list)) choice(name, { features: list.filter((f): f is string => typeof f === "string") });
    for (const [name, values] of Object.entries(isRecord(overrides.settings) ? overrides.settings : {})) if (isRecord(values)) choice(name, { settings: { ...values } });
    for (const name of Object.keys(plugins)) if (!splitPluginId(name) || name.startsWith("@")) lines.push(`npm plugin ${name} (from ${path.relative(root, paths.pluginOverrides)})`);
  }
  const settings = (await ctx.settings()).settings;
  // Generated files (a folder counts when git tracks anything below it).
  const generated = [paths.installedPlugins, paths.marketplacesRegistry, paths.pluginOverrides, path.join(paths.configDir, "cache")].map((f) => path.relative(root, f).split(path.sep).join("/"));
  const tracked = (await trackedFiles(root, generated, { env: ctx.env, timeoutMs: settings.timeouts.gitMs })) ?? [];
  const untrack = generated.filter((g) => tracked.some((t) => t === g || t.startsWith(`${g}/`))).map((g) => `git rm -r --cached -- ${g}`);
  const human = [
    `Imported the project's existing plugin state into xcsh-team.json:`,
    ...lines.map((l) => `  ${l}`),
    ...(untrack.length > 0 ? ["These files are now generated per machine; stop tracking them:", ...untrack.map((l) => `  ${l}`)] : []),
  ];
  return { migrated: { version: 1, ...(Object.keys(marketplaces).length ? { marketplaces } : {}), ...(Object.keys(plugins).length ? { plugins } : {}) }, imported: { lines, untrack, human } };
}
