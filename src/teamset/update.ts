/**
 * `update --scope project` (docs/design/team-sets.md (d)): move the lock to the newest that the
 * declaration allows, for the named entries or all of them. The plan is computed entirely in our
 * scratch (network, no write): the entries to move are dropped from a copy of the lock and the
 * resolver locks them anew, as `install` locks what is missing. Applying the plan is a restore of
 * the planned set and lock (restore.ts `planned`), so consent, integrity checks and the one
 * journaled mutation are the restore's own.
 *
 * A marketplace moves as a whole: its plugins' content is read at its catalog commit, so moving
 * the commit re-resolves every plugin locked from it (naming one of them moves its marketplace).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { npa } from "../core/npm-spec.js";
import { teamPaths, type TeamPaths } from "../core/paths.js";
import { makeScratch } from "../marketplace/index.js";
import { readClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { splitPluginId } from "../manifest/installed-plugins.js";
import { pointer } from "../manifest/result.js";
import { readTeamDeclaration, TEAM_DECLARATION_FILE, type TeamDeclaration } from "../manifest/team-declaration.js";
import { emptyLock, readTeamLock, type LockSection, type TeamLock } from "../manifest/team-lock.js";
import type { EffectiveSet } from "../manifest/team-set.js";
import { editDeclaration, formatDeclaration } from "./edit.js";
import { registryVersions, trustedSet } from "./outdated.js";
import { MarketplaceFetcher, resolveTeamLock, teamScratchParent, type TeamWorld } from "./resolve.js";

/** Options of `planTeamUpdate`. */
export interface TeamUpdateOptions {
  world: TeamWorld;
  /** Declared plugin keys or marketplace names; none: everything declared. */
  names?: readonly string[];
  /** npm plugins: the `latest` dist-tag, the declared range rewritten to `^<latest>`. */
  latest?: boolean;
  configDirName?: string;
}

/** One lock entry the update looked at, old → new (`undefined`: not locked before / not locked now). */
export interface TeamUpdateEntry {
  section: LockSection;
  key: string;
  from?: string;
  to?: string;
  /** `--latest`: the declared npm range before and after. */
  range?: { from: string; to: string };
}

/** What `update --scope project` would write: the set and lock a restore then makes true. */
export interface TeamUpdatePlan {
  root: string;
  set: EffectiveSet;
  lock: TeamLock;
  /** The new bytes of xcsh-team.json, when `--latest` rewrote a range. */
  declaration?: string;
  entries: TeamUpdateEntry[];
}

/** The lock's name of an entry's state, as the report shows it (a version, or a catalog's commit or sha256). */
function stateOf(lock: TeamLock | undefined, section: LockSection, key: string): string | undefined {
  if (!lock) return undefined;
  if (section === "marketplaces") {
    const m = lock.marketplaces[key];
    return m ? (m.commit ?? (m.sha256 ? `sha256:${m.sha256}` : "(folder)")) : undefined;
  }
  return (lock[section] as Record<string, { version: string } | undefined>)[key]?.version;
}

function declarationFileOf(set: EffectiveSet, key: string): string {
  return set.plugins.get(key)?.decided.find((w) => w.by === "team" || w.by === "claude")?.file ?? set.marketplaces.get(key)?.from.file ?? path.join(set.root, TEAM_DECLARATION_FILE);
}

/** `ETEAM_NOT_DECLARED` for a name the set has neither as a plugin nor as a marketplace. */
function notDeclared(set: EffectiveSet, name: string): XcshToolsError {
  const file = path.join(set.root, TEAM_DECLARATION_FILE);
  const at = pointer("", "plugins", name);
  return new XcshToolsError("ETEAM_NOT_DECLARED", `${file}: ${at}: ${name} is not declared in the project's set (expected a plugin or marketplace of ${TEAM_DECLARATION_FILE})`, {
    file,
    path: at,
    hint: `\`xcsh-tools list\` shows the project's set; declare it first (xcsh-tools install ${name} --scope project), or drop --scope project to update your own plugins.`,
  });
}

/** `ETEAM_PLUGIN_DELISTED` for each locked plugin of `market` its catalog at the new commit no longer lists (nor renames). */
async function checkDelisted(set: EffectiveSet, lock: TeamLock, fetcher: MarketplaceFetcher, market: string): Promise<void> {
  const locked = Object.keys(lock.marketplacePlugins).filter((key) => splitPluginId(key)?.marketplace === market && set.plugins.get(key)?.teamEnabled);
  if (locked.length === 0) return;
  const fetched = await fetcher.fetch(market);
  const catalog = JSON.parse(await readFile(fetched.found.entry.catalogPath, "utf8")) as { plugins?: { name?: unknown }[]; renames?: Record<string, unknown> };
  const listed = new Set((catalog.plugins ?? []).map((p) => p.name));
  for (const key of locked) {
    const plugin = splitPluginId(key)!.plugin;
    if (listed.has(plugin) || Object.hasOwn(catalog.renames ?? {}, plugin)) continue;
    const file = declarationFileOf(set, key);
    const at = pointer("", "plugins", key);
    throw new XcshToolsError("ETEAM_PLUGIN_DELISTED", `${file}: ${at}: marketplace "${market}" no longer lists ${plugin}${fetched.commit ? ` at ${fetched.commit}` : ""} (the lock still has ${lock.marketplacePlugins[key]!.version}; nothing was changed)`, {
      file,
      path: at,
      hint: `Remove ${key} from ${path.basename(file)} (xcsh-tools uninstall ${key} --scope project), or pin the marketplace's ref to a commit that still lists it. \`xcsh-tools install\` still restores the locked version.`,
    });
  }
}

