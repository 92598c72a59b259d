/**
 * The organization policy at boot (core/policy.ts): a plugin whose recorded source the policy no
 * longer allows, or that it forbids, is not loaded, and the loader's result says why with the
 * policy's code. A policy file that exists but is unusable loads no plugin tool at all (never
 * fails open); a machine without a policy file pays one failed read.
 *
 * The recorded sources: an npm plugin's dependency in the plugins package.json (and the registry
 * of the tarball URL npm's lockfile recorded) — for a seeded plugin (`source.seed`), those of its
 * seed's own `plugins/` folder, since the user's files do not name it — a marketplace plugin's marketplace in
 * marketplaces.json and its own source in that marketplace's cached catalog. Claude Code's
 * plugins are judged by their id only (the forbidden list): their sources are Claude Code's.
 */
import path from "node:path";
import type { ToolLoadError, ToolPathWithSource } from "../core/contract.js";
import { projectFolder, projectRootOf, xcshPaths, type XcshRoots } from "../core/paths.js";
import { managedPolicyFile, managedPolicyPresent } from "../core/policy-file.js";
import type { LoadedPolicy, ManagedPolicy, PolicySource, PolicyVerdict } from "../core/policy.js";

/**
 * `items` without the tools of plugins the policy refuses, and one coded error per refused plugin;
 * `entryOf` gives each item's discovered path (the boot's paths, or `tools`' prepared modules).
 */
export async function applyManagedPolicy<T>(items: T[], entryOf: (item: T) => ToolPathWithSource, roots: XcshRoots, cwd: string): Promise<{ kept: T[]; errors: ToolLoadError[] }> {
  if (!items.some((item) => entryOf(item).source?.plugin !== undefined)) return { kept: items, errors: [] };
  const loaded = await loadPolicyIfPresent();
  if (loaded.state === "none") return { kept: items, errors: [] };
  const judge = await policyJudge(loaded, roots, cwd);
  const verdicts = new Map<string, { code: string; reason: string } | undefined>();
  const errors: ToolLoadError[] = [];
  const kept = items.filter((item) => {
    const p = entryOf(item);
    const plugin = p.source?.plugin;
    if (plugin === undefined || p.source === undefined) return true;
    const key = `${p.source.provider}\u0000${plugin}\u0000${p.source.seed ?? ""}`;
    if (!verdicts.has(key)) {
      const refused = judge(p.source.provider, plugin, p.source.seed);
      verdicts.set(key, refused);
      if (refused) errors.push({ path: p.path, code: refused.code, error: `Plugin ${plugin} was not loaded: ${refused.reason} (${loaded.file}).`, source: p.source });
    }
    return verdicts.get(key) === undefined;
  });
  return { kept, errors };
}

/**
 * What the policy says of one installed plugin (by its discovery provider and id, and the seed
 * folder it is used from when a seed provides it): `undefined` when it may load.
 */
export type PolicyJudge = (provider: string, plugin: string, seed?: string) => { code: string; reason: string } | undefined;

/**
 * The managed policy, its reader (TypeBox, the rules) loaded only when a file is there: the
 * host's boot and `tools` on a machine without a policy pay one `stat`.
 */
export async function loadPolicyIfPresent(): Promise<LoadedPolicy> {
  const file = managedPolicyFile();
  if (!managedPolicyPresent(file)) return { state: "none", file };
  return (await import("../core/policy.js")).loadManagedPolicy(file);
}

/** The judge of installed plugins under `loaded` (boot, `tools`, `audit`): a broken policy refuses every plugin. */
export async function policyJudge(loaded: LoadedPolicy, roots: XcshRoots, cwd: string): Promise<PolicyJudge> {
  if (loaded.state === "none") return () => undefined;
  if (loaded.state === "broken") return () => ({ code: loaded.error.code, reason: `${loaded.error.message}; no plugin is loaded until it is fixed` });
  return judgeWith(loaded.policy, roots, cwd);
}

