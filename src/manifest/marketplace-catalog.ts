/**
 * Marketplace catalogs: `.xcsh-plugin/marketplace.json`, with Claude Code's
 * `.claude-plugin/marketplace.json` as the fallback.
 *
 * A plugin entry's `source` is one of six kinds (Claude Code's, late 2026):
 *
 * | kind | form | required |
 * |---|---|---|
 * | relative | `"./plugins/x"`, resolved from the marketplace root; a bare `"x"` resolves under `metadata.pluginRoot` | `./` (or a `pluginRoot`), no `..` |
 * | `github` | `{source: "github", repo: "owner/repo", ref?, sha?}` | `repo` |
 * | `url` | `{source: "url", url: "https://….git", path?, ref?, sha?}` | `url` |
 * | `git-subdir` | `{source: "git-subdir", url, path, ref?, sha?}` | `url`, `path` |
 * | `npm` | `{source: "npm", package, version?, registry?}` | `package` |
 * | `archive` | `{source: "archive", url: "https://….tar.gz", sha256?, integrity?}` | `url` |
 *
 * `metadata.pluginRoot` follows Claude Code (its issue #68936): a `./` source already starts at
 * the marketplace root and is never prefixed (`./plugins/x` stays `plugins/x`); only a bare name
 * is looked up under the root. A kind that would run a command to produce the plugin is refused
 * (`ESOURCE_COMMAND`): nothing a catalog says is ever executed to install a plugin.
 *
 * The host skips a bad entry and keeps the catalog; a validator reports both. Unknown keys are
 * kept (Claude ignores them too) and typos of known keys are warnings.
 */
import path from "node:path";
import { Type, type Static } from "./typebox.js";
import { semver } from "../core/npm-spec.js";
import { sourceArgHint, gitRefProblem, githubRepoProblem, gitUrlProblem, npmVersionProblem, registryUrlProblem, subdirPathProblem, subdirUrlProblem, type SourceArgProblem } from "../core/source-args.js";
import { PLUGIN_COMPONENT_FIELDS, checkClaudeShapes, checkComponentPaths, checkReservedPluginName } from "./plugin-json.js";
import { entryPathProblem } from "./plugin-manifest.js";
import { XCSH_ONLY_NAME_RULE, claudeNameProblem, nameSegmentProblem, npmNameProblem, pluginIdProblem, reservedPluginNameProblem, suggestNameSegment } from "./names.js";
import { IssueCollector, describeValue, isRecord, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

const Sha = Type.String({ pattern: "^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$" });
const gitPin = { ref: Type.Optional(Type.String({ minLength: 1 })), sha: Type.Optional(Sha) };

export const GithubSourceSchema = Type.Object({ source: Type.Literal("github"), repo: Type.String({ pattern: "^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$" }), ...gitPin });
export const UrlSourceSchema = Type.Object({ source: Type.Literal("url"), url: Type.String({ minLength: 1 }), path: Type.Optional(Type.String({ minLength: 1 })), ...gitPin });
export const GitSubdirSourceSchema = Type.Object({ source: Type.Literal("git-subdir"), url: Type.String({ minLength: 1 }), path: Type.String({ minLength: 1 }), ...gitPin });
export const NpmSourceSchema = Type.Object({ source: Type.Literal("npm"), package: Type.String({ minLength: 1 }), version: Type.Optional(Type.String()), registry: Type.Optional(Type.String()) });
/** A downloadable `.tar.gz` of the plugin; `sha256` (hex) or `integrity` (SRI) pin its bytes. */
export const ArchiveSourceSchema = Type.Object({
  source: Type.Literal("archive"),
  url: Type.String({ minLength: 1 }),
  sha256: Type.Optional(Type.String({ pattern: "^[0-9a-fA-F]{64}$" })),
  integrity: Type.Optional(Type.String({ pattern: "^sha(256|384|512)-[A-Za-z0-9+/]+={0,2}$" })),
});
export const RelativeSourceSchema = Type.String({ minLength: 1 });

export const PluginSourceSchema = Type.Union([RelativeSourceSchema, GithubSourceSchema, UrlSourceSchema, GitSubdirSourceSchema, NpmSourceSchema, ArchiveSourceSchema]);
export type PluginSource = Static<typeof PluginSourceSchema>;

/** The object source kinds and their schemas. */
export const SOURCE_KINDS = { github: GithubSourceSchema, url: UrlSourceSchema, "git-subdir": GitSubdirSourceSchema, npm: NpmSourceSchema, archive: ArchiveSourceSchema } as const;
export type SourceKind = keyof typeof SOURCE_KINDS | "relative";

/**
 * Source kinds that produce a plugin by running a program (Claude Code added one in 2026; pip
 * and build steps are the same thing). Refused by name, and so is any unknown kind that carries
 * a command: installing must never execute what a catalog wrote.
 */
export const COMMAND_SOURCE_KINDS = ["command", "exec", "script", "shell", "build", "run", "pip"];
const COMMAND_FIELDS = ["command", "cmd", "script", "build", "run", "exec", "args"];

const Author = Type.Union([Type.String(), Type.Object({ name: Type.String(), email: Type.Optional(Type.String()), url: Type.Optional(Type.String()) })]);

export const PrerequisiteSchema = Type.Object({
  tool: Type.String({ minLength: 1 }),
  installCmd: Type.String({ minLength: 1 }),
  detectCmd: Type.String({ minLength: 1 }),
  authDetectCmd: Type.Optional(Type.String()),
  authLoginCmd: Type.Optional(Type.String()),
});

export const MarketplacePluginEntrySchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  source: Type.Unknown(),
  displayName: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  author: Type.Optional(Author),
  homepage: Type.Optional(Type.String()),
  repository: Type.Optional(Type.Union([Type.String(), Type.Object({ url: Type.String() })])),
  license: Type.Optional(Type.String()),
  keywords: Type.Optional(Type.Array(Type.String())),
  category: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
  strict: Type.Optional(Type.Boolean()),
  defaultEnabled: Type.Optional(Type.Boolean()),
  recommended: Type.Optional(Type.Boolean()),
  /** Claude Code's ranking hint for its plugin browser; free-form for us. */
  relevance: Type.Optional(Type.Unknown()),
  /** Free-form data of the marketplace's own (Claude Code ignores it too). */
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  prerequisites: Type.Optional(Type.Array(PrerequisiteSchema)),
  ...PLUGIN_COMPONENT_FIELDS,
});
export type MarketplacePluginEntry = Omit<Static<typeof MarketplacePluginEntrySchema>, "source"> & { source: PluginSource };

