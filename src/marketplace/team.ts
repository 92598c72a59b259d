/**
 * What the team-set engine needs of this one (docs/design/team-sets.md (e)): a declared
 * marketplace fetched into scratch as if it were registered (its catalog checked by the same
 * readers, its cache folder built as `marketplace add` builds it), one of its plugins prepared
 * there (fetch, copy, hash, static checks: no code of it runs), and the install of prepared
 * plugins staged in a caller's transaction. Nothing here touches live state except through that
 * transaction, so a restore can verify every hash before it installs anything.
 */
import { rename, mkdir } from "node:fs/promises";
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import type { Mutation } from "../plugins/mutation.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { applyPluginPlan } from "./apply.js";
import { nowIso, scopePaths, type MarketplaceContext } from "./context.js";
import { buildCacheDir, commitOf, fetchSource } from "./marketplace-cache.js";
import type { PluginFrom } from "../manifest/team-lock.js";
import { preparePlugin, type PluginPin, type PreparedPlugin } from "./prepare.js";
import type { CatalogSourceSpec } from "./sources/index.js";
import type { FoundMarketplace } from "./state.js";

export type { PreparedPlugin } from "./prepare.js";
export { executableChangesOf } from "./plugins.js";
export type { CatalogSourceSpec } from "./sources/index.js";

/** A declared marketplace fetched into scratch, usable by `preparePlugin` as a registered one. */
export interface FetchedDeclaredMarketplace {
  found: FoundMarketplace;
  /** The commit the catalog came from (git kinds). */
  commit?: string;
  /** url catalogs: sha256 (hex) of the catalog's bytes. */
  sha256?: string;
}

/**
 * Fetch the marketplace `name` from `spec` into `scratch` (an empty folder of ours) and build its
 * cache folder there. `EMARKETPLACE_NAME_DRIFT` when the catalog calls itself otherwise: the
 * declaration's key is the name every teammate's registry records.
 */
export async function fetchDeclaredMarketplace(ctx: MarketplaceContext, name: string, spec: CatalogSourceSpec, scratch: string, declaredIn: string): Promise<FetchedDeclaredMarketplace> {
  const fetchDir = path.join(scratch, "fetch");
  await mkdir(fetchDir, { recursive: true });
  const fetched = await fetchSource(ctx, spec, fetchDir);
  if (fetched.loaded.catalog.name !== name) {
    throw new XcshToolsError("EMARKETPLACE_NAME_DRIFT", `${declaredIn}: /marketplaces/${name}: the catalog at ${spec.uri} is named "${fetched.loaded.catalog.name}" (expected "${name}")`, {
      file: declaredIn,
      path: `/marketplaces/${name}`,
      hint: `Rename the key to "${fetched.loaded.catalog.name}" (and its plugins' ids) in ${path.basename(declaredIn)}, or point the source at the catalog named "${name}".`,
    });
  }
  const built = await buildCacheDir(fetched, fetchDir);
  // The layout `catalogPathOf` confines a registered marketplace's catalog to: `<cache>/<name>/marketplace.json`.
  const cache = path.join(scratch, "marketplaces");
  await mkdir(cache, { recursive: true });
  await rename(built, path.join(cache, name));
  const now = nowIso(ctx);
  const commit = commitOf(fetched);
  const entry: MarketplaceEntry = { name, sourceType: spec.kind, sourceUri: spec.uri, catalogPath: path.join(cache, name, "marketplace.json"), addedAt: now, updatedAt: now, ...commit };
  return { found: { scope: "project", entry, paths: { ...scopePaths(ctx, "project"), marketplaceCache: cache } }, ...(commit.commitSha ? { commit: commit.commitSha } : {}), ...(fetched.sha256 ? { sha256: fetched.sha256 } : {}) };
}

/**
 * The name the catalog at `spec` gives itself (fetched into `scratch`, an empty folder of ours):
 * `marketplace add --scope project` declares the marketplace under it, as the registry would.
 */
export async function catalogNameOf(ctx: MarketplaceContext, spec: CatalogSourceSpec, scratch: string): Promise<string> {
  return (await fetchSource(ctx, spec, scratch)).loaded.catalog.name;
}

/**
 * Prepare `plugin` of a fetched declared marketplace in `scratch` (static checks only: nothing of
 * it runs); its source pinned as the lock's `from` says (a git commit, an npm version and
 * integrity, an archive's sha256) rather than where the catalog's source points now.
 */
export function prepareDeclaredPlugin(ctx: MarketplaceContext, market: FetchedDeclaredMarketplace, plugin: string, scratch: string, from?: PluginFrom): Promise<PreparedPlugin> {
  // A declared folder marketplace lives in the project checkout and the lock pins its plugins by
  // content: the checkout's commit would change the generated registry at every commit.
  return preparePlugin(ctx, market.found, plugin, scratch, { ...(from ? { pin: pinOf(from) } : {}), folderCommit: false });
}

function pinOf(from: PluginFrom): PluginPin | undefined {
  switch (from.kind) {
    case "relative":
      return undefined;
    case "npm":
      return { version: from.version, integrity: from.integrity };
    case "archive":
      return { sha256: from.sha256 };
    default:
      return { commit: from.commit };
  }
}

/**
 * Stage the cache folders of `prepared` (content-keyed: a folder already there with the same
 * hash is kept) in the caller's transaction; the registries are the caller's (generated whole).
 */
export async function stagePreparedPlugins(ctx: MarketplaceContext, m: Mutation, prepared: readonly PreparedPlugin[]): Promise<void> {
  await applyPluginPlan(ctx, m, { items: [], writes: [], cacheRemovals: [], cacheKept: [] }, prepared.map((p) => ({ dir: p.cacheDir, from: p.copy, hash: p.hash })), undefined);
}

