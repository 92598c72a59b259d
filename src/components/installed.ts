/**
 * The components of every installed plugin, read from disk: xcsh marketplace installs (the
 * user's registry, and the project's in a trusted project), Claude Code's cache installs (user
 * entries, and project/local entries whose `projectPath` holds the project, in a trusted
 * project), and npm plugins (the plugins folder's dependencies with an `xcsh`/`pi` manifest).
 *
 * Read only, nothing imported. Install paths come from state files and are confined to the one
 * folder installs of their registry live in (core/state-places.ts); one that is not, or is
 * missing, becomes a plugin with a `problem` and no components. Project-scope plugins are
 * project code: in an untrusted project they are left out, and the caller says so.
 *
 * Tool names, descriptions and parameter schemas are only known once a module was imported; the
 * caller may pass the tools the boot index knows (`tools`) to name them and price them.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { insideAnyOf, realPathOrNearest } from "../core/contain.js";
import { errorMessage } from "../core/errors.js";
import { xcshPaths, type XcshRoots } from "../core/paths.js";
import { confineStatePath, npmPluginOutside, type StatePathKind } from "../core/state-places.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import { installedPluginRows, type RegistryRow } from "./installed-roots.js";
import { toolCost, totalCost } from "./cost.js";
import type { scanPluginComponents } from "./scan.js";
import type { Component, ComponentIssue, PluginRootKind } from "./types.js";

/** One installed plugin and what it brings. */
export interface InstalledPluginComponents {
  /** `name@marketplace` for marketplace plugins, the package name for npm plugins. */
  id: string;
  name: string;
  rootKind: Exclude<PluginRootKind, "folder">;
  scope: "user" | "project";
  version?: string;
  enabled: boolean;
  root: string;
  components: Component[];
  errors: ComponentIssue[];
  warnings: ComponentIssue[];
  /** Why the plugin's folder could not be read, when it could not. */
  problem?: { code: string; message: string };
  /** The read-only plugin seed (`XCSH_PLUGIN_SEED_DIR`) it comes from, used in place. */
  seed?: string;
  /**
   * The user's own copy of a name a seed also provides: the seed (the first listing the name)
   * whose copy loads instead (`WSEED_HIDES`). Nothing of this row is loaded by xcsh; a host must
   * not run its hooks or servers either.
   */
  hiddenBySeed?: string;
  /** Token estimates: always on (loaded-by-xcsh components only count for xcsh), on invoke. */
  cost: { alwaysOn: number; alwaysOnForXcsh: number; onInvoke: number; unknown: number };
}

/** A tool the boot index knows: enough to name and price tool components. */
export interface KnownTool {
  name: string;
  description?: string;
  parameters?: unknown;
  file: string;
  plugin?: string;
}

export interface CollectOptions {
  roots: XcshRoots;
  cwd: string;
  projectTrusted: boolean;
  tools?: readonly KnownTool[];
  /** Plugin roots to leave out before anything of them is read (a caller that needs only some). */
  skipRoot?: (root: string) => boolean;
}

type PluginRow = Omit<InstalledPluginComponents, "components" | "errors" | "warnings" | "problem" | "cost">;

/** A plugin whose folder could not be read: no components, and why. */
function unreadPlugin(row: PluginRow, code: string, message: string): InstalledPluginComponents {
  return { ...row, components: [], errors: [], warnings: [], problem: { code, message }, cost: { alwaysOn: 0, alwaysOnForXcsh: 0, onInvoke: 0, unknown: 0 } };
}

function costOf(components: readonly Component[]): InstalledPluginComponents["cost"] {
  const all = totalCost(components);
  const forXcsh = totalCost(components.filter((c) => c.loadedByXcsh));
  return { alwaysOn: all.alwaysOn, alwaysOnForXcsh: forXcsh.alwaysOn, onInvoke: all.onInvoke, unknown: all.unknown };
}

/** Known tools with their real paths, resolved once for every plugin they are matched against. */
type RealTools = { tool: KnownTool; real: string }[];
function realTools(tools: readonly KnownTool[] | undefined): RealTools {
  return (tools ?? []).map((tool) => ({ tool, real: realPathOrNearest(tool.file) }));
}

