/**
 * `xcsh-team.json`: a project's committed declaration of its plugin set (docs/design/team-sets.md
 * (b)). Committed means read on every teammate's machine: nothing in it may name a path of one
 * machine (`ETEAM_MACHINE_PATH`), a folder package (`ETEAM_SPEC`), or a git value that git would
 * read as an option or a remote helper (core/source-args.ts). Unknown keys are kept (review
 * comments can go in `"//"`).
 */
import path from "node:path";
import { npa, semver } from "../core/npm-spec.js";
import { gitRefProblem, gitShaProblem, gitUrlProblem, githubRepoProblem, npmGitSpecProblem, npmVersionProblem, sourceArgHint, subdirPathProblem, type SourceArgProblem } from "../core/source-args.js";
import { mayNameMarketplacePlugin, splitPluginId } from "./installed-plugins.js";
import { nameSegmentProblem, npmNameProblem, pluginIdProblem } from "./names.js";
import { IssueCollector, describeValue, isRecord, pointer, type ValidationIssue, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { readTeamFile } from "./team-file.js";
import { Type, type Static } from "./typebox.js";

/** The declaration's file name, at the project root beside the config folder. */
export const TEAM_DECLARATION_FILE = "xcsh-team.json";

/** Claude Code's marketplace source objects, the kinds a committed file can use. */
export const DeclaredSourceSchema = Type.Union([
  Type.Object({ source: Type.Literal("github"), repo: Type.String(), ref: Type.Optional(Type.String()), sha: Type.Optional(Type.String()), path: Type.Optional(Type.String()) }),
  Type.Object({ source: Type.Literal("git"), url: Type.String(), ref: Type.Optional(Type.String()), sha: Type.Optional(Type.String()), path: Type.Optional(Type.String()) }),
  Type.Object({ source: Type.Literal("url"), url: Type.String() }),
  Type.Object({ source: Type.Literal("directory"), path: Type.String() }),
]);
export type DeclaredSource = Static<typeof DeclaredSourceSchema>;

/** The fields of each source kind, in the order they are written. */
export const SOURCE_FIELD_ORDER: Record<DeclaredSource["source"], readonly string[]> = {
  github: ["source", "repo", "ref", "sha", "path"],
  git: ["source", "url", "ref", "sha", "path"],
  url: ["source", "url"],
  directory: ["source", "path"],
};

export const FeaturesSchema = Type.Union([Type.Literal("*"), Type.Array(Type.String())]);
export type DeclaredFeatures = Static<typeof FeaturesSchema>;

/** What a project and a person can both choose about a plugin (the personal file has only these). */
export const PluginChoiceFields = {
  enabled: Type.Optional(Type.Boolean()),
  features: Type.Optional(FeaturesSchema),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
};

export const DeclaredPluginSchema = Type.Object({
  /** npm plugins: what `npm install` would take (range, version, dist-tag, git or tarball URL). */
  spec: Type.Optional(Type.String()),
  /** Marketplace plugins: a semver range the catalog's version must meet. */
  version: Type.Optional(Type.String()),
  ...PluginChoiceFields,
});
export type DeclaredPlugin = Static<typeof DeclaredPluginSchema>;

export const TeamDeclarationSchema = Type.Object({
  version: Type.Literal(1),
  marketplaces: Type.Optional(Type.Record(Type.String(), Type.Object({ source: DeclaredSourceSchema }))),
  plugins: Type.Optional(Type.Record(Type.String(), DeclaredPluginSchema)),
});
export type TeamDeclaration = Static<typeof TeamDeclarationSchema> & Record<string, unknown>;

/** Field orders of the declaration, for its one writer (teamset/edit.ts). */
export const DECLARATION_FIELD_ORDER = ["version", "marketplaces", "plugins"] as const;
export const PLUGIN_FIELD_ORDER = ["spec", "version", "enabled", "features", "settings"] as const;

/**
 * A folder a committed file names: relative to the root and inside it, the same on every machine.
 * Absolute paths, drive paths, `~` and `..` that climb out of the root are refused.
 */
export function machinePathProblem(p: unknown): string | undefined {
  if (typeof p !== "string" || p.length === 0) return "the path must be a non-empty string";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(p)) return `the path ${JSON.stringify(p)} contains control characters`;
  if (p.startsWith("~")) return `the path ${JSON.stringify(p)} starts with "~", which is a different folder on every machine`;
  if (path.posix.isAbsolute(p) || path.win32.isAbsolute(p) || /^[A-Za-z]:/.test(p)) return `the path ${JSON.stringify(p)} is absolute, which names a folder of one machine`;
  const normal = path.posix.normalize(p.replace(/\\/g, "/"));
  if (normal === ".." || normal.startsWith("../")) return `the path ${JSON.stringify(p)} leaves the project root with ".."`;
  return undefined;
}