export const MarketplaceCatalogSchema = Type.Object({
  $schema: Type.Optional(Type.String()),
  name: Type.String({ minLength: 1 }),
  owner: Type.Object({ name: Type.String({ minLength: 1 }), email: Type.Optional(Type.String()), url: Type.Optional(Type.String()) }),
  description: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  metadata: Type.Optional(Type.Object({ description: Type.Optional(Type.String()), version: Type.Optional(Type.String()), pluginRoot: Type.Optional(Type.String()) })),
  forceRemoveDeletedPlugins: Type.Optional(Type.Boolean()),
  /** Old plugin name → its new name in this catalog (installs and updates of the old id follow it). */
  renames: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1 }))),
  /** Marketplaces whose plugins this catalog's plugins may depend on. */
  allowCrossMarketplaceDependenciesOn: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  plugins: Type.Array(Type.Unknown()),
});
export type MarketplaceCatalog = Omit<Static<typeof MarketplaceCatalogSchema>, "plugins"> & { plugins: MarketplacePluginEntry[] };

const CATALOG_KEYS = Object.keys(MarketplaceCatalogSchema.properties);
const ENTRY_KEYS = Object.keys(MarketplacePluginEntrySchema.properties);
/**
 * Names Claude Code reserves for Anthropic's marketplaces (its marketplace reference, late
 * 2026): official, community and plugin-directory names. Claude Code refuses them only for
 * marketplaces that do not come from github.com/anthropics/, so for us they are a warning.
 */
export const RESERVED_MARKETPLACE_NAMES = [
  "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official", "anthropic-marketplace", "anthropic-plugins", "agent-skills", "anthropic-agent-skills",
  "life-sciences", "knowledge-work-plugins", "claude-for-legal", "claude-for-financial-services", "financial-services-plugins", "first-party-plugins", "claude-tag-plugins",
  "claude-community", "claude-plugins-community", "healthcare",
  "anthropic-plugin-directory", "claude-plugin-directory",
];

