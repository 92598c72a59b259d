/**
 * Marketplaces themselves: add, remove, update, list, discover, search, and Claude Code's
 * marketplaces (`list --claude`, `import-claude`).
 *
 * add/update fetch first, outside live state and outside the lock (network time must not hold
 * other commands up), then take the mutation (lock, recovery, transaction), re-read the registry
 * and re-check names under the lock, and stage the new cache folder `<cache>/<name>/` (the
 * clone's content without `.git`, or nothing but the catalog) with the checked catalog at
 * `<cache>/<name>/marketplace.json` (`catalogPath`, the host's layout) and the registry document.
 * The old cache is replaced only at commit, so a failed fetch or a name drift leaves the last good
 * catalog in place (in the host, a URL catalog was written before the duplicate check).
 *
 * `update` of several marketplaces updates each in its own transaction and reports every
 * failure instead of stopping at the first (#41). Name drift (the catalog renamed itself) is
 * `EMARKETPLACE_NAME_DRIFT`: plugin ids are `name@marketplace`, so silently following the rename
 * would orphan every install.
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { lstatOrUndefined, movePath, removeTree } from "../core/atomic-fs.js";
import { isPathInside, isRealPathInside } from "../core/contain.js";
import { isInPlace, placeOf } from "../core/state-places.js";
import { claudeSourceProblem, validateKnownMarketplaces, type KnownMarketplace } from "../manifest/known-marketplaces.js";
import { relativeSourceDir, type MarketplaceCatalog } from "../manifest/marketplace-catalog.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { nameSegmentProblem, suggestNameSegment } from "../manifest/names.js";
import { readJsonFile } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import { sourceArgHint } from "../core/source-args.js";
import { recoverBeforeRead } from "../plugins/mutation.js";
import { catalogOriginOf, findCatalogFile, readCachedCatalog, readCatalogIn } from "./catalog.js";
import { nowIso, pathsOf, scopePaths, assertScopeUsable, type MarketplaceContext, type Scope } from "./context.js";
import { readMarketplacesDoc, serializeDoc, stageJson, type MarketplacesDoc } from "./registry.js";
import { catalogSourceOf, parseCatalogSource, type CatalogSourceSpec, type FetchedCatalog } from "./sources/index.js";
import { allMarketplaces, catalogDirOf, catalogPathOf, findMarketplace, loadEngineState, mutate, type EngineState } from "./state.js";
import { checkedLocalFolder, stageFolderRecords } from "./local-folders.js";
import { copyPluginTree, makeScratch } from "./tree.js";
import { applyPluginPlan } from "./apply.js";
import { planMarketplaceUninstall } from "./plugins.js";

/** A marketplace as listed. */
export interface MarketplaceRow {
  name: string;
  scope: Scope;
  sourceType: MarketplaceEntry["sourceType"];
  sourceUri: string;
  catalogPath: string;
  addedAt: string;
  updatedAt: string;
  plugins?: number;
  /** The cached catalog cannot be read. */
  problem?: string;
  /** A user marketplace hidden by a project marketplace of the same name. */
  shadowedBy?: "project";
}

/** Changes between two catalogs. */
export interface CatalogChanges {
  added: string[];
  removed: string[];
  changed: { name: string; from?: string; to?: string }[];
}

/** What add/update/remove did (or would do). */
export interface MarketplaceChangeReport {
  op: "ADD" | "CHANGE" | "REMOVE" | "NOOP";
  name: string;
  scope: Scope;
  dryRun: boolean;
  entry: MarketplaceEntry;
  plugins: string[];
  changes?: CatalogChanges;
  warnings: string[];
  /** Plugins of a removed marketplace uninstalled with it, `id (scope)`. */
  uninstalled?: string[];
  /** Installed plugins of a removed marketplace left installed (a project marketplace of that name serves them). */
  stillInstalled?: string[];
  /** Entries whose in-repo source folder is missing (each also a warning): they cannot be installed. */
  missingSources?: string[];
}

function rowOf(entry: MarketplaceEntry, scope: Scope): MarketplaceRow {
  return { name: entry.name, scope, sourceType: entry.sourceType, sourceUri: entry.sourceUri, catalogPath: entry.catalogPath, addedAt: entry.addedAt, updatedAt: entry.updatedAt };
}

