/**
 * Marketplace plugins through the shared commands: install `name@marketplace`, uninstall,
 * enable, disable, update, outdated, list — in user scope (`~/.xcsh/plugins/installed_plugins.json`)
 * or project scope (`<project>/.xcsh/plugins/installed_plugins.json`), the files the host's
 * discovery reads. A project install of an id shadows the user's (discovery's rule).
 *
 * Each mutation: (dry run: recover, read, plan, return) — or `runMutation` (lock, recover,
 * transaction): read the registries under the lock, prepare every plugin in scratch (fetch, copy,
 * hash, static checks), ask consent for what it runs, then import its tool modules (never on a
 * dry run: prepare.ts `importPreparedTools`), plan (plan.ts, pure), stage (apply.ts), commit. Updates prepare each plugin
 * on its own so one broken plugin does not block the others; it is reported as failed.
 */
import { mkdir } from "node:fs/promises";
import { assertNoneRequired } from "../core/policy.js";
import path from "node:path";
import { semver } from "../core/npm-spec.js";
import { XcshToolsError, errorSummary, isXcshToolsError } from "../core/errors.js";
import { didYouMean } from "../core/suggest.js";
import { confineStatePath } from "../core/state-places.js";
import { mayNameMarketplacePlugin, splitPluginId } from "../manifest/installed-plugins.js";
import { nameSegmentProblem, pluginIdProblem } from "../manifest/names.js";
import { recoverBeforeRead, type Mutation } from "../plugins/mutation.js";
import { applyPluginPlan, type CacheAdd } from "./apply.js";
import { xcshPaths } from "../core/paths.js";
import { assertScopeUsable, nowIso, type MarketplaceContext, type Scope } from "./context.js";
import { entriesOf, finishPlan, planInstall, planRemove, planSetEnabled, startPlan, type PlanItem, type PluginPlan, type WorkingSet } from "./plan.js";
import { pluginSourceOf, type Revision } from "./plugin-sources/index.js";
import { assertMarketplaceAllowed, assertMarketplacePluginAllowed, catalogEntry, catalogOf, fetchCopy, hashOfCacheDir, importPreparedTools, preparePlugin, relativeRootOf, type PreparedPlugin } from "./prepare.js";
import { withProject } from "./registry.js";
import { findMarketplace, loadEngineState, mutate, otherProjectReferences, scopeState, type EngineState } from "./state.js";
import { makeScratch } from "./tree.js";
import { scratchNear } from "./marketplace-cache.js";
import { scanPluginComponents } from "../components/scan.js";
import { diffExecutables, executablesOf, hasChanges } from "../components/consent.js";

/** The result of a plugin mutation. */
export interface PluginChangeReport {
  dryRun: boolean;
  items: PlanItem[];
  cacheAdded: string[];
  cacheRemoved: string[];
  /** Unreferenced folders kept because another registry could not be read. */
  cacheKept: string[];
  failed: { id: string; scope?: Scope; error: { code: string; message: string; hint?: string } }[];
  warnings: string[];
}

/** `name@marketplace` split, or `undefined` when it is not of that form. */
export function parseMarketplaceSpec(spec: string): { plugin: string; marketplace: string } | undefined {
  if (spec.startsWith("@")) return undefined; // scoped npm package
  const split = splitPluginId(spec);
  if (!split || nameSegmentProblem(split.plugin) || nameSegmentProblem(split.marketplace)) return undefined;
  // `pkg@1.0.0`, `pkg@^1`, `pkg@2` are npm versions and ranges, whatever is registered.
  if (semver.valid(split.marketplace) || semver.validRange(split.marketplace)) return undefined;
  return split;
}

/** What `isMarketplaceTarget` needs to know (see `loadMarketplaceTargets`). */
export interface MarketplaceTargets {
  marketplaces: ReadonlySet<string>;
  installedIds: ReadonlySet<string>;
}

/**
 * True when `spec` means a marketplace plugin: `name@marketplace` where the marketplace is
 * registered (either scope) or the id is installed. Scoped names and `pkg@<version|range>` are npm.
 */