/** A reserved name, or one that impersonates Anthropic's (`official-claude-plugins`, `anthropic-…`). */
export function reservedMarketplaceName(name: string): "reserved" | "impersonating" | undefined {
  if (RESERVED_MARKETPLACE_NAMES.includes(name)) return "reserved";
  const words = name.toLowerCase().split(/[-_.]+/);
  if (words[0] === "anthropic" || (words.includes("official") && (words.includes("claude") || words.includes("anthropic")))) return "impersonating";
  return undefined;
}

/**
 * The look-alike names Claude Code's validator (2.1.332) refuses for a third party's catalog,
 * found by probing it (test/fixtures/conformance/marketplace-name-*): "official" right beside
 * claude or anthropic, and claude or anthropic right before "plugins" or "marketplace"
 * (`claude-plugins-x`, `anthropic_marketplace`, `claudeplugins`); `claude-code-official`,
 * `claude-tools` and `the-claude-marketplace` pass.
 */
export function claudeRefusesMarketplaceName(name: string): boolean {
  return /(^|[-_.])official[-_.]?(claude|anthropic)|(claude|anthropic)[-_.]?official([-_.]|$)/i.test(name) || /^(claude|anthropic)[-_.]?(plugins|marketplace)/i.test(name);
}

/** An archive URL: https, or http only for a catalog of the local disk (a test server, a mirror). */
export function archiveUrlProblem(url: unknown, policy: { allowLocal: boolean }): SourceArgProblem | undefined {
  // eslint-disable-next-line no-control-regex
  if (typeof url !== "string" || url.length === 0 || url.length > 2048 || /[\s\u0000-\u001f\u007f]/.test(url)) return { code: "ESOURCE_URL", problem: "the archive URL must be a non-empty URL without whitespace" };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { code: "ESOURCE_URL", problem: `the archive URL ${JSON.stringify(url)} is not a valid URL` };
  }
  if (parsed.protocol === "https:") return undefined;
  if (parsed.protocol === "http:" && policy.allowLocal) return undefined;
  return { code: "ESOURCE_URL", problem: `the archive URL ${JSON.stringify(url)} is not an https:// URL${parsed.protocol === "http:" ? " (plain http only for a marketplace on your own disk)" : ""}` };
}

/** The kind of an entry's source, if it is one we know. */
export function sourceKind(source: unknown): SourceKind | undefined {
  if (typeof source === "string") return "relative";
  if (isRecord(source) && typeof source.source === "string" && source.source in SOURCE_KINDS) return source.source as SourceKind;
  return undefined;
}