/** Fetch a source into scratch: the checked catalog, plus the content to cache. */
async function fetchSource(ctx: MarketplaceContext, spec: CatalogSourceSpec, scratch: string): Promise<FetchedCatalog> {
  return catalogSourceOf(spec.kind).fetch(spec, scratch, ctx);
}

/**
 * Build the new cache folder in scratch: clone content (no .git) + `marketplace.json`. A clone
 * made in this scratch becomes the cache by renaming it, so adding a big repository costs about
 * one `git clone` (bench/marketplace.js); content from elsewhere (Claude Code's copy, which is
 * only read) is copied. Symlinks stay as they are: every reader of the cache resolves and
 * confines them (plugin-sources/relative.ts, tree.ts).
 */
async function buildCacheDir(fetched: FetchedCatalog, scratch: string): Promise<string> {
  const dir = path.join(scratch, "cache");
  if (fetched.contentDir && isPathInside(path.resolve(fetched.contentDir), path.resolve(scratch))) {
    await removeTree(path.join(fetched.contentDir, ".git"));
    await rename(fetched.contentDir, dir);
    // The repository may hold its own `marketplace.json` (or a link by that name): ours replaces it, never writes through it.
    await rm(path.join(dir, "marketplace.json"), { force: true, recursive: true });
  } else if (fetched.contentDir) await copyPluginTree(fetched.contentDir, dir);
  else await mkdir(dir);
  await writeFile(path.join(dir, "marketplace.json"), serializeDoc(fetched.loaded.catalog), { flag: "wx" });
  return dir;
}

/** The commit a git marketplace was fetched at, recorded for its in-repo plugins. */
function commitOf(fetched: FetchedCatalog): { commitSha?: string } {
  return fetched.commitSha && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(fetched.commitSha) ? { commitSha: fetched.commitSha } : {};
}

/**
 * Entries whose in-repo source folder is not in the fetched repository: a warning each
 * (`ESOURCE_NOT_FOUND`), so adding a catalog whose plugins cannot be installed does not read as
 * plain success. Resolved as install resolves them (`relativeSourceDir`: Claude Code's rule).
 */
async function missingSources(fetched: FetchedCatalog, spec: CatalogSourceSpec): Promise<{ names: string[]; warnings: string[] }> {
  const root = fetched.contentDir ?? (spec.kind === "local" ? spec.uri : undefined);
  const names: string[] = [];
  const out: string[] = [];
  if (!root) return { names, warnings: out };
  for (const entry of fetched.loaded.catalog.plugins) {
    if (typeof entry.source !== "string") continue;
    const rel = relativeSourceDir(entry.source, fetched.loaded.catalog);
    const info = await lstatOrUndefined(path.join(root, rel)).catch(() => undefined);
    if (!info || !(info.isDirectory() || info.isSymbolicLink())) {
      names.push(entry.name);
      out.push(`plugin "${entry.name}": its source "${entry.source}" (${rel}) does not exist in the marketplace repository; it cannot be installed (ESOURCE_NOT_FOUND)`);
    }
  }
  return { names, warnings: out };
}

function withMissing(report: MarketplaceChangeReport, missing: { names: string[]; warnings: string[] }): MarketplaceChangeReport {
  report.warnings.push(...missing.warnings);
  if (missing.names.length > 0) report.missingSources = missing.names;
  return report;
}

/** Where a fetch's scratch goes: beside our journal, where the new cache is staged (see makeScratch). */
function scratchNear(ctx: MarketplaceContext): string {
  return path.join(pathsOf(ctx).ours, "tmp");
}

function validName(name: string, source: string): string {
  const problem = nameSegmentProblem(name);
  if (problem) {
    throw new XcshToolsError("EMARKETPLACE_NAME", `Marketplace name "${name}" (from ${source}) is invalid: ${problem}`, { hint: `Pass --name ${suggestNameSegment(name) || "my-marketplace"}.`, exitCode: 2 });
  }
  return name;
}

function diffCatalogs(before: MarketplaceCatalog | undefined, after: MarketplaceCatalog): CatalogChanges {
  const old = new Map((before?.plugins ?? []).map((p) => [p.name, p]));
  const now = new Map(after.plugins.map((p) => [p.name, p]));
  const changes: CatalogChanges = { added: [], removed: [], changed: [] };
  for (const [name, p] of now) {
    const was = old.get(name);
    if (!was) changes.added.push(name);
    else if (JSON.stringify(was) !== JSON.stringify(p)) changes.changed.push({ name, ...(was.version ? { from: was.version } : {}), ...(p.version ? { to: p.version } : {}) });
  }
  for (const name of old.keys()) if (!now.has(name)) changes.removed.push(name);
  return changes;
}

