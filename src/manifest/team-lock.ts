/**
 * `xcsh-team.lock.json`: what restores byte-identical content of a team set on any machine
 * (docs/design/team-sets.md (b)). Written only by teamset/lock-format.ts in canonical bytes, so the
 * schema is closed: a key it does not know is a hand edit (`ETEAM_LOCK_INVALID`), a
 * `lockfileVersion` above 1 a newer xcsh-tools (`ETEAM_LOCK_VERSION`). Every value that later
 * reaches git or npm is checked by core/source-args.ts here already, and no value may name a
 * path of one machine.
 */
import { semver } from "../core/npm-spec.js";
import { gitUrlProblem, githubRepoProblem, sourceArgHint, subdirPathProblem, subdirUrlProblem, type SourceArgProblem } from "../core/source-args.js";
import { IssueCollector, describeValue, isRecord, pointer, type ValidationIssue, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { mayNameMarketplacePlugin } from "./installed-plugins.js";
import { npmNameProblem, pluginIdProblem } from "./names.js";
import { declaredSourceIssue, DeclaredSourceSchema } from "./team-declaration.js";
import { parseTeamText, readTeamFile, valueOrThrow } from "./team-file.js";
import { Type, type Static, type TSchema } from "./typebox.js";

export const TEAM_LOCK_FILE = "xcsh-team.lock.json";
export const TEAM_LOCK_VERSION = 1;

/** `tree1-sha256:<64 hex>`: marketplace/tree.ts `hashTree`, named so the algorithm can evolve. */
export const TREE_HASH_RE = /^tree1-sha256:[0-9a-f]{64}$/;
/** npm's SRI integrity (ssri), one hash. */
export const INTEGRITY_RE = /^sha(256|384|512)-[A-Za-z0-9+/]+={0,2}$/;
const SHA256_HEX_RE = /^[0-9a-f]{64}$/;

const closed = { additionalProperties: false };
const Sha = Type.String({ pattern: "^(?:[0-9a-f]{40}|[0-9a-f]{64})$" });

export const LockedMarketplaceSchema = Type.Object({
  /** The catalog's commit (git sources); `directory` marketplaces have none: they are the repository. */
  commit: Type.Optional(Sha),
  /** `url` catalogs: sha256 of the catalog bytes. */
  sha256: Type.Optional(Type.String({ pattern: SHA256_HEX_RE.source })),
  source: DeclaredSourceSchema,
}, closed);

export const PluginFromSchema = Type.Union([
  Type.Object({ kind: Type.Literal("relative"), path: Type.String() }, closed),
  Type.Object({ kind: Type.Literal("github"), repo: Type.String(), commit: Sha, path: Type.Optional(Type.String()) }, closed),
  Type.Object({ kind: Type.Literal("git"), url: Type.String(), commit: Sha, path: Type.Optional(Type.String()) }, closed),
  Type.Object({ kind: Type.Literal("git-subdir"), url: Type.String(), path: Type.String(), commit: Sha }, closed),
  Type.Object({ kind: Type.Literal("npm"), package: Type.String(), version: Type.String(), integrity: Type.String({ pattern: INTEGRITY_RE.source }) }, closed),
  Type.Object({ kind: Type.Literal("archive"), url: Type.String(), sha256: Type.String({ pattern: SHA256_HEX_RE.source }) }, closed),
]);
export type PluginFrom = Static<typeof PluginFromSchema>;

export const LockedMarketplacePluginSchema = Type.Object({
  version: Type.String(),
  from: PluginFromSchema,
  hash: Type.String({ pattern: TREE_HASH_RE.source }),
}, closed);
export type LockedMarketplacePlugin = Static<typeof LockedMarketplacePluginSchema>;

/** Where an npm plugin came from when not its registry: a git commit, or an https tarball by integrity. */
export const NpmFromSchema = Type.Union([
  Type.Object({ kind: Type.Literal("git"), url: Type.String(), commit: Sha }, closed),
  Type.Object({ kind: Type.Literal("tarball"), url: Type.String() }, closed),
]);

export const LockedNpmPluginSchema = Type.Object({
  version: Type.String(),
  from: Type.Optional(NpmFromSchema),
  integrity: Type.String({ pattern: INTEGRITY_RE.source }),
  /** The closure, layout-free: `name@version` → integrity. */
  dependencies: Type.Record(Type.String(), Type.String({ pattern: INTEGRITY_RE.source })),
}, closed);
export type LockedNpmPlugin = Static<typeof LockedNpmPluginSchema>;

export const TeamLockSchema = Type.Object({
  lockfileVersion: Type.Literal(TEAM_LOCK_VERSION),
  marketplaces: Type.Record(Type.String(), LockedMarketplaceSchema),
  marketplacePlugins: Type.Record(Type.String(), LockedMarketplacePluginSchema),
  npm: Type.Record(Type.String(), LockedNpmPluginSchema),
}, closed);
export type TeamLock = Static<typeof TeamLockSchema>;
export type LockedMarketplace = Static<typeof LockedMarketplaceSchema>;

/** The lock's sections, in the order they are written. */
export const LOCK_SECTIONS = ["marketplaces", "marketplacePlugins", "npm"] as const;
export type LockSection = (typeof LOCK_SECTIONS)[number];

/** A lock with nothing in it. */
export function emptyLock(): TeamLock {
  return { lockfileVersion: TEAM_LOCK_VERSION, marketplaces: {}, marketplacePlugins: {}, npm: {} };
}

/** The object schemas' field orders, for the one writer. */
export function fieldOrder(schema: TSchema): string[] {
  return Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
}

const LOCK_HINT = `xcsh-tools writes ${TEAM_LOCK_FILE}; undo the hand edit (git checkout -- ${TEAM_LOCK_FILE}) or run \`xcsh-tools install\` to rewrite it.`;

function argIssue(found: SourceArgProblem | undefined, at: string, value: unknown): ValidationIssue | undefined {
  return found && { path: at, code: found.code, message: `${at}: ${found.problem}`, found: describeValue(value), hint: sourceArgHint(found.code) };
}

function fromIssue(from: PluginFrom, at: string): ValidationIssue | undefined {
  const f = (field: string) => pointer(at, field);
  switch (from.kind) {
    case "relative":
      return argIssue(subdirPathProblem(from.path), f("path"), from.path);
    case "github":
      return argIssue(githubRepoProblem(from.repo), f("repo"), from.repo) ?? (from.path === undefined ? undefined : argIssue(subdirPathProblem(from.path), f("path"), from.path));
    case "git":
      return argIssue(gitUrlProblem(from.url, { allowLocal: false }), f("url"), from.url) ?? (from.path === undefined ? undefined : argIssue(subdirPathProblem(from.path), f("path"), from.path));
    case "git-subdir":
      return argIssue(subdirUrlProblem(from.url, { allowLocal: false }), f("url"), from.url) ?? argIssue(subdirPathProblem(from.path), f("path"), from.path);
    case "npm": {
      const name = npmNameProblem(from.package);
      if (name) return { path: f("package"), code: "ETEAM_LOCK_INVALID", message: `${f("package")}: ${JSON.stringify(from.package)} is not an npm package name: ${name}`, found: JSON.stringify(from.package), hint: LOCK_HINT };
      return exactVersionIssue(from.version, f("version"));
    }
    case "archive":
      return /^https:\/\/[^\s/]+\/\S*$/i.test(from.url) ? undefined : { path: f("url"), code: "ESOURCE_URL", message: `${f("url")}: ${describeValue(from.url)} is not an https URL`, expected: "an https:// URL", found: describeValue(from.url), hint: LOCK_HINT };
  }
}

function exactVersionIssue(version: string, at: string): ValidationIssue | undefined {
  return semver.valid(version) === version ? undefined : { path: at, code: "ETEAM_LOCK_INVALID", message: `${at}: ${JSON.stringify(version)} is not an exact version`, expected: 'an exact semver version like "1.4.2"', found: JSON.stringify(version), hint: LOCK_HINT };
}

/** Strict check of a lock: its version first (a newer format is not "invalid"), then the closed schema, then every value. */
export function validateTeamLock(value: unknown): ValidationResult<TeamLock> {
  const out = new IssueCollector();
  if (isRecord(value) && typeof value.lockfileVersion === "number" && value.lockfileVersion > TEAM_LOCK_VERSION) {
    out.error({ path: "/lockfileVersion", code: "ETEAM_LOCK_VERSION", message: `/lockfileVersion: ${value.lockfileVersion} is newer than this xcsh-tools reads`, expected: String(TEAM_LOCK_VERSION), found: String(value.lockfileVersion), hint: "A teammate's newer xcsh-tools wrote this lock: upgrade xcsh-tools (npm i -g xcsh-tools)." });
    return out.result(value as TeamLock);
  }
  const shape = checkSchema(TeamLockSchema, value);
  for (const issue of shape.ok ? [] : shape.issues) out.error({ ...issue, hint: `${issue.hint ?? ""} ${LOCK_HINT}`.trim() });
  if (!shape.ok) return out.result(value as TeamLock);
  const lock = shape.value;
  for (const [name, entry] of Object.entries(lock.marketplaces)) {
    const at = pointer("", "marketplaces", name);
    const issue = declaredSourceIssue(entry.source, pointer(at, "source"));
    if (issue) out.error(issue);
  }
  for (const [key, entry] of Object.entries(lock.marketplacePlugins)) {
    const at = pointer("", "marketplacePlugins", key);
    const idProblem = mayNameMarketplacePlugin(key) ? pluginIdProblem(key) : "it has no @marketplace";
    const keyIssue: ValidationIssue | undefined = idProblem === undefined ? undefined : { path: at, code: "ETEAM_LOCK_INVALID", message: `${at}: "${key}" is not a name@marketplace id: ${idProblem}`, expected: '"name@marketplace"', found: JSON.stringify(key), hint: LOCK_HINT };
    const issue = keyIssue ?? exactVersionIssue(entry.version, pointer(at, "version")) ?? fromIssue(entry.from, pointer(at, "from"));
    if (issue) out.error(issue);
  }
  for (const [name, entry] of Object.entries(lock.npm)) {
    const at = pointer("", "npm", name);
    const bad = npmNameProblem(name);
    const issue: ValidationIssue | undefined = bad
      ? { path: at, code: "ETEAM_LOCK_INVALID", message: `${at}: ${JSON.stringify(name)} is not an npm package name: ${bad}`, found: JSON.stringify(name), hint: LOCK_HINT }
      : (exactVersionIssue(entry.version, pointer(at, "version")) ??
        (entry.from?.kind === "git" ? argIssue(gitUrlProblem(entry.from.url, { allowLocal: false }), pointer(at, "from", "url"), entry.from.url) : undefined) ??
        (entry.from?.kind === "tarball" && !/^https:\/\/[^\s/]+\/\S*$/i.test(entry.from.url) ? { path: pointer(at, "from", "url"), code: "ESOURCE_URL", message: `${pointer(at, "from", "url")}: ${describeValue(entry.from.url)} is not an https URL`, found: describeValue(entry.from.url), hint: LOCK_HINT } : undefined) ??
        dependencyIssue(entry.dependencies, pointer(at, "dependencies")));
    if (issue) out.error(issue);
  }
  return out.result(lock);
}

function dependencyIssue(dependencies: Record<string, string>, at: string): ValidationIssue | undefined {
  for (const key of Object.keys(dependencies)) {
    const split = key.lastIndexOf("@");
    const name = split > 0 ? key.slice(0, split) : "";
    const version = split > 0 ? key.slice(split + 1) : "";
    if (npmNameProblem(name) === undefined && semver.valid(version) === version) continue;
    return { path: pointer(at, key), code: "ETEAM_LOCK_INVALID", message: `${pointer(at, key)}: ${JSON.stringify(key)} is not "name@exact-version"`, expected: '"name@1.2.3"', found: JSON.stringify(key), hint: LOCK_HINT };
  }
  return undefined;
}

/** Parse and check the text of a lock (one side of a conflicted lock, or bytes about to be written). */
export function parseTeamLockText(text: string, file: string): TeamLock {
  return valueOrThrow(validateTeamLock(parseTeamText(text, file, "ETEAM_LOCK_INVALID", LOCK_HINT)), file, "ETEAM_LOCK_INVALID");
}

/** Read `<root>/xcsh-team.lock.json`; `undefined` when there is none; markers are `ETEAM_CONFLICT_MARKERS` (teamset/lock-format.ts reads both sides). */
export function readTeamLock(file: string): TeamLock | undefined {
  return readTeamFile(file, validateTeamLock, "ETEAM_LOCK_INVALID", LOCK_HINT);
}
