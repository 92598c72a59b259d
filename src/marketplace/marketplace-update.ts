/**
 * `marketplace update`: re-fetch (marketplace-cache.ts), compare with the cached catalog, and
 * replace the cache folder. Several marketplaces are updated each in its own transaction, and
 * every failure is reported instead of stopping at the first (#41). Name drift (the catalog
 * renamed itself) is `EMARKETPLACE_NAME_DRIFT`: plugin ids are `name@marketplace`, so silently
 * following the rename would orphan every install.
 */
import { XcshToolsError, errorSummary } from "../core/errors.js";
import type { MarketplaceCatalog } from "../manifest/marketplace-catalog.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { recoverBeforeRead } from "../plugins/mutation.js";
import { catalogOriginOf, readCachedCatalog } from "./catalog.js";
import { nowIso, assertScopeUsable, type MarketplaceContext, type Scope } from "./context.js";
import { readMarketplacesDoc } from "./registry.js";
import type { CatalogSourceSpec, FetchedCatalog } from "./sources/index.js";
import { allMarketplaces, catalogPathOf, loadEngineState, requireMarketplace, type EngineState, type FoundMarketplace, mutate } from "./state.js";
import { checkedLocalFolder, stageFolderRecords } from "./local-folders.js";
import { makeScratch } from "./tree.js";
import { buildCacheDir, commitOf, fetchSource, fetchedReport, scratchNear, stageMarketplace, type CatalogChanges, type MarketplaceChangeReport } from "./marketplace-cache.js";

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
      results.push({ name: target.entry.name, scope: target.scope, op: "FAILED", error: errorSummary(error) });
    }
  }
  return { results, failed: results.filter((r) => r.op === "FAILED").length };
}

async function updateOne(ctx: MarketplaceContext, name: string, scope: Scope, dryRun: boolean): Promise<MarketplaceChangeReport> {
  const state = await loadEngineState(ctx);
  const found = requireMarketplace(state, name, scope);
  const catalogPath = catalogPathOf(found); // before any fetch: the folder update replaces
  // A local source is read only from the folder recorded when it was added (local-folders.ts).
  const uri = found.entry.sourceType === "local" ? checkedLocalFolder(ctx, found) : found.entry.sourceUri;
  const spec: CatalogSourceSpec = { kind: found.entry.sourceType, uri };
  const scratch = await makeScratch("update", scratchNear(ctx));
  try {
    const fetched = await fetchForUpdate(ctx, spec, scratch.dir, name);
    const old = await readCachedCatalog(catalogPath, name, catalogOriginOf(found.entry)).catch(() => undefined);
    assertSameName(found, old?.catalog.name, fetched.loaded.catalog.name);
    const changes = diffCatalogs(old?.catalog, fetched.loaded.catalog);
    const same = old !== undefined && changes.added.length + changes.removed.length + changes.changed.length === 0 && JSON.stringify(old.catalog) === JSON.stringify(fetched.loaded.catalog);
    const { commitSha: _old, ...kept } = found.entry;
    const entry: MarketplaceEntry = { ...kept, updatedAt: nowIso(ctx), ...commitOf(fetched) };
    const report = await fetchedReport(fetched, spec, { op: same ? "NOOP" : "CHANGE", name, scope, dryRun, entry, changes });
    report.warnings.push(...removedButInstalled(state, name, changes));
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

/** Fetch for an update; a coded failure says the last good catalog is kept. */
async function fetchForUpdate(ctx: MarketplaceContext, spec: CatalogSourceSpec, scratch: string, name: string): Promise<FetchedCatalog> {
  return fetchSource(ctx, spec, scratch).catch((error: unknown) => {
    if (error instanceof XcshToolsError) {
      throw new XcshToolsError(error.code, `Marketplace "${name}" could not be updated: ${error.message}`, {
        hint: `${error.hint ?? ""} The last good catalog is kept; if the source is gone for good, run \`xcsh-tools marketplace remove ${name}\`.`.trim(),
        cause: error,
      });
    }
    throw error;
  });
}

/** `EMARKETPLACE_NAME_DRIFT` when the fetched catalog calls itself something else than the cached one. */
function assertSameName(found: FoundMarketplace, oldName: string | undefined, newName: string): void {
  if (oldName === undefined || oldName === newName) return;
  const name = found.entry.name;
  throw new XcshToolsError("EMARKETPLACE_NAME_DRIFT", `The catalog of marketplace "${name}" now calls itself "${newName}" (it was "${oldName}")`, {
    hint: `Nothing was changed. Installed plugins are named <plugin>@${name}: to follow the rename, run \`xcsh-tools marketplace remove ${name}\` and \`marketplace add ${found.entry.sourceUri}\`, then reinstall; or ask the owner to restore the name.`,
  });
}

/** A warning for each installed plugin the new catalog no longer lists. */
function removedButInstalled(state: EngineState, name: string, changes: CatalogChanges): string[] {
  const installed = [state.user, state.project].flatMap((s) => (s ? Object.keys(s.installed.plugins) : []));
  return changes.removed.filter((gone) => installed.includes(`${gone}@${name}`)).map((gone) => `${gone}@${name} is installed but no longer in the catalog: it stays installed; uninstall it or keep it`);
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
