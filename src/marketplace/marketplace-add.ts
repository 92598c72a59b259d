/**
 * `marketplace add`: fetch first (marketplace-cache.ts), then take the mutation (lock, recovery,
 * transaction), re-read the registry and re-check the name under the lock, and stage the new
 * cache folder and registry entry.
 */
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { claudeRefusesMarketplaceName, RESERVED_MARKETPLACE_NAMES } from "../manifest/marketplace-catalog.js";
import { nameSegmentProblem, suggestNameSegment } from "../manifest/names.js";
import { recoverBeforeRead } from "../plugins/mutation.js";
import { nowIso, scopePaths, assertScopeUsable, type MarketplaceContext, type Scope } from "./context.js";
import { mutate } from "./state.js";
import { readMarketplacesDoc, type MarketplacesDoc } from "./registry.js";
import { parseCatalogSource, type CatalogSourceSpec, type FetchedCatalog } from "./sources/index.js";
import { stageFolderRecords } from "./local-folders.js";
import { makeScratch } from "./tree.js";
import { assertCatalogAllowed, buildCacheDir, commitOf, fetchSource, fetchedReport, scratchNear, stageMarketplace, type MarketplaceChangeReport } from "./marketplace-cache.js";

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
export async function addFetched(
  ctx: MarketplaceContext,
  source: string,
  spec: CatalogSourceSpec,
  fetch: (scratch: string) => Promise<FetchedCatalog>,
  options: { name?: string; scope?: Scope; dryRun?: boolean },
): Promise<MarketplaceChangeReport> {
  const scope = options.scope ?? "user";
  assertScopeUsable(ctx, scope, "add a marketplace to the project (--scope project)");
  assertCatalogAllowed(spec, `marketplace add ${source}`);
  const scratch = await makeScratch("add", scratchNear(ctx));
  try {
    const fetched = await fetch(scratch.dir);
    const name = validName(options.name ?? fetched.loaded.catalog.name, source, spec);
    const paths = scopePaths(ctx, scope);
    const now = nowIso(ctx);
    const entry: MarketplaceEntry = { name, sourceType: spec.kind, sourceUri: spec.uri, catalogPath: path.join(paths.marketplaceCache, name, "marketplace.json"), addedAt: now, updatedAt: now, ...commitOf(fetched) };
    const report = await fetchedReport(fetched, spec, { op: "ADD", name, scope, dryRun: Boolean(options.dryRun), entry });
    if (options.dryRun) {
      await recoverBeforeRead(ctx);
      assertNameFree(await readMarketplacesDoc(paths.marketplacesRegistry), name, spec);
      return report;
    }
    const built = await buildCacheDir(fetched, scratch.dir);
    await mutate(ctx, `marketplace add ${name}`, async (m) => {
      const doc = await readMarketplacesDoc(paths.marketplacesRegistry);
      assertNameFree(doc, name, spec);
      await m.step("marketplace:fetched");
      await stageMarketplace(ctx, scope, { ...doc, marketplaces: [...doc.marketplaces, entry] }, built, entry, m.tx, m.step);
      await stageFolderRecords(m.tx, ctx, scope, paths.marketplacesRegistry, [...doc.marketplaces, entry], name);
    });
    return report;
  } finally {
    await scratch.dispose();
  }
}

function validName(name: string, source: string, spec: CatalogSourceSpec): string {
  const problem = nameSegmentProblem(name);
  if (problem) {
    throw new XcshToolsError("EMARKETPLACE_NAME", `Marketplace name "${name}" (from ${source}) is invalid: ${problem}`, { hint: `Pass --name ${suggestNameSegment(name) || "my-marketplace"}.`, exitCode: 2 });
  }
  // Claude Code (2.1.332) refuses these names for any marketplace not fetched from GitHub's
  // anthropics organization, a folder on disk included: ids made with them pass for Anthropic's.
  if (RESERVED_MARKETPLACE_NAMES.includes(name) && !fromAnthropicsGithub(spec)) {
    throw new XcshToolsError("EMARKETPLACE_RESERVED", `The name '${name}' (from ${source}) is reserved for official Anthropic marketplaces and can only be used with GitHub sources from the 'anthropics' organization`, {
      hint: `Pass --name <your-name> (e.g. --name ${name.replace(/^(claude|anthropic)-?/, "") || "my"}-local) to add it under a name of your own, or add Anthropic's marketplace from github.com/anthropics/. Nothing was added.`,
      exitCode: 2,
    });
  }
  // Claude Code (2.1.332) refuses the look-alikes of those names from any source (its catalog
  // schema does; found on gautam-achieveai/claude_plugins' "claude-plugins-marketplace").
  if (!RESERVED_MARKETPLACE_NAMES.includes(name) && claudeRefusesMarketplaceName(name)) {
    throw new XcshToolsError("EMARKETPLACE_RESERVED", `The name '${name}' (from ${source}) impersonates an official Anthropic marketplace: Claude Code refuses it, as we do`, {
      hint: `Pass --name <your-name> (e.g. --name ${suggestOwnName(name)}) to add it under a name of your own. Nothing was added.`,
      exitCode: 2,
    });
  }
  return name;
}

/** A name of the user's own for a catalog whose name passes for Anthropic's: the claude/anthropic/official words taken out. */
function suggestOwnName(name: string): string {
  const own = name.split(/[-_.]+/).filter((w) => !/^(claude|anthropic|official)$/i.test(w)).join("-").toLowerCase();
  return own && !claudeRefusesMarketplaceName(own) && !nameSegmentProblem(own) ? own : "my-marketplace";
}

/** Whether the catalog comes from a repository of github.com/anthropics/ (owner/repo shorthand or a github.com URL). */
function fromAnthropicsGithub(spec: CatalogSourceSpec): boolean {
  if (spec.kind === "github") return spec.uri.toLowerCase().startsWith("anthropics/");
  if (spec.kind !== "git") return false;
  try {
    const url = new URL(spec.uri.replace(/#.*$/, ""));
    return url.hostname.toLowerCase() === "github.com" && url.pathname.toLowerCase().startsWith("/anthropics/");
  } catch {
    return /^git@github\.com:anthropics\//i.test(spec.uri);
  }
}

/** `EMARKETPLACE_EXISTS` when the registry already has a marketplace called `name`. */
function assertNameFree(doc: MarketplacesDoc, name: string, spec: CatalogSourceSpec): void {
  const other = doc.marketplaces.find((m) => m.name === name);
  if (!other) return;
  throw new XcshToolsError("EMARKETPLACE_EXISTS", `Marketplace "${name}" is already registered (${other.sourceType} ${other.sourceUri})`, {
    hint: other.sourceUri === spec.uri ? `Run \`xcsh-tools marketplace update ${name}\` to refresh it.` : `Pass --name <other-name> to add this one beside it, or remove the existing one first.`,
  });
}
