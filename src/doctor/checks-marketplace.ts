/**
 * Doctor's checks of marketplace state and of the project's overrides file.
 *
 *   marketplace  the registries of both scopes (`marketplaces.json`, `installed_plugins.json`)
 *                read as strictly as the engine reads them; every registered catalog cached;
 *                every registered catalog's entries valid (a URL, ref or sha that git must
 *                not see is reported with its code: EGIT_URL, EGIT_REF, ESHA…);
 *                every installed plugin's folder present; cache folders nobody references
 *                (plugins: no registry of any scope or known project; catalogs: no registered
 *                marketplace of that scope) — those `--fix` removes, unless some project
 *                registry cannot be read, when nothing may be deleted
 *   overrides    `<project>/.xcsh/plugin-overrides.json`: valid, naming installed plugins and
 *                features they declare, and holding no secret setting (ignored there)
 *
 * An untrusted project's files (`world.projectTrusted`) are not read: each area says they are
 * "not loaded: project not trusted", and no cache is called unreferenced while they are unread.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { pathExists } from "../core/atomic-fs.js";
import { isXcshToolsError } from "../core/errors.js";
import { projectFolder, projectPaths, xcshPaths } from "../core/paths.js";
import { confineCatalogPath, confineStatePath } from "../core/state-places.js";
import { trustCommand } from "../core/trust.js";
import { pointerSegment } from "../manifest/result.js";
import { validatePluginOverrides } from "../manifest/plugin-overrides.js";
import { assertProjectScope, scopePaths, type Scope, type ScopePaths } from "../marketplace/context.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { projectFilesNotLoaded } from "../marketplace/state.js";
import { catalogOriginOf, readCachedCatalog } from "../marketplace/catalog.js";
import { readInstalledDoc, readMarketplacesDoc, readProjectList, referencedPaths, type InstalledDoc, type MarketplacesDoc } from "../marketplace/registry.js";
import type { InstalledPlugin } from "../plugins/inventory.js";
import { secretInProject } from "../plugins/plugin-settings.js";
import { failedCheck } from "./checks-state.js";
import { AreaFindings, readDoc, type DoctorWorld } from "./world.js";

const KEEP = "doctor never rewrites a registry it cannot read; fix it by hand or move it away";

/** What an untrusted project's entries are, in every report. */
const NOT_LOADED = "not loaded: project not trusted";

async function listDirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => e.name).sort();
  } catch {
    return [];
  }
}

/** What the marketplace check gathers while it reads both scopes. */
interface MarketplaceScan {
  area: AreaFindings;
  ctx: { roots: DoctorWorld["roots"]; cwd: string; projectTrusted: boolean };
  /** Plugin folders some installed registry references. */
  refs: Set<string>;
  /** False when a registry could not be read: then no cache may be called unreferenced and deleted. */
  refsKnown: boolean;
}

/** Marketplace registries and caches of both scopes. */
export async function checkMarketplaces(world: DoctorWorld): Promise<AreaFindings> {
  // The project root found from cwd, where the host keeps project marketplace state (core/paths.ts).
  const scan: MarketplaceScan = { area: new AreaFindings("marketplace"), ctx: { roots: world.roots, cwd: projectFolder(world.cwd, world.roots), projectTrusted: world.projectTrusted === true }, refs: new Set(), refsKnown: true };
  const scopes = scopesToCheck(scan, world);
  const registries = new Map<Scope, MarketplacesDoc>();
  for (const scope of scopes) {
    const paths = scopePaths(scan.ctx, scope);
    const registry = await checkRegistry(scan, scope, paths);
    if (registry) registries.set(scope, registry);
    await checkInstalled(scan, scope, paths);
  }
  await addOtherProjectRefs(scan);
  await reportUnreferencedCaches(scan, registries);
  if (scan.area.healthy) {
    const count = [...registries.values()].reduce((n, r) => n + r.marketplaces.length, 0);
    scan.area.ok("marketplace", `${count} marketplace${count === 1 ? "" : "s"} registered, ${scan.refs.size} installed plugin folder${scan.refs.size === 1 ? "" : "s"} present, no unreferenced cache`);
  }
  return scan.area;
}

/** User scope, and the project's when cwd is in a trusted project; an untrusted project's state is a warning. */
function scopesToCheck(scan: MarketplaceScan, world: DoctorWorld): Scope[] {
  const scopes: Scope[] = ["user"];
  try {
    assertProjectScope(scan.ctx);
    if (scan.ctx.projectTrusted) scopes.push("project");
  } catch {
    // the home folder is no project: user scope only
  }
  const notLoaded = projectFilesNotLoaded(scan.ctx);
  if (notLoaded.length > 0) {
    // Unread, so what the project's installs reference is unknown: no cache may be deleted.
    scan.refsKnown = false;
    scan.area.problem("marketplace:project", "warn", `the project's marketplace state (${notLoaded.join(", ")}) is ${NOT_LOADED}`, {
      hint: `If you know who wrote this project, trust it: \`${trustCommand(world.cwd)}\`.`,
      manual: "trusting a project is the user's decision",
    });
  }
  return scopes;
}

