/**
 * The organization policy (issue 43, docs/design/fleets.md "Policy"): one managed file an
 * administrator writes and a user cannot override, read before every change and at boot.
 *
 * Where it lives is fixed per platform (`managedPolicyFile`): no environment variable, flag or
 * setting moves it, since a user could set those. Tests reach it through `MANAGED_POLICY_SEAM`, a
 * global symbol only code already running inside the process can set (the test preload
 * test/helpers/managed-policy-preload.mjs, imported with `node --import` before the CLI's main):
 * whoever can run code in the process can already rewrite our state files or replace `fs`, so the
 * seam gives no lever the user did not have. The package reads it from nowhere else.
 *
 * Reading never fails open: a file that exists but cannot be read or parsed is a `broken` policy,
 * and every change (`policyForChange`) stops with its coded error; reading commands show it.
 * `checkSource` is the one place a source is judged: blocked rules first, then the allowlist.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Type, type Static } from "../manifest/typebox.js";
import { checkSchema } from "../manifest/schema-check.js";
import { closestKey } from "../manifest/unknown-keys.js";
import { parseJsonText } from "../manifest/json-file.js";
import { isPathInside } from "./contain.js";
import { XcshToolsError, errorMessage, isXcshToolsError } from "./errors.js";
import { managedPolicyFile } from "./policy-file.js";

export { MANAGED_POLICY_SEAM, managedPolicyFile } from "./policy-file.js";

/** One source rule: exactly one of these keys. */
const RULE_KEYS = ["github", "host", "npmScope", "npmRegistry", "folder"] as const;
export type RuleKey = (typeof RULE_KEYS)[number];
const RuleSchema = Type.Object({
  github: Type.Optional(Type.String()),
  host: Type.Optional(Type.String()),
  npmScope: Type.Optional(Type.String()),
  npmRegistry: Type.Optional(Type.String()),
  folder: Type.Optional(Type.String()),
});
export type PolicyRule = Static<typeof RuleSchema>;
const SourcesSchema = { allow: Type.Optional(Type.Array(RuleSchema)), block: Type.Optional(Type.Array(RuleSchema)) };
export const ManagedPolicySchema = Type.Object({
  $schema: Type.Optional(Type.String()),
  marketplaces: Type.Optional(Type.Object(SourcesSchema)),
  plugins: Type.Optional(Type.Object({ ...SourcesSchema, required: Type.Optional(Type.Array(Type.String({ minLength: 1 }))), forbidden: Type.Optional(Type.Array(Type.String({ minLength: 1 }))) })),
  allowScripts: Type.Optional(Type.Boolean()),
  projectMarketplaces: Type.Optional(Type.Boolean()),
});
export type ManagedPolicy = Static<typeof ManagedPolicySchema>;

/** The known keys at each level, for EPOLICY_UNKNOWN_KEY (TypeBox would let them through). */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  "": ["$schema", "marketplaces", "plugins", "allowScripts", "projectMarketplaces"],
  marketplaces: ["allow", "block"],
  plugins: ["allow", "block", "required", "forbidden"],
  rule: RULE_KEYS,
};

/** The policy as read: none (no file), in effect, or broken (every change stops with `error`). */
export type LoadedPolicy =
  | { state: "none"; file: string }
  | { state: "ok"; file: string; policy: ManagedPolicy }
  | { state: "broken"; file: string; error: XcshToolsError };

const FIX = "Ask the administrator who manages this machine to fix the file (only they can write it).";

/** Read the managed policy. Never throws: a file that exists but is unusable is `broken`. */
export function loadManagedPolicy(file: string = managedPolicyFile()): LoadedPolicy {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { state: "none", file };
    return { state: "broken", file, error: new XcshToolsError("EPOLICY_UNREADABLE", `The organization policy ${file} exists but cannot be read (${code ?? errorMessage(error)}); no change is made until it can`, { file, hint: FIX, cause: error }) };
  }
  try {
    return { state: "ok", file, policy: parseManagedPolicy(text, file) };
  } catch (error) {
    if (isXcshToolsError(error)) return { state: "broken", file, error };
    throw error;
  }
}