export function isMarketplaceTarget(spec: string, targets: MarketplaceTargets): boolean {
  if (!mayNameMarketplacePlugin(spec)) return false;
  const split = parseMarketplaceSpec(spec);
  if (!split) {
    // `Hello@acme`, `-x-@acme`, `hello@ACME` with acme registered: meant for the marketplace,
    // and refused there with EPLUGIN_ID (as an npm spec it would go to the registry and come
    // back as a confusing EREGISTRY or ENOT_FOUND).
    const market = spec.slice(spec.lastIndexOf("@") + 1);
    if (semver.valid(market) || semver.validRange(market)) return false;
    return targets.marketplaces.has(market.toLowerCase());
  }
  return targets.marketplaces.has(split.marketplace) || targets.installedIds.has(spec);
}

/** The registered marketplace names and installed ids (reads only; never throws on a missing file). */
export async function loadMarketplaceTargets(ctx: MarketplaceContext): Promise<MarketplaceTargets> {
  const state = await loadEngineState(ctx);
  const marketplaces = new Set<string>();
  const installedIds = new Set<string>();
  for (const s of [state.user, state.project]) {
    if (!s) continue;
    for (const m of s.marketplaces.marketplaces) marketplaces.add(m.name);
    for (const id of Object.keys(s.installed.plugins)) installedIds.add(id);
  }
  return { marketplaces, installedIds };
}

function requireSpec(spec: string): { plugin: string; marketplace: string } {
  const split = parseMarketplaceSpec(spec);
  if (!split) {
    const problem = pluginIdProblem(spec);
    if (problem && spec.lastIndexOf("@") > 0) {
      throw new XcshToolsError("EPLUGIN_ID", `"${spec.length > 140 ? `${spec.slice(0, 140)}…` : spec}" is not a valid plugin id: ${problem}`, { hint: "Marketplace plugins are named plugin@marketplace in lowercase kebab-case, e.g. hello@acme (`xcsh-tools marketplace discover` lists them).", exitCode: 2 });
    }
    throw new XcshToolsError("EUSAGE", `"${spec}" is not name@marketplace`, { hint: "Marketplace plugins are named plugin@marketplace, e.g. hello@acme.", exitCode: 2 });
  }
  return split;
}

function workingSet(ctx: MarketplaceContext, state: EngineState): WorkingSet {
  return startPlan(
    { user: state.user.installed, ...(state.project ? { project: state.project.installed } : {}) },
    { user: state.user.paths.installedPlugins, ...(state.project ? { project: state.project.paths.installedPlugins } : {}) },
    xcshPaths(ctx.roots).pluginCache,
  );
}

interface Built {
  plan: PluginPlan;
  adds: CacheAdd[];
  projectList: string[] | undefined;
  failed: PluginChangeReport["failed"];
  warnings: string[];
}

/**
 * Run a plugin change: `build` reads the state and plans. Dry run: no lock, nothing written
 * (recovery first, only if a journal is pending), scratch in our tmp folder. Otherwise inside one
 * mutation, scratch inside its transaction folder: a killed run's fetched copy goes with the
 * transaction at the next command's recovery, like everything else it staged.
 */
async function runPluginChange(
  ctx: MarketplaceContext,
  label: string,
  dryRun: boolean,
  build: (state: EngineState, scratch: string, step: (name: string) => Promise<void>) => Promise<Built>,
): Promise<PluginChangeReport> {
  const report = (built: Built): PluginChangeReport => ({
    dryRun,
    items: built.plan.items,
    cacheAdded: [...new Set(built.adds.filter((a) => built.plan.items.some((i) => i.to?.installPath === a.dir && i.op !== "NOOP")).map((a) => a.dir))],
    cacheRemoved: built.plan.cacheRemovals,
    cacheKept: built.plan.cacheKept,
    failed: built.failed,
    warnings: built.warnings,
  });
  if (dryRun) {
    const scratch = await makeScratch("mkt", scratchNear(ctx));
    try {
      await recoverBeforeRead(ctx);
      const state = await loadEngineState(ctx);
      return report(await build(state, scratch.dir, async () => undefined));
    } finally {
      await scratch.dispose();
    }
  }
  return mutate(ctx, label, async (m: Mutation) => {
    const scratch = path.join(m.tx.dir, "scratch");
    await mkdir(scratch, { recursive: true, mode: 0o700 });
    const state = await loadEngineState(ctx);
    const built = await build(state, scratch, m.step);
    if (built.plan.items.some((i) => i.op !== "NOOP") || built.plan.cacheRemovals.length > 0) {
      await applyPluginPlan(ctx, m, built.plan, built.adds, built.projectList);
    }
    return report(built);
  });
}