/** One scope's marketplace registry and the cached catalog of each entry. */
async function checkRegistry(scan: MarketplaceScan, scope: Scope, paths: ScopePaths): Promise<MarketplacesDoc | undefined> {
  let marketplaces: MarketplacesDoc;
  try {
    marketplaces = await readMarketplacesDoc(paths.marketplacesRegistry);
  } catch (error) {
    if (!isXcshToolsError(error)) throw error;
    scan.area.problem(`marketplace:registry:${scope}`, "error", error.message, { hint: error.hint ?? `Fix ${paths.marketplacesRegistry}.`, manual: KEEP });
    return undefined;
  }
  for (const [index, entry] of marketplaces.marketplaces.entries()) await checkCatalog(scan.area, scope, paths, index, entry);
  return marketplaces;
}

async function checkCatalog(area: AreaFindings, scope: Scope, paths: ScopePaths, index: number, entry: MarketplaceEntry): Promise<void> {
  try {
    confineCatalogPath(entry.catalogPath, entry.name, scope === "user" ? "user-catalog" : "project-catalog", paths.marketplaceCache, { file: paths.marketplacesRegistry, field: `/marketplaces/${index}/catalogPath` });
  } catch (error) {
    if (!isXcshToolsError(error, "EPATH_OUTSIDE")) throw error;
    area.problem(`marketplace:catalog:${scope}:${entry.name}`, "error", `${error.code}: ${error.message}`, { hint: `Remove the entry "${entry.name}" from ${paths.marketplacesRegistry} by hand (or restore the file), then add the marketplace again.`, manual: KEEP });
    return;
  }
  if (!(await pathExists(entry.catalogPath))) {
    area.problem(`marketplace:catalog:${scope}:${entry.name}`, "warn", `the catalog of marketplace "${entry.name}" (${scope}) is not cached at ${entry.catalogPath}`, {
      hint: `Run \`xcsh-tools marketplace update ${entry.name}\` to fetch it again.`,
      manual: "fetching a catalog is `marketplace update`'s job (it needs the network)",
    });
    return;
  }
  // Entries the engine leaves out because they hand git or npm a value it must not see.
  const loaded = await readCachedCatalog(entry.catalogPath, entry.name, catalogOriginOf(entry)).catch(() => undefined);
  for (const skipped of loaded?.skipped ?? []) {
    area.problem(`marketplace:entry:${scope}:${entry.name}:${skipped.index}`, "error", `${skipped.issue.code}: ${entry.catalogPath} ${skipped.issue.message}; the entry${skipped.name ? ` "${skipped.name}"` : ""} cannot be installed`, {
      hint: `${skipped.issue.hint ?? "Ask the marketplace owner to fix the entry."} Then run \`xcsh-tools marketplace update ${entry.name}\`.`,
      manual: "a catalog is the marketplace owner's; doctor does not edit it",
    });
  }
}

/** One scope's installed registry: each install path confined and present; its references collected. */
async function checkInstalled(scan: MarketplaceScan, scope: Scope, paths: ScopePaths): Promise<void> {
  let installed: InstalledDoc;
  try {
    installed = await readInstalledDoc(paths.installedPlugins);
  } catch (error) {
    if (!isXcshToolsError(error)) throw error;
    scan.refsKnown = false;
    scan.area.problem(`marketplace:installed:${scope}`, "error", error.message, { hint: error.hint ?? `Fix ${paths.installedPlugins}.`, manual: KEEP });
    return;
  }
  for (const p of referencedPaths(installed)) scan.refs.add(p);
  for (const [id, entries] of Object.entries(installed.plugins)) {
    for (const [index, entry] of entries.entries()) {
      if (!entry || typeof entry.installPath !== "string") continue;
      try {
        confineStatePath("xcsh-install", entry.installPath, scan.ctx, { file: paths.installedPlugins, field: `/plugins/${pointerSegment(id)}/${index}/installPath` });
      } catch (error) {
        if (!isXcshToolsError(error, "EPATH_OUTSIDE")) throw error;
        scan.area.problem(`marketplace:plugin:${scope}:${id}`, "error", `${error.code}: ${error.message}`, { hint: `Remove the entry ${id} from ${paths.installedPlugins} by hand (or restore the file), then reinstall it.`, manual: KEEP });
        continue;
      }
      if (!(await pathExists(entry.installPath))) {
        scan.area.problem(`marketplace:plugin:${scope}:${id}`, "error", `${id} (${scope}) is installed at ${entry.installPath}, which is missing: the host cannot load it`, {
          hint: `Reinstall it: \`xcsh-tools install ${id} --scope ${scope}\` (or \`xcsh-tools uninstall ${id} --scope ${scope}\`).`,
          manual: "reinstalling needs the marketplace's source; run the install command named",
        });
      }
    }
  }
}