/** Stage the cache folder and the registry for marketplace `entry` in `scope`. */
async function stageMarketplace(ctx: MarketplaceContext, scope: Scope, doc: MarketplacesDoc, cacheBuilt: string, entry: MarketplaceEntry, tx: import("../core/journal.js").Transaction, step: (n: string) => Promise<void>): Promise<void> {
  const paths = scopePaths(ctx, scope);
  // The folder replaced at commit: checked like every catalog path read back from a registry.
  const cacheDir = path.dirname(catalogPathOf({ scope, entry, paths, index: doc.marketplaces.findIndex((m) => m.name === entry.name) }));
  const slot = await tx.stage(cacheDir);
  await movePath(cacheBuilt, slot);
  await step("marketplace:staged-catalog");
  await stageJson(tx, paths.marketplacesRegistry, doc);
  await step("marketplace:staged-registry");
}

/** Add a marketplace from `source` (folder, git URL, owner/repo, catalog URL). */
export async function addMarketplace(
  ctx: MarketplaceContext,
  source: string,
  options: { name?: string; scope?: Scope; dryRun?: boolean } = {},
): Promise<MarketplaceChangeReport> {
  const spec = parseCatalogSource(source, ctx);
  return addFetched(ctx, source, spec, (scratch) => fetchSource(ctx, spec, scratch), options);
}

/** `addMarketplace` of `spec`, with `fetch` producing its catalog (the network, or a copy on disk). */
async function addFetched(
  ctx: MarketplaceContext,
  source: string,
  spec: CatalogSourceSpec,
  fetch: (scratch: string) => Promise<FetchedCatalog>,
  options: { name?: string; scope?: Scope; dryRun?: boolean },
): Promise<MarketplaceChangeReport> {
  const scope = options.scope ?? "user";
  assertScopeUsable(ctx, scope, "add a marketplace to the project (--scope project)");
  const scratch = await makeScratch("add", scratchNear(ctx));
  try {
    const fetched = await fetch(scratch.dir);
    const name = validName(options.name ?? fetched.loaded.catalog.name, source);
    const paths = scopePaths(ctx, scope);
    const now = nowIso(ctx);
    const entry: MarketplaceEntry = { name, sourceType: spec.kind, sourceUri: spec.uri, catalogPath: path.join(paths.marketplaceCache, name, "marketplace.json"), addedAt: now, updatedAt: now, ...commitOf(fetched) };
    const report = withMissing({ op: "ADD", name, scope, dryRun: Boolean(options.dryRun), entry, plugins: fetched.loaded.catalog.plugins.map((p) => p.name), warnings: fetched.loaded.warnings.map((w) => w.message) }, await missingSources(fetched, spec));
    const exists = (doc: MarketplacesDoc) => {
      const other = doc.marketplaces.find((m) => m.name === name);
      if (other) {
        throw new XcshToolsError("EMARKETPLACE_EXISTS", `Marketplace "${name}" is already registered (${other.sourceType} ${other.sourceUri})`, {
          hint: other.sourceUri === spec.uri ? `Run \`xcsh-tools marketplace update ${name}\` to refresh it.` : `Pass --name <other-name> to add this one beside it, or remove the existing one first.`,
        });
      }
    };
    if (options.dryRun) {
      await recoverBeforeRead(ctx);
      exists(await readMarketplacesDoc(paths.marketplacesRegistry));
      return report;
    }
    const built = await buildCacheDir(fetched, scratch.dir);
    await mutate(ctx, `marketplace add ${name}`, async (m) => {
      const doc = await readMarketplacesDoc(paths.marketplacesRegistry);
      exists(doc);
      await m.step("marketplace:fetched");
      await stageMarketplace(ctx, scope, { ...doc, marketplaces: [...doc.marketplaces, entry] }, built, entry, m.tx, m.step);
      await stageFolderRecords(m.tx, ctx, scope, paths.marketplacesRegistry, [...doc.marketplaces, entry], name);
    });
    return report;
  } finally {
    await scratch.dispose();
  }
}