async function finish(ctx: MarketplaceContext, state: EngineState, ws: WorkingSet, warnings: string[]): Promise<{ plan: PluginPlan; projectList: string[] | undefined }> {
  const others = await otherProjectReferences(ctx, state, (w) => warnings.push(w));
  const plan = finishPlan(ws, { pluginCache: xcshPaths(ctx.roots).pluginCache, otherReferences: others.refs });
  let projectList: string[] | undefined;
  if (state.project && ws.changed.has("project") && others.refs !== undefined) projectList = withProject(others.list, state.project.paths.installedPlugins);
  return { plan, projectList };
}

/**
 * What the prepared plugin runs that the installed version at `previousRoot` (a new install:
 * nothing) did not: the `changes` of an `ExecutableRequest`.
 */
export function executableChangesOf(ctx: Pick<MarketplaceContext, "roots" | "cwd">, prepared: Pick<PreparedPlugin, "copy" | "cacheDir">, previousRoot: string | undefined): ReturnType<typeof diffExecutables> {
  const after = executablesOf(scanPluginComponents(prepared.copy, { rootKind: "xcsh-marketplace", rootAs: prepared.cacheDir }).components, { as: prepared.cacheDir });
  let before: ReturnType<typeof executablesOf> = [];
  if (previousRoot) {
    try {
      const real = confineStatePath("xcsh-install", previousRoot, { roots: ctx.roots, cwd: ctx.cwd }, {});
      before = executablesOf(scanPluginComponents(real, { rootKind: "xcsh-marketplace", rootAs: previousRoot }).components, { as: previousRoot });
    } catch {
      // An installed path outside the cache is not read; everything counts as new.
    }
  }
  return diffExecutables(before, after);
}

/**
 * Ask `ctx.approveExecutables` when the prepared plugin adds or changes what it runs, compared
 * with the installed version at `previousRoot` (a new install: with nothing). Throws to refuse.
 */
async function approveExecutables(ctx: MarketplaceContext, prepared: PreparedPlugin, scope: Scope, previousRoot: string | undefined, dryRun: boolean): Promise<void> {
  if (!ctx.approveExecutables) return;
  const changes = executableChangesOf(ctx, prepared, previousRoot);
  if (!hasChanges(changes)) return;
  await ctx.approveExecutables({ id: prepared.id, version: prepared.version, source: "marketplace", scope, update: previousRoot !== undefined, dryRun, changes });
}

function addOf(prepared: PreparedPlugin): CacheAdd {
  return { dir: prepared.cacheDir, from: prepared.copy, hash: prepared.hash };
}

/** A plugin to install: asked for by name, or (`wantedBy`) a dependency of another, maybe with a version range. */
interface Queued {
  plugin: string;
  marketplace: string;
  wantedBy?: string;
  range?: string;
}

/** Claude Code's warning for a dependency no added marketplace lists; the install goes on without it. */
function missingDependency(wantedBy: string, id: string): string {
  return `${wantedBy}: WDEPENDENCY_MISSING dependency "${id}" was not installed (no marketplace you have added lists it); ${wantedBy} may not work without it. Add the marketplace that has it, then \`xcsh-tools install ${id}\``;
}

