/**
 * Which plugins are installed, from the state files alone: the rows of xcsh's registries (the
 * project's in a trusted project, shadowing the user's entries of an id), of Claude Code's
 * registry (user entries, and project/local entries whose `projectPath` holds the project in a
 * trusted project), and the plugins folder's npm dependencies. No plugin folder is read.
 *
 * Its own module because `tools` asks only "is there a plugin that brought no tool?": answered
 * here, the component readers (installed.ts and what it loads) stay unloaded in the usual case.
 * Install paths are as the state files give them; installed.ts confines them before reading.
 */
import path from "node:path";
import { isPathInside, realPathOrNearest } from "../core/contain.js";
import { projectPaths, xcshPaths, type XcshRoots } from "../core/paths.js";
import { placeOf } from "../core/state-places.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";

/** One entry of an installed_plugins.json (v2). */
export interface RegistryRow {
  id: string;
  scope: "user" | "project";
  installPath: string;
  version?: string;
  enabled: boolean;
  file: string;
  field: string;
}

/** The installed plugins, project installs first (they shadow the user's). */
export interface InstalledPluginRows {
  xcsh: RegistryRow[];
  claude: RegistryRow[];
  /** npm plugins by package name, with the folder npm installed them in and their package.json dependency (what links a linked plugin). */
  npm: { name: string; dir: string; dependency: unknown }[];
}

export interface InstalledRowsOptions {
  roots: XcshRoots;
  cwd: string;
  projectTrusted: boolean;
}

/** The entries of an installed_plugins.json (v2), leniently: a bad entry is skipped. */
function registryRows(file: string, scopeOf: (entry: Record<string, unknown>) => "user" | "project" | undefined): RegistryRow[] {
  const doc = readJsonOrUndefined(file);
  if (!isRecord(doc) || !isRecord(doc.plugins)) return [];
  const rows: RegistryRow[] = [];
  for (const [id, entries] of Object.entries(doc.plugins)) {
    if (!Array.isArray(entries) || !/^[^@]+@[^@]+$/.test(id)) continue;
    const seen = new Set<string>();
    entries.forEach((entry, i) => {
      if (!isRecord(entry) || typeof entry.installPath !== "string") return;
      const scope = scopeOf(entry);
      if (!scope || seen.has(entry.installPath)) return;
      seen.add(entry.installPath);
      rows.push({ id, scope, installPath: entry.installPath, ...(typeof entry.version === "string" ? { version: entry.version } : {}), enabled: entry.enabled !== false, file, field: `/plugins/${id}/${i}/installPath` });
    });
  }
  return rows;
}

export function installedPluginRows(options: InstalledRowsOptions): InstalledPluginRows {
  const paths = xcshPaths(options.roots);
  const projectFile = projectPaths(options.cwd).installedPlugins;
  const projectRows = options.projectTrusted && path.resolve(projectFile) !== path.resolve(paths.installedPlugins) ? registryRows(projectFile, () => "project") : [];
  const shadowed = new Set(projectRows.map((r) => r.id));
  const xcsh = [...projectRows, ...registryRows(paths.installedPlugins, () => "user").filter((r) => !shadowed.has(r.id))];

  const claude = claudeRegistryRows(options);
  const pkg = readJsonOrUndefined(paths.pluginsPackageJson);
  const deps = isRecord(pkg) && isRecord(pkg.dependencies) ? pkg.dependencies : {};
  const place = placeOf("npm-plugin", { roots: options.roots });
  const npm = Object.entries(deps)
    .map(([name, dependency]) => ({ name, dir: path.join(paths.pluginsNodeModules, name), dependency }))
    .filter(({ name, dir }) => /^(?:@[^/@\s]+\/)?[^/@\s.][^/\s]*$/.test(name) && isPathInside(path.resolve(dir), place));
  return { xcsh, claude, npm };
}

/**
 * Claude Code's installs that apply at `cwd`: its user (and managed) entries, and in a trusted
 * project the project and local entries whose `projectPath` holds `cwd`, which shadow the user's
 * entries of their id.
 */
export function claudeRegistryRows(options: InstalledRowsOptions): RegistryRow[] {
  const cwdReal = realPathOrNearest(options.cwd);
  const rows = registryRows(xcshPaths(options.roots).claudeInstalledPlugins, (entry) => {
    const scope = typeof entry.scope === "string" ? entry.scope : "user";
    if (scope === "user" || scope === "managed") return "user";
    if (!options.projectTrusted || typeof entry.projectPath !== "string") return undefined;
    return isPathInside(cwdReal, realPathOrNearest(entry.projectPath)) ? "project" : undefined;
  });
  const project = new Set(rows.filter((r) => r.scope === "project").map((r) => r.id));
  return rows.filter((r) => r.scope === "project" || !project.has(r.id));
}

/** Every installed plugin's root, as the state files name it. */
export function installedPluginRoots(options: InstalledRowsOptions): string[] {
  const rows = installedPluginRows(options);
  return [...rows.xcsh.map((r) => r.installPath), ...rows.claude.map((r) => r.installPath), ...rows.npm.map((r) => r.dir)];
}
