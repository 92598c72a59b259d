/**
 * Declared set → lock entries (docs/design/team-sets.md (d) 3.). What the files alone cannot say
 * comes from the network here, through the engines that own it: npm plugins through the plugins
 * engine's npm client (pacote and arborist with the user's .npmrc options), marketplace plugins
 * through the marketplace engine (catalog fetched at the declared ref → commit, plugin prepared
 * with static checks only → `tree1` content hash). Only missing and stale entries are resolved,
 * extra ones dropped; `ok` ones stay byte for byte, so a no-op never rewrites the lock.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { isRealPathInside, realPathOrNearest } from "../core/contain.js";
import { XcshToolsError } from "../core/errors.js";
import { npa, semver } from "../core/npm-spec.js";
import { xcshPaths } from "../core/paths.js";
import { fetchDeclaredMarketplace, prepareDeclaredPlugin, type CatalogSourceSpec, type FetchedDeclaredMarketplace, type MarketplaceContext, type PreparedPlugin } from "../marketplace/index.js";
import { splitPluginId } from "../manifest/installed-plugins.js";
import { pointer } from "../manifest/result.js";
import type { DeclaredSource } from "../manifest/team-declaration.js";
import { emptyLock, TEAM_LOCK_FILE, type LockedMarketplace, type LockedMarketplacePlugin, type LockedNpmPlugin, type PluginFrom, type TeamLock } from "../manifest/team-lock.js";
import type { EffectiveSet, Satisfaction, SetPlugin } from "../manifest/team-set.js";
import { loadArborist, loadPacote, npmError, npmOptions, type NpmClientOptions } from "../plugins/npm-client.js";
import { packedIntegrity } from "../plugins/team.js";
import { formatLock } from "./lock-format.js";
import { npmGitUrlOf, satisfies } from "./satisfy.js";

/** What resolving and restoring talk to: the marketplace engine's world and the npm client. */
export interface TeamWorld {
  /** The marketplace engine's context, `cwd` the project root. */
  ctx: MarketplaceContext;
  /** pacote/arborist options built from the user's npm config (plugins/npmrc.ts). */
  npm: NpmClientOptions;
}

/** The result of resolving: the new lock, and the marketplace plugins prepared on the way (restore installs those copies). */
export interface ResolvedLock {
  lock: TeamLock;
  satisfaction: Satisfaction;
  /** Keys resolved anew (missing or stale before). */
  resolved: string[];
  prepared: Map<string, PreparedPlugin>;
}

function declarationFileOf(set: EffectiveSet, name: string): string {
  return set.marketplaces.get(name)?.from.file ?? path.join(set.root, TEAM_LOCK_FILE);
}

function unsupported(file: string, at: string, what: string): XcshToolsError {
  return new XcshToolsError("ETEAM_SOURCE", `${file}: ${at}: ${what} cannot be locked by this version of xcsh-tools yet`, {
    file,
    path: at,
    hint: "Ask the marketplace's owner for a source a lock can pin (a git repository, an npm package or an https archive), or leave the plugin out of the set.",
  });
}

/**
 * The marketplace engine's source spec of a declared source, at `commit` when one is locked.
 * `directory` paths are relative to the root and were checked to stay inside it (team-declaration.ts).
 */
export function catalogSpecOf(root: string, name: string, source: DeclaredSource, file: string, commit?: string): CatalogSourceSpec {
  const at = pointer("", "marketplaces", name, "source");
  switch (source.source) {
    case "directory": {
      // The text stays inside the root (team-declaration.ts); a symlink in the checkout must not lead it out either.
      const folder = path.resolve(root, source.path);
      if (!isRealPathInside(folder, root)) {
        throw new XcshToolsError("ETEAM_MACHINE_PATH", `${file}: ${pointer(at, "path")}: ${JSON.stringify(source.path)} resolves to ${realPathOrNearest(folder)}, outside the project root ${root} (expected a folder inside the project)`, {
          file,
          path: pointer(at, "path"),
          hint: "A directory marketplace must be a folder of the repository itself: replace the symlink with the folder, or use a git marketplace.",
        });
      }
      return { kind: "local", uri: folder };
    }
    case "git":
    case "github": {
      const pin = commit ?? source.sha ?? source.ref;
      const base = source.source === "git" ? source.url : source.repo;
      const folder = source.path === undefined ? undefined : catalogFolderOf(source.path, file, pointer(at, "path"));
      return { kind: source.source, uri: pin ? `${base}#${pin}` : base, ...(folder ? { folder } : {}) };
    }
    case "url":
      return { kind: "url", uri: source.url };
  }
}

