/**
 * Preparing one plugin of a marketplace for install, entirely outside live state: find the
 * catalog entry, fetch its source into scratch, copy it without `.git`, hash the copy, settle the
 * version, and check the copy statically the way the host will load it. Its tool modules are
 * imported (in a child process) only by `importPreparedTools`, which the engine calls after the
 * user allowed what the plugin runs, and never on a dry run: no code of the plugin runs before
 * consent. Only a plugin that passes both counts as installable.
 *
 * Version, first found, as Claude Code records it (plugin.json over the catalog entry: issue 45):
 * what the source resolved (npm) → `.xcsh-plugin/plugin.json` → `.claude-plugin/plugin.json` →
 * the catalog entry's `version` → `package.json` → the first 12 characters of the plugin's commit
 * sha (as Claude Code records a plugin without a version; an in-repo plugin of a git marketplace
 * or of a local folder that is a git work tree has that repository's commit) → those of an
 * archive's sha256 → `unknown` (Claude Code's word). The cache folder adds the first 12 hex digits of the content hash, so the
 * version string alone never decides which folder is used.
 *
 * A name the catalog `renames` is followed to its current name (`renamedFrom` says so).
 */
import { cp, mkdir, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { isPathInside } from "../core/contain.js";
import { XcshToolsError } from "../core/errors.js";
import { assertNotForbidden, assertSourcesAllowed, catalogPluginPolicySource, catalogPolicySource } from "../core/policy.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import type { MarketplacePluginEntry } from "../manifest/marketplace-catalog.js";
import { pluginDependencies, type PluginDependency } from "../manifest/plugin-json.js";
import { validateInStages, type StagedValidation, type ValidateReport } from "../validate/index.js";
import { catalogOriginOf, readCachedCatalog, readCatalogIn, type LoadedCatalog } from "./catalog.js";
import { xcshPaths } from "../core/paths.js";
import type { MarketplaceContext } from "./context.js";
import { checkedLocalFolder } from "./local-folders.js";
import { pluginSourceOf, type FetchedPlugin } from "./plugin-sources/index.js";
import { catalogDirOf, catalogPathOf, type FoundMarketplace } from "./state.js";
import { copyPluginTree, hashTree } from "./tree.js";

const VERSION_RE = /^[a-zA-Z0-9._+-]+$/;

/** A plugin ready to be installed. */
export interface PreparedPlugin {
  id: string;
  plugin: string;
  marketplace: FoundMarketplace;
  entry: MarketplacePluginEntry;
  /** The scratch copy (no .git). */
  copy: string;
  hash: string;
  version: string;
  gitCommitSha?: string;
  /** npm sources: the integrity of the package extracted (a team lock pins it). */
  integrity?: string;
  /** archive sources: the sha256 (hex) of the archive downloaded (a team lock pins it). */
  archiveSha256?: string;
  /** `<pluginCache>/<mkt>___<plugin>___<version>-<hash12>`. */
  cacheDir: string;
  warnings: string[];
  /** The name asked for, when the catalog renamed it to `plugin`. */
  renamedFrom?: string;
  /** Whether a fresh install starts enabled: the entry's `defaultEnabled`, else plugin.json's. */
  defaultEnabled?: boolean;
  /** The copy's validation, static checks done; its tool modules not imported yet. */
  validation: StagedValidation;
  /**
   * What its plugin.json says it depends on, each with its marketplace (the plugin's own when it
   * names none): an install brings those in too, as Claude Code does. `foreign`: in another
   * marketplace that this one's catalog does not allow (`allowCrossMarketplaceDependenciesOn`),
   * which Claude Code does not install: a catalog may not pull plugins from another on its own.
   */
  dependencies: (PluginDependency & { marketplace: string; foreign?: true })[];
}

/** Follow the catalog's `renames` from `plugin` to a listed name (a chain is followed, a loop is not). */
export function followRename(catalog: Pick<LoadedCatalog["catalog"], "renames" | "plugins">, plugin: string): string | undefined {
  const renames = catalog.renames ?? {};
  const seen = new Set<string>([plugin]);
  let name = plugin;
  while (Object.hasOwn(renames, name) && typeof renames[name] === "string") {
    name = renames[name]!;
    if (seen.has(name)) return undefined;
    seen.add(name);
    if (catalog.plugins.some((p) => p.name === name)) return name;
  }
  return undefined;
}

/** The catalog of a marketplace, checked against the live folder for local ones. */
export async function catalogOf(ctx: Pick<MarketplaceContext, "roots" | "cwd">, found: FoundMarketplace): Promise<LoadedCatalog> {
  const origin = catalogOriginOf(found.entry);
  const cached = await readCachedCatalog(catalogPathOf(found), found.entry.name, origin);
  if (found.entry.sourceType === "local") {
    const folder = checkedLocalFolder(ctx, found);
    const live = await readCatalogIn(folder, `The marketplace folder ${found.entry.sourceUri}`, origin).catch(() => undefined);
    if (live && JSON.stringify(live.catalog) !== JSON.stringify(cached.catalog)) {
      throw new XcshToolsError("ECATALOG_STALE", `The catalog of marketplace "${found.entry.name}" changed in ${found.entry.sourceUri} since it was added or last updated`, {
        hint: `Run \`xcsh-tools marketplace update ${found.entry.name}\` to see and accept the changes, then retry.`,
      });
    }
    // The live folder says why an entry was left out (the cache keeps only the valid entries).
    if (live?.skipped) return { ...cached, skipped: live.skipped };
  }
  return cached;
}

/** The folder relative plugin sources of a marketplace resolve in. */
export function relativeRootOf(ctx: Pick<MarketplaceContext, "roots" | "cwd">, found: FoundMarketplace): string | undefined {
  if (found.entry.sourceType === "local") return checkedLocalFolder(ctx, found);
  if (found.entry.sourceType === "url") return undefined;
  return catalogDirOf(found);
}

/** The catalog entry `plugin`, or `EPLUGIN_NOT_FOUND` listing what the catalog has. */
export function catalogEntry(loaded: LoadedCatalog, plugin: string, marketplace: string): MarketplacePluginEntry {
  const renamed = loaded.catalog.plugins.some((p) => p.name === plugin) ? plugin : followRename(loaded.catalog, plugin);
  const entry = loaded.catalog.plugins.find((p) => p.name === (renamed ?? plugin));
  if (entry) return entry;
  // Left out when the catalog was read: say why, with the entry's own code (EGIT_URL, EGIT_REF…).
  const skipped = loaded.skipped?.find((s) => s.name === plugin);
  if (skipped) {
    throw new XcshToolsError(skipped.issue.code, `Plugin "${plugin}" of marketplace "${marketplace}" cannot be installed: ${loaded.file} ${skipped.issue.message}`, {
      file: loaded.file,
      path: skipped.issue.path,
      hint: `${skipped.issue.hint ?? "Ask the marketplace owner to fix the entry."} Nothing was fetched; the entry is left out of the catalog.`,
      exitCode: 2,
    });
  }
  const names = loaded.catalog.plugins.map((p) => p.name);
  const close = names.filter((n) => n.includes(plugin) || plugin.includes(n)).slice(0, 3);
  throw new XcshToolsError("EPLUGIN_NOT_FOUND", `Plugin "${plugin}" is not in marketplace "${marketplace}"`, {
    hint: close.length > 0 ? `Did you mean ${close.map((n) => `${n}@${marketplace}`).join(", ")}?` : `Run \`xcsh-tools marketplace discover ${marketplace}\` to see its ${names.length} plugin(s), or \`marketplace update ${marketplace}\` to refresh it.`,
  });
}

/** The copy's manifests that may name its version: both plugin.json files, then package.json; each read once. */
function manifestsOf(copy: string): { pluginJsons: unknown[]; packageJson: unknown } {
  const read = (file: string) => readJsonOrUndefined(path.join(copy, file));
  return { pluginJsons: [read(path.join(".xcsh-plugin", "plugin.json")), read(path.join(".claude-plugin", "plugin.json"))], packageJson: read("package.json") };
}

/** `field` of a manifest, when it is an object. */
const fieldOf = (doc: unknown, field: "version" | "defaultEnabled"): unknown => (isRecord(doc) ? doc[field] : undefined);

function settleVersion(manifests: ReturnType<typeof manifestsOf>, entry: MarketplacePluginEntry, fetched: FetchedPlugin): string {
  const fromPluginJson = manifests.pluginJsons.map((doc) => fieldOf(doc, "version"));
  const candidates = [fetched.version, ...fromPluginJson, entry.version, fieldOf(manifests.packageJson, "version"), fetched.gitCommitSha?.slice(0, 12), fetched.archiveSha256?.slice(0, 12)];
  return candidates.find((v): v is string => typeof v === "string" && v.length > 0) ?? "unknown";
}

/** A folder-safe form of a version. */
export function cacheVersion(version: string): string {
  const clean = version.replace(/[^a-zA-Z0-9._+-]/g, "_").replace(/\.\.+/g, "_").slice(0, 64);
  return VERSION_RE.test(clean) ? clean : "0.0.0";
}

/** The content-keyed cache folder of a plugin. */
export function cacheDirOf(ctx: Pick<MarketplaceContext, "roots">, marketplace: string, plugin: string, version: string, hash: string): string {
  return path.join(xcshPaths(ctx.roots).pluginCache, `${marketplace}___${plugin}___${cacheVersion(version)}-${hash.slice(0, 12)}`);
}

/** The content hash prefix a cache folder name carries (undefined for folders the host made). */
export function hashOfCacheDir(installPath: string): string | undefined {
  return /-([0-9a-f]{12})$/.exec(path.basename(installPath))?.[1];
}

/** Fetch `entry`'s source into `scratch` (an existing folder) and copy it without `.git` to `<scratch>/copy`, hashed. */
export async function fetchCopy(ctx: MarketplaceContext, found: FoundMarketplace, loaded: LoadedCatalog, entry: MarketplacePluginEntry, scratch: string, folderCommit = true): Promise<{ fetched: FetchedPlugin; copy: string; hash: string }> {
  assertMarketplacePluginAllowed(found, entry);
  const fetched = await pluginSourceOf(entry.source, entry.name).fetch({ entry, catalog: loaded.catalog, marketplace: found.entry, root: relativeRootOf(ctx, found), folderCommit }, scratch, ctx);
  const copy = path.join(scratch, "copy");
  await copyPluginTree(fetched.dir, copy, fetched.within);
  if (entry.strict === false) await applyEntryDefinition(copy, entry, path.join(scratch, "entry-skills"));
  return { fetched, copy, hash: await hashTree(copy) };
}

/**
 * A `strict: false` entry is the plugin's whole definition in Claude Code: its `skills` list is
 * the plugin's skills and its `lspServers` object its LSP servers, whatever else the folder holds
 * (Claude Code 2.1.332, conformance install case strict-false-skills-lsp). The host reads no
 * manifest, only the default `skills/` folder (docs/components.md), so the copy is made to say the
 * same: `skills/` holds exactly the listed skill folders, and the entry's `lspServers` become the
 * copy's `.lsp.json` when it has none (`show` lists them; the host does not run LSP servers).
 * A listed path that leaves the copy or holds no SKILL.md is skipped: validation of the catalog
 * reported it, and no path of an untrusted catalog is read outside the plugin.
 */
async function applyEntryDefinition(copy: string, entry: MarketplacePluginEntry, staging: string): Promise<void> {
  const listed = typeof entry.skills === "string" ? [entry.skills] : Array.isArray(entry.skills) ? entry.skills : undefined;
  if (listed) {
    const root = await realpath(copy);
    await rm(staging, { recursive: true, force: true });
    await mkdir(staging, { recursive: true });
    for (const item of listed) {
      const dir = await realpath(path.resolve(copy, item)).catch(() => undefined);
      if (!dir || !isPathInside(dir, root) || dir === root || !(await stat(path.join(dir, "SKILL.md")).catch(() => undefined))?.isFile()) continue;
      await cp(dir, path.join(staging, path.basename(dir)), { recursive: true, errorOnExist: false, force: true });
    }
    await rm(path.join(copy, "skills"), { recursive: true, force: true });
    await rename(staging, path.join(copy, "skills"));
  }
  const lsp = path.join(copy, ".lsp.json");
  if (isRecord(entry.lspServers) && !(await stat(lsp).catch(() => undefined))) await writeFile(lsp, `${JSON.stringify(entry.lspServers, null, 2)}\n`);
}

/**
 * What a team lock pins of a plugin's source: a git commit, an npm version with its integrity,
 * an archive's sha256. The catalog at the locked commit may name a branch that moved since, an
 * npm range a newer release now meets, an archive without a digest.
 */
export type PluginPin = { commit: string } | { version: string; integrity: string } | { sha256: string };

/** The entry with its source pinned (a pin of another kind than the source leaves it as it is). */
function pinnedEntry(entry: MarketplacePluginEntry, pin: PluginPin | undefined): MarketplacePluginEntry {
  const source = entry.source;
  if (pin === undefined || typeof source === "string") return entry;
  if ("commit" in pin && (source.source === "github" || source.source === "url" || source.source === "git-subdir")) return { ...entry, source: { ...source, sha: pin.commit } };
  // `integrity` is not a catalog field of npm sources: the npm kind verifies the bytes with it (plugin-sources/npm.ts).
  if ("integrity" in pin && source.source === "npm") return { ...entry, source: { ...source, version: pin.version, integrity: pin.integrity } as typeof source };
  if ("sha256" in pin && source.source === "archive") return { ...entry, source: { ...source, sha256: pin.sha256 } };
  return entry;
}

/**
 * The organization policy of one catalog entry, before its bytes are fetched: the marketplace's
 * recorded source (marketplace rules), the plugin's own source (plugin rules; a relative source
 * is the marketplace's own bytes) and the forbidden list.
 */
export function assertMarketplacePluginAllowed(found: FoundMarketplace, entry: MarketplacePluginEntry): void {
  const id = `${entry.name}@${found.entry.name}`;
  const market = catalogPolicySource(found.entry.sourceType, found.entry.sourceUri);
  const policy = assertSourcesAllowed([
    { source: market, what: "marketplace", subject: `${id} (marketplace ${found.entry.name})` },
    { source: catalogPluginPolicySource(entry.source, market), what: "plugin", subject: `install ${id}` },
  ]);
  assertNotForbidden(policy, id);
}

/** The organization policy of `plugin@marketplace` before its marketplace's catalog is read (a local one is read live): the marketplace's recorded source, the forbidden list. */
export function assertMarketplaceAllowed(found: FoundMarketplace, plugin: string): void {
  const marketplace = found.entry.name;
  assertNotForbidden(assertSourcesAllowed([{ source: catalogPolicySource(found.entry.sourceType, found.entry.sourceUri), what: "marketplace", subject: `${plugin}@${marketplace} (marketplace ${marketplace})` }]), `${plugin}@${marketplace}`);
}

/**
 * Fetch, copy, hash and validate `plugin@marketplace` into `scratch` (its git source at
 * `options.pinCommit` when given). `folderCommit: false`: an in-repo plugin of a local folder
 * marketplace records no commit of the folder's work tree (a team set's folder, pinned by content).
 */
export async function preparePlugin(ctx: MarketplaceContext, found: FoundMarketplace, plugin: string, scratch: string, options: { pinCommit?: string; pin?: PluginPin; folderCommit?: boolean } = {}): Promise<PreparedPlugin> {
  const marketplace = found.entry.name;
  assertMarketplaceAllowed(found, plugin);
  await mkdir(scratch, { recursive: true });
  const loaded = await catalogOf(ctx, found);
  const entry = pinnedEntry(catalogEntry(loaded, plugin, marketplace), options.pin ?? (options.pinCommit ? { commit: options.pinCommit } : undefined));
  const renamedFrom = entry.name !== plugin ? plugin : undefined;
  plugin = entry.name;
  const { fetched, copy, hash } = await fetchCopy(ctx, found, loaded, entry, scratch, options.folderCommit !== false);
  const manifests = manifestsOf(copy);
  const version = settleVersion(manifests, entry, fetched);
  // Whether a fresh install starts enabled: the entry's `defaultEnabled`, else plugin.json's.
  const defaultEnabled = [entry.defaultEnabled, ...manifests.pluginJsons.map((doc) => fieldOf(doc, "defaultEnabled"))].find((v): v is boolean => typeof v === "boolean");
  // The plugin folder checked as discovery loads it, statically: nothing of it runs here. Its
  // module shims and transpile cache go to a scratch root next to the copy, so a dry run writes nothing of ours.
  const validation = await validateInStages(copy, { cwd: ctx.cwd, home: ctx.roots.home, xcshHome: path.join(scratch, "validate-root"), as: "plugin-folder", componentProblems: "warning" });
  const report = validation.report;
  if (!report.ok) throw invalidPlugin(`${plugin}@${marketplace}`, version, copy, report);
  const cacheDir = cacheDirOf(ctx, marketplace, plugin, version, hash);
  return {
    id: `${plugin}@${marketplace}`,
    plugin,
    marketplace: found,
    entry,
    copy,
    hash,
    version,
    ...(fetched.gitCommitSha ? { gitCommitSha: fetched.gitCommitSha } : {}),
    ...(fetched.integrity ? { integrity: fetched.integrity } : {}),
    ...(fetched.archiveSha256 ? { archiveSha256: fetched.archiveSha256 } : {}),
    cacheDir,
    warnings: [
      ...(renamedFrom ? [`ERENAMED ${renamedFrom}@${marketplace} is now ${plugin}@${marketplace} (the catalog's renames); ${plugin}@${marketplace} is installed instead`] : []),
      ...report.warnings.map((w) => installedWarning(w, copy, cacheDir)),
    ],
    ...(renamedFrom ? { renamedFrom } : {}),
    ...(defaultEnabled !== undefined ? { defaultEnabled } : {}),
    validation,
    dependencies: (manifests.pluginJsons.map(pluginDependencies).find((deps) => deps.length > 0) ?? []).map((dep) => {
      const at = dep.marketplace ?? marketplace;
      const foreign = at !== marketplace && !(loaded.catalog.allowCrossMarketplaceDependenciesOn ?? []).includes(at);
      return { ...dep, marketplace: at, ...(foreign ? { foreign: true as const } : {}) };
    }),
  };
}

/**
 * A finding of the scratch copy as the user must read it: the copy is checked before it is
 * installed, in a scratch folder that is gone once the command ends, so every path of it (the
 * file, and any in the message) names the folder it is installed to, `as`; a refused install
 * names paths relative to the plugin (`.`, as nothing was installed).
 */
function inPlaceOf(text: string, copy: string, as: string): string {
  return text.split(copy + path.sep).join(as === "." ? "" : as + path.sep).split(copy).join(as);
}

/** One warning of the copy's validation: code, the installed file and field, the message. */
function installedWarning(w: ValidateReport["warnings"][number], copy: string, cacheDir: string): string {
  const file = inPlaceOf(w.file, copy, cacheDir);
  return `${w.code} ${file}${w.path && !w.message.startsWith("/") ? ` ${w.path}` : ""}: ${inPlaceOf(w.message, copy, cacheDir)}`;
}

/** `EPLUGIN_INVALID` for the first problems of `report`. */
function invalidPlugin(id: string, version: string, copy: string, report: ValidateReport): XcshToolsError {
  const first = report.errors.slice(0, 3).map((e) => `${path.relative(copy, e.file) || "."}${e.path ? ` ${e.path}` : ""}: ${e.code} ${inPlaceOf(e.message, copy, ".")}`);
  return new XcshToolsError("EPLUGIN_INVALID", `Plugin ${id} ${version} does not load as the host would load it: ${first.join("; ")}${report.errors.length > 3 ? ` (and ${report.errors.length - 3} more)` : ""}`, {
    hint: "Nothing was installed. Tell the plugin's author; `xcsh-tools validate --static <folder>` on a checkout shows every problem without running its code.",
    // A validation error, like the npm engine's EPLUGIN_INVALID (docs/error-codes.md: exit 2).
    exitCode: 2,
  });
}

/**
 * The second half of the install gate, called only once the user allowed what `prepared` runs:
 * import its tool modules in the checker child (the first time any code of the plugin runs) and
 * check their tools; `EPLUGIN_INVALID` when they do not load. A dry run imports nothing and says so.
 */
export async function importPreparedTools(prepared: PreparedPlugin, dryRun: boolean): Promise<void> {
  const modules = prepared.validation.report.modules;
  if (modules === 0) return;
  if (dryRun) {
    prepared.warnings.push(`WNOT_IMPORTED ${modules} tool module(s) not imported (a dry run runs no plugin code): an install imports and checks them after you allow what the plugin runs`);
    return;
  }
  const report = await prepared.validation.importModules();
  if (!report.ok) throw invalidPlugin(prepared.id, prepared.version, prepared.copy, report);
  const known = new Set(prepared.validation.report.warnings);
  prepared.warnings.push(...report.warnings.filter((w) => !known.has(w)).map((w) => installedWarning(w, prepared.copy, prepared.cacheDir)));
}