/** The policy a change must obey: `undefined` with no policy file; throws the broken policy's error. */
export function policyForChange(loaded: LoadedPolicy = loadManagedPolicy()): ManagedPolicy | undefined {
  if (loaded.state === "broken") throw loaded.error;
  return loaded.state === "ok" ? loaded.policy : undefined;
}

/** Parse and check a policy's text; coded errors name the file and the field. */
export function parseManagedPolicy(text: string, file: string): ManagedPolicy {
  let value: unknown;
  try {
    value = parseJsonText(text, file);
  } catch (error) {
    throw new XcshToolsError("EPOLICY_INVALID", `The organization policy ${file} is not valid JSON: ${errorMessage(error)}`, { file, hint: FIX, cause: error });
  }
  unknownKeys(value, file);
  const checked = checkSchema(ManagedPolicySchema, value);
  if (!checked.ok) {
    const issue = checked.issues[0]!;
    throw new XcshToolsError("EPOLICY_INVALID", `The organization policy ${file} ${issue.path || "/"}: ${issue.message}`, { file, path: issue.path, hint: `${issue.hint ?? "See docs/fleets.md for the policy's fields."} ${FIX}` });
  }
  for (const section of ["marketplaces", "plugins"] as const) {
    for (const list of ["allow", "block"] as const) {
      checked.value[section]?.[list]?.forEach((rule, index) => ruleProblem(rule, `/${section}/${list}/${index}`, file));
    }
  }
  return checked.value;
}

function unknownKeys(value: unknown, file: string): void {
  const walk = (node: unknown, known: readonly string[], at: string) => {
    if (typeof node !== "object" || node === null || Array.isArray(node)) return;
    for (const key of Object.keys(node)) {
      if (known.includes(key)) continue;
      const near = closestKey(key, known);
      throw new XcshToolsError("EPOLICY_UNKNOWN_KEY", `The organization policy ${file} ${at}/${key}: unknown key "${key}" (expected one of ${known.join(", ")})`, {
        file,
        path: `${at}/${key}`,
        hint: `${near ? `Did you mean "${near}"? ` : ""}An unknown key is refused rather than ignored, so a typo never loosens the policy. ${FIX}`,
      });
    }
  };
  walk(value, KNOWN_KEYS[""]!, "");
  const doc = (typeof value === "object" && value !== null ? value : {}) as Record<string, unknown>;
  for (const section of ["marketplaces", "plugins"]) {
    const part = doc[section];
    walk(part, KNOWN_KEYS[section]!, `/${section}`);
    for (const list of ["allow", "block"]) {
      const rules = (part as Record<string, unknown> | undefined)?.[list];
      if (Array.isArray(rules)) rules.forEach((rule, index) => walk(rule, RULE_KEYS, `/${section}/${list}/${index}`));
    }
  }
}