/**
 * The marketplace folder a declared `path` names: Claude Code's form names the catalog file
 * (`<folder>/.claude-plugin/marketplace.json`), ours may name the folder itself; relative plugin
 * sources resolve in that folder. `undefined`: the repository's root.
 */
function catalogFolderOf(declared: string, file: string, at: string): string | undefined {
  const parts = declared.replace(/\\/g, "/").split("/").filter((part) => part !== "" && part !== ".");
  if (parts.at(-1)?.toLowerCase().endsWith(".json")) {
    if (parts.at(-1) !== "marketplace.json" || (parts.at(-2) !== ".claude-plugin" && parts.at(-2) !== ".xcsh-plugin")) {
      throw new XcshToolsError("ETEAM_SOURCE", `${file}: ${at}: ${JSON.stringify(declared)} names a catalog file other than <folder>/.claude-plugin/marketplace.json or <folder>/.xcsh-plugin/marketplace.json`, {
        file,
        path: at,
        hint: "Point `path` at the marketplace's folder (the one holding .claude-plugin/ or .xcsh-plugin/), or at its .claude-plugin/marketplace.json.",
      });
    }
    parts.splice(-2);
  }
  return parts.length > 0 ? parts.join("/") : undefined;
}

/** The lock's name of a prepared plugin's content hash (marketplace/tree.ts `hashTree`, algorithm `tree1`). */
export function lockedTreeHash(prepared: Pick<PreparedPlugin, "hash">): string {
  return `tree1-sha256:${prepared.hash}`;
}

/** The lock entry of a marketplace fetched now. */
function lockedMarketplaceOf(source: DeclaredSource, fetched: FetchedDeclaredMarketplace): LockedMarketplace {
  return { ...(fetched.commit ? { commit: fetched.commit } : {}), ...(source.source === "url" && fetched.sha256 ? { sha256: fetched.sha256 } : {}), source };
}

/**
 * `EINTEGRITY` when a `url` catalog kept from the lock serves other bytes than its locked
 * `sha256` (a url catalog has no commit: its bytes are its identity). The fetcher keeps what it
 * read, so the plugins are then prepared from exactly the bytes checked here.
 */
async function checkUrlCatalogs(set: EffectiveSet, lock: TeamLock, resolved: readonly string[], fetcher: MarketplaceFetcher): Promise<void> {
  for (const [name, { source }] of set.marketplaces) {
    const expected = lock.marketplaces[name]?.sha256;
    if (source.source !== "url" || expected === undefined || resolved.includes(name)) continue;
    const got = (await fetcher.fetch(name)).sha256;
    if (got === expected) continue;
    const file = path.join(set.root, TEAM_LOCK_FILE);
    const at = pointer("", "marketplaces", name, "sha256");
    throw new XcshToolsError("EINTEGRITY", `${file}: ${at}: the catalog at ${source.url} does not match the lock (expected ${expected}, got ${got ?? "no bytes"})`, {
      file,
      path: at,
      hint: "Nothing was installed. The catalog changed behind the lock: if the change is wanted, run `xcsh-tools update --scope project` and review the new lock; otherwise ask its owner to restore it.",
    });
  }
}

/** Where a prepared plugin's bytes came from, as the lock records it. */
function pluginFromOf(prepared: PreparedPlugin, file: string): PluginFrom {
  const source = prepared.entry.source;
  const at = `${pointer("", "marketplacePlugins", prepared.id, "from")} (${prepared.marketplace.entry.name}'s catalog entry "${prepared.plugin}")`;
  if (typeof source === "string") return { kind: "relative", path: source };
  const commit = prepared.gitCommitSha;
  switch (source.source) {
    case "github":
      if (commit) return { kind: "github", repo: source.repo, commit };
      break;
    case "url":
      if (commit) return { kind: "git", url: source.url, commit, ...(source.path ? { path: source.path } : {}) };
      break;
    case "git-subdir":
      if (commit) return { kind: "git-subdir", url: source.url, path: source.path, commit };
      break;
    case "npm":
      if (prepared.integrity) return { kind: "npm", package: source.package, version: prepared.version, integrity: prepared.integrity };
      break;
    case "archive":
      // A committed lock is fetched on every teammate's machine: plain http (which a catalog on one's own disk may name) is no place to fetch from.
      if (!/^https:\/\//i.test(source.url)) {
        throw new XcshToolsError("ESOURCE_URL", `${file}: ${at}: the archive URL ${JSON.stringify(source.url)} is not https, which a team lock requires (expected an https:// URL)`, {
          file,
          path: at,
          hint: "Ask the marketplace's owner to serve the archive over https, or leave the plugin out of the set.",
        });
      }
      if (prepared.archiveSha256) return { kind: "archive", url: source.url, sha256: prepared.archiveSha256 };
      break;
  }
  throw unsupported(file, at, `a plugin from a ${source.source} source`);
}