function requireMarketplace(state: EngineState, name: string, scope?: Scope) {
  const found = findMarketplace(state, name, scope);
  if (!found) {
    const names = allMarketplaces(state).map((m) => m.entry.name);
    throw new XcshToolsError("EMARKETPLACE_NOT_FOUND", `Marketplace "${name}" is not registered${scope ? ` in ${scope} scope` : ""}`, {
      hint: names.length > 0 ? `Registered: ${names.join(", ")}.` : "Add one with xcsh-tools marketplace add <source>.",
    });
  }
  return found;
}

/**
 * Remove a marketplace and its cache, and uninstall the plugins installed from it, as Claude Code
 * does, in the same transaction. The installs removed are those that resolve to this marketplace:
 * in its own scope and, for a user marketplace, in the project unless the project has a
 * marketplace of that name. Installs this command cannot see (an untrusted project's) stay and
 * are listed.
 */
export async function removeMarketplace(ctx: MarketplaceContext, name: string, options: { scope?: Scope; dryRun?: boolean } = {}): Promise<MarketplaceChangeReport> {
  assertScopeUsable(ctx, options.scope, "remove a project marketplace (--scope project)");
  const run = async (state: EngineState, m?: import("../plugins/mutation.js").Mutation) => {
    const found = requireMarketplace(state, name, options.scope);
    const doc = found.scope === "user" ? state.user.marketplaces : state.project!.marketplaces;
    const scopes: Scope[] = found.scope === "project" ? ["project"] : ["user", ...(state.project && !state.project.marketplaces.marketplaces.some((e) => e.name === name) ? (["project"] as const) : [])];
    const removal = await planMarketplaceUninstall(ctx, state, name, scopes);
    const uninstalled = removal.plan.items.filter((i) => i.op === "REMOVE").map((i) => `${i.id} (${i.scope})`);
    const installed = [state.user, state.project].flatMap((s) => (s ? Object.keys(s.installed.plugins).filter((id) => id.endsWith(`@${name}`) && (s.installed.plugins[id]?.length ?? 0) > 0).map((id) => `${id} (${s.paths.scope})`) : []));
    const catalogDir = catalogDirOf(found);
    const catalog = await readCachedCatalog(path.join(catalogDir, "marketplace.json"), name, catalogOriginOf(found.entry)).catch(() => undefined);
    if (m) {
      if (uninstalled.length > 0 || removal.plan.cacheRemovals.length > 0) await applyPluginPlan(ctx, m, removal.plan, [], removal.projectList);
      await m.tx.stageRemoval(catalogDir, found.paths.marketplaceCache);
      const left = doc.marketplaces.filter((e) => e.name !== name);
      await stageJson(m.tx, found.paths.marketplacesRegistry, { ...doc, marketplaces: left });
      await stageFolderRecords(m.tx, ctx, found.scope, found.paths.marketplacesRegistry, left);
      await m.step("marketplace:staged-registry");
    }
    const report: MarketplaceChangeReport = {
      op: "REMOVE",
      name,
      scope: found.scope,
      dryRun: !m,
      entry: found.entry,
      plugins: catalog?.catalog.plugins.map((p) => p.name) ?? [],
      warnings: removal.warnings,
      uninstalled,
      stillInstalled: installed.filter((i) => !uninstalled.includes(i)),
    };
    return report;
  };
  if (options.dryRun) {
    await recoverBeforeRead(ctx);
    return run(await loadEngineState(ctx));
  }
  return mutate(ctx, `marketplace remove ${name}`, async (m) => run(await loadEngineState(ctx), m));
}

/** The result of updating several marketplaces. */
export interface MarketplaceUpdateReport {
  results: (MarketplaceChangeReport | { name: string; scope: Scope; op: "FAILED"; error: { code: string; message: string; hint?: string } })[];
  failed: number;
}

/** Re-fetch one marketplace (by name) or all of them. */
export async function updateMarketplaces(ctx: MarketplaceContext, name?: string, options: { scope?: Scope; dryRun?: boolean } = {}): Promise<MarketplaceUpdateReport> {
  assertScopeUsable(ctx, options.scope, "update the project's marketplaces (--scope project)");
  await recoverBeforeRead(ctx);
  const state = await loadEngineState(ctx);
  const targets = name ? [requireMarketplace(state, name, options.scope)] : allMarketplaces(state).filter((m) => !options.scope || m.scope === options.scope);
  const results: MarketplaceUpdateReport["results"] = [];
  for (const target of targets) {
    try {
      results.push(await updateOne(ctx, target.entry.name, target.scope, Boolean(options.dryRun)));
    } catch (error) {
      const e = error instanceof XcshToolsError ? { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) } : { code: "EUNEXPECTED", message: errorMessage(error) };
      results.push({ name: target.entry.name, scope: target.scope, op: "FAILED", error: e });
    }
  }
  return { results, failed: results.filter((r) => r.op === "FAILED").length };
}

