/**
 * A marketplace's cache folder, as add and update make it: the source is fetched into scratch
 * (outside live state and outside the lock: network time must not hold other commands up), the
 * new cache folder `<cache>/<name>/` is built there (the clone's content without `.git`, or
 * nothing but the catalog) with the checked catalog at `<cache>/<name>/marketplace.json`
 * (`catalogPath`, the host's layout), and it is staged with the registry document under the
 * lock. The old cache is replaced only at commit, so a failed fetch or a name drift leaves the
 * last good catalog in place (in the host, a URL catalog was written before the duplicate
 * check).
 */
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { jsonText, lstatOrUndefined, movePath, removeTree } from "../core/atomic-fs.js";
import { isPathInside } from "../core/contain.js";
import { assertSourcesAllowed, catalogPolicySource } from "../core/policy.js";
import type { Transaction } from "../core/journal.js";
import { relativeSourceDir } from "../manifest/marketplace-catalog.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { xcshPaths } from "../core/paths.js";
import { scopePaths, type MarketplaceContext, type Scope } from "./context.js";
import type { MarketplacesDoc } from "./registry.js";
import { catalogSourceOf, type CatalogSourceSpec, type FetchedCatalog } from "./sources/index.js";
import { catalogPathOf } from "./state.js";
import { copyPluginTree } from "./tree.js";

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

/** Fetch a source into scratch: the checked catalog, plus the content to cache. */
export async function fetchSource(ctx: MarketplaceContext, spec: CatalogSourceSpec, scratch: string): Promise<FetchedCatalog> {
  assertCatalogAllowed(spec);
  return catalogSourceOf(spec.kind).fetch(spec, scratch, ctx);
}

/** The organization policy of a marketplace source: before anything of it is fetched or read. */
export function assertCatalogAllowed(spec: CatalogSourceSpec, subject = `marketplace ${spec.uri}`): void {
  assertSourcesAllowed([{ source: catalogPolicySource(spec.kind, spec.uri), what: "marketplace", subject }]);
}

/** Where a fetch's scratch goes: beside our journal, where the new cache is staged (see makeScratch). */
export function scratchNear(ctx: MarketplaceContext): string {
  return path.join(xcshPaths(ctx.roots).ours, "tmp");
}

/**
 * Build the new cache folder in scratch: clone content (no .git) + `marketplace.json`. A clone
 * made in this scratch becomes the cache by renaming it, so adding a big repository costs about
 * one `git clone` (bench/marketplace.js); content from elsewhere (Claude Code's copy, which is
 * only read) is copied. Symlinks stay as they are: every reader of the cache resolves and
 * confines them (plugin-sources/relative.ts, tree.ts).
 */
export async function buildCacheDir(fetched: FetchedCatalog, scratch: string): Promise<string> {
  const dir = path.join(scratch, "cache");
  if (fetched.contentDir && isPathInside(path.resolve(fetched.contentDir), path.resolve(scratch))) {
    await removeTree(path.join(fetched.contentDir, ".git"));
    await rename(fetched.contentDir, dir);
    // The repository may hold its own `marketplace.json` (or a link by that name): ours replaces it, never writes through it.
    await rm(path.join(dir, "marketplace.json"), { force: true, recursive: true });
  } else if (fetched.contentDir) await copyPluginTree(fetched.contentDir, dir);
  else await mkdir(dir);
  await writeFile(path.join(dir, "marketplace.json"), jsonText(fetched.loaded.catalog), { flag: "wx" });
  return dir;
}

/** The commit a git marketplace was fetched at, recorded for its in-repo plugins. */
export function commitOf(fetched: FetchedCatalog): { commitSha?: string } {
  return fetched.commitSha && /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(fetched.commitSha) ? { commitSha: fetched.commitSha } : {};
}

/**
 * The report of adding or updating to `fetched`: its plugins and warnings, plus a warning
 * (`ESOURCE_NOT_FOUND`) for each entry whose in-repo source folder is not in the fetched
 * repository, so adding a catalog whose plugins cannot be installed does not read as plain
 * success. Resolved as install resolves them (`relativeSourceDir`: Claude Code's rule).
 */
export async function fetchedReport(
  fetched: FetchedCatalog,
  spec: CatalogSourceSpec,
  base: Pick<MarketplaceChangeReport, "op" | "name" | "scope" | "dryRun" | "entry" | "changes">,
): Promise<MarketplaceChangeReport> {
  const { changes, ...head } = base;
  const plugins = fetched.loaded.catalog.plugins.map((p) => p.name);
  const report: MarketplaceChangeReport = { ...head, plugins, ...(changes ? { changes } : {}), warnings: fetched.loaded.warnings.map((w) => w.message) };
  const root = fetched.contentDir ?? (spec.kind === "local" ? spec.uri : undefined);
  if (!root) return report;
  const missing: string[] = [];
  for (const entry of fetched.loaded.catalog.plugins) {
    if (typeof entry.source !== "string") continue;
    const rel = relativeSourceDir(entry.source, fetched.loaded.catalog);
    const info = await lstatOrUndefined(path.join(root, rel)).catch(() => undefined);
    if (!info || !(info.isDirectory() || info.isSymbolicLink())) {
      missing.push(entry.name);
      report.warnings.push(`plugin "${entry.name}": its source "${entry.source}" (${rel}) does not exist in the marketplace repository; it cannot be installed (ESOURCE_NOT_FOUND)`);
    }
  }
  if (missing.length > 0) report.missingSources = missing;
  return report;
}

/** Stage the cache folder and the registry for marketplace `entry` in `scope`. */
export async function stageMarketplace(ctx: MarketplaceContext, scope: Scope, doc: MarketplacesDoc, cacheBuilt: string, entry: MarketplaceEntry, tx: Transaction, step: (n: string) => Promise<void>): Promise<void> {
  const paths = scopePaths(ctx, scope);
  // The folder replaced at commit: checked like every catalog path read back from a registry.
  const cacheDir = path.dirname(catalogPathOf({ scope, entry, paths, index: doc.marketplaces.findIndex((m) => m.name === entry.name) }));
  const slot = await tx.stage(cacheDir);
  await movePath(cacheBuilt, slot);
  await step("marketplace:staged-catalog");
  await tx.stageJson(paths.marketplacesRegistry, doc);
  await step("marketplace:staged-registry");
}