function checkSource(source: unknown, at: string, out: IssueCollector, allowLocal: boolean, pluginRoot: string | undefined, flavour: "xcsh" | "claude" | undefined): void {
  if (typeof source === "string") {
    const problem = entryPathProblem(source, "repository");
    if (problem) {
      out.error({ path: at, code: problem.reason.includes("../") ? "EENTRY_ESCAPE" : "ESOURCE_PATH", message: `${at}: relative source "${source}" must stay inside the marketplace repository, but ${problem.reason}`, expected: 'a path like "./plugins/my-plugin"', found: JSON.stringify(source), hint: "Put the plugin inside the marketplace repository, or use a github/url/git-subdir/npm source." });
    } else if (!source.startsWith("./") && source !== "." && pluginRoot === undefined) {
      out.error({ path: at, code: "ESOURCE_PATH", message: `${at}: relative source "${source}" must start with "./" (a bare name needs metadata.pluginRoot)`, expected: `"./${source}"`, found: JSON.stringify(source), hint: `Write "./${source.replace(/^\.?\/?/, "")}", or set metadata.pluginRoot to the folder that holds it (a bare "owner/repo" is not a GitHub source here: use {"source": "github", "repo": …}).` });
    }
    return;
  }
  if (!isRecord(source)) {
    out.error({ path: at, code: "ETYPE", message: `${at}: expected a "./path" string or a source object, found ${describeValue(source)}`, expected: 'a "./path" string or {"source": "github"|"url"|"git-subdir"|"npm"|"archive", …}', found: describeValue(source), hint: 'Write "./plugins/<name>" for a plugin in this repository, or {"source": "github", "repo": "owner/repo"}.' });
    return;
  }
  const kind = source.source;
  const runsCommand = typeof kind === "string" && (COMMAND_SOURCE_KINDS.includes(kind) || (!(kind in SOURCE_KINDS) && COMMAND_FIELDS.some((f) => f in source)));
  if (runsCommand) {
    out.error({ path: pointer(at, "source"), code: "ESOURCE_COMMAND", message: `${pointer(at, "source")}: the "${kind}" source would run a command to produce the plugin; xcsh-tools never runs what a catalog writes`, expected: '"github", "url", "git-subdir", "npm", "archive" or a "./path"', found: describeValue(kind), hint: "Ask the marketplace owner to publish the built plugin (a git repository, an npm package or a .tar.gz archive); this entry cannot be installed." });
    return;
  }
  if (typeof kind !== "string" || !(kind in SOURCE_KINDS)) {
    out.error({ path: pointer(at, "source"), code: "ESOURCE_KIND", message: `${pointer(at, "source")}: unknown source kind ${describeValue(kind)}`, expected: '"github", "url", "git-subdir", "npm" or "archive"', found: describeValue(kind), hint: 'Use {"source": "github", "repo": "owner/repo"}, {"source": "url", "url": "https://….git"}, {"source": "git-subdir", "url": …, "path": …}, {"source": "npm", "package": …} or {"source": "archive", "url": "https://….tar.gz"}.' });
    return;
  }
  const k = kind as keyof typeof SOURCE_KINDS;
  const shape = checkSchema(SOURCE_KINDS[k], source, at);
  for (const issue of shape.ok ? [] : shape.issues) {
    if (issue.path.endsWith("/sha")) out.error({ ...issue, code: "ESHA", message: `${issue.path}: sha must be a full 40-character commit sha, found ${issue.found}`, hint: "Pin with the full sha: git rev-parse HEAD." });
    else if (issue.path.endsWith("/repo") && issue.code === "ESCHEMA") out.error({ ...issue, message: `${issue.path}: repo must be "owner/repo", found ${issue.found}`, hint: 'Write the GitHub repository as "owner/repo", without https:// or .git.' });
    else out.error(issue);
  }
  out.warnings.push(...unknownKeyWarnings(source, Object.keys(SOURCE_KINDS[k].properties), at, { what: `a ${k} source` }));
  if (!shape.ok) return;
  // The values handed to git and npm (core/source-args.ts; checked again right before the call).
  const report = (field: string, found: SourceArgProblem | undefined, value: unknown) => {
    if (found) out.error({ path: pointer(at, field), code: found.code, message: `${pointer(at, field)}: ${found.problem}`, found: JSON.stringify(value), hint: sourceArgHint(found.code) });
  };
  if (k === "github") report("repo", githubRepoProblem(source.repo), source.repo);
  if (k === "url") {
    report("url", gitUrlProblem(source.url, { allowLocal }), source.url);
    if (source.path !== undefined) report("path", subdirPathProblem(source.path), source.path);
  }
  if (k === "archive") report("url", archiveUrlProblem(source.url, { allowLocal }), source.url);
  if (k === "git-subdir") {
    report("url", subdirUrlProblem(source.url, { allowLocal }), source.url);
    report("path", subdirPathProblem(source.path), source.path);
  }
  if ((k === "github" || k === "url" || k === "git-subdir") && source.ref !== undefined) report("ref", gitRefProblem(source.ref), source.ref);
  if (k === "npm") {
    const problem = npmNameProblem(source.package as string);
    // Claude Code accepts the entry (docs/conformance.md): for its catalogs a warning, since we differ on
    // purpose; installing it stays refused (marketplace/plugin-sources/npm.ts), as npm's spec parser would
    // read a non-name as a path, a URL or a git remote that the catalog, not the user, chose.
    const issue = { path: pointer(at, "package"), code: "EPACKAGE_NAME", found: JSON.stringify(source.package), hint: "Use the package name exactly as published on npm, e.g. @scope/name." };
    if (problem && flavour === "claude") out.warn({ ...issue, message: `${pointer(at, "package")}: "${source.package}" is not an npm package name (${problem}): Claude Code accepts the entry, xcsh-tools refuses to install it` });
    else if (problem) out.error({ ...issue, message: `${pointer(at, "package")}: "${source.package}" is not an npm package name: ${problem}` });
    if (source.version !== undefined) report("version", npmVersionProblem(source.version), source.version);
    if (source.registry !== undefined) report("registry", registryUrlProblem(source.registry), source.registry);
  }
}