const MACHINE_PATH_HINT = 'Use a path relative to the project root and inside it, e.g. "./tools/marketplace".';

/** The issue of a marketplace source at `at` of `file`, or `undefined`. Committed sources never reach the local disk by URL. */
export function declaredSourceIssue(source: DeclaredSource, at: string): ValidationIssue | undefined {
  const asIssue = (found: SourceArgProblem | undefined, field: string): ValidationIssue | undefined =>
    found && { path: pointer(at, field), code: found.code, message: `${pointer(at, field)}: ${found.problem}`, found: describeValue((source as Record<string, unknown>)[field]), hint: sourceArgHint(found.code) };
  const subdir = (p: string | undefined): ValidationIssue | undefined => (p === undefined ? undefined : asIssue(subdirPathProblem(p), "path"));
  const gitPins = (s: { ref?: string; sha?: string }): ValidationIssue | undefined => (s.ref !== undefined ? asIssue(gitRefProblem(s.ref), "ref") : undefined) ?? (s.sha !== undefined ? asIssue(gitShaProblem(s.sha), "sha") : undefined);
  switch (source.source) {
    case "github":
      return asIssue(githubRepoProblem(source.repo), "repo") ?? gitPins(source) ?? subdir(source.path);
    case "git":
      return asIssue(gitUrlProblem(source.url, { allowLocal: false }), "url") ?? gitPins(source) ?? subdir(source.path);
    case "url":
      return /^https?:\/\/[^\s/]+/i.test(source.url) && !/[\s\u0000-\u001f\u007f]/.test(source.url)
        ? undefined
        : { path: pointer(at, "url"), code: "ESOURCE_URL", message: `${pointer(at, "url")}: the catalog URL ${describeValue(source.url)} is not an http(s) URL`, expected: "an https:// URL of a marketplace.json", found: describeValue(source.url), hint: "Use the https:// URL of the catalog." };
    case "directory": {
      const problem = machinePathProblem(source.path);
      return problem === undefined ? undefined : { path: pointer(at, "path"), code: "ETEAM_MACHINE_PATH", message: `${pointer(at, "path")}: ${problem}`, expected: "a relative path inside the project root", found: describeValue(source.path), hint: MACHINE_PATH_HINT };
    }
  }
}

const SPEC_HINT = "Publish the plugin and declare its version range, or put it in a `directory` marketplace inside the repository.";

/** The issue of an npm plugin's `spec`: never a folder, `file:` or `link:`, a git URL by source-args' rules. */
export function npmSpecIssue(name: string, spec: string, at: string): ValidationIssue | undefined {
  const where = pointer(at, "spec");
  const refuse = (why: string): ValidationIssue => ({ path: where, code: "ETEAM_SPEC", message: `${where}: ${why}`, expected: "a version, range, dist-tag, git URL or https tarball URL", found: JSON.stringify(spec), hint: SPEC_HINT });
  if (/^(file|link|portal|workspace):/i.test(spec.trim())) return refuse(`${JSON.stringify(spec)} names a folder or file of one machine`);
  let parsed: ReturnType<typeof npa>;
  try {
    parsed = npa.resolve(name, spec, "/");
  } catch (error) {
    return refuse(`${JSON.stringify(spec)} is not an npm spec (${(error as Error).message})`);
  }
  switch (parsed.type) {
    case "directory":
    case "file":
      return refuse(`${JSON.stringify(spec)} names a folder or file of one machine`);
    case "git": {
      const found = npmGitSpecProblem(parsed, { allowLocal: false });
      return found && { path: where, code: found.code, message: `${where}: ${found.problem}`, found: JSON.stringify(spec), hint: sourceArgHint(found.code) };
    }
    case "remote":
      return /^https:\/\//i.test(spec) ? undefined : refuse(`${JSON.stringify(spec)} is a tarball URL that is not https`);
    case "alias":
      return refuse(`${JSON.stringify(spec)} is an npm alias; declare the package under its own name`);
    default: {
      const found = npmVersionProblem(spec);
      return found && { path: where, code: found.code, message: `${where}: ${found.problem}`, found: JSON.stringify(spec), hint: sourceArgHint(found.code) };
    }
  }
}