/** Replace file-level tool components by the named tools the boot index knows of those files. */
function nameTools(components: Component[], tools: RealTools): Component[] {
  if (tools.length === 0) return components;
  return components.flatMap((c) => {
    if (c.kind !== "tool") return [c];
    const inComponent = insideAnyOf([realPathOrNearest(c.file)]);
    const known = tools.filter(({ real }) => inComponent(real)).map(({ tool }) => tool);
    if (known.length === 0) return [c];
    return known.map((t) => ({ ...c, name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), file: t.file, cost: toolCost(t.name, t.description, t.parameters) }));
  });
}

/**
 * `plugins` with their tool components named and priced by the tools the boot index knows (the
 * scan finds tools by file; names, descriptions and schemas come from importing them). Pure:
 * the inventory from the boot index is kept by file, and named at answer time with the records
 * of that moment.
 */
export function withKnownTools(plugins: readonly InstalledPluginComponents[], tools: readonly KnownTool[] | undefined): InstalledPluginComponents[] {
  if (!tools || tools.length === 0) return [...plugins];
  const real = realTools(tools);
  return plugins.map((p) => {
    if (!p.components.some((c) => c.kind === "tool")) return p;
    const components = nameTools(p.components, real);
    return { ...p, components, cost: costOf(components) };
  });
}

/**
 * The component readers (frontmatter YAML, schemas) load when a plugin is actually read: `tools`
 * asks only about plugins that brought no tools, usually none, and must not pay for them.
 */
let readersOnce: Promise<{ scan: typeof import("./scan.js"); manifest: typeof import("../manifest/plugin-manifest.js") }> | undefined;
function readers() {
  return (readersOnce ??= Promise.all([import("./scan.js"), import("../manifest/plugin-manifest.js")]).then(([scan, manifest]) => ({ scan, manifest })));
}

function fromRoot(row: PluginRow, scanned: ReturnType<typeof scanPluginComponents>, tools: readonly KnownTool[] | undefined): InstalledPluginComponents {
  const components = nameTools(scanned.components, realTools(tools));
  return { ...row, components, errors: scanned.errors, warnings: scanned.warnings, cost: costOf(components) };
}

async function marketplaceRows(options: CollectOptions, kind: StatePathKind, rows: RegistryRow[], rootKind: "xcsh-marketplace" | "claude-cache"): Promise<InstalledPluginComponents[]> {
  const out: InstalledPluginComponents[] = [];
  for (const row of rows) {
    if (options.skipRoot?.(row.installPath)) continue;
    const base = { id: row.id, name: row.id.slice(0, row.id.lastIndexOf("@")), rootKind, scope: row.scope, ...(row.version ? { version: row.version } : {}), enabled: row.enabled, root: row.installPath };
    try {
      confineStatePath(kind, row.installPath, { roots: options.roots, cwd: options.cwd }, { file: row.file, field: row.field });
    } catch (error) {
      out.push(unreadPlugin(base, "EPATH_OUTSIDE", errorMessage(error)));
      continue;
    }
    if (!statSync(row.installPath, { throwIfNoEntry: false })?.isDirectory()) {
      out.push(unreadPlugin(base, "EPLUGIN_NOT_FOUND", `${row.installPath} is missing; reinstall ${row.id}`));
      continue;
    }
    const { scan } = await readers();
    out.push(fromRoot(base, scan.scanPluginComponents(row.installPath, { rootKind, pluginName: base.name }), options.tools));
  }
  return out;
}

/** Every installed plugin's components, project installs first (they shadow the user's). */
export async function collectInstalledComponents(options: CollectOptions): Promise<InstalledPluginComponents[]> {
  const rows = installedPluginRows(options);
  const out: InstalledPluginComponents[] = [];
  out.push(...(await marketplaceRows(options, "xcsh-install", rows.xcsh, "xcsh-marketplace")));
  out.push(...(await marketplaceRows(options, "claude-install", rows.claude, "claude-cache")));
  const paths = xcshPaths(options.roots);
  for (const { name, dir, dependency } of rows.npm) {
    // After the name check: `skipRoot` sees exactly the roots a full read lists (the boot index compares them).
    if (options.skipRoot?.(dir)) continue;
    const outside = npmPluginOutside(dir, name, dependency, paths);
    if (outside) {
      out.push(unreadPlugin({ id: name, name, rootKind: "npm", scope: "user", enabled: true, root: dir }, "EPATH_OUTSIDE", outside));
      continue;
    }
    out.push(await npmPluginComponents(name, dir, {}, options.tools));
  }
  return out;
}