/** Install `name@marketplace` specs into `scope`. */
export async function installFromMarketplace(
  ctx: MarketplaceContext,
  specs: string[],
  options: { scope?: Scope; dryRun?: boolean } = {},
): Promise<PluginChangeReport> {
  const scope = options.scope ?? "user";
  assertScopeUsable(ctx, options.scope, "install plugins into the project (--scope project)");
  const parsed = specs.map(requireSpec);
  return runPluginChange(ctx, `install ${specs.join(" ")}`, Boolean(options.dryRun), async (state, scratch, step) => {
    scopeState(ctx, state, scope);
    const ws = workingSet(ctx, state);
    const adds: CacheAdd[] = [];
    const warnings: string[] = [];
    // The plugins asked for, then the dependencies their plugin.json declare (Claude Code installs
    // those too, marked `auto`), each once; one already installed in the scope is left as it is.
    const queue: Queued[] = parsed.map((p) => ({ ...p }));
    const queued = new Set(queue.map((q) => `${q.plugin}@${q.marketplace}`));
    for (const [i, { plugin, marketplace, wantedBy, range }] of queue.entries()) {
      const found = findMarketplace(state, marketplace);
      if (!found && wantedBy) {
        warnings.push(missingDependency(wantedBy, `${plugin}@${marketplace}`));
        continue;
      }
      if (!found) {
        throw new XcshToolsError("EMARKETPLACE_NOT_FOUND", `Marketplace "${marketplace}" is not registered`, { hint: "Add it first: xcsh-tools marketplace add <source>; `marketplace list` shows what is registered." });
      }
      let prepared: PreparedPlugin;
      try {
        prepared = await preparePlugin(ctx, found, plugin, path.join(scratch, String(i)));
      } catch (error) {
        if (!wantedBy || !isXcshToolsError(error, "EPLUGIN_NOT_FOUND")) throw error;
        warnings.push(missingDependency(wantedBy, `${plugin}@${marketplace}`));
        continue;
      }
      await step("marketplace:prepared");
      if (wantedBy && range && semver.valid(prepared.version) && !semver.satisfies(prepared.version, range)) {
        warnings.push(`${prepared.id}: WDEPENDENCY_RANGE ${wantedBy} asks for ${prepared.plugin}@${range}, but marketplace "${marketplace}" has ${prepared.version}: installed as the catalog has it (as Claude Code does); ${wantedBy} may not work with it`);
      }
      for (const dep of prepared.dependencies) {
        const id = `${dep.name}@${dep.marketplace}`;
        if (queued.has(id) || entriesOf(ws, scope, id).length > 0) continue;
        if (dep.foreign) {
          warnings.push(`${prepared.id}: WDEPENDENCY_FOREIGN dependency "${id}" was not installed: marketplace "${marketplace}" does not allow dependencies on "${dep.marketplace}" (its catalog's allowCrossMarketplaceDependenciesOn), as in Claude Code. Install it yourself if you trust it: \`xcsh-tools install ${id}\``);
          continue;
        }
        queued.add(id);
        queue.push({ plugin: dep.name, marketplace: dep.marketplace, wantedBy: prepared.id, ...(dep.range ? { range: dep.range } : {}) });
      }
      await approveExecutables(ctx, prepared, scope, ws.docs[scope]?.plugins[prepared.id]?.[0]?.installPath, Boolean(options.dryRun));
      await importPreparedTools(prepared, Boolean(options.dryRun));
      warnings.push(...prepared.warnings.map((w) => `${prepared.id}: ${w}`));
      planInstall(ws, scope, prepared.id, { version: prepared.version, installPath: prepared.cacheDir, ...(prepared.gitCommitSha ? { gitCommitSha: prepared.gitCommitSha } : {}) }, {
        now: nowIso(ctx),
        ...(prepared.defaultEnabled === false ? { defaultEnabled: false } : {}),
        ...(prepared.renamedFrom ? { reason: `install ${prepared.version} (renamed from ${prepared.renamedFrom}@${marketplace})` } : {}),
        ...(wantedBy ? { auto: true, reason: `install ${prepared.version} (a dependency of ${wantedBy})` } : {}),
      });
      adds.push(addOf(prepared));
    }
    const { plan, projectList } = await finish(ctx, state, ws, warnings);
    return { plan, adds, projectList, failed: [], warnings };
  });
}