/** Options of `validateTeamDeclaration`. */
export interface DeclarationCheckOptions {
  /** Marketplaces declared elsewhere (Claude Code's `.claude/settings.json`): plugins may use them too. */
  otherMarketplaces?: Iterable<string>;
}

/** Strict check of a declaration: shape, names, sources, specs, and that every `name@mkt` names a declared marketplace. */
export function validateTeamDeclaration(value: unknown, options: DeclarationCheckOptions = {}): ValidationResult<TeamDeclaration> {
  const out = new IssueCollector();
  if (isRecord(value) && typeof value.version === "number" && value.version > 1) {
    out.error({ path: "/version", code: "ETEAM_DECLARATION_INVALID", message: `/version: expected 1, found ${describeValue(value.version)}`, expected: "1", found: describeValue(value.version), hint: "This declaration was written by a newer xcsh-tools; upgrade xcsh-tools (npm i -g xcsh-tools)." });
    return out.result(value as TeamDeclaration);
  }
  // A union of object schemas fails as "expected an object"; an unknown kind deserves the list of kinds.
  const rawMarketplaces = isRecord(value) && isRecord(value.marketplaces) ? value.marketplaces : {};
  for (const [name, entry] of Object.entries(rawMarketplaces)) {
    const kind = isRecord(entry) && isRecord(entry.source) ? entry.source.source : undefined;
    if (kind === undefined || Object.hasOwn(SOURCE_FIELD_ORDER, String(kind))) continue;
    const at = pointer("", "marketplaces", name, "source");
    out.error({ path: at, code: "ETEAM_DECLARATION_INVALID", message: `${at}: the source kind ${describeValue(kind)} is not one a team set can use: expected github, git, url or directory`, expected: "github, git, url or directory", found: describeValue(kind), hint: 'Use {"source": "github", "repo": "owner/repo"}, {"source": "git", "url": …}, {"source": "url", "url": …} or {"source": "directory", "path": "./folder"}.' });
  }
  if (out.issues.length > 0) return out.result(value as TeamDeclaration);
  const shape = checkSchema(TeamDeclarationSchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as TeamDeclaration);
  const doc = shape.value as TeamDeclaration;
  const marketplaces = new Set([...Object.keys(doc.marketplaces ?? {}), ...(options.otherMarketplaces ?? [])]);
  for (const [name, entry] of Object.entries(doc.marketplaces ?? {})) {
    const at = pointer("", "marketplaces", name);
    const bad = nameSegmentProblem(name);
    if (bad) out.error({ path: at, code: "ETEAM_DECLARATION_INVALID", message: `${at}: marketplace name "${name}" is invalid: ${bad}`, expected: "a lower-case name like acme-tools", found: JSON.stringify(name), hint: "Use the catalog's `name` as the key." });
    const issue = declaredSourceIssue(entry.source, pointer(at, "source"));
    if (issue) out.error(issue);
  }
  for (const [key, plugin] of Object.entries(doc.plugins ?? {})) out.issues.push(...declaredPluginIssues(key, plugin, marketplaces));
  return out.result(doc);
}

/** The issues of one declared plugin at `/plugins/<key>` (shared with `.xcsh/team.local.json`'s keys). */
export function pluginKeyIssue(key: string, at: string): ValidationIssue | undefined {
  const problem = mayNameMarketplacePlugin(key) ? pluginIdProblem(key) : npmNameProblem(key);
  return problem
    ? { path: at, code: "ETEAM_DECLARATION_INVALID", message: `${at}: "${key}" is neither an npm package name nor a name@marketplace id: ${problem}`, expected: 'an npm package name ("@acme/x") or "name@marketplace"', found: JSON.stringify(key), hint: "Use the key `xcsh-tools list` shows for the plugin." }
    : undefined;
}