/**
 * Fetches each declared marketplace once per run, into scratch: at the declared ref (resolve) or
 * at its locked commit (restore).
 */
export class MarketplaceFetcher {
  readonly #cache = new Map<string, Promise<FetchedDeclaredMarketplace>>();
  constructor(
    private readonly world: TeamWorld,
    private readonly set: EffectiveSet,
    private readonly scratch: string,
  ) {}

  fetch(name: string, commit?: string): Promise<FetchedDeclaredMarketplace> {
    const key = `${name}@${commit ?? ""}`;
    let found = this.#cache.get(key);
    if (!found) {
      const declared = this.set.marketplaces.get(name)!;
      const file = declared.from.file;
      const dir = path.join(this.scratch, `m${this.#cache.size}`);
      found = fetchDeclaredMarketplace(this.world.ctx, name, catalogSpecOf(this.set.root, name, declared.source, file, commit), dir, file);
      this.#cache.set(key, found);
    }
    return found;
  }

  /** Prepare `key` (`name@marketplace`) from its marketplace fetched at `commit`, its source pinned as the lock's `from` says. */
  async prepare(key: string, commit: string | undefined, index: number, from?: PluginFrom): Promise<PreparedPlugin> {
    const id = splitPluginId(key)!;
    const market = await this.fetch(id.marketplace, commit);
    const prepared = await prepareDeclaredPlugin(this.world.ctx, market, id.plugin, path.join(this.scratch, `p${index}`), from);
    if (prepared.id !== key) {
      const file = declarationFileOf(this.set, id.marketplace);
      throw new XcshToolsError("ETEAM_PLUGIN_DELISTED", `${file}: ${pointer("", "plugins", key)}: marketplace "${id.marketplace}" renamed ${key} to ${prepared.id}`, {
        file,
        path: pointer("", "plugins", key),
        hint: `Declare ${prepared.id} instead of ${key} in ${path.basename(file)}.`,
      });
    }
    return prepared;
  }
}

/** Resolve one npm plugin: exact version and integrity of the declared spec, and its closure. */
export async function resolveNpmPlugin(world: TeamWorld, plugin: SetPlugin, scratch: string): Promise<LockedNpmPlugin> {
  const spec = plugin.spec ?? "latest";
  const raw = `${plugin.key}@${spec}`;
  const pacote = await loadPacote();
  let pkg: Record<string, unknown>;
  try {
    pkg = (await pacote.manifest(raw, { ...npmOptions(world.npm), fullMetadata: true, where: scratch } as never)) as unknown as Record<string, unknown>;
  } catch (error) {
    throw npmError(error, raw, world.npm, plugin.key);
  }
  const version = String(pkg.version);
  const integrity = await packedIntegrity(world.npm, scratch, raw, typeof pkg._integrity === "string" ? pkg._integrity : undefined);
  if (pkg.name !== plugin.key || !integrity) {
    throw new XcshToolsError("ETEAM_UNSATISFIABLE", `${raw} resolved to ${String(pkg.name)}@${version}${integrity ? "" : " without an integrity"} (expected ${plugin.key} with an integrity to lock)`, {
      hint: `Check the spec of ${plugin.key} in xcsh-team.json.`,
    });
  }
  const parsed = npa.resolve(plugin.key, spec, "/");
  let from: LockedNpmPlugin["from"];
  if (parsed.type === "git") {
    const commit = /#([0-9a-f]{40})$/.exec(String(pkg._resolved ?? ""))?.[1];
    if (!commit) throw new XcshToolsError("ETEAM_UNSATISFIABLE", `${raw} resolved to no commit (${String(pkg._resolved)})`, { hint: `Check the git URL of ${plugin.key} in xcsh-team.json.` });
    from = { kind: "git", url: npmGitUrlOf(plugin.key, spec)!, commit };
  } else if (parsed.type === "remote") from = { kind: "tarball", url: spec };
  return { version, ...(from ? { from } : {}), integrity, dependencies: await npmClosure(world, plugin.key, from ? spec : version, scratch) };
}

/**
 * The plugin's dependency closure, layout-free (`name@version → integrity`): arborist's ideal tree
 * of the plugin alone, as npm would install it, without touching the user's tree.
 */
