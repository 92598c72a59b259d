/**
 * The restore engine (docs/design/team-sets.md (d) `install` with no operand): make this machine
 * load exactly the project's declared set, at the locked versions and content hashes.
 *
 * Order, each step before the next may write: trust (before any project file is read) → read the
 * set and the lock → `--frozen`: the lock must already describe the set, in canonical bytes →
 * outside the lock, in our scratch: resolve what the lock lacks, fetch the rest at its locked
 * commits and versions, verify every content hash and npm integrity (`EINTEGRITY`: nothing
 * installed), ask consent for what marketplace plugins run (restore runs none of their code:
 * static checks only, the module check ran when the plugin was locked) → one mutation (lock,
 * journal): the npm plugins through the plugins engine's pinned install (which asks about their
 * hook and extension modules before committing), then the cache folders, the off folders, the
 * generated host files and the lock staged in the same journal, whose commit makes it all live at
 * once, so a kill leaves the previous state.
 */
import { existsSync, realpathSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { XcshToolsError, isXcshToolsError } from "../core/errors.js";
import { teamPaths, teamStatePaths, xcshPaths } from "../core/paths.js";
import { isProjectTrustedByUser, trustWorldOf, untrustedProjectError } from "../core/trust.js";
import { pathExists } from "../core/atomic-fs.js";
import { describeExecutableChanges, describeInstallScripts, hasChanges, type ExecutableRequest } from "../components/consent.js";
import { executableChangesOf, makeScratch, stagePreparedPlugins, type PreparedPlugin } from "../marketplace/index.js";
import { splitPluginId } from "../manifest/installed-plugins.js";
import { isRecord, pointer } from "../manifest/result.js";
import { readTeamLock, TEAM_LOCK_FILE, type TeamLock } from "../manifest/team-lock.js";
import type { EffectiveSet, SetPlugin, Who } from "../manifest/team-set.js";
import type { TeamDeclaration } from "../manifest/team-declaration.js";
import type { TeamLocal } from "../manifest/team-local.js";
import { previewPinned, secretsNeededOf, type SecretNeeded } from "../plugins/team-preview.js";
import { applyPinned, resolvePinned, type PinnedMismatch, type PinnedNpmPlugin } from "../plugins/team.js";
import { npmPolicySourceOf, type NpmClientOptions } from "../plugins/npm-client.js";
import { assertNotForbidden, assertSourcesAllowed, catalogPolicySource, managedPolicyFile, type PolicySource } from "../core/policy.js";
import type { DeclaredSource } from "../manifest/team-declaration.js";
import { formatDeclaration, formatLocal } from "./edit.js";
import { renderHostFiles, type MarketplaceInstall } from "./host-files.js";
import { existingRegistry, stageHostFiles, stageText } from "./host-write.js";
import { loadTeamSet } from "./load.js";
import { isCanonicalLock, mergeLockSides, parseConflictedLock } from "./lock-format.js";
import { lockedTreeHash, lockTextIfChanged, MarketplaceFetcher, resolveTeamLock, teamScratchParent, type TeamWorld } from "./resolve.js";
import { satisfies } from "./satisfy.js";
import { readStampInputs, withStampAtCommit, type StampFacts } from "./stamp-write.js";
import { contentHashesText, readContentHashes, reusableFolder, type CachedContent } from "./warm.js";
import { seededAsLocked, type SeededAsLocked } from "./seed.js";
import { userConfigUse, type UserConfigUse } from "../validate/index.js";

export type { TeamWorld } from "./resolve.js";
export type { SecretNeeded } from "../plugins/team-preview.js";

/** Options of `restoreTeamSet`. */
export interface RestoreOptions {
  world: TeamWorld;
  /** CI: the committed files must not change (`ETEAM_FROZEN` otherwise, nothing written). */
  frozen?: boolean;
  /** The host's config folder name, `.xcsh` by default. */
  configDirName?: string;
  /**
   * Resolve, fetch and verify into scratch, then stop before consent: nothing asked, written or
   * run; the report says what would change and `wouldRun` what the set's plugins would run.
   */
  dryRun?: boolean;
  /**
   * Ask once for everything the set's plugins run (marketplace and npm, one list, one question;
   * cli/consent.ts `batchApprover`). Without it each plugin is asked through `approveExecutables`.
   */
  approveAll?: (requests: ExecutableRequest[]) => Promise<void>;
  /**
   * `update --scope project` (update.ts): restore this set and lock instead of the files', the
   * lock and the declaration's new bytes (`--latest`) written in the same transaction.
   */
  planned?: { set: EffectiveSet; lock: TeamLock; declaration?: string };
  /** A `--scope project|local` change: the files as edited, restored from and written in the same journal. */
  edit?: TeamEdit;
  /**
   * No network: what the seeds and npm's cache hold is used, and anything else is `EOFFLINE`
   * listing it, before anything is written (docs/design/fleets.md).
   */
  offline?: boolean;
}

/**
 * What a change restores from instead of the files on disk (teamset/edit.ts made them). They are
 * written by the restore's own transaction, so a failed restore (`EINTEGRITY`, `EUNCONFIRMED`,
 * `EUNKNOWN_FEATURE`…) leaves them as they were.
 */
export interface TeamEdit {
  declaration?: TeamDeclaration;
  local?: TeamLocal;
  /** Ids this change took out of the set: dropped from the project registry (else kept as undeclared). */
  removed?: readonly string[];
}

/** What one plugin of the set would run on this machine (consent's lines: `+ hook SessionStart: …`). */
export interface WouldRun {
  id: string;
  version: string;
  source: "marketplace" | "npm";
  update: boolean;
  lines: string[];
}

/** A declared plugin that does not load here, and who switched it off. */
export interface OptOut {
  plugin: string;
  by: Who["by"];
  file: string;
}

/** What a restore did. */
export interface RestoreReport {
  /** Files written (absolute), the lock included when it changed. */
  written: string[];
  lockChanged: boolean;
  /** The lock had conflict markers and was merged ("merged xcsh-team.lock.json"). */
  lockMerged: boolean;
  /** Marketplace plugins whose cache folder was added. */
  installed: string[];
  /** npm plugins installed or changed in the user's tree, `name@version`. */
  npmInstalled: string[];
  /** npm plugins a seed holds as locked, used in place: `name@version (<seed>)`. */
  fromSeeds?: string[];
  /** npm plugins a team set had installed that no restored project declares any more (and the user did not install): uninstalled. */
  removed: string[];
  /** `moves <name> <v> → <w>, which <other root> locks`: another restored project locks another version (the project restored now wins). */
  versionMoves: string[];
  /** Lock entries resolved anew. */
  resolved: string[];
  /** Ids of the project registry the set does not mention, kept as they were (`WTEAM_UNDECLARED`). */
  undeclared: string[];
  /** Nothing was written (`dryRun`): the other fields say what a restore would do. */
  dryRun: boolean;
  /** What the new or changed plugins run (hooks, MCP/LSP servers, bin/, npm hook and extension modules). */
  wouldRun: WouldRun[];
  secretsNeeded: SecretNeeded[];
  /** Marketplace plugins of the set that declare Claude Code `userConfig`, which the host fills nowhere (`WHOST_USER_CONFIG`). */
  userConfigUnread?: { plugin: string; use: UserConfigUse }[];
  optOuts: OptOut[];
}

/** The set's marketplace plugins (id, folder) that declare `userConfig`, as the report's optional field. */
function unreadUserConfig(plugins: readonly (readonly [string, string])[]): Pick<RestoreReport, "userConfigUnread"> {
  const found = plugins.flatMap(([plugin, dir]) => {
    const use = userConfigUse(dir);
    return use ? [{ plugin, use }] : [];
  });
  return found.length > 0 ? { userConfigUnread: found.sort((a, b) => (a.plugin < b.plugin ? -1 : a.plugin > b.plugin ? 1 : 0)) } : {};
}

/** `ETEAM_FROZEN` listing what stops a frozen restore. */
function frozenError(lockFile: string, problems: string[]): XcshToolsError {
  return new XcshToolsError("ETEAM_FROZEN", `${lockFile} does not describe the project's set as committed (--frozen): ${problems.join("; ")}`, {
    file: lockFile,
    hint: "Run `xcsh-tools install` without --frozen, commit xcsh-team.lock.json, then retry.",
  });
}

/** The problems a frozen restore refuses (none: the committed lock is exactly what a restore would write). */
function frozenProblems(set: EffectiveSet, lock: TeamLock | undefined, lockText: string | undefined, lockFile: string): string[] {
  if (!lock || lockText === undefined) return [`there is no ${TEAM_LOCK_FILE}`];
  const problems = satisfies(set, lock)
    .filter((entry) => entry.state !== "ok")
    .map((entry) => `${pointer("", entry.section, entry.key)} is ${entry.state}${entry.why ? ` (${entry.why})` : ""}`);
  if (problems.length === 0 && !isCanonicalLock(lockText, lockFile)) problems.push("its bytes are not canonical (it would be rewritten)");
  return problems;
}

/** Whether a `--frozen` restore of these inputs would pass (the stamp's `frozenOk`); a check that throws says no. */
function frozenCleanForStamp(set: EffectiveSet, lock: TeamLock, lockText: string | undefined, lockFile: string): boolean {
  try {
    return frozenProblems(set, lock, lockText, lockFile).length === 0;
  } catch {
    return false;
  }
}

/** `EINTEGRITY` naming the lock field whose content does not match. */
function integrityError(lockFile: string, at: string, key: string, expected: string, got: string): XcshToolsError {
  return new XcshToolsError("EINTEGRITY", `${lockFile}: ${at}: the content of ${key} does not match the lock (expected ${expected}, got ${got})`, {
    file: lockFile,
    path: at,
    hint: "Nothing was installed. The bytes changed behind the lock (the plugin's files, or what the registry serves): if the change is wanted, run `xcsh-tools update --scope project` and review the new lock; otherwise restore the original content.",
  });
}

/**
 * The lock, or after a merge left conflict markers in it (and not `--frozen`, which keeps
 * `ETEAM_CONFLICT_MARKERS`): both sides merged per entry for the set (lock-format.ts
 * `mergeLockSides`); what neither side settles is left out, so the resolver locks it anew.
 */
function readOrMergeLock(file: string, text: string | undefined, set: EffectiveSet, frozen: boolean): { lock: TeamLock | undefined; merged: boolean } {
  try {
    return { lock: readTeamLock(file), merged: false };
  } catch (error) {
    const sides = !frozen && text !== undefined && isXcshToolsError(error, "ETEAM_CONFLICT_MARKERS") ? parseConflictedLock(text, file) : undefined;
    if (!sides) throw error;
    return { lock: mergeLockSides(sides.ours, sides.theirs, set).lock, merged: true };
  }
}

/** `EINTEGRITY` for npm bytes (fetched or installed) that are not the lock's. */
function npmMismatchError(lockFile: string, found: PinnedMismatch): XcshToolsError {
  return integrityError(lockFile, pointer("", "npm", found.plugin, ...found.at), found.plugin, found.expected, found.got);
}

/** `EUNKNOWN_FEATURE` when the set chooses a feature the locked version does not declare (nothing written yet). */
function checkFeatures(plugin: SetPlugin, version: string, offered: readonly string[]): void {
  if (!Array.isArray(plugin.features)) return;
  const unknown = plugin.features.filter((f) => !offered.includes(f));
  if (unknown.length === 0) return;
  // The last file that spoke about the plugin chose them (the personal file over the declaration).
  const file = plugin.decided.at(-1)?.file ?? "xcsh-team.json";
  const at = pointer("", "plugins", plugin.key, "features");
  throw new XcshToolsError("EUNKNOWN_FEATURE", `${file}: ${at}: ${plugin.key} ${version} has no feature ${unknown.map((f) => JSON.stringify(f)).join(", ")} (expected some of: ${offered.join(", ") || "none"})`, {
    file,
    path: at,
    hint: `Choose among ${plugin.key}'s features (${offered.join(", ") || "it has none"}), or "*" for all of them.`,
    exitCode: 2,
  });
}

/** The installPath the project registry has now for `id` (the "before" of consent). */
function installedPathOf(registry: ReturnType<typeof existingRegistry>, id: string): string | undefined {
  const entries = registry?.plugins[id];
  const first = Array.isArray(entries) ? entries[0] : undefined;
  return isRecord(first) && typeof first.installPath === "string" ? first.installPath : undefined;
}

/** The registry without the entries of `ids` (a copy; `undefined` stays `undefined`). */
function withoutIds(registry: ReturnType<typeof existingRegistry>, ids: readonly string[]): ReturnType<typeof existingRegistry> {
  if (!registry || ids.length === 0) return registry;
  const plugins = { ...registry.plugins };
  for (const id of ids) delete plugins[id];
  return { ...registry, plugins };
}

/** Stage `text` as the new content of `file` when it differs from what is there. */

/** A request as consent shows it (the lines a terminal prints and `--dry-run`/`--json` report). */
function wouldRunOf(request: ExecutableRequest): WouldRun {
  return { id: request.id, version: request.version, source: request.source, update: request.update, lines: [...describeExecutableChanges(request.changes), ...describeInstallScripts(request.scripts)] };
}

/**
 * The npm applier's consent after the one question: a request the user already saw (same
 * plugin, same lines) passes; anything the pre-scan could not know (install scripts of a
 * dependency with --allow-scripts) is asked on its own.
 */
function alreadyAsked(asked: readonly ExecutableRequest[], approveAll: (requests: ExecutableRequest[]) => Promise<void>): (request: ExecutableRequest) => Promise<void> {
  const seen = new Map(asked.map((r) => [r.id, wouldRunOf(r).lines.join("\n")]));
  return async (request) => {
    if (seen.get(request.id) === wouldRunOf(request).lines.join("\n")) return;
    await approveAll([request]);
  };
}

/** The declared plugins switched off on this machine, with who decided (the team, Claude's files, or you). */
function optOutsOf(set: EffectiveSet): OptOut[] {
  return [...set.plugins.values()].filter((p) => !p.enabled).map((p) => ({ plugin: p.key, by: p.enabledBy.by, file: p.enabledBy.file }));
}

/**
 * The organization policy of a whole set, before any network, scratch folder or lock: every
 * declared marketplace (and whether the project may add marketplaces at all), every npm plugin's
 * declared source, and the forbidden list. Catalog plugins' own sources are checked when each is
 * fetched (marketplace/prepare.ts), since only the catalog names them.
 */
export function assertSetAllowed(set: EffectiveSet, npm: Pick<NpmClientOptions, "registry">): void {
  const checks: { source: PolicySource; what: "marketplace" | "plugin"; subject: string }[] = [];
  for (const [name, { source }] of set.marketplaces) checks.push({ source: declaredPolicySource(source, set.root), what: "marketplace", subject: `the project's marketplace ${name}` });
  for (const plugin of set.plugins.values()) {
    if (plugin.enabled && plugin.kind === "npm") checks.push({ source: npmPolicySourceOf(plugin.spec ?? "latest", npm, plugin.key, set.root), what: "plugin", subject: `the project's plugin ${plugin.key}` });
  }
  const policy = assertSourcesAllowed(checks);
  for (const plugin of set.plugins.values()) if (plugin.enabled) assertNotForbidden(policy, plugin.key);
  const declared = [...set.marketplaces.entries()].find(([, m]) => m.from.by !== "user");
  if (policy?.projectMarketplaces === false && declared) {
    const [name, { from }] = declared;
    throw new XcshToolsError("EPOLICY_PROJECT_MARKETPLACE", `${from.file}: the project declares the marketplace "${name}", and the organization policy does not let a project add marketplaces (projectMarketplaces: false)`, {
      file: from.file,
      hint: `Ask the administrator of ${managedPolicyFile()} to register it for everyone, or use plugins from marketplaces already added on this machine.`,
    });
  }
}

/** A declared marketplace source as the policy sees it (a directory: relative to the project). */
function declaredPolicySource(source: DeclaredSource, root: string): PolicySource {
  switch (source.source) {
    case "github":
      return catalogPolicySource("github", source.repo);
    case "git":
      return catalogPolicySource("git", source.url);
    case "url":
      return catalogPolicySource("url", source.url);
    case "directory":
      return { kind: "folder", path: path.resolve(root, source.path) };
  }
}

/**
 * Restore the project at `root` to its declared set. Throws `EUNTRUSTED_PROJECT` before any
 * project file is read, `ETEAM_FROZEN` (frozen), `EINTEGRITY`, or what the consent callback
 * throws (`EUNCONFIRMED`); each leaves every file as it was.
 */
/**
 * The pinned plugins npm's cache cannot answer (`--offline`): each fetched alone with the registry
 * switched to npm's offline mode (the cache or `ENOTCACHED`, never a request), so the error can
 * list every one that is missing.
 */
async function notCached(client: TeamWorld["npm"], root: string, pinned: readonly PinnedNpmPlugin[], mismatch: (found: PinnedMismatch) => Error): Promise<string[]> {
  const offline = { ...client, registry: { ...client.registry, offline: true } };
  const missing: string[] = [];
  for (const p of pinned) {
    try {
      await resolvePinned(offline, root, [p], mismatch);
    } catch (error) {
      if (isXcshToolsError(error) && error.code === "EINTEGRITY") throw error;
      missing.push(`${p.name}@${p.version} (npm: not in the seeds or npm's cache)`);
    }
  }
  return missing;
}

/** `EOFFLINE`: what a restore without network cannot take from the seeds or the caches. */
function offlineError(lockFile: string, missing: readonly string[], seeds: readonly string[]): XcshToolsError {
  return new XcshToolsError("EOFFLINE", `--offline: restoring ${lockFile} needs the network for ${missing.length === 1 ? "this" : `these ${missing.length}`}, which no seed and no cache holds: ${missing.join(", ")}`, {
    file: lockFile,
    hint: seeds.length > 0 ? `Rebuild the seed from this lock (xcsh-tools seed <dir> --from <project>) so that it holds them, or run without --offline.` : `Set XCSH_PLUGIN_SEED_DIR to a seed built from this lock (xcsh-tools seed <dir> --from <project>), or run without --offline.`,
  });
}

export async function restoreTeamSet(root: string, options: RestoreOptions): Promise<RestoreReport> {
  const { world } = options;
  const ctx = { ...world.ctx, cwd: root, projectTrusted: true };
  if (!isProjectTrustedByUser(root, trustWorldOf(ctx.roots))) throw untrustedProjectError(root, "restore the project's plugin set");
  const paths = teamPaths(root, options.configDirName);
  // Before the set is read: a file edited while this runs then differs from the stamp, and the next `install` restores again.
  const stampInputs = readStampInputs(paths);
  const edit = options.frozen ? undefined : options.edit;
  const set = options.planned?.set ?? loadTeamSet(root, { ...(options.configDirName ? { configDirName: options.configDirName } : {}), ...(edit?.declaration ? { declaration: edit.declaration } : {}), ...(edit?.local ? { local: edit.local } : {}) });
  if (!set) {
    throw new XcshToolsError("EUSAGE", `${root} declares no plugin set (no xcsh-team.json, no .claude/settings.json)`, { hint: "Declare one: xcsh-tools install <spec> --scope project.", exitCode: 2 });
  }
  const lockText = await readFile(paths.lock, "utf8").catch(() => undefined);
  const { lock, merged } = options.planned ? { lock: options.planned.lock, merged: false } : readOrMergeLock(paths.lock, lockText, set, options.frozen === true);
  if (options.frozen) {
    const problems = frozenProblems(set, lock, lockText, paths.lock);
    if (problems.length > 0) throw frozenError(paths.lock, problems);
  }
  if (options.offline) {
    // Resolving what the lock lacks asks registries and git hosts: not without the network.
    const unlocked = lock && lockText !== undefined ? satisfies(set, lock).filter((entry) => entry.state !== "ok").map((entry) => `${pointer("", entry.section, entry.key)} (${entry.state}: resolving it needs the network)`) : [`${TEAM_LOCK_FILE} (missing: locking the set needs the network)`];
    if (unlocked.length > 0) throw offlineError(paths.lock, unlocked, ctx.roots.seedDirs ?? []);
  }
  const teamWorld: TeamWorld = { ...world, ctx };
  assertSetAllowed(set, world.npm);
  // Network and checks first, outside the lock: nothing of the user's state is touched until every hash matched and consent was given.
  const scratchDir = await makeScratch("team", teamScratchParent(teamWorld));
  const scratch = scratchDir.dir;
  try {
    const fetcher = new MarketplaceFetcher(teamWorld, set, scratch);
    const resolved = await resolveTeamLock(teamWorld, set, lock, scratch, fetcher);
    const next = resolved.lock;
    const ready: PreparedPlugin[] = [];
    const pinned: PinnedNpmPlugin[] = [];
    const pluginCache = xcshPaths(ctx.roots).pluginCache;
    const contentHashesFile = teamStatePaths(xcshPaths(ctx.roots).ours).contentHashes;
    const recorded = readContentHashes(contentHashesFile);
    // Warm: cache folders a restore created and recorded with this very hash, installed as they are.
    const reused: { id: string; cacheDir: string; content: CachedContent }[] = [];
    // Seeds first (docs/design/fleets.md): a locked npm plugin a seed holds as locked is used in place.
    const seeded = new Map<string, SeededAsLocked>();
    const offlineMissing: string[] = [];
    for (const [index, plugin] of [...set.plugins.values()].entries()) {
      if (!plugin.enabled) continue;
      if (plugin.kind === "npm") {
        const locked = next.npm[plugin.key];
        const inSeed = locked && ctx.roots.seedDirs ? await seededAsLocked(ctx.roots.seedDirs, plugin.key, locked, paths.lock) : undefined;
        if (inSeed) seeded.set(plugin.key, inSeed);
        else if (locked) pinned.push({ name: plugin.key, version: locked.version, integrity: locked.integrity, ...(locked.from ? { from: locked.from } : {}), dependencies: locked.dependencies });
        continue;
      }
      const locked = next.marketplacePlugins[plugin.key];
      if (!locked) continue; // switched on only by a personal choice: not part of the set
      const market = splitPluginId(plugin.key)!.marketplace;
      const warm = resolved.prepared.has(plugin.key) ? undefined : reusableFolder(recorded, pluginCache, market, splitPluginId(plugin.key)!.plugin, locked);
      if (warm) {
        reused.push({ id: plugin.key, ...warm });
        continue;
      }
      if (options.offline && next.marketplaces[market]?.source.source !== "directory" && !resolved.prepared.has(plugin.key)) {
        offlineMissing.push(`${plugin.key}@${locked.version} (marketplace ${market}: not in the cache)`);
        continue;
      }
      const prepared = resolved.prepared.get(plugin.key) ?? (await fetcher.prepare(plugin.key, next.marketplaces[market]?.commit, 1000 + index, locked.from));
      const got = lockedTreeHash(prepared);
      if (got !== locked.hash) throw integrityError(paths.lock, pointer("", "marketplacePlugins", plugin.key, "hash"), plugin.key, locked.hash, got);
      ready.push(prepared);
    }
    const mismatch = (found: PinnedMismatch) => npmMismatchError(paths.lock, found);
    if (options.offline) offlineMissing.push(...(await notCached(world.npm, root, pinned, mismatch)));
    if (offlineMissing.length > 0) throw offlineError(paths.lock, offlineMissing, ctx.roots.seedDirs ?? []);
    const npmReady = await resolvePinned(world.npm, root, pinned, mismatch, scratch);
    for (const r of npmReady) checkFeatures(set.plugins.get(r.pinned.name)!, r.pinned.version, r.features);
    const registry = withoutIds(existingRegistry(paths.installedPlugins), edit?.removed ?? []);
    const requests: ExecutableRequest[] = [];
    // A reused folder is asked about as a fresh copy is: scanned where it is (its bytes are the recorded hash's).
    for (const prepared of [...ready, ...reused.map((r) => ({ id: r.id, version: r.content.version, copy: r.cacheDir, cacheDir: r.cacheDir }))]) {
      const before = installedPathOf(registry, prepared.id);
      if (before === prepared.cacheDir) continue;
      const changes = executableChangesOf(ctx, prepared, before);
      if (hasChanges(changes)) requests.push({ id: prepared.id, version: prepared.version, source: "marketplace", scope: "project", update: before !== undefined, dryRun: options.dryRun === true, changes });
    }
    const npmChanges = options.dryRun || options.approveAll ? await previewPinned(ctx, world.npm, npmReady, scratch) : undefined;
    if (npmChanges) requests.push(...npmChanges.requests);
    const installing = [...ready, ...reused].filter((p) => installedPathOf(registry, p.id) !== p.cacheDir).map((p) => p.id);
    const secretsNeeded = await secretsNeededOf(ctx, npmReady);
    const userConfigUnread = unreadUserConfig([...ready.map((p) => [p.id, p.copy] as const), ...reused.map((r) => [r.id, r.cacheDir] as const)]);
    if (options.dryRun) {
      const lockChange = options.frozen ? undefined : await lockTextIfChanged(paths.lock, next);
      return { dryRun: true, written: [], lockChanged: lockChange !== undefined, lockMerged: merged, installed: installing, npmInstalled: npmChanges!.changing, resolved: resolved.resolved, removed: [], versionMoves: [], undeclared: [], wouldRun: requests.map(wouldRunOf), secretsNeeded, ...userConfigUnread, optOuts: optOutsOf(set) };
    }
    // One question for the whole set, or (a library caller without `approveAll`) one per plugin.
    if (options.approveAll) {
      if (requests.length > 0) await options.approveAll(requests);
    } else if (ctx.approveExecutables) {
      for (const request of requests) await ctx.approveExecutables(request);
    }
    const approveNpm = options.approveAll ? alreadyAsked(requests, options.approveAll) : ctx.approveExecutables;
    const created = ready.filter((p) => !existsSync(p.cacheDir));
    const written: string[] = [];
    let lockChanged = false;
    let undeclared: string[] = [];
    // Plugins used in place from a seed are not outputs of this restore: no stamp, so that a later
    // `install` without that seed goes to the engine and installs them (teamset/fast.ts).
    const stampFacts: StampFacts = { root, paths, roots: ctx.roots, inputs: seeded.size > 0 ? undefined : stampInputs, plugins: pinned.length + ready.length + reused.length, npm: Object.fromEntries(pinned.map((p) => [p.name, p.version])), outputs: [] };
    // One transaction: the npm plugins (their hook and extension modules asked about by the applier), then our files in the same journal.
    const applied = await applyPinned(withStampAtCommit(ctx, stampFacts), "restore the project's plugin set", {
      client: world.npm,
      cwd: root,
      project: realpathSync(root),
      resolved: npmReady,
      declared: new Set([...set.plugins.values()].filter((p) => p.kind === "npm").map((p) => p.key)),
      mismatch,
      ...(approveNpm ? { approveExecutables: approveNpm } : {}),
      stageMore: async (m) => {
        await stagePreparedPlugins(ctx, m, ready);
        const installs = new Map<string, MarketplaceInstall>(ready.map((p) => [p.id, { installPath: p.cacheDir, version: p.version, ...(p.gitCommitSha ? { gitCommitSha: p.gitCommitSha } : {}) }]));
        for (const r of reused) installs.set(r.id, { installPath: r.cacheDir, version: r.content.version, ...(r.content.gitCommitSha ? { gitCommitSha: r.content.gitCommitSha } : {}) });
        const hashesText = contentHashesText(recorded, created.map((p) => ({ cacheDir: p.cacheDir, content: { hash: lockedTreeHash(p), version: p.version, ...(p.gitCommitSha ? { gitCommitSha: p.gitCommitSha } : {}) } })));
        if (hashesText !== undefined) await stageText(m, contentHashesFile, hashesText, []);
        const npmFeatures = new Map([...npmReady.map((r) => [r.pinned.name, r.features] as const), ...[...seeded].map(([name, s]) => [name, s.features] as const)]);
        const host = renderHostFiles({ set, pluginCache: xcshPaths(ctx.roots).pluginCache, installs, npmFeatures, ...(registry ? { existingRegistry: registry } : {}) });
        undeclared = host.undeclared;
        for (const off of host.offFolders) {
          if (!(await pathExists(off))) await mkdir(await m.tx.stage(off));
        }
        await stageHostFiles(m, ctx.roots, paths, host, written);
        if (edit?.declaration) await stageText(m, paths.declaration, formatDeclaration(edit.declaration), written);
        if (edit?.local) await stageText(m, paths.local, formatLocal(edit.local), written);
        const lockChange = options.frozen ? undefined : await lockTextIfChanged(paths.lock, next);
        if (lockChange !== undefined) await stageText(m, paths.lock, lockChange, written);
        if (options.planned?.declaration !== undefined) {
          await stageText(m, paths.declaration, options.planned.declaration, written);
          // The inputs were read before the declaration changed: no stamp, so the next `install` checks the new bytes (a no-op).
          stampFacts.inputs = undefined;
        }
        lockChanged = lockChange !== undefined;
        stampFacts.lockText = lockChange ?? lockText;
        stampFacts.frozenOk = frozenCleanForStamp(set, next, stampFacts.lockText, paths.lock);
        stampFacts.outputs = [paths.installedPlugins, paths.pluginOverrides, paths.gitignore, m.paths.packageJson, m.paths.packageLock, m.paths.runtimeLock, m.paths.record, ...pinned.map((p) => path.join(m.paths.nodeModules, p.name, "package.json")), ...ready.map((p) => p.cacheDir), ...reused.map((r) => r.cacheDir), ...host.offFolders];
        await m.step("teamset:staged");
      },
    });
    return {
      dryRun: false,
      written,
      lockChanged,
      lockMerged: merged,
      installed: installing,
      ...(seeded.size > 0 ? { fromSeeds: [...seeded].map(([name, s]) => `${name}@${next.npm[name]!.version} (${s.dir})`) } : {}),
      npmInstalled: applied.plugins.filter((p) => p.type !== "NOOP" && p.type !== "REMOVE").map((p) => `${p.name}@${p.version ?? "?"}`),
      removed: applied.removed,
      versionMoves: applied.versionMoves,
      resolved: resolved.resolved,
      undeclared,
      wouldRun: requests.map(wouldRunOf),
      secretsNeeded,
      ...userConfigUnread,
      optOuts: optOutsOf(set),
    };
  } finally {
    await scratchDir.dispose();
  }
}