async function updateOne(ctx: MarketplaceContext, name: string, scope: Scope, dryRun: boolean): Promise<MarketplaceChangeReport> {
  const state = await loadEngineState(ctx);
  const found = requireMarketplace(state, name, scope);
  const catalogPath = catalogPathOf(found); // before any fetch: the folder update replaces
  // A local source is read only from the folder recorded when it was added (local-folders.ts).
  const uri = found.entry.sourceType === "local" ? checkedLocalFolder(ctx, { scope, entry: found.entry, registryFile: found.paths.marketplacesRegistry, ...(found.index !== undefined ? { index: found.index } : {}) }) : found.entry.sourceUri;
  const spec: CatalogSourceSpec = { kind: found.entry.sourceType, uri };
  const scratch = await makeScratch("update", scratchNear(ctx));
  try {
    const fetched = await fetchSource(ctx, spec, scratch.dir).catch((error: unknown) => {
      if (error instanceof XcshToolsError) {
        throw new XcshToolsError(error.code, `Marketplace "${name}" could not be updated: ${error.message}`, {
          hint: `${error.hint ?? ""} The last good catalog is kept; if the source is gone for good, run \`xcsh-tools marketplace remove ${name}\`.`.trim(),
          cause: error,
        });
      }
      throw error;
    });
    const old = await readCachedCatalog(catalogPath, name, catalogOriginOf(found.entry)).catch(() => undefined);
    const oldName = old?.catalog.name;
    const newName = fetched.loaded.catalog.name;
    if (oldName !== undefined && oldName !== newName) {
      throw new XcshToolsError("EMARKETPLACE_NAME_DRIFT", `The catalog of marketplace "${name}" now calls itself "${newName}" (it was "${oldName}")`, {
        hint: `Nothing was changed. Installed plugins are named <plugin>@${name}: to follow the rename, run \`xcsh-tools marketplace remove ${name}\` and \`marketplace add ${found.entry.sourceUri}\`, then reinstall; or ask the owner to restore the name.`,
      });
    }
    const changes = diffCatalogs(old?.catalog, fetched.loaded.catalog);
    const same = old !== undefined && changes.added.length + changes.removed.length + changes.changed.length === 0 && JSON.stringify(old.catalog) === JSON.stringify(fetched.loaded.catalog);
    const { commitSha: _old, ...kept } = found.entry;
    const entry: MarketplaceEntry = { ...kept, updatedAt: nowIso(ctx), ...commitOf(fetched) };
    const report = withMissing({ op: same ? "NOOP" : "CHANGE", name, scope, dryRun, entry, plugins: fetched.loaded.catalog.plugins.map((p) => p.name), changes, warnings: fetched.loaded.warnings.map((w) => w.message) }, await missingSources(fetched, spec));
    const installed = [state.user, state.project].flatMap((s) => (s ? Object.keys(s.installed.plugins) : []));
    for (const gone of changes.removed) if (installed.includes(`${gone}@${name}`)) report.warnings.push(`${gone}@${name} is installed but no longer in the catalog: it stays installed; uninstall it or keep it`);
    if (dryRun) return report;
    const built = await buildCacheDir(fetched, scratch.dir);
    // Even an unchanged catalog refreshes the cache: a git marketplace's plugin folders may have changed.
    await mutate(ctx, `marketplace update ${name}`, async (m) => {
      const doc = await readMarketplacesDoc(found.paths.marketplacesRegistry);
      if (!doc.marketplaces.some((e) => e.name === name)) throw new XcshToolsError("EMARKETPLACE_NOT_FOUND", `Marketplace "${name}" was removed meanwhile`, { hint: "Nothing was changed." });
      await m.step("marketplace:fetched");
      const marketplaces = doc.marketplaces.map((e) => (e.name === name ? entry : e));
      await stageMarketplace(ctx, scope, { ...doc, marketplaces }, built, entry, m.tx, m.step);
      await stageFolderRecords(m.tx, ctx, scope, found.paths.marketplacesRegistry, marketplaces);
    });
    return report;
  } finally {
    await scratch.dispose();
  }
}

