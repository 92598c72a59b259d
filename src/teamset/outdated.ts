/**
 * `outdated` in a project that declares a set (docs/design/team-sets.md (d)): per declared entry
 * what the lock holds, the newest the declaration allows (`wanted`) and the newest there is
 * (`latest`); per marketplace its locked catalog commit against the head of its `ref`. Read only:
 * the network is asked (packuments fresh, catalogs fetched into scratch), nothing is written; a
 * set the organization policy refuses is refused first (EPOLICY_*), asking nothing.
 */
import { XcshToolsError, isXcshToolsError } from "../core/errors.js";
import { npa, semver } from "../core/npm-spec.js";
import { teamPaths } from "../core/paths.js";
import { isProjectTrustedByUser, trustWorldOf, untrustedProjectError } from "../core/trust.js";
import { makeScratch } from "../marketplace/index.js";
import { emptyLock, readTeamLock, type LockSection } from "../manifest/team-lock.js";
import type { EffectiveSet } from "../manifest/team-set.js";
import { loadPacote, npmError, npmOptions } from "../plugins/npm-client.js";
import { loadTeamSet } from "./load.js";
import { MarketplaceFetcher, teamScratchParent, type TeamWorld } from "./resolve.js";
import { assertSetAllowed } from "./restore.js";

/** One row: an npm plugin, a marketplace plugin or a marketplace (its catalog commit). */
export interface TeamOutdatedRow {
  section: LockSection;
  key: string;
  /** The declared range (npm spec, marketplace plugin `version`), when there is one. */
  declared?: string;
  /** What the lock holds: a version, or a catalog commit (`sha256:<hex>` for a url catalog). */
  locked: string | null;
  /** The newest the declaration allows (null: nothing the declaration allows, or no registry to ask). */
  wanted: string | null;
  latest: string | null;
  outdated: boolean;
  /** Why a row has no wanted/latest (a plugin its marketplace no longer lists). */
  note?: string;
}

/** Versions and dist-tags of an npm package, fetched fresh: a cached packument would hide a new release. */
export async function registryVersions(world: TeamWorld, name: string): Promise<{ versions: string[]; tags: Record<string, string> }> {
  const pacote = await loadPacote();
  try {
    const doc = (await pacote.packument(name, { ...npmOptions(world.npm), preferOnline: true } as never)) as unknown as { versions?: Record<string, unknown>; "dist-tags"?: Record<string, string> };
    return { versions: Object.keys(doc.versions ?? {}), tags: doc["dist-tags"] ?? {} };
  } catch (error) {
    throw npmError(error, name, world.npm, name);
  }
}

/** `EUNTRUSTED_PROJECT` before any project file is read, then the set (EUSAGE when there is none). */
export function trustedSet(root: string, world: TeamWorld, doing: string, configDirName?: string): { set: EffectiveSet; world: TeamWorld } {
  const ctx = { ...world.ctx, cwd: root, projectTrusted: true };
  if (!isProjectTrustedByUser(root, trustWorldOf(ctx.roots))) throw untrustedProjectError(root, doing);
  const set = loadTeamSet(root, configDirName ? { configDirName } : {});
  if (!set) throw new XcshToolsError("EUSAGE", `${root} declares no plugin set (no xcsh-team.json, no .claude/settings.json)`, { hint: "Declare one: xcsh-tools install <spec> --scope project.", exitCode: 2 });
  return { set, world: { ...world, ctx } };
}

/** The rows of the project at `root`, in lock order (marketplaces, their plugins, npm). */
export async function teamOutdated(root: string, options: { world: TeamWorld; configDirName?: string }): Promise<TeamOutdatedRow[]> {
  const { set, world } = trustedSet(root, options.world, "check the project's plugin set", options.configDirName);
  // The organization policy before any registry or catalog is asked, as a restore and `update` enforce it.
  assertSetAllowed(set, world.npm);
  const lock = readTeamLock(teamPaths(root, options.configDirName).lock) ?? emptyLock();
  const scratchDir = await makeScratch("team-outdated", teamScratchParent(world));
  const rows: TeamOutdatedRow[] = [];
  const row = (r: Omit<TeamOutdatedRow, "outdated">) => rows.push({ ...r, outdated: (r.wanted !== null && r.wanted !== r.locked) || (r.latest !== null && r.latest !== r.locked) });
  try {
    const fetcher = new MarketplaceFetcher(world, set, scratchDir.dir);
    for (const [name, { source }] of set.marketplaces) {
      // A folder of the repository moves with the repository: nothing of its own to be outdated (its plugins have rows).
      if (source.source === "directory") continue;
      const locked = lock.marketplaces[name];
      const head = await fetcher.fetch(name);
      const now = head.commit ?? (head.sha256 ? `sha256:${head.sha256}` : null);
      const was = locked?.commit ?? (locked?.sha256 ? `sha256:${locked.sha256}` : null);
      row({ section: "marketplaces", key: name, ...("ref" in source && source.ref ? { declared: source.ref } : {}), locked: was, wanted: now, latest: now });
    }
    const plugins = [...set.plugins.values()].filter((p) => p.teamEnabled);
    for (const [index, plugin] of plugins.entries()) {
      if (plugin.kind !== "marketplace") continue;
      const locked = lock.marketplacePlugins[plugin.key]?.version ?? null;
      const declared = plugin.version !== undefined ? { declared: plugin.version } : {};
      try {
        const { version } = await fetcher.prepare(plugin.key, undefined, index);
        const allowed = plugin.version === undefined || semver.satisfies(version, plugin.version, { includePrerelease: true });
        row({ section: "marketplacePlugins", key: plugin.key, ...declared, locked, wanted: allowed ? version : null, latest: version });
      } catch (error) {
        if (!isXcshToolsError(error, "EPLUGIN_NOT_FOUND")) throw error;
        rows.push({ section: "marketplacePlugins", key: plugin.key, ...declared, locked, wanted: null, latest: null, outdated: true, note: "its marketplace no longer lists it (ETEAM_PLUGIN_DELISTED on update)" });
      }
    }
    for (const plugin of plugins) {
      if (plugin.kind !== "npm") continue;
      const spec = plugin.spec ?? "latest";
      const type = npa.resolve(plugin.key, spec, "/").type;
      const locked = lock.npm[plugin.key]?.version ?? null;
      if (type !== "range" && type !== "version" && type !== "tag") {
        row({ section: "npm", key: plugin.key, declared: spec, locked, wanted: null, latest: null });
        continue;
      }
      const { versions, tags } = await registryVersions(world, plugin.key);
      row({ section: "npm", key: plugin.key, declared: spec, locked, wanted: type === "tag" ? (tags[spec] ?? null) : semver.maxSatisfying(versions, spec, { includePrerelease: true }), latest: tags.latest ?? null });
    }
    return rows;
  } finally {
    await scratchDir.dispose();
  }
}
