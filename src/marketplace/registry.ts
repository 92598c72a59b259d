/**
 * The registry files of marketplaces, read strictly and written through the journal.
 *
 * - `marketplaces.json` (user: `~/.xcsh/marketplaces.json`; project: `<project>/.xcsh/marketplaces.json`)
 * - `installed_plugins.json` (user: `~/.xcsh/plugins/…`; project: `<project>/.xcsh/plugins/…`),
 *   the files the host's discovery reads
 * - `<ours>/marketplace-projects.json`: every project registry we have written, so that removing
 *   a cached plugin can check that no other project still uses it.
 *
 * The host treats a malformed registry as empty and overwrites it on its next write, losing every
 * entry; here a file that exists but does not parse or validate is `EREGISTRY_FILE`,
 * naming the file and the first problem, and nothing is written. Unknown keys are kept: the
 * documents are read as the file's own objects and only the fields we change are replaced.
 */
import path from "node:path";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import type { Transaction } from "../core/journal.js";
import { validateInstalledPlugins, type InstalledPluginEntry } from "../manifest/installed-plugins.js";
import { readCheckedJson, readJsonFile } from "../manifest/json-file.js";
import { validateMarketplacesRegistry, type MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import { isRecord, type ValidationIssue } from "../manifest/result.js";
import { projectListFile, type MarketplaceContext } from "./context.js";

/** `marketplaces.json` as held in memory (unknown keys of the file kept). */
export type MarketplacesDoc = { version: 1; marketplaces: MarketplaceEntry[] } & Record<string, unknown>;
/** `installed_plugins.json` as held in memory. */
export type InstalledDoc = { version: 2; plugins: Record<string, InstalledPluginEntry[]> } & Record<string, unknown>;

function registryError(file: string, message: string, hint: string, cause?: unknown, at?: string): XcshToolsError {
  return new XcshToolsError("EREGISTRY_FILE", message, {
    file,
    ...(at ? { path: at } : {}),
    hint,
    ...(cause === undefined ? {} : { cause }),
  });
}

const KEEP_HINT = "xcsh-tools never replaces a registry it cannot read: fix the file (or move it away to start empty), then retry; nothing was changed.";

/** Read a `marketplaces.json`; a missing file is an empty registry. */
export async function readMarketplacesDoc(file: string, warnings?: ValidationIssue[]): Promise<MarketplacesDoc> {
  const raw = await readCheckedJson(file, validateMarketplacesRegistry, { code: "EREGISTRY_FILE", hint: KEEP_HINT, ...(warnings ? { warnings } : {}) });
  return (raw as MarketplacesDoc | undefined) ?? { version: 1, marketplaces: [] };
}

/** Read an `installed_plugins.json`; a missing file is an empty registry. */
export async function readInstalledDoc(file: string, warnings?: ValidationIssue[]): Promise<InstalledDoc> {
  const raw = await readCheckedJson(file, (v) => validateInstalledPlugins(v), { code: "EREGISTRY_FILE", hint: KEEP_HINT, ...(warnings ? { warnings } : {}) });
  return (raw as InstalledDoc | undefined) ?? { version: 2, plugins: {} };
}

/** A registry with `id`'s entries replaced (removed when empty), other ids in their order. */
export function withEntries(doc: InstalledDoc, id: string, entries: InstalledPluginEntry[]): InstalledDoc {
  const plugins = { ...doc.plugins };
  if (entries.length === 0) delete plugins[id];
  else plugins[id] = entries;
  return { ...doc, plugins };
}

/** Every installPath a registry references. */
export function referencedPaths(doc: InstalledDoc): Set<string> {
  const out = new Set<string>();
  for (const entries of Object.values(doc.plugins)) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) if (isRecord(entry) && typeof entry.installPath === "string") out.add(path.resolve(entry.installPath));
  }
  return out;
}

/** The project registries we have written (absolute paths). */
export async function readProjectList(ctx: Pick<MarketplaceContext, "roots">): Promise<string[]> {
  const file = projectListFile(ctx);
  let raw: unknown;
  try {
    raw = await readJsonFile(file);
  } catch (error) {
    throw registryError(file, `${file}: ${errorMessage(error)}`, "This is xcsh-tools' own list of project registries; move it away and reinstall project plugins to rebuild it.", error);
  }
  if (raw === undefined) return [];
  if (!isRecord(raw) || raw.version !== 1 || !Array.isArray(raw.registries) || !raw.registries.every((r) => typeof r === "string" && path.isAbsolute(r))) {
    throw registryError(file, `${file} is not a list of project registries ({version: 1, registries: [absolute paths]})`, "Move it away; xcsh-tools rebuilds it as project plugins are installed.");
  }
  return raw.registries as string[];
}

/** The project list with `registry` added (undefined when it is already there). */
export function withProject(list: string[], registry: string): string[] | undefined {
  const resolved = path.resolve(registry);
  return list.includes(resolved) ? undefined : [...list, resolved];
}

/**
 * Record the project registry `registryFile` in the list of project registries, so that no
 * other command's cache clean-up deletes a folder it points at (marketplace-projects.json).
 */
export async function stageProjectRegistry(ctx: Pick<MarketplaceContext, "roots">, m: { tx: Transaction }, registryFile: string): Promise<void> {
  const list = withProject(await readProjectList(ctx), registryFile);
  if (list) await stageProjectList(m.tx, ctx, list);
}

/** Stage the project list. */
export function stageProjectList(tx: Transaction, ctx: Pick<MarketplaceContext, "roots">, list: string[]): Promise<void> {
  return tx.stageJson(projectListFile(ctx), { version: 1, registries: list });
}