/** Every registered marketplace, project first, with its plugin count. */
export async function listMarketplaces(ctx: MarketplaceContext): Promise<MarketplaceRow[]> {
  await recoverBeforeRead(ctx);
  const state = await loadEngineState(ctx);
  const projectNames = new Set(state.project?.marketplaces.marketplaces.map((m) => m.name) ?? []);
  const rows: MarketplaceRow[] = [];
  for (const found of allMarketplaces(state)) {
    const row = rowOf(found.entry, found.scope);
    if (found.scope === "user" && projectNames.has(found.entry.name)) row.shadowedBy = "project";
    try {
      row.plugins = (await readCachedCatalog(catalogPathOf(found), found.entry.name, catalogOriginOf(found.entry))).catalog.plugins.length;
    } catch (error) {
      row.problem = errorMessage(error);
    }
    rows.push(row);
  }
  return rows;
}

/** A plugin offered by a marketplace. */
export interface OfferedPlugin {
  id: string;
  name: string;
  marketplace: string;
  scope: Scope;
  version?: string;
  description?: string;
  keywords?: string[];
  category?: string;
  source: string;
  /** Scopes it is installed in. */
  installed: Scope[];
}

function sourceLabel(source: unknown): string {
  if (typeof source === "string") return source;
  if (isRecord(source)) {
    const s = source as Record<string, string>;
    return `${s.source}:${s.repo ?? s.url ?? s.package ?? ""}${s.path ? `//${s.path}` : ""}${s.sha ? `@${s.sha.slice(0, 12)}` : s.ref ? `#${s.ref}` : ""}`;
  }
  return "?";
}

/** The plugins of one marketplace, or of all of them (shadowed user marketplaces skipped). */
export async function discoverPlugins(ctx: MarketplaceContext, name?: string): Promise<OfferedPlugin[]> {
  await recoverBeforeRead(ctx);
  const state = await loadEngineState(ctx);
  const seen = new Set<string>();
  const markets = name ? [requireMarketplace(state, name)] : allMarketplaces(state).filter((m) => (seen.has(m.entry.name) ? false : (seen.add(m.entry.name), true)));
  const out: OfferedPlugin[] = [];
  for (const found of markets) {
    const catalog = await readCachedCatalog(catalogPathOf(found), found.entry.name, catalogOriginOf(found.entry));
    for (const p of catalog.catalog.plugins) {
      const id = `${p.name}@${found.entry.name}`;
      const installed = ([["project", state.project], ["user", state.user]] as const).filter(([, s]) => s && Object.hasOwn(s.installed.plugins, id)).map(([scope]) => scope);
      out.push({
        id,
        name: p.name,
        marketplace: found.entry.name,
        scope: found.scope,
        ...(p.version ? { version: p.version } : {}),
        ...(p.description ? { description: p.description } : {}),
        ...(p.keywords ? { keywords: p.keywords } : {}),
        ...(p.category ? { category: p.category } : {}),
        source: sourceLabel(p.source),
        installed,
      });
    }
  }
  return out;
}

/** Plugins whose name, description, keywords, tags or category contain every word of `query`. */
export async function searchPlugins(ctx: MarketplaceContext, query: string): Promise<OfferedPlugin[]> {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const state = await loadEngineState(ctx);
  const catalogs = new Map<string, MarketplaceCatalog>();
  for (const found of allMarketplaces(state)) {
    const c = await readCachedCatalog(catalogPathOf(found), found.entry.name, catalogOriginOf(found.entry)).catch(() => undefined);
    if (c && !catalogs.has(found.entry.name)) catalogs.set(found.entry.name, c.catalog);
  }
  const all = await discoverPlugins(ctx);
  return all.filter((p) => {
    const tags = catalogs.get(p.marketplace)?.plugins.find((e) => e.name === p.name)?.tags ?? [];
    const text = [p.name, p.description ?? "", ...(p.keywords ?? []), ...tags, p.category ?? ""].join("\n").toLowerCase();
    return words.every((w) => text.includes(w));
  });
}

/** A marketplace Claude Code knows. */
export interface ClaudeMarketplaceRow {
  name: string;
  source: KnownMarketplace["source"] & Record<string, unknown>;
  installLocation: string;
  lastUpdated?: string;
  /** The source as `marketplace add` takes it, when xcsh can use it. */
  importable?: string;
  problem?: string;
  /** The source names a value git must not see (core/source-args.ts): importing it fails with this. */
  refused?: { code: string; message: string; hint: string };
  /** Already registered in xcsh under this name. */
  registered: boolean;
}