/** References of projects other than this one that hold installs we made. */
async function addOtherProjectRefs(scan: MarketplaceScan): Promise<void> {
  try {
    for (const file of await readProjectList(scan.ctx)) {
      try {
        for (const p of referencedPaths(await readInstalledDoc(file))) scan.refs.add(p);
      } catch {
        scan.refsKnown = false;
      }
    }
  } catch (error) {
    scan.refsKnown = false;
    scan.area.problem("marketplace:projects", "warn", failedCheck(error), { hint: isXcshToolsError(error) ? (error.hint ?? "") : "", manual: "it is our own list; move it away to rebuild it" });
  }
}

/** Plugin caches no install references, and marketplace caches no registry lists: deletable by `--fix` when every registry was read. */
async function reportUnreferencedCaches(scan: MarketplaceScan, registries: Map<Scope, MarketplacesDoc>): Promise<void> {
  const unreferenced = (dir: string, what: string) => {
    scan.area.problem(`marketplace:cache:${dir}`, "warn", `${dir} is ${what}`, {
      hint: "Run `xcsh-tools doctor --fix` to delete it.",
      ...(scan.refsKnown ? { repair: { kind: "remove-cache" as const, path: dir }, repairText: `delete ${dir}` } : { manual: "a project registry could not be read, so doctor cannot be sure nothing uses it" }),
    });
  };
  const pluginCache = xcshPaths(scan.ctx.roots).pluginCache;
  for (const name of await listDirs(pluginCache)) {
    const dir = path.join(pluginCache, name);
    if (!scan.refs.has(path.resolve(dir))) unreferenced(dir, "a cached marketplace plugin that no scope has installed");
  }
  for (const [scope, registry] of registries) {
    const cache = scopePaths(scan.ctx, scope).marketplaceCache;
    const names = new Set(registry.marketplaces.map((m) => m.name));
    for (const name of await listDirs(cache)) if (!names.has(name)) unreferenced(path.join(cache, name), `the cache of a marketplace that is not registered (${scope})`);
  }
}

/** The project's plugin-overrides.json. */
export async function checkOverrides(world: DoctorWorld, inventory: readonly InstalledPlugin[] | undefined): Promise<AreaFindings> {
  const area = new AreaFindings("overrides");
  const file = projectPaths(world.cwd).pluginOverrides;
  const manual = "the overrides file is the project's; doctor does not edit it";
  if (world.projectTrusted !== true) {
    if (await pathExists(file)) {
      area.problem("overrides", "warn", `${file} is ${NOT_LOADED}: the project's plugin overrides do not apply`, {
        hint: `If you know who wrote this project, trust it: \`${trustCommand(world.cwd)}\`.`,
        manual: "trusting a project is the user's decision",
      });
    } else area.ok("overrides", `no ${file}`);
    return area;
  }
  const checked = await readDoc(file, validatePluginOverrides);
  if (checked.status !== "ok") {
    if (checked.status === "missing") area.ok("overrides", `no ${file}`);
    else area.problem("overrides", "error", `${checked.message}; the host loads no npm plugin tool while it is unusable`, { hint: checked.hint, manual });
    return area;
  }
  for (const [i, w] of checked.warnings.entries()) area.problem(`overrides:warning:${i}`, "warn", `${file}: ${w.message}`, { hint: w.hint ?? "Fix the key named.", manual });
  if (inventory) {
    const byName = new Map(inventory.map((p) => [p.name, p]));
    const value = checked.value;
    const names = new Set([...(value.disabled ?? []), ...Object.keys(value.features ?? {}), ...Object.keys(value.settings ?? {})]);
    for (const name of names) {
      if (!byName.has(name)) area.problem(`overrides:${name}`, "warn", `${file} mentions ${name}, which is not installed`, { hint: `Remove ${name} from ${file}, or install it.`, manual });
    }
    for (const [name, values] of Object.entries(value.settings ?? {})) {
      const manifest = byName.get(name)?.manifest;
      for (const key of Object.keys(values ?? {})) {
        if (manifest?.settings?.[key]?.secret !== true) continue;
        const p = secretInProject(name, key, file);
        area.problem(`overrides:${name}:secret:${key}`, "warn", `${p.code}: ${p.message}`, { hint: p.hint, manual });
      }
    }
    for (const [name, features] of Object.entries(value.features ?? {})) {
      const manifest = byName.get(name)?.manifest;
      if (!manifest) continue;
      const declared = Object.keys(manifest.features ?? {});
      const unknown = features.filter((f) => f !== "*" && !declared.includes(f));
      if (unknown.length > 0) {
        area.problem(`overrides:${name}:features`, "warn", `${file} enables feature${unknown.length > 1 ? "s" : ""} ${unknown.map((f) => `"${f}"`).join(", ")} of ${name}, which declares ${declared.length ? declared.join(", ") : "no features"}`, { hint: `Fix /features/${name} in ${file}.`, manual });
      }
    }
  }
  if (area.healthy) area.ok("overrides", `${file} is valid`);
  return area;
}