/** One npm plugin's components, read from its folder (`extra`: fields of its row, e.g. its seed). */
async function npmPluginComponents(name: string, dir: string, extra: Pick<InstalledPluginComponents, "seed">, tools: readonly KnownTool[] | undefined): Promise<InstalledPluginComponents> {
  const pj = readJsonOrUndefined(path.join(dir, "package.json"));
  const { scan, manifest } = await readers();
  const picked = isRecord(pj) ? manifest.pickManifest(pj) : undefined;
  const base = { id: name, name, rootKind: "npm" as const, scope: "user" as const, ...(isRecord(pj) && typeof pj.version === "string" ? { version: pj.version } : {}), enabled: true, root: dir, ...extra };
  // Read as the host reads it (plugin-manifest.ts readHostManifest): its lenient shapes followed.
  const checked = picked ? manifest.readHostManifest(picked.manifest) : undefined;
  if (!checked?.ok) return pj === undefined ? unreadPlugin(base, "EPLUGIN_NOT_FOUND", `${dir} is missing`) : unreadPlugin(base, "ENOT_A_PLUGIN", `${name} has no usable xcsh manifest`);
  return fromRoot(base, scan.scanPluginComponents(dir, { rootKind: "npm", manifest: checked.value, manifestKey: picked!.key, pluginName: name }), tools);
}

/**
 * The whole installed answer `list` and the library's `listInstalledComponents` give: the user's
 * plugins (from the boot index's inventory) with their tools named, then the plugins the seeds
 * provide, each marked with its `seed`. One place, so both list the same plugins.
 */
export async function withSeededComponents(plugins: readonly InstalledPluginComponents[], roots: XcshRoots, tools: readonly KnownTool[] | undefined): Promise<InstalledPluginComponents[]> {
  const seeded = await collectSeededComponents(roots, tools);
  if (seeded.length === 0) return withKnownTools(plugins, tools);
  const { hiddenUserCopies } = await import("../manifest/seed.js");
  const hidden = new Map(hiddenUserCopies(roots.seedDirs ?? [], xcshPaths(roots).pluginsPackageJson).map((h) => [h.name, h.seed]));
  const own = withKnownTools(plugins, tools).map((p) => (p.rootKind === "npm" && hidden.has(p.name) ? { ...p, hiddenBySeed: hidden.get(p.name)! } : p));
  return [...own, ...seeded];
}

/**
 * The components of the plugins the seeds (`XCSH_PLUGIN_SEED_DIR`) provide, the first seed listing
 * a name winning as at boot, read in place on every call: a seed is never indexed or written. A
 * seed or plugin that cannot be used is a row with its `problem` (manifest/seed.ts codes).
 */
export async function collectSeededComponents(roots: XcshRoots, tools?: readonly KnownTool[]): Promise<InstalledPluginComponents[]> {
  const seeds = roots.seedDirs ?? [];
  if (seeds.length === 0) return [];
  const { readSeedManifest, seededPluginProblem, seedPaths } = await import("../manifest/seed.js");
  const out: InstalledPluginComponents[] = [];
  const taken = new Set<string>();
  for (const seed of seeds) {
    let plugins: Record<string, { version: string; integrity: string; tree: string }>;
    try {
      plugins = readSeedManifest(seed).plugins;
    } catch (error) {
      const e = error as { code?: string; message?: string };
      out.push(unreadPlugin({ id: seed, name: seed, rootKind: "npm", scope: "user", enabled: false, root: seed, seed }, e.code ?? "ESEED_UNREADABLE", e.message ?? String(error)));
      continue;
    }
    for (const [name, entry] of Object.entries(plugins)) {
      if (taken.has(name)) continue;
      taken.add(name);
      const dir = path.join(seedPaths(seed).nodeModules, name);
      const problem = seededPluginProblem(seed, name, entry);
      out.push(problem ? unreadPlugin({ id: name, name, rootKind: "npm", scope: "user", version: entry.version, enabled: false, root: dir, seed }, problem.code, problem.message) : await npmPluginComponents(name, dir, { seed }, tools));
    }
  }
  return out;
}

/** Find one installed plugin by id, name or package name. */
export function findInstalledPlugin(all: readonly InstalledPluginComponents[], query: string): InstalledPluginComponents[] {
  const exact = all.filter((p) => p.id === query);
  return exact.length > 0 ? exact : all.filter((p) => p.name === query);
}