/**
 * The folder a relative source points at, relative to the marketplace root, the way Claude Code
 * resolves it: a `./` source (or `.`) starts at the marketplace root whatever `pluginRoot` says;
 * a bare name is looked up under `metadata.pluginRoot` (the marketplace root when unset).
 */
export function relativeSourceDir(source: string, catalog: Pick<MarketplaceCatalog, "metadata">): string {
  const normal = source.replace(/\\/g, "/");
  if (normal === "." || normal.startsWith("./")) return path.posix.normalize(normal);
  const root = catalog.metadata?.pluginRoot;
  return path.posix.normalize(root ? path.posix.join(root.replace(/\\/g, "/"), normal) : normal);
}

/**
 * Validate a catalog. `flavour` is who reads it: `xcsh` (`.xcsh-plugin/`) or `claude`
 * (`.claude-plugin/`); Claude's reserved names are only errors for Claude. `allowLocalSources`
 * (default true: a catalog being validated on disk) says whether entries may name local git
 * URLs; the engine passes false for a catalog fetched from a remote.
 */
export function validateMarketplaceCatalog(value: unknown, options: { flavour?: "xcsh" | "claude"; allowLocalSources?: boolean } = {}): ValidationResult<MarketplaceCatalog> {
  const out = new IssueCollector();
  const shape = checkSchema(MarketplaceCatalogSchema, value);
  out.absorb(shape);
  if (!isRecord(value)) return out.result(value as unknown as MarketplaceCatalog);
  out.warnings.push(...unknownKeyWarnings(value, CATALOG_KEYS, "", { what: "the catalog" }));
  const name = typeof value.name === "string" ? value.name : undefined;
  if (name !== undefined && name.length > 0) {
    const problem = nameSegmentProblem(name);
    if (problem) {
      const claudeProblem = options.flavour === "claude" ? claudeNameProblem(name, "id-part") : undefined;
      const issue = { path: "/name", code: "EMARKETPLACE_NAME", message: `/name: marketplace name "${name}" is invalid: ${claudeProblem ?? problem}`, expected: "lowercase kebab-case, at most 64 characters", found: JSON.stringify(name), hint: `Use e.g. "${suggestNameSegment(name) || "my-marketplace"}".` };
      if (options.flavour === "claude" && !claudeProblem) out.warn({ ...issue, message: `/name: marketplace name "${name}" is not kebab-case (${problem}): ${XCSH_ONLY_NAME_RULE}` });
      else out.error(issue);
    }
    const reserved = reservedMarketplaceName(name);
    if (reserved !== "reserved" && options.flavour === "claude" && claudeRefusesMarketplaceName(name)) {
      // Claude Code (2.1.332) refuses these outright; the exact reserved names it takes
      // (Anthropic's own catalogs carry them) and other look-alikes: a warning below.
      out.error({ path: "/name", code: "EMARKETPLACE_RESERVED", message: `/name: "${name}" impersonates an official Anthropic marketplace; Claude Code refuses it`, found: JSON.stringify(name), hint: 'Choose a name of your own: not "official" beside claude or anthropic, nor claude-plugins…/claude-marketplace… (e.g. "acme-plugins").' });
    } else if (reserved) {
      // A warning for both flavours: Anthropic's own catalogs carry these names legitimately, and
      // Claude Code refuses them only for marketplaces not fetched from github.com/anthropics/.
      out.warn({ path: "/name", code: "EMARKETPLACE_RESERVED", message: `/name: "${name}" ${reserved === "reserved" ? "is reserved for Anthropic's marketplaces" : "looks like one of Anthropic's marketplace names"}; Claude Code refuses it unless the marketplace comes from github.com/anthropics/`, found: JSON.stringify(name), hint: "If this is not one of Anthropic's marketplaces, choose a name of your own." });
    }
  }
  const renames = isRecord(value.renames) ? value.renames : {};
  const listed = new Set(Array.isArray(value.plugins) ? value.plugins.map((p) => (isRecord(p) && typeof p.name === "string" ? p.name : undefined)) : []);
  for (const [old, to] of Object.entries(renames)) {
    if (typeof to !== "string") continue; // the schema reported it
    const at = pointer("", "renames", old);
    if (listed.has(old)) out.warn({ path: at, code: "ERENAME", message: `${at}: "${old}" is renamed to "${to}" but is still listed as a plugin; the listed entry wins`, hint: `Remove the "${old}" entry or the rename.` });
    else if (!listed.has(to) && renames[to] === undefined) out.warn({ path: at, code: "ERENAME", message: `${at}: "${old}" is renamed to "${to}", which the catalog does not list`, found: JSON.stringify(to), hint: "Point the rename at a plugin of this catalog." });
  }
  if (isRecord(value.metadata) && typeof value.metadata.pluginRoot === "string") {
    const problem = entryPathProblem(value.metadata.pluginRoot, "repository");
    if (problem) out.error({ path: "/metadata/pluginRoot", code: "EENTRY_ESCAPE", message: `/metadata/pluginRoot: "${value.metadata.pluginRoot}" must stay inside the repository, but ${problem.reason}`, found: JSON.stringify(value.metadata.pluginRoot), hint: "Use a folder of the repository, e.g. \"plugins\"." });
  }
  const plugins = Array.isArray(value.plugins) ? value.plugins : [];
  const seen = new Map<string, number>();
  plugins.forEach((entry, i) => {
    const at = pointer("", "plugins", i);
    const checked = checkSchema(MarketplacePluginEntrySchema, entry, at);
    out.absorb(checked);
    if (!isRecord(entry)) return;
    out.warnings.push(...unknownKeyWarnings(entry, ENTRY_KEYS, at, { what: "a plugin entry" }));
    if (typeof entry.name === "string" && entry.name.length > 0) {
      const problem = nameSegmentProblem(entry.name);
      if (problem) {
        const claudeProblem = options.flavour === "claude" ? claudeNameProblem(entry.name, "id-part") : undefined;
        const issue = { path: pointer(at, "name"), code: "EPLUGIN_NAME", message: `${pointer(at, "name")}: plugin name "${entry.name}" is invalid: ${claudeProblem ?? problem}`, expected: "lowercase kebab-case, at most 64 characters", found: JSON.stringify(entry.name), hint: `Use e.g. "${suggestNameSegment(entry.name) || "my-plugin"}".` };
        if (options.flavour === "claude" && !claudeProblem) out.warn({ ...issue, message: `${pointer(at, "name")}: plugin name "${entry.name}" is not kebab-case (${problem}): ${XCSH_ONLY_NAME_RULE}` });
        else out.error(issue);
      }
      else if (name && !nameSegmentProblem(name)) {
        const idProblem = pluginIdProblem(`${entry.name}@${name}`);
        if (idProblem) out.error({ path: pointer(at, "name"), code: "EPLUGIN_ID", message: `${pointer(at, "name")}: the id "${entry.name}@${name}" is invalid: ${idProblem}`, hint: "Shorten the plugin or the marketplace name." });
      }
      // Anthropic's own catalogs (their reserved names) list claude-* plugins legitimately.
      if (options.flavour === "claude" && !(name && RESERVED_MARKETPLACE_NAMES.includes(name)) && reservedPluginNameProblem(entry.name)) checkReservedPluginName(entry.name, pointer(at, "name"), out);
      const first = seen.get(entry.name);
      if (first !== undefined) out.error({ path: pointer(at, "name"), code: "EDUPLICATE_PLUGIN", message: `${pointer(at, "name")}: plugin "${entry.name}" is already listed at /plugins/${first}; only the first would ever be installed`, hint: "Remove or rename one of the two entries." });
      else seen.set(entry.name, i);
    }
    if (entry.source === undefined) return; // reported as EREQUIRED
    checkSource(entry.source, pointer(at, "source"), out, options.allowLocalSources !== false, isRecord(value.metadata) && typeof value.metadata.pluginRoot === "string" ? value.metadata.pluginRoot : undefined, options.flavour);
    checkComponentPaths(entry, at, out, options.flavour);
    if (options.flavour === "claude") checkClaudeShapes(entry, at, out);
    if (typeof entry.version === "string" && !semver.valid(entry.version)) {
      out.warn({ path: pointer(at, "version"), code: "EVERSION", message: `${pointer(at, "version")}: "${entry.version}" is not a semver version; update checks compare versions`, found: JSON.stringify(entry.version), hint: 'Use "MAJOR.MINOR.PATCH".' });
    }
  });
  return out.result(value as unknown as MarketplaceCatalog);
}
