/**
 * Reading a marketplace catalog: `.xcsh-plugin/marketplace.json`, falling back to Claude Code's
 * `.claude-plugin/marketplace.json` (docs/file-formats.md), checked by the one catalog validator
 * (`validateMarketplaceCatalog`).
 *
 * What is fatal and what is not. A catalog-level problem (no name, no owner, `plugins` not an
 * array) rejects the catalog. Two entries with one name reject it too, naming both positions:
 * the host silently installed the first and a user could never reach the second. A
 * single bad entry (unknown source kind, bad name) is skipped and reported as a warning the CLI
 * shows (the host only logged it), so one typo does not take a whole marketplace away. The
 * skipped entries are remembered (`skipped`), so installing one says why it cannot be installed.
 *
 * Where a catalog came from decides whether its entries may name local git URLs (`file://`,
 * paths): only a catalog read from the local disk (a folder marketplace, or a clone of a local
 * repository) may; one fetched from a remote may not (`CatalogOrigin`).
 */
import path from "node:path";
import { XcshToolsError, isXcshToolsError } from "../core/errors.js";
import { parseJsonText, readJsonText } from "../manifest/json-file.js";
import { isLocalGitUrl } from "../core/source-args.js";
import { validateMarketplaceCatalog, type MarketplaceCatalog, type MarketplacePluginEntry } from "../manifest/marketplace-catalog.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { isRecord, type ValidationIssue } from "../manifest/result.js";
import { lstatOrUndefined } from "../core/atomic-fs.js";

/** Which format a catalog is in. */
export type CatalogFlavour = "xcsh" | "claude";

/** A checked catalog. */
export interface LoadedCatalog {
  /** The catalog with only the valid entries. */
  catalog: MarketplaceCatalog;
  file: string;
  flavour: CatalogFlavour;
  /** Skipped entries and other non-fatal findings. */
  warnings: ValidationIssue[];
  /** The entries left out, by name (when they have one), with the first reason. */
  skipped?: { index: number; name: string | undefined; issue: ValidationIssue }[];
}

/** Where a catalog came from: `allowLocal` when from the local disk (its entries may name local git URLs). */
export interface CatalogOrigin {
  allowLocal: boolean;
}

/** The origin of a registered marketplace's catalog (or of a source about to be added). */
export function catalogOriginOf(source: Pick<MarketplaceEntry, "sourceType" | "sourceUri">): CatalogOrigin {
  if (source.sourceType === "local") return { allowLocal: true };
  if (source.sourceType === "git") {
    const hash = source.sourceUri.lastIndexOf("#");
    return { allowLocal: isLocalGitUrl(hash > 0 ? source.sourceUri.slice(0, hash) : source.sourceUri) };
  }
  return { allowLocal: false };
}

/** The catalog files of a repository, in the order they are looked for. */
export const CATALOG_LOCATIONS: { rel: string; flavour: CatalogFlavour }[] = [
  { rel: path.join(".xcsh-plugin", "marketplace.json"), flavour: "xcsh" },
  { rel: path.join(".claude-plugin", "marketplace.json"), flavour: "claude" },
];

/** The catalog file of a repository folder, if it has one. */
export async function findCatalogFile(dir: string): Promise<{ file: string; flavour: CatalogFlavour } | undefined> {
  for (const { rel, flavour } of CATALOG_LOCATIONS) {
    const file = path.join(dir, rel);
    if ((await lstatOrUndefined(file))?.isFile()) return { file, flavour };
  }
  return undefined;
}