/** Claude Code's `~/.claude/plugins/known_marketplaces.json`, read only. */
export async function listClaudeMarketplaces(ctx: MarketplaceContext): Promise<ClaudeMarketplaceRow[]> {
  const file = pathsOf(ctx).claudeKnownMarketplaces;
  const raw = await readJsonFile(file).catch((error: unknown) => {
    throw new XcshToolsError("EREGISTRY_FILE", `${file}: ${errorMessage(error)}`, { file, hint: "This file belongs to Claude Code; xcsh-tools only reads it. Fix it in Claude Code (claude plugin marketplace list)." });
  });
  if (raw === undefined) return [];
  const checked = validateKnownMarketplaces(raw);
  if (!isRecord(raw)) throw new XcshToolsError("EREGISTRY_FILE", `${file} is not an object of marketplaces`, { file, hint: "This file belongs to Claude Code; xcsh-tools only reads it." });
  const problems = new Map<string, string>();
  for (const issue of checked.ok ? [] : checked.issues) problems.set(issue.path.split("/")[1] ?? "", issue.message);
  const state = await loadEngineState(ctx);
  const registered = new Set(allMarketplaces(state).map((m) => m.entry.name));
  const rows: ClaudeMarketplaceRow[] = [];
  for (const [name, value] of Object.entries(raw)) {
    if (!isRecord(value) || !isRecord(value.source)) {
      rows.push({ name, source: { source: "unknown" }, installLocation: "", problem: problems.get(name) ?? "not a marketplace entry", registered: registered.has(name) });
      continue;
    }
    const source = value.source as ClaudeMarketplaceRow["source"];
    // Claude Code keeps its clones under ~/.claude/plugins/ and uses a local folder (`directory`,
    // `file` sources) where it is; a location elsewhere means the file was edited, and the entry
    // is not trusted enough to import (core/state-places.ts).
    if (typeof value.installLocation === "string" && !problems.has(name) && !isInPlace("claude-marketplace", value.installLocation, ctx) && !isLocalSourceFolder(source, value.installLocation)) {
      problems.set(name, `EPATH_OUTSIDE: ${file} /${name}/installLocation ${value.installLocation} is outside ${placeOf("claude-marketplace", ctx)}, where Claude Code keeps marketplaces`);
    }
    const refusal = claudeSourceProblem(source);
    const importable = problems.has(name) || refusal ? undefined : claudeSourceToInput(source);
    rows.push({
      name,
      source,
      installLocation: typeof value.installLocation === "string" ? value.installLocation : "",
      ...(typeof value.lastUpdated === "string" ? { lastUpdated: value.lastUpdated } : {}),
      ...(importable ? { importable } : { problem: refusal ? `${refusal.code}: ${refusal.problem}` : (problems.get(name) ?? `source kind "${String(source.source)}" cannot be imported`) }),
      ...(refusal ? { refused: { code: refusal.code, message: `${file} /${name}/source: ${refusal.problem}`, hint: `${sourceArgHint(refusal.code)} This file belongs to Claude Code; xcsh-tools does not import this marketplace.` } } : {}),
      registered: registered.has(name),
    });
  }
  return rows;
}

/** True when `location` is the folder a `directory` source names, or the repository of a `file` source. */
function isLocalSourceFolder(source: Record<string, unknown>, location: string): boolean {
  const folder = source.source === "directory" || source.source === "file" ? claudeSourceToInput(source) : undefined;
  return folder !== undefined && path.isAbsolute(location) && isRealPathInside(location, folder);
}

/** Claude's `{source: "github"|"git"|"url"|"directory"|"file", …}` as a `marketplace add` source. */
export function claudeSourceToInput(source: Record<string, unknown>): string | undefined {
  const ref = typeof source.ref === "string" && source.ref ? `#${source.ref}` : "";
  switch (source.source) {
    case "github":
      return typeof source.repo === "string" ? `github:${source.repo}${ref}` : undefined;
    case "git":
      return typeof source.url === "string" ? `${source.url}${ref}` : undefined;
    case "url":
      return typeof source.url === "string" ? source.url : undefined;
    case "directory":
      return typeof source.path === "string" && path.isAbsolute(source.path) ? source.path : undefined;
    case "file": {
      // A path to the marketplace.json itself: the repository is two folders up.
      if (typeof source.path !== "string" || !path.isAbsolute(source.path)) return undefined;
      const folder = path.basename(path.dirname(source.path));
      return path.basename(source.path) === "marketplace.json" && (folder === ".claude-plugin" || folder === ".xcsh-plugin") ? path.dirname(path.dirname(source.path)) : undefined;
    }
    default:
      return undefined;
  }
}