async function judgeWith(policy: ManagedPolicy, roots: XcshRoots, cwd: string): Promise<PolicyJudge> {
  // The policy's reader and the plugin id's parser bring TypeBox: loaded only when a policy is in effect.
  // The JSON reader too: this module is in every host's boot chunk (scripts/lib/bundle.mjs), the reader in the CLI's.
  const [{ catalogPluginPolicySource, catalogPolicySource, checkSource, listNames }, { splitPluginId }, { readJsonOrUndefined }] = await Promise.all([
    import("../core/policy.js"),
    import("../manifest/installed-plugins.js"),
    import("../manifest/json-file.js"),
  ]);
  const readQuietly = quietReader(readJsonOrUndefined);
  const paths = xcshPaths(roots);
  const { npmPolicySource } = await import("../core/policy-npm.js");
  const own = recordedNpm(paths.plugins, readQuietly);
  // One read per seed folder, however many of its plugins are judged.
  const seeds = new Map<string, RecordedNpm>();
  const seeded = (seed: string) => seeds.get(seed) ?? seeds.set(seed, recordedNpm(path.join(seed, "plugins"), readQuietly)).get(seed)!;
  const project = projectRootOf(cwd, roots);
  const markets = marketplaceEntries(readQuietly, [paths.marketplacesRegistry, ...(project !== undefined ? [path.join(projectFolder(cwd, roots, project), "marketplaces.json")] : [])]);
  const refusal = (verdict: PolicyVerdict) => (verdict.allowed ? undefined : { code: verdict.code, reason: verdict.reason });
  return (provider, plugin, seed) => {
    const forbidden = listNames(policy.plugins?.forbidden, plugin);
    if (forbidden !== undefined) return { code: "EPOLICY_FORBIDDEN", reason: `the organization policy forbids it (/plugins/forbidden: "${forbidden}")` };
    if (provider === "npm") {
      const recorded = seed !== undefined ? seeded(seed) : own;
      const locked = recorded.packages[`node_modules/${plugin}`];
      // A seed's plugin loads from its xcsh-seed.json whatever its package.json says: one its
      // package.json does not name is judged as a registry package of the version its lock
      // recorded (no registry known: an allowlist of registries refuses it, never lets it pass).
      const spec = recorded.dependencies[plugin] ?? (seed !== undefined ? (locked?.version ?? "*") : undefined);
      if (spec === undefined) return undefined;
      // The registry the bytes came from: the tarball URL npm recorded (a registry URL's prefix).
      return refusal(checkSource(policy, npmPolicySource(spec, () => locked?.resolved, plugin, recorded.folder), "plugin"));
    }
    if (provider === "xcsh-plugins") {
      const id = splitPluginId(plugin);
      const market = id ? markets.get(id.marketplace) : undefined;
      if (!id || !market) return undefined;
      const marketSource = catalogPolicySource(market.sourceType, market.sourceUri);
      const marketVerdict = checkSource(policy, marketSource, "marketplace");
      if (!marketVerdict.allowed) return refusal(marketVerdict);
      return refusal(checkSource(policy, catalogPluginPolicySource(catalogEntrySource(readQuietly, market.catalogPath, id.plugin), marketSource), "plugin"));
    }
    return undefined;
  };
}

interface RecordedNpm {
  folder: string;
  dependencies: Record<string, string>;
  packages: Record<string, { resolved?: string; version?: string }>;
}

/** What a plugins folder (the user's, or a seed's `plugins/`) records of its npm plugins: the specs of its package.json, its package-lock.json's entries. */
function recordedNpm(folder: string, readQuietly: ReadQuietly): RecordedNpm {
  const deps = (readQuietly(path.join(folder, "package.json")) as { dependencies?: Record<string, string> } | undefined)?.dependencies;
  const packages = (readQuietly(path.join(folder, "package-lock.json")) as { packages?: RecordedNpm["packages"] } | undefined)?.packages;
  return { folder, dependencies: deps !== null && typeof deps === "object" ? deps : {}, packages: packages !== null && typeof packages === "object" ? packages : {} };
}

/** The plugin's source as its marketplace's cached catalog names it (`undefined` when unreadable: the marketplace's own). */
function catalogEntrySource(readQuietly: ReadQuietly, catalogPath: string | undefined, plugin: string): unknown {
  const catalog = catalogPath ? (readQuietly(catalogPath) as { plugins?: { name?: unknown; source?: unknown }[] } | undefined) : undefined;
  const entry = Array.isArray(catalog?.plugins) ? catalog.plugins.find((p) => p?.name === plugin) : undefined;
  return entry?.source;
}

interface RecordedMarketplace {
  sourceType: "github" | "git" | "url" | "local";
  sourceUri: string;
  catalogPath?: string;
}

/** Marketplace entries by name, the project's before the user's (as discovery shadows them). */
function marketplaceEntries(readQuietly: ReadQuietly, files: string[]): Map<string, RecordedMarketplace> {
  const byName = new Map<string, RecordedMarketplace>();
  for (const file of files.reverse()) {
    const doc = readQuietly(file) as { marketplaces?: ({ name?: unknown } & RecordedMarketplace)[] } | undefined;
    for (const entry of Array.isArray(doc?.marketplaces) ? doc.marketplaces : []) {
      if (typeof entry?.name === "string" && typeof entry.sourceUri === "string") byName.set(entry.name, entry);
    }
  }
  return byName;
}

type ReadQuietly = (file: string) => unknown;

/** A state file read for judging only: what discovery reports of a broken file, it reports itself. */
function quietReader(readJsonOrUndefined: (file: string) => unknown): ReadQuietly {
  return (file) => {
    try {
      return readJsonOrUndefined(file);
    } catch {
      return undefined;
    }
  };
}