/** Check a parsed catalog; throws `ECATALOG_INVALID` or `EDUPLICATE_PLUGIN`. */
export function checkCatalog(value: unknown, file: string, flavour: CatalogFlavour, origin: CatalogOrigin = { allowLocal: false }): LoadedCatalog {
  // Reserved names are Claude Code's policy, not ours: check as xcsh (a warning) for both flavours.
  const result = validateMarketplaceCatalog(value, { flavour: "xcsh", allowLocalSources: origin.allowLocal });
  const warnings = [...result.warnings];
  const bad = new Set<number>();
  const skipped: NonNullable<LoadedCatalog["skipped"]> = [];
  for (const issue of result.ok ? [] : result.issues) {
    if (issue.code === "EDUPLICATE_PLUGIN") {
      throw new XcshToolsError("EDUPLICATE_PLUGIN", `${file}: ${issue.message}`, { file, path: issue.path, hint: issue.hint ?? "Remove or rename one of the two entries.", exitCode: 2 });
    }
    const index = /^\/plugins\/(\d+)(\/|$)/.exec(issue.path)?.[1];
    if (index === undefined) {
      throw new XcshToolsError("ECATALOG_INVALID", `${file}: ${issue.message}`, { file, path: issue.path, hint: issue.hint ?? `Fix the catalog (xcsh-tools validate --static ${file} shows every problem).`, exitCode: 2 });
    }
    if (!bad.has(Number(index))) {
      const entry = isRecord(value) && Array.isArray(value.plugins) ? value.plugins[Number(index)] : undefined;
      const name = isRecord(entry) && typeof entry.name === "string" ? entry.name : undefined;
      skipped.push({ index: Number(index), name, issue });
    }
    bad.add(Number(index));
    warnings.push({ ...issue, message: `${issue.message} (${issue.code}); this plugin entry is skipped` });
  }
  const catalog = value as MarketplaceCatalog;
  const plugins = catalog.plugins.filter((_, i) => !bad.has(i)) as MarketplacePluginEntry[];
  return { catalog: { ...catalog, plugins }, file, flavour, warnings, ...(skipped.length > 0 ? { skipped } : {}) };
}


/** Parse and check catalog text. */
export function parseCatalog(text: string, file: string, flavour: CatalogFlavour, origin: CatalogOrigin = { allowLocal: false }): LoadedCatalog {
  let value: unknown;
  try {
    value = parseJsonText(text, file);
  } catch (error) {
    throw new XcshToolsError("ECATALOG_INVALID", (error as Error).message, { file, hint: "Fix the JSON syntax of the catalog.", cause: error, exitCode: 2 });
  }
  return checkCatalog(value, file, flavour, origin);
}

/** A catalog file's text; too large or not a regular file is `ECATALOG_INVALID` (exit 2), as a catalog that is not JSON. */
function readCatalogText(file: string): string | undefined {
  try {
    return readJsonText(file);
  } catch (error) {
    if (!isXcshToolsError(error) || error.code === "EREAD") throw error;
    throw new XcshToolsError("ECATALOG_INVALID", error.message, { file, hint: error.hint ?? "Fix the catalog.", cause: error, exitCode: 2 });
  }
}

/** Read the catalog of a repository folder; `ECATALOG_NOT_FOUND` when it has none. */
export async function readCatalogIn(dir: string, what: string, origin: CatalogOrigin = { allowLocal: false }): Promise<LoadedCatalog> {
  const found = await findCatalogFile(dir);
  if (!found) {
    throw new XcshToolsError("ECATALOG_NOT_FOUND", `${what} has no marketplace catalog (.xcsh-plugin/marketplace.json or .claude-plugin/marketplace.json)`, {
      file: dir,
      hint: "Point at the root of a marketplace repository: the folder that holds .xcsh-plugin/ or .claude-plugin/.",
    });
  }
  return parseCatalog(readCatalogText(found.file) ?? "", found.file, found.flavour, origin);
}

/** Read a cached catalog (`catalogPath`); `ECATALOG_NOT_FOUND` with an update hint when missing. */
export async function readCachedCatalog(file: string, marketplace: string, origin: CatalogOrigin = { allowLocal: false }): Promise<LoadedCatalog> {
  let text: string;
  try {
    const read = readCatalogText(file);
    if (read === undefined) throw Object.assign(new Error(`${file} does not exist`), { code: "ENOENT" });
    text = read;
  } catch (error) {
    if (isXcshToolsError(error)) throw error;
    throw new XcshToolsError("ECATALOG_NOT_FOUND", `The cached catalog of marketplace "${marketplace}" is missing (${file})`, {
      file,
      hint: `Run \`xcsh-tools marketplace update ${marketplace}\` to fetch it again.`,
      cause: error,
    });
  }
  return parseCatalog(text, file, "xcsh", origin);
}