/** What import-claude did for each Claude marketplace. */
export interface ClaudeImportRow {
  name: string;
  status: "added" | "would-add" | "skipped" | "failed";
  reason?: string;
  source?: string;
  /** Claude Code's copy the catalog (and, for git sources, the repository content) was read from. */
  from?: string;
  error?: { code: string; message: string; hint?: string };
}

/**
 * Claude Code's own copy of a marketplace (`installLocation`, already confined by
 * `listClaudeMarketplaces`), when it holds a catalog: the import reads it instead of fetching, so
 * it works offline and costs no clone. The registry still records the marketplace's real source,
 * so `marketplace update` fetches from there. Claude Code's folder is only read (copied, never moved).
 */
async function claudeCopyFetch(row: ClaudeMarketplaceRow, spec: CatalogSourceSpec): Promise<((scratch: string) => Promise<FetchedCatalog>) | undefined> {
  if (!row.installLocation || !path.isAbsolute(row.installLocation)) return undefined;
  const found = await findCatalogFile(row.installLocation).catch(() => undefined);
  if (!found) return undefined;
  const location = row.installLocation;
  return async () => {
    const loaded = await readCatalogIn(location, `Claude Code's copy of marketplace "${row.name}" (${location})`, catalogOriginOf({ sourceType: spec.kind, sourceUri: spec.uri }));
    return { loaded, ...(spec.kind === "git" || spec.kind === "github" ? { contentDir: location } : {}) };
  };
}

/** Add Claude Code's marketplaces to xcsh (user scope by default); `~/.claude` is never written. */
export async function importClaudeMarketplaces(ctx: MarketplaceContext, options: { names?: string[]; scope?: Scope; dryRun?: boolean } = {}): Promise<ClaudeImportRow[]> {
  assertScopeUsable(ctx, options.scope, "add marketplaces to the project (--scope project)");
  const rows = await listClaudeMarketplaces(ctx);
  const out: ClaudeImportRow[] = [];
  for (const row of rows) {
    if (options.names && !options.names.includes(row.name)) continue;
    if (row.registered) {
      out.push({ name: row.name, status: "skipped", reason: "already registered in xcsh" });
      continue;
    }
    if (row.refused) {
      out.push({ name: row.name, status: "failed", error: row.refused });
      continue;
    }
    if (!row.importable) {
      out.push({ name: row.name, status: "skipped", reason: row.problem ?? "cannot be imported" });
      continue;
    }
    try {
      const addOptions = { name: row.name, ...(options.scope ? { scope: options.scope } : {}), ...(options.dryRun ? { dryRun: true } : {}) };
      const spec = parseCatalogSource(row.importable, ctx);
      const fromCopy = spec.kind === "local" ? undefined : await claudeCopyFetch(row, spec);
      if (fromCopy) {
        await addFetched(ctx, row.importable, spec, fromCopy, addOptions);
        out.push({ name: row.name, status: options.dryRun ? "would-add" : "added", source: row.importable, from: row.installLocation });
      } else if (options.dryRun && spec.kind !== "local") {
        // A dry run touches no network: without Claude Code's copy there is nothing local to check.
        out.push({ name: row.name, status: "would-add", source: row.importable, reason: `not checked: Claude Code has no copy at ${row.installLocation || "(no installLocation)"}, so the import will fetch ${row.importable}` });
      } else {
        await addMarketplace(ctx, row.importable, addOptions);
        out.push({ name: row.name, status: options.dryRun ? "would-add" : "added", source: row.importable });
      }
    } catch (error) {
      out.push({ name: row.name, status: "failed", source: row.importable, error: error instanceof XcshToolsError ? { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) } : { code: "EUNEXPECTED", message: errorMessage(error) } });
    }
  }
  if (options.names) {
    for (const name of options.names) if (!rows.some((r) => r.name === name)) out.push({ name, status: "failed", error: { code: "EMARKETPLACE_NOT_FOUND", message: `Claude Code knows no marketplace "${name}"`, hint: "`xcsh-tools marketplace list --claude` shows them." } });
  }
  return out;
}
