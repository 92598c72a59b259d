/**
 * `marketplace remove`: the registry entry and cache folder go, and the plugins installed from
 * the marketplace are uninstalled with it, as Claude Code does, in the same transaction.
 */
import path from "node:path";
import { recoverBeforeRead, type Mutation } from "../plugins/mutation.js";
import { catalogOriginOf, readCachedCatalog } from "./catalog.js";
import { assertScopeUsable, type MarketplaceContext, type Scope } from "./context.js";
import { catalogDirOf, loadEngineState, requireMarketplace, type EngineState, mutate } from "./state.js";
import { stageFolderRecords } from "./local-folders.js";
import { applyPluginPlan } from "./apply.js";
import { planMarketplaceUninstall } from "./plugins.js";
import type { MarketplaceChangeReport } from "./marketplace-cache.js";

/**
 * Remove a marketplace and its cache, and uninstall the plugins installed from it. The installs
 * removed are those that resolve to this marketplace: in its own scope and, for a user
 * marketplace, in the project unless the project has a marketplace of that name. Installs this
 * command cannot see (an untrusted project's) stay and are listed.
 */
export async function removeMarketplace(ctx: MarketplaceContext, name: string, options: { scope?: Scope; dryRun?: boolean } = {}): Promise<MarketplaceChangeReport> {
  assertScopeUsable(ctx, options.scope, "remove a project marketplace (--scope project)");
  if (options.dryRun) {
    await recoverBeforeRead(ctx);
    return planOrStageRemoval(ctx, await loadEngineState(ctx), name, options.scope);
  }
  return mutate(ctx, `marketplace remove ${name}`, async (m) => planOrStageRemoval(ctx, await loadEngineState(ctx), name, options.scope, m));
}

/** The removal's report; with a mutation `m`, its changes are staged too. */
async function planOrStageRemoval(ctx: MarketplaceContext, state: EngineState, name: string, scope: Scope | undefined, m?: Mutation): Promise<MarketplaceChangeReport> {
  const found = requireMarketplace(state, name, scope);
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
    await m.tx.stageJson(found.paths.marketplacesRegistry, { ...doc, marketplaces: left });
    await stageFolderRecords(m.tx, ctx, found.scope, found.paths.marketplacesRegistry, left);
    await m.step("marketplace:staged-registry");
  }
  return {
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
}