/** The targets of an update: the marketplaces and npm plugins to move (a marketplace plugin moves with its marketplace). */
function targetsOf(set: EffectiveSet, names: readonly string[]): { markets: Set<string>; npm: Set<string> } {
  const markets = new Set<string>();
  const npm = new Set<string>();
  const all = names.length === 0;
  for (const name of all ? [...set.marketplaces.keys(), ...set.plugins.keys()] : names) {
    const plugin = set.plugins.get(name);
    if (plugin?.kind === "npm") npm.add(name);
    else if (plugin) markets.add(splitPluginId(name)!.marketplace);
    else if (set.marketplaces.has(name)) markets.add(name);
    else throw notDeclared(set, name);
  }
  return { markets, npm };
}

/**
 * `--latest`: each targeted npm plugin declared by a registry range, version or tag gets `^<latest>`
 * in the declaration (as `npm install pkg@latest` saves it) and in the set; returns the new bytes.
 */
async function rewriteRanges(world: TeamWorld, set: EffectiveSet, npmKeys: Iterable<string>, paths: TeamPaths, entries: Map<string, TeamUpdateEntry>): Promise<string | undefined> {
  const file = paths.declaration;
  // Claude's marketplaces count as declared for the declaration's checks, as when it was read.
  const claude = readClaudeTeamSettings(paths.claudeSettings, set.root);
  let doc: TeamDeclaration | undefined = readTeamDeclaration(file, { otherMarketplaces: claude?.marketplaces.keys() ?? [] });
  let changed = false;
  for (const key of npmKeys) {
    const plugin = set.plugins.get(key)!;
    const spec = plugin.spec ?? "latest";
    if (!["range", "version", "tag"].includes(npa.resolve(key, spec, "/").type)) continue;
    const latest = (await registryVersions(world, key)).tags.latest;
    if (latest === undefined) continue;
    const range = `^${latest}`;
    if (range === spec) continue;
    doc = editDeclaration(doc, { op: "add-plugin", key, entry: { spec: range } }, { file, ...(claude ? { claude } : {}) });
    set.plugins.set(key, { ...plugin, spec: range });
    entries.get(`npm:${key}`)!.range = { from: spec, to: range };
    changed = true;
  }
  return changed && doc ? formatDeclaration(doc) : undefined;
}

/**
 * Plan `update --scope project` at `root`: `EUNTRUSTED_PROJECT` before any project file is read,
 * `ETEAM_NOT_DECLARED`, `ETEAM_PLUGIN_DELISTED`, `ETEAM_UNSATISFIABLE` (the resolver's), and
 * nothing written whatever happens: the caller restores the plan, or prints it (`--dry-run`).
 */
export async function planTeamUpdate(root: string, options: TeamUpdateOptions): Promise<TeamUpdatePlan> {
  const { set, world } = trustedSet(root, options.world, "update the project's plugin set", options.configDirName);
  const paths = teamPaths(root, options.configDirName);
  const before = readTeamLock(paths.lock) ?? emptyLock();
  const { markets, npm } = targetsOf(set, options.names ?? []);
  const moving = (section: LockSection, key: string) => (section === "npm" ? npm.has(key) : markets.has(section === "marketplaces" ? key : splitPluginId(key)!.marketplace));
  const trimmed: TeamLock = { ...before, marketplaces: { ...before.marketplaces }, marketplacePlugins: { ...before.marketplacePlugins }, npm: { ...before.npm } };
  const entries = new Map<string, TeamUpdateEntry>();
  for (const section of ["marketplaces", "marketplacePlugins", "npm"] as const) {
    const keys = section === "marketplaces" ? [...set.marketplaces.keys()] : [...set.plugins.values()].filter((p) => p.teamEnabled && (p.kind === "npm") === (section === "npm")).map((p) => p.key);
    for (const key of keys) {
      if (!moving(section, key)) continue;
      delete (trimmed[section] as Record<string, unknown>)[key];
      // Keyed by section too: an npm plugin may have a marketplace's name.
      entries.set(`${section}:${key}`, { section, key, ...(stateOf(before, section, key) ? { from: stateOf(before, section, key) } : {}) });
    }
  }
  const scratchDir = await makeScratch("team-update", teamScratchParent(world));
  try {
    const declaration = options.latest ? await rewriteRanges(world, set, npm, paths, entries) : undefined;
    const fetcher = new MarketplaceFetcher(world, set, scratchDir.dir);
    for (const market of markets) await checkDelisted(set, before, fetcher, market);
    const { lock } = await resolveTeamLock(world, set, trimmed, scratchDir.dir, fetcher);
    for (const entry of entries.values()) {
      const to = stateOf(lock, entry.section, entry.key);
      if (to !== undefined) entry.to = to;
    }
    return { root, set, lock, ...(declaration !== undefined ? { declaration } : {}), entries: [...entries.values()] };
  } finally {
    await scratchDir.dispose();
  }
}