async function npmClosure(world: TeamWorld, name: string, spec: string, scratch: string): Promise<Record<string, string>> {
  const dir = await mkdtemp(path.join(scratch, "closure-"));
  try {
    await writeFile(path.join(dir, "package.json"), `${JSON.stringify({ name: "xcsh-team-closure", version: "0.0.0", private: true, dependencies: { [name]: spec } })}\n`);
    const Arborist = await loadArborist();
    let tree: { inventory: Map<string, { isRoot: boolean; packageName: string; version: string; integrity: string | null; parent: unknown; root: unknown; location: string }> };
    try {
      tree = (await new Arborist({ ...npmOptions(world.npm), path: dir }).buildIdealTree()) as never;
    } catch (error) {
      throw npmError(error, `${name}@${spec}`, world.npm, name);
    }
    const out: Record<string, string> = {};
    for (const node of tree.inventory.values()) {
      if (node.isRoot || node.location === `node_modules/${name}`) continue;
      if (!node.integrity) {
        throw new XcshToolsError("ETEAM_UNSATISFIABLE", `${name}@${spec} depends on ${node.packageName}@${node.version}, which has no integrity (a git or folder dependency) and cannot be locked`, { hint: `Ask the author of ${name} to depend on a published version.` });
      }
      Object.defineProperty(out, `${node.packageName}@${node.version}`, { value: node.integrity, enumerable: true, writable: true, configurable: true });
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `ETEAM_UNSATISFIABLE` when the catalog's version does not meet the declared range. */
function checkMarketplaceRange(plugin: SetPlugin, prepared: PreparedPlugin, file: string): void {
  if (plugin.version === undefined || semver.satisfies(prepared.version, plugin.version, { includePrerelease: true })) return;
  throw new XcshToolsError("ETEAM_UNSATISFIABLE", `${file}: ${pointer("", "plugins", plugin.key, "version")}: the marketplace offers ${plugin.key} ${prepared.version}, which does not meet the declared range ${plugin.version}`, {
    file,
    path: pointer("", "plugins", plugin.key, "version"),
    hint: `Change the range, or pin the marketplace's ref to a commit that offers a matching version.`,
  });
}

/**
 * Resolve what the lock lacks or no longer describes: missing and stale entries anew, extra ones
 * dropped, `ok` ones kept as they are. `scratch` (ours) holds the fetched copies until the caller
 * is done with `prepared`.
 */
export async function resolveTeamLock(world: TeamWorld, set: EffectiveSet, lock: TeamLock | undefined, scratch: string, fetcher = new MarketplaceFetcher(world, set, scratch)): Promise<ResolvedLock> {
  const before = lock ?? emptyLock();
  const satisfaction = satisfies(set, before);
  const next: TeamLock = { lockfileVersion: before.lockfileVersion, marketplaces: { ...before.marketplaces }, marketplacePlugins: { ...before.marketplacePlugins }, npm: { ...before.npm } };
  const prepared = new Map<string, PreparedPlugin>();
  const resolved: string[] = [];
  const put = <T>(section: Record<string, T>, key: string, value: T) => Object.defineProperty(section, key, { value, enumerable: true, writable: true, configurable: true });
  // Marketplaces first: a plugin resolved anew is prepared from its marketplace at the commit locked now.
  for (const [index, entry] of satisfaction.entries()) {
    const section = next[entry.section] as Record<string, unknown>;
    if (entry.state === "extra") {
      delete section[entry.key];
      continue;
    }
    if (entry.state === "ok") continue;
    resolved.push(entry.key);
    if (entry.section === "marketplaces") {
      const declared = set.marketplaces.get(entry.key)!;
      put(next.marketplaces, entry.key, lockedMarketplaceOf(declared.source, await fetcher.fetch(entry.key)));
    } else if (entry.section === "marketplacePlugins") {
      const plugin = set.plugins.get(entry.key)!;
      const market = splitPluginId(entry.key)!.marketplace;
      const file = declarationFileOf(set, market);
      const ready = await fetcher.prepare(entry.key, next.marketplaces[market]?.commit, index);
      checkMarketplaceRange(plugin, ready, file);
      prepared.set(entry.key, ready);
      put(next.marketplacePlugins, entry.key, { version: ready.version, from: pluginFromOf(ready, file), hash: lockedTreeHash(ready) } satisfies LockedMarketplacePlugin);
    } else {
      await mkdir(scratch, { recursive: true });
      put(next.npm, entry.key, await resolveNpmPlugin(world, set.plugins.get(entry.key)!, scratch));
    }
  }
  await checkUrlCatalogs(set, next, resolved, fetcher);
  return { lock: next, satisfaction, resolved, prepared };
}

/** The lock's canonical bytes when they differ from the file's (`undefined`: nothing to write, a no-op). */
export async function lockTextIfChanged(file: string, lock: TeamLock): Promise<string | undefined> {
  const text = formatLock(lock, file);
  const current = await readFile(file, "utf8").catch(() => undefined);
  return current === text ? undefined : text;
}

/** Our scratch folder for a run (beside the journal, as the marketplace engine's). */
export function teamScratchParent(world: TeamWorld): string {
  return path.join(xcshPaths(world.ctx.roots).ours, "tmp");
}