/** Which scope holds `id`: the asked one, or the only one; `EAMBIGUOUS_SCOPE` when both. */
function resolveScope(state: EngineState, ws: WorkingSet, id: string, scope: Scope | undefined, verb: string): Scope {
  const has = (s: Scope) => (s === "project" && !state.project ? false : (ws.docs[s]?.plugins[id]?.length ?? 0) > 0);
  if (scope) {
    if (!has(scope)) throw new XcshToolsError("ENOT_INSTALLED", `${id} is not installed in ${scope} scope`, { hint: `${didYouMean(id, installedIdsOf(ws, [scope]))}\`xcsh-tools list\` shows where it is installed.` });
    return scope;
  }
  if (has("project") && has("user")) {
    throw new XcshToolsError("EAMBIGUOUS_SCOPE", `${id} is installed in both user and project scope`, { hint: `Say which one to ${verb}: --scope user or --scope project.`, exitCode: 2 });
  }
  if (has("project")) return "project";
  if (has("user")) return "user";
  throw new XcshToolsError("ENOT_INSTALLED", `${id} is not installed`, { hint: `${didYouMean(id, installedIdsOf(ws, ["user", "project"]))}\`xcsh-tools list\` shows the installed plugins.` });
}

/** The ids installed in `scopes` of the working set (the candidates of "did you mean"). */
function installedIdsOf(ws: WorkingSet, scopes: readonly Scope[]): string[] {
  return scopes.flatMap((s) => Object.keys(ws.docs[s]?.plugins ?? {}).filter((id) => entriesOf(ws, s, id).length > 0));
}

/** Uninstall ids; cache folders go only when no registry of any scope references them. */
export async function uninstallMarketplacePlugin(ctx: MarketplaceContext, ids: string[], options: { scope?: Scope; dryRun?: boolean } = {}): Promise<PluginChangeReport> {
  assertScopeUsable(ctx, options.scope, "uninstall the project's plugins (--scope project)");
  for (const id of ids) requireSpec(id);
  assertNoneRequired(ids, "uninstall");
  return runPluginChange(ctx, `uninstall ${ids.join(" ")}`, Boolean(options.dryRun), async (state) => {
    const ws = workingSet(ctx, state);
    for (const id of ids) planRemove(ws, resolveScope(state, ws, id, options.scope, "uninstall"), id);
    const warnings: string[] = [];
    const { plan, projectList } = await finish(ctx, state, ws, warnings);
    return { plan, adds: [], projectList, failed: [], warnings };
  });
}

/**
 * Plan the uninstall of every install of marketplace `name` in `scopes`, as `marketplace remove`
 * does (Claude Code uninstalls a removed marketplace's plugins too). Applied by the caller inside
 * its own transaction, so the marketplace and its plugins go together or not at all.
 */
export async function planMarketplaceUninstall(ctx: MarketplaceContext, state: EngineState, name: string, scopes: readonly Scope[]): Promise<{ plan: PluginPlan; projectList: string[] | undefined; warnings: string[] }> {
  const ws = workingSet(ctx, state);
  for (const scope of scopes) {
    for (const id of Object.keys(ws.docs[scope]?.plugins ?? {})) {
      if (splitPluginId(id)?.marketplace !== name || entriesOf(ws, scope, id).length === 0) continue;
      assertNoneRequired([id], "uninstall");
      planRemove(ws, scope, id);
    }
  }
  const warnings: string[] = [];
  const { plan, projectList } = await finish(ctx, state, ws, warnings);
  return { plan, projectList, warnings };
}

/** Enable or disable ids (every entry of the id in its scope). */
export async function setMarketplacePluginEnabled(ctx: MarketplaceContext, ids: string[], enabled: boolean, options: { scope?: Scope; dryRun?: boolean } = {}): Promise<PluginChangeReport> {
  assertScopeUsable(ctx, options.scope, "change the project's plugins (--scope project)");
  for (const id of ids) requireSpec(id);
  if (!enabled) assertNoneRequired(ids, "disable");
  return runPluginChange(ctx, `${enabled ? "enable" : "disable"} ${ids.join(" ")}`, Boolean(options.dryRun), async (state) => {
    const ws = workingSet(ctx, state);
    for (const id of ids) planSetEnabled(ws, resolveScope(state, ws, id, options.scope, enabled ? "enable" : "disable"), id, enabled);
    const plan = finishPlan(ws, { pluginCache: xcshPaths(ctx.roots).pluginCache, otherReferences: new Set() });
    return { plan, adds: [], projectList: undefined, failed: [], warnings: [] };
  });
}

