/**
 * Loading what the marketplace engine works on, in one place: the marketplaces of both scopes
 * (project shadows user by name), the installed registries of both scopes, and the references of
 * every other project registry we have written (for cache GC). Reads are strict (registry.ts).
 *
 * This is the engine's one trust seam: the project scope is loaded only when the project is
 * trusted (`ctx.projectTrusted`); otherwise its files are not read at all, every command works on
 * the user scope alone, and `projectFilesNotLoaded` names what was left out for the report.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { didYouMean } from "../core/suggest.js";
import { confineCatalogPath } from "../core/state-places.js";
import type { MarketplaceEntry } from "../manifest/marketplaces-registry.js";
import type { ValidationIssue } from "../manifest/result.js";
import { runMutation, type Mutation } from "../plugins/mutation.js";
import { assertProjectScope, assertProjectTrusted, scopePaths, type MarketplaceContext, type Scope, type ScopePaths } from "./context.js";
import { readInstalledDoc, readMarketplacesDoc, readProjectList, referencedPaths, type InstalledDoc, type MarketplacesDoc } from "./registry.js";

/** One scope's files, loaded. */
export interface ScopeState {
  paths: ScopePaths;
  marketplaces: MarketplacesDoc;
  installed: InstalledDoc;
}

/** Everything loaded. `project` is absent where cwd is not a project (the home folder). */
export interface EngineState {
  user: ScopeState;
  project: ScopeState | undefined;
  warnings: ValidationIssue[];
}

/** A registered marketplace and its scope. */
export interface FoundMarketplace {
  scope: Scope;
  entry: MarketplaceEntry;
  paths: ScopePaths;
  /** Its index in the registry's `marketplaces` array (for messages). */
  index?: number;
}

function hasProjectScope(ctx: Pick<MarketplaceContext, "roots" | "cwd">): boolean {
  try {
    assertProjectScope(ctx);
    return true;
  } catch {
    return false;
  }
}

async function loadScope(ctx: MarketplaceContext, scope: Scope, warnings: ValidationIssue[]): Promise<ScopeState> {
  const paths = scopePaths(ctx, scope);
  return {
    paths,
    marketplaces: await readMarketplacesDoc(paths.marketplacesRegistry, warnings),
    installed: await readInstalledDoc(paths.installedPlugins, warnings),
  };
}

/** Load both scopes. */
export async function loadEngineState(ctx: MarketplaceContext): Promise<EngineState> {
  const warnings: ValidationIssue[] = [];
  const user = await loadScope(ctx, "user", warnings);
  const project = ctx.projectTrusted === true && hasProjectScope(ctx) ? await loadScope(ctx, "project", warnings) : undefined;
  return { user, project, warnings };
}

/** The project's marketplace files that exist but were not read because the project is not trusted. */
export function projectFilesNotLoaded(ctx: Pick<MarketplaceContext, "roots" | "cwd" | "projectTrusted">): string[] {
  if (ctx.projectTrusted === true || !hasProjectScope(ctx)) return [];
  const paths = scopePaths(ctx, "project");
  return [paths.marketplacesRegistry, paths.installedPlugins].filter((file) => existsSync(file));
}

/** The state of one scope; `EPROJECT_SCOPE` when project scope is asked for outside a project. */
export function scopeState(ctx: MarketplaceContext, state: EngineState, scope: Scope): ScopeState {
  if (scope === "user") return state.user;
  assertProjectTrusted(ctx, "use the project's marketplace plugins (--scope project)");
  return state.project!;
}

/** The marketplace `name`: in `scope`, or project first then user. */
export function findMarketplace(state: EngineState, name: string, scope?: Scope): FoundMarketplace | undefined {
  return allMarketplaces(state).find((m) => m.entry.name === name && (scope === undefined || m.scope === scope));
}

/** `findMarketplace`, or `EMARKETPLACE_NOT_FOUND` listing what is registered. */
export function requireMarketplace(state: EngineState, name: string, scope?: Scope): FoundMarketplace {
  const found = findMarketplace(state, name, scope);
  if (!found) {
    const names = allMarketplaces(state).map((m) => m.entry.name);
    throw new XcshToolsError("EMARKETPLACE_NOT_FOUND", `Marketplace "${name}" is not registered${scope ? ` in ${scope} scope` : ""}`, {
      hint: names.length > 0 ? `${didYouMean(name, names)}Registered: ${names.join(", ")}.` : "Add one with xcsh-tools marketplace add <source>.",
    });
  }
  return found;
}

/**
 * The catalog file of a registered marketplace, checked to be `<scope cache>/<name>/marketplace.json`
 * after resolving symlinks (core/state-places.ts): `EPATH_OUTSIDE` naming the registry and the
 * entry otherwise. Every read of a cached catalog, and every replacement or removal of its
 * folder, goes through here.
 */
export function catalogPathOf(found: FoundMarketplace): string {
  const file = found.paths.marketplacesRegistry;
  return confineCatalogPath(found.entry.catalogPath, found.entry.name, found.scope === "user" ? "user-catalog" : "project-catalog", found.paths.marketplaceCache, {
    file,
    field: `/marketplaces/${found.index ?? "?"}/catalogPath`,
  });
}

/** The cache folder of a registered marketplace (checked, see `catalogPathOf`). */
export function catalogDirOf(found: FoundMarketplace): string {
  return path.dirname(catalogPathOf(found));
}

/** Every registered marketplace, project first. */
export function allMarketplaces(state: EngineState): FoundMarketplace[] {
  const out: FoundMarketplace[] = [];
  for (const s of [state.project, state.user]) {
    if (!s) continue;
    s.marketplaces.marketplaces.forEach((entry, index) => out.push({ scope: s.paths.scope, entry, paths: s.paths, index }));
  }
  return out;
}

/**
 * The installPaths referenced by every project registry we have written other than the current
 * one; `undefined` (with a warning) when one cannot be read: then nothing may be deleted.
 */
export async function otherProjectReferences(ctx: MarketplaceContext, state: EngineState, warn: (message: string) => void): Promise<{ refs: Set<string> | undefined; list: string[] }> {
  let list: string[];
  try {
    list = await readProjectList(ctx);
  } catch (error) {
    warn(`Old cached plugin folders are kept: ${errorMessage(error)}`);
    return { refs: undefined, list: [] };
  }
  const current = state.project ? path.resolve(state.project.paths.installedPlugins) : undefined;
  const refs = new Set<string>();
  for (const file of list) {
    if (file === current || file === path.resolve(state.user.paths.installedPlugins)) continue;
    try {
      for (const p of referencedPaths(await readInstalledDoc(file))) refs.add(p);
    } catch (error) {
      warn(`Old cached plugin folders are kept because another project's registry cannot be read: ${errorMessage(error)}`);
      return { refs: undefined, list };
    }
  }
  return { refs, list };
}

/** Run `fn` as one locked, journaled mutation (the install engine's wrapper). */
export async function mutate<T>(ctx: MarketplaceContext, label: string, fn: (m: Mutation) => Promise<T>): Promise<T> {
  // Read-only check first: a malformed registry must fail before the lock creates our folders
  // (bad input changes nothing on disk). The state is read again under the lock.
  await loadEngineState(ctx);
  return runMutation(ctx, label, fn);
}
