/**
 * Claude Code's marketplaces: `marketplace list --claude` reads its
 * `~/.claude/plugins/known_marketplaces.json` (never written), and `import-claude` adds them to
 * xcsh, from Claude Code's own copy when it has one.
 */
import path from "node:path";
import { XcshToolsError, errorMessage, errorSummary } from "../core/errors.js";
import { isRealPathInside } from "../core/contain.js";
import { isInPlace, placeOf } from "../core/state-places.js";
import { sourceArgHint } from "../core/source-args.js";
import { claudeSourceProblem, validateKnownMarketplaces, type KnownMarketplace } from "../manifest/known-marketplaces.js";
import { readJsonFile } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import { catalogOriginOf, findCatalogFile, readCatalogIn } from "./catalog.js";
import { xcshPaths } from "../core/paths.js";
import { assertScopeUsable, type MarketplaceContext, type Scope } from "./context.js";
import { parseCatalogSource, type CatalogSourceSpec, type FetchedCatalog } from "./sources/index.js";
import { allMarketplaces, loadEngineState } from "./state.js";
import { addFetched, addMarketplace } from "./marketplace-add.js";

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
  const file = xcshPaths(ctx.roots).claudeKnownMarketplaces;
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
      out.push({ name: row.name, status: "failed", source: row.importable, error: errorSummary(error) });
    }
  }
  if (options.names) {
    for (const name of options.names) if (!rows.some((r) => r.name === name)) out.push({ name, status: "failed", error: { code: "EMARKETPLACE_NOT_FOUND", message: `Claude Code knows no marketplace "${name}"`, hint: "`xcsh-tools marketplace list --claude` shows them." } });
  }
  return out;
}