/** Installed (id, scope) pairs selected by ids and scope. */
function selectInstalled(state: EngineState, ids: string[] | undefined, scope: Scope | undefined): { id: string; scope: Scope }[] {
  const all: { id: string; scope: Scope }[] = [];
  for (const s of [state.project, state.user]) {
    if (!s || (scope && s.paths.scope !== scope)) continue;
    for (const id of Object.keys(s.installed.plugins)) all.push({ id, scope: s.paths.scope });
  }
  const out = ids ? all.filter((o) => ids.includes(o.id)) : all;
  if (ids) {
    for (const id of ids) {
      if (!out.some((o) => o.id === id)) throw new XcshToolsError("ENOT_INSTALLED", `${id} is not installed${scope ? ` in ${scope} scope` : ""}`, { hint: `${didYouMean(id, all.map((o) => o.id))}\`xcsh-tools list\` shows the installed plugins.` });
    }
  }
  return out;
}

/**
 * Update installed marketplace plugins to what their (cached) catalogs offer now: the catalog's
 * version, its pinned sha, the ref's new tip, the npm range's newest version, or simply changed
 * content. Each is re-fetched and compared by content, so an unchanged plugin is a NOOP and a
 * changed one is updated even when its version string did not move.
 */
export async function updateMarketplacePlugins(ctx: MarketplaceContext, ids: string[] | undefined, options: { scope?: Scope; dryRun?: boolean } = {}): Promise<PluginChangeReport> {
  assertScopeUsable(ctx, options.scope, "update the project's plugins (--scope project)");
  return runPluginChange(ctx, `update ${ids?.join(" ") ?? "marketplace plugins"}`, Boolean(options.dryRun), async (state, scratch, step) => {
    const ws = workingSet(ctx, state);
    const adds: CacheAdd[] = [];
    const warnings: string[] = [];
    const failed: PluginChangeReport["failed"] = [];
    for (const [i, { id, scope }] of selectInstalled(state, ids, options.scope).entries()) {
      const split = splitPluginId(id)!;
      try {
        const found = findMarketplace(state, split.marketplace);
        if (!found) throw new XcshToolsError("EMARKETPLACE_NOT_FOUND", `Marketplace "${split.marketplace}" of ${id} is not registered any more`, { hint: `Add it again to update ${id}, or uninstall it.` });
        const prepared = await preparePlugin(ctx, found, split.plugin, path.join(scratch, String(i)));
        await step("marketplace:prepared");
        await approveExecutables(ctx, prepared, scope, ws.docs[scope]?.plugins[id]?.[0]?.installPath, Boolean(options.dryRun));
        await importPreparedTools(prepared, Boolean(options.dryRun));
        warnings.push(...prepared.warnings.map((w) => `${id}: ${w}`));
        const target = { version: prepared.version, installPath: prepared.cacheDir, ...(prepared.gitCommitSha ? { gitCommitSha: prepared.gitCommitSha } : {}) };
        if (prepared.id !== id) {
          // The catalog renamed the plugin: the old id moves to the new one (its enabled state with it).
          const wasEnabled = (ws.docs[scope]?.plugins[id] ?? []).every((e) => e.enabled !== false);
          planRemove(ws, scope, id);
          planInstall(ws, scope, prepared.id, target, { now: nowIso(ctx), ...(wasEnabled ? {} : { defaultEnabled: false }), reason: `${id} was renamed to ${prepared.id} by its marketplace: installed as ${prepared.id} ${prepared.version}` });
        } else {
          const item = planInstall(ws, scope, id, target, { now: nowIso(ctx) });
          if (item.op === "NOOP") item.reason = `up to date: ${prepared.version}`;
        }
        adds.push(addOf(prepared));
      } catch (error) {
        failed.push({ id, scope, error: errorSummary(error) });
      }
    }
    const { plan, projectList } = await finish(ctx, state, ws, warnings);
    return { plan, adds, projectList, failed, warnings };
  });
}