const GITHUB_RULE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\/[A-Za-z0-9._-]{1,100})?$/;
const HOST_RULE = /^(?:\*|(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*(?::\d{1,5})?)$/;
const SCOPE_RULE = /^@[a-z0-9][a-z0-9._~-]*$/;

/** EPOLICY_PATTERN when a rule is not exactly one well-formed key. */
function ruleProblem(rule: PolicyRule, at: string, file: string): void {
  const keys = Object.keys(rule) as RuleKey[];
  const fail = (field: string, problem: string, fix: string) => {
    throw new XcshToolsError("EPOLICY_PATTERN", `The organization policy ${file} ${field}: ${problem}`, { file, path: field, hint: `${fix} ${FIX}` });
  };
  if (keys.length !== 1) fail(at, `a rule has exactly one of ${RULE_KEYS.join(", ")} (found ${keys.length === 0 ? "none" : keys.join(", ")})`, `Split it into one rule per key, e.g. {"github": "acme"}.`);
  const key = keys[0]!;
  const value = rule[key]!;
  const field = `${at}/${key}`;
  switch (key) {
    case "github":
      if (!GITHUB_RULE.test(value)) fail(field, `"${value}" is not a GitHub owner or owner/repo`, `Write "acme" (every repository of the owner) or "acme/tools".`);
      break;
    case "host":
      if (!HOST_RULE.test(value)) fail(field, `"${value}" is not a host pattern`, `Write a host name, lowercase, without scheme or path: "git.corp.example", "*.corp.example" (it and every subdomain) or "*" (any host).`);
      break;
    case "npmScope":
      if (!SCOPE_RULE.test(value)) fail(field, `"${value}" is not an npm scope`, `Write the scope with its "@": "@acme".`);
      break;
    case "npmRegistry":
      if (!/^https?:\/\/[^\s/?#]+(?:\/[^\s?#]*)?$/i.test(value)) fail(field, `"${value}" is not an http(s) registry URL`, `Write the registry's URL: "https://npm.corp.example/".`);
      break;
    case "folder":
      if (!path.isAbsolute(value) || value.includes("*")) fail(field, `"${value}" is not an absolute folder`, `Write an absolute folder without wildcards: "/opt/xcsh-plugins" (it and everything below it).`);
      break;
  }
}

/** Where a plugin's or a marketplace's bytes come from, as the policy sees it. */
export type PolicySource =
  | { kind: "github"; owner: string; repo: string }
  | { kind: "git"; url: string }
  | { kind: "url"; url: string }
  | { kind: "npm"; name: string; registry?: string }
  | { kind: "folder"; path: string };

/** The source in words, for messages. */
export function describePolicySource(source: PolicySource): string {
  switch (source.kind) {
    case "github":
      return `GitHub ${source.owner}/${source.repo}`;
    case "git":
      return `git ${source.url}`;
    case "url":
      return `URL ${source.url}`;
    case "npm":
      return `npm ${source.name}${source.registry ? ` from ${source.registry}` : ""}`;
    case "folder":
      return `folder ${source.path}`;
  }
}

/** Host (lowercase, with a non-default port) and path of a URL, scp-like git addresses included. */
function hostAndPath(url: string): { host: string; path: string } | undefined {
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/\/)(.+)$/.exec(url);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return { host: scp[1]!.toLowerCase(), path: `/${scp[2]!}` };
  try {
    const parsed = new URL(url.replace(/^git\+/, ""));
    if (parsed.protocol === "file:") return undefined;
    return { host: parsed.host.toLowerCase(), path: decodeURIComponent(parsed.pathname) };
  } catch {
    return undefined;
  }
}

/** The folder a `file:` URL names, else `undefined`. */
export function fileUrlFolder(url: string): string | undefined {
  try {
    const parsed = new URL(url.replace(/^git\+/, ""));
    return parsed.protocol === "file:" ? decodeURIComponent(parsed.pathname) : undefined;
  } catch {
    return undefined;
  }
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*.")) {
    const base = pattern.slice(2);
    return host === base || host.endsWith(`.${base}`);
  }
  return host === pattern;
}

function githubOf(source: PolicySource): { owner: string; repo: string } | undefined {
  if (source.kind === "github") return source;
  if (source.kind !== "git" && source.kind !== "url") return undefined;
  const at = hostAndPath(source.url);
  if (!at || (at.host !== "github.com" && at.host !== "www.github.com")) return undefined;
  const [owner, repo] = at.path.split("/").filter(Boolean);
  return owner && repo ? { owner, repo: repo.replace(/\.git$/i, "") } : undefined;
}

const withSlash = (url: string) => (url.endsWith("/") ? url : `${url}/`).toLowerCase();

/** Whether `rule` names `source`. */
export function ruleMatches(rule: PolicyRule, source: PolicySource): boolean {
  if (rule.github !== undefined) {
    const gh = githubOf(source);
    if (!gh) return false;
    const [owner, repo] = rule.github.toLowerCase().split("/");
    return gh.owner.toLowerCase() === owner && (repo === undefined || gh.repo.toLowerCase() === repo);
  }
  if (rule.host !== undefined) {
    const host = source.kind === "github" ? "github.com" : source.kind === "git" || source.kind === "url" ? hostAndPath(source.url)?.host : source.kind === "npm" && source.registry ? hostAndPath(source.registry)?.host : undefined;
    return host !== undefined && hostMatches(rule.host, host);
  }
  if (rule.npmScope !== undefined) return source.kind === "npm" && source.name.toLowerCase().startsWith(`${rule.npmScope.toLowerCase()}/`);
  if (rule.npmRegistry !== undefined) return source.kind === "npm" && source.registry !== undefined && withSlash(source.registry).startsWith(withSlash(rule.npmRegistry));
  if (rule.folder !== undefined) return source.kind === "folder" && isPathInside(source.path, rule.folder);
  return false;
}

/** What the policy says of a source: allowed, or refused with the code and the rule that decided. */
export type PolicyVerdict = { allowed: true } | { allowed: false; code: "EPOLICY_BLOCKED" | "EPOLICY_NOT_ALLOWED"; reason: string };

/** The one judgment of a source: a block rule that names it refuses it; else an allowlist must name it. */
export function checkSource(policy: ManagedPolicy | undefined, source: PolicySource, what: "marketplace" | "plugin"): PolicyVerdict {
  const section = what === "marketplace" ? policy?.marketplaces : policy?.plugins;
  if (!section) return { allowed: true };
  const field = what === "marketplace" ? "marketplaces" : "plugins";
  const blocked = section.block?.findIndex((rule) => ruleMatches(rule, source)) ?? -1;
  if (blocked >= 0) return { allowed: false, code: "EPOLICY_BLOCKED", reason: `${describePolicySource(source)} is blocked by the organization policy (/${field}/block/${blocked})` };
  if (section.allow && !section.allow.some((rule) => ruleMatches(rule, source))) {
    return { allowed: false, code: "EPOLICY_NOT_ALLOWED", reason: `${describePolicySource(source)} is not among the ${what} sources the organization policy allows (/${field}/allow)` };
  }
  return { allowed: true };
}

/** `checkSource` that throws the verdict as a coded error naming `subject` and the policy file. */
export function assertAllowed(policy: ManagedPolicy | undefined, source: PolicySource, what: "marketplace" | "plugin", subject: string, file: string = managedPolicyFile()): void {
  const verdict = checkSource(policy, source, what);
  if (verdict.allowed) return;
  throw new XcshToolsError(verdict.code, `Refused ${subject}: ${verdict.reason}`, { file, hint: `The organization policy ${file} decides which sources may be used on this machine; ask its administrator, or use an allowed source.` });
}

/**
 * Load the policy for a change and check each source: the one call every entry point makes
 * before any network or disk access (marketplace add and update, install, update, restore, seed).
 */
export function assertSourcesAllowed(checks: readonly { source: PolicySource; what: "marketplace" | "plugin"; subject: string }[], loaded: LoadedPolicy = loadManagedPolicy()): ManagedPolicy | undefined {
  const policy = policyForChange(loaded);
  for (const check of checks) assertAllowed(policy, check.source, check.what, check.subject, loaded.file);
  return policy;
}

/**
 * The entry of a required/forbidden list that names plugin `id`: an npm name, a marketplace id
 * `name@marketplace`, or a bare `name` that names that plugin in every marketplace.
 */
export function listNames(list: readonly string[] | undefined, id: string): string | undefined {
  const at = id.lastIndexOf("@");
  const plugin = at > 0 ? id.slice(0, at) : undefined;
  return list?.find((entry) => entry === id || (plugin !== undefined && entry === plugin));
}

/** EPOLICY_FORBIDDEN when the policy forbids plugin `id`. */
export function assertNotForbidden(policy: ManagedPolicy | undefined, id: string, file: string = managedPolicyFile()): void {
  const entry = listNames(policy?.plugins?.forbidden, id);
  if (entry === undefined) return;
  throw new XcshToolsError("EPOLICY_FORBIDDEN", `Refused ${id}: the organization policy forbids it (/plugins/forbidden: "${entry}")`, { file, hint: `The organization policy ${file} forbids this plugin on this machine; ask its administrator.` });
}

/** EPOLICY_REQUIRED when `id` is required and the change would remove or switch it off. */
export function assertNotRequired(policy: ManagedPolicy | undefined, id: string, doing: "uninstall" | "disable", file: string = managedPolicyFile()): void {
  const entry = listNames(policy?.plugins?.required, id);
  if (entry === undefined) return;
  throw new XcshToolsError("EPOLICY_REQUIRED", `Refused to ${doing} ${id}: the organization policy requires it installed and on (/plugins/required: "${entry}")`, { file, hint: `The organization policy ${file} keeps this plugin on this machine; ask its administrator.` });
}

/** The policy's source of an npm install spec's parts (npm-package-arg's type, name and fetch spec). */
export function npmSpecSource(kind: string, name: string | undefined, fetchSpec: string, registry?: string): PolicySource {
  if (kind === "directory" || kind === "tarball" || kind === "file" || kind === "link") return { kind: "folder", path: path.resolve(fetchSpec.replace(/^file:/, "")) };
  if (kind === "git") {
    const folder = fileUrlFolder(fetchSpec);
    if (folder !== undefined) return { kind: "folder", path: folder };
    const gh = /^(?:github:)?([A-Za-z0-9-]+)\/([A-Za-z0-9._-]+?)(?:#.*)?$/.exec(fetchSpec);
    return gh ? { kind: "github", owner: gh[1]!, repo: gh[2]! } : { kind: "git", url: fetchSpec.replace(/#.*$/, "") };
  }
  if (kind === "remote") return { kind: "url", url: fetchSpec };
  return { kind: "npm", name: name ?? fetchSpec, ...(registry ? { registry } : {}) };
}

/** A marketplace's recorded or typed source (`marketplaces.json` sourceType and sourceUri). */
export function catalogPolicySource(kind: "github" | "git" | "url" | "local", uri: string): PolicySource {
  const bare = uri.replace(/#.*$/, "");
  if (kind === "github") {
    const [owner = "", repo = ""] = bare.split("/");
    return { kind: "github", owner, repo };
  }
  if (kind === "local") return { kind: "folder", path: path.resolve(bare) };
  if (kind === "git") {
    const folder = fileUrlFolder(bare) ?? (path.isAbsolute(bare) ? bare : undefined);
    return folder !== undefined ? { kind: "folder", path: folder } : { kind: "git", url: bare };
  }
  return { kind: "url", url: bare };
}

/** EPOLICY_REQUIRED when the organization policy keeps one of `ids` installed and on (a broken policy stops the change too). */
export function assertNoneRequired(ids: readonly string[], doing: "uninstall" | "disable"): void {
  const loaded = loadManagedPolicy();
  const policy = policyForChange(loaded);
  for (const id of ids) assertNotRequired(policy, id, doing, loaded.file);
}

/** Why install scripts may not run on this machine (`allowScripts: false` in the policy), else `undefined`. */
export function scriptsForbiddenBy(loaded: LoadedPolicy = loadManagedPolicy()): string | undefined {
  if (loaded.state !== "ok" || loaded.policy.allowScripts !== false) return undefined;
  return `the organization policy ${loaded.file} forbids install scripts (allowScripts: false)`;
}

/** Where a catalog entry's plugin source fetches from (a relative source: the marketplace's own bytes, `market`). */
export function catalogPluginPolicySource(source: unknown, market: PolicySource): PolicySource {
  if (typeof source !== "object" || source === null) return market;
  const s = source as Record<string, unknown>;
  const text = (key: string) => (typeof s[key] === "string" ? (s[key] as string) : "");
  switch (s.source) {
    case "github":
      return catalogPolicySource("github", text("repo"));
    case "url":
    case "git-subdir":
      return catalogPolicySource("git", text("url"));
    case "npm":
      return { kind: "npm", name: text("package"), ...(text("registry") ? { registry: text("registry") } : {}) };
    case "archive":
      return { kind: "url", url: text("url") };
    default:
      return market;
  }
}
