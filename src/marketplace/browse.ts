/**
 * Read-only views of the registered marketplaces: `marketplace list`, and the plugins they offer
 * (`discover`, `search`).
 */
import { errorMessage } from "../core/errors.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { isRecord } from "../manifest/result.js";
import { recoverBeforeRead } from "../plugins/mutation.js";
import { catalogOriginOf, readCachedCatalog } from "./catalog.js";
import type { MarketplaceContext, Scope } from "./context.js";
import { allMarketplaces, catalogPathOf, loadEngineState, requireMarketplace } from "./state.js";

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

function rowOf(entry: MarketplaceEntry, scope: Scope): MarketplaceRow {
  return { name: entry.name, scope, sourceType: entry.sourceType, sourceUri: entry.sourceUri, catalogPath: entry.catalogPath, addedAt: entry.addedAt, updatedAt: entry.updatedAt };
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
  return (await offeredPlugins(ctx, name)).map(({ plugin }) => plugin);
}

/** `discoverPlugins` with each catalog entry's `tags`, which search also matches. */
async function offeredPlugins(ctx: MarketplaceContext, name?: string): Promise<{ plugin: OfferedPlugin; tags: readonly string[] }[]> {
  await recoverBeforeRead(ctx);
  const state = await loadEngineState(ctx);
  const seen = new Set<string>();
  const markets = name ? [requireMarketplace(state, name)] : allMarketplaces(state).filter((m) => (seen.has(m.entry.name) ? false : (seen.add(m.entry.name), true)));
  const out: { plugin: OfferedPlugin; tags: readonly string[] }[] = [];
  for (const found of markets) {
    const catalog = await readCachedCatalog(catalogPathOf(found), found.entry.name, catalogOriginOf(found.entry));
    for (const p of catalog.catalog.plugins) {
      const id = `${p.name}@${found.entry.name}`;
      const installed = ([["project", state.project], ["user", state.user]] as const).filter(([, s]) => s && Object.hasOwn(s.installed.plugins, id)).map(([scope]) => scope);
      const plugin: OfferedPlugin = {
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
      };
      out.push({ plugin, tags: p.tags ?? [] });
    }
  }
  return out;
}

/** Plugins whose name, description, keywords, tags or category contain every word of `query`. */
export async function searchPlugins(ctx: MarketplaceContext, query: string): Promise<OfferedPlugin[]> {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const matching = (await offeredPlugins(ctx)).filter(({ plugin: p, tags }) => {
    const text = [p.name, p.description ?? "", ...(p.keywords ?? []), ...tags, p.category ?? ""].join("\n").toLowerCase();
    return words.every((w) => text.includes(w));
  });
  return matching.map(({ plugin }) => plugin);
}