/** One row of `outdated`. */
export interface OutdatedRow {
  id: string;
  scope: Scope;
  current: { version: string; gitCommitSha?: string; contentHash?: string };
  latest?: Revision & { version?: string };
  outdated: boolean;
  reason: string;
  error?: { code: string; message: string; hint?: string };
}

function versionNewer(candidate: string | undefined, current: string): boolean {
  if (!candidate || candidate === current) return false;
  if (semver.valid(candidate) && semver.valid(current)) return semver.gt(candidate, current);
  return true;
}

/** What is newer than what is installed; reads only (recovers first if a journal is pending). */
export async function outdatedMarketplacePlugins(ctx: MarketplaceContext, ids?: string[], options: { scope?: Scope } = {}): Promise<OutdatedRow[]> {
  await recoverBeforeRead(ctx);
  const state = await loadEngineState(ctx);
  const rows: OutdatedRow[] = [];
  const scratch = await makeScratch("outdated", scratchNear(ctx));
  try {
    for (const [i, { id, scope }] of selectInstalled(state, ids, options.scope).entries()) {
      const entry = scopeState(ctx, state, scope).installed.plugins[id]![0]!;
      const hash = hashOfCacheDir(entry.installPath);
      const current = { version: entry.version ?? "unknown", ...(entry.gitCommitSha ? { gitCommitSha: entry.gitCommitSha } : {}), ...(hash ? { contentHash: hash } : {}) };
      const row: OutdatedRow = { id, scope, current, outdated: false, reason: "up to date" };
      rows.push(row);
      try {
        const split = splitPluginId(id)!;
        const found = findMarketplace(state, split.marketplace);
        if (!found) throw new XcshToolsError("EMARKETPLACE_NOT_FOUND", `Marketplace "${split.marketplace}" is not registered`, { hint: `Add it again to check ${id}.` });
        // The organization policy before the catalog is read and the plugin's source probed, as `update` would.
        assertMarketplaceAllowed(found, split.plugin);
        const loaded = await catalogOf(ctx, found);
        const catalogItem = catalogEntry(loaded, split.plugin, split.marketplace);
        assertMarketplacePluginAllowed(found, catalogItem);
        const kind = pluginSourceOf(catalogItem.source, split.plugin);
        const input = { entry: catalogItem, catalog: loaded.catalog, marketplace: found.entry, root: relativeRootOf(ctx, found) };
        let latest: Revision | undefined = kind.probe ? await kind.probe(input, ctx) : undefined;
        if (!latest) {
          const work = path.join(scratch.dir, String(i));
          await mkdir(work, { recursive: true });
          latest = { contentHash: (await fetchCopy(ctx, found, loaded, catalogItem, work)).hash.slice(0, 12) };
        }
        const catalogVersion = latest.version ?? catalogItem.version;
        row.latest = { ...latest, ...(catalogVersion ? { version: catalogVersion } : {}) };
        const reasons: string[] = [];
        if (catalogItem.name !== split.plugin) reasons.push(`renamed to ${catalogItem.name}@${split.marketplace} (update moves it)`);
        if (versionNewer(catalogVersion, current.version)) reasons.push(`version ${current.version} → ${catalogVersion}`);
        if (latest.gitCommitSha && latest.gitCommitSha !== current.gitCommitSha) reasons.push(`commit ${current.gitCommitSha?.slice(0, 12) ?? "(not recorded)"} → ${latest.gitCommitSha.slice(0, 12)}`);
        if (latest.contentHash && latest.contentHash !== current.contentHash) reasons.push(`content changed (${current.contentHash ?? "unknown"} → ${latest.contentHash})`);
        if (reasons.length > 0) {
          row.outdated = true;
          row.reason = reasons.join("; ");
        }
      } catch (error) {
        row.error = errorSummary(error);
        row.reason = `cannot check: ${row.error.message}`;
      }
    }
  } finally {
    await scratch.dispose();
  }
  return rows;
}