function declaredPluginIssues(key: string, plugin: DeclaredPlugin, marketplaces: ReadonlySet<string>): ValidationIssue[] {
  const at = pointer("", "plugins", key);
  const keyIssue = pluginKeyIssue(key, at);
  if (keyIssue) return [keyIssue];
  const issues: ValidationIssue[] = [];
  const wrongField = (field: string, instead: string, what: string) =>
    issues.push({ path: pointer(at, field), code: "ETEAM_DECLARATION_INVALID", message: `${pointer(at, field)}: ${what} plugins take "${instead}", not "${field}"`, expected: `"${instead}"`, found: JSON.stringify(field), hint: `Rename "${field}" to "${instead}".` });
  const id = mayNameMarketplacePlugin(key) ? splitPluginId(key) : undefined;
  if (id) {
    if (plugin.spec !== undefined) wrongField("spec", "version", "marketplace");
    if (!marketplaces.has(id.marketplace)) {
      issues.push({ path: at, code: "ETEAM_UNKNOWN_MARKETPLACE", message: `${at}: the marketplace "${id.marketplace}" of ${key} is not declared`, expected: `a marketplace under /marketplaces (or in .claude/settings.json extraKnownMarketplaces)`, found: JSON.stringify(id.marketplace), hint: `Declare it: xcsh-tools marketplace add <source> --scope project (or add "${id.marketplace}" under "marketplaces").` });
    }
    if (plugin.version !== undefined && !semver.validRange(plugin.version)) {
      issues.push({ path: pointer(at, "version"), code: "EVERSION", message: `${pointer(at, "version")}: ${JSON.stringify(plugin.version)} is not a semver range`, expected: 'a semver range, e.g. "^2.1.0"', found: JSON.stringify(plugin.version), hint: 'Use a range such as "^2.1.0" or an exact version.' });
    }
  } else {
    if (plugin.version !== undefined) wrongField("version", "spec", "npm");
    if (plugin.spec !== undefined) {
      const issue = npmSpecIssue(key, plugin.spec, at);
      if (issue) issues.push(issue);
    }
  }
  return issues;
}

/**
 * `ESECRET_SCOPE` issues of the declared settings: a key the plugin's settings schema marks
 * `secret` never goes into a committed file. `secretKeysOf` answers from the plugin's manifest
 * (resolved by the caller; `undefined` when the plugin is not known yet).
 */
export function secretSettingIssues(plugins: Record<string, { settings?: Record<string, unknown> }>, secretKeysOf: (plugin: string) => readonly string[] | undefined, base = "/plugins"): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const [name, plugin] of Object.entries(plugins)) {
    const secrets = new Set(secretKeysOf(name) ?? []);
    for (const key of Object.keys(plugin.settings ?? {})) {
      if (!secrets.has(key)) continue;
      const at = `${base}${pointer("", name, "settings", key)}`;
      issues.push({ path: at, code: "ESECRET_SCOPE", message: `${at}: setting "${key}" of ${name} is a secret; secrets are never stored in a project's files`, expected: "no secret settings", found: "a value", hint: `Remove it here and set it for yourself: xcsh-tools config set ${name} ${key} <value> (user scope).` });
    }
  }
  return issues;
}

/** Read `<root>/xcsh-team.json`; `undefined` when there is none. */
export function readTeamDeclaration(file: string, options: DeclarationCheckOptions = {}): TeamDeclaration | undefined {
  return readTeamFile(file, (value) => validateTeamDeclaration(value, options), "ETEAM_DECLARATION_INVALID", `Fix ${TEAM_DECLARATION_FILE} (docs/file-formats.md, "Team sets").`);
}

/** Two sources are the same marketplace: equal on every field their kind has (key order and extra keys do not count). */
export function sameSource(a: DeclaredSource, b: DeclaredSource): boolean {
  if (a.source !== b.source) return false;
  return SOURCE_FIELD_ORDER[a.source].every((field) => (a as Record<string, unknown>)[field] === (b as Record<string, unknown>)[field]);
}
