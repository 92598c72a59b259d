/**
 * The values that untrusted files hand to git and to npm's fetcher — catalog `url`/`ref`/`sha`,
 * `github` repos, `git-subdir` paths, `npm` versions and registries, marketplace sources,
 * Claude Code's known marketplaces, git install specs — checked by one set of rules, at read time
 * (catalog validation, `validate`, registry reads) and again right before the call (core/git.ts,
 * the source kinds). A value that passes can only be an operand: it never starts with `-`, holds
 * no whitespace or control character, and names an allowed transport.
 *
 * Local transports (`file://`, plain paths) are allowed only where the caller says the value came
 * from the user's own disk or command line (`allowLocal`): a catalog fetched from a remote must
 * not make us clone a repository of the user's machine into a plugin.
 *
 * Each check returns a problem (`{code, problem}`) or `undefined`; `sourceArgError` makes it a
 * coded error naming where the value came from. Codes: `EGIT_URL`, `EGIT_REF`, `ESHA`,
 * `ESOURCE_INVALID` (a GitHub repo), `EENTRY_ESCAPE` (a subdir path), `EVERSION` and
 * `ESOURCE_URL` (npm version and registry).
 */
import path from "node:path";
import { XcshToolsError } from "./errors.js";
import { semver } from "./npm-spec.js";

/** A refused value: the error code and what is wrong, in words. */
export interface SourceArgProblem {
  code: "EGIT_URL" | "EGIT_REF" | "ESHA" | "ESOURCE_INVALID" | "EENTRY_ESCAPE" | "EVERSION" | "ESOURCE_URL" | "EPACKAGE_NAME";
  problem: string;
}

/** Whether local transports (`file://`, paths) are acceptable for this value. */
export interface GitUrlPolicy {
  allowLocal: boolean;
}

/** No real URL or ref is longer; a huge value is a mistake or an attack on a log. */
const MAX_ARG = 2048;
// eslint-disable-next-line no-control-regex
const CONTROL_OR_SPACE = /[\u0000-\u0020\u007f\u0085\u00a0\u2028\u2029]/;
/** `<transport>::<address>`: git's remote-helper syntax (`ext::sh -c …`, `fd::3`). */
const HELPER_SYNTAX = /^[A-Za-z][A-Za-z0-9+.-]*::/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
const REMOTE_SCHEMES = new Set(["https", "http", "ssh", "git", "git+ssh", "ssh+git"]);
/** scp-like `user@host:path` (git reads it as ssh). */
const SCP_LIKE = /^([A-Za-z0-9._~+-]+)@([A-Za-z0-9._-]+):(.+)$/;
const HOST = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._~%-]+)$/;

function shown(value: string): string {
  return JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value);
}

function basicProblem(value: unknown, what: string, code: SourceArgProblem["code"]): SourceArgProblem | undefined {
  if (typeof value !== "string" || value.length === 0) return { code, problem: `${what} must be a non-empty string` };
  if (value.length > MAX_ARG) return { code, problem: `${what} has ${value.length} characters (at most ${MAX_ARG})` };
  if (CONTROL_OR_SPACE.test(value)) return { code, problem: `${what} ${shown(value)} contains whitespace or control characters` };
  if (value.startsWith("-")) return { code, problem: `${what} ${shown(value)} starts with "-" and would be read as an option` };
  return undefined;
}

/** True for a local path as a git URL (`/abs`, `./x`, `../x`, `~/x`, `C:\x`). */
export function isLocalPath(url: string): boolean {
  return path.isAbsolute(url) || /^\.\.?([/\\]|$)/.test(url) || /^~([/\\]|$)/.test(url) || /^[A-Za-z]:[/\\]/.test(url);
}

/** True when `url` reaches the local disk (`file://` or a path) rather than a remote. */
export function isLocalGitUrl(url: string): boolean {
  return /^file:\/\//i.test(url) || isLocalPath(url);
}

/**
 * A git URL: `https://`, `http://`, `ssh://`, `git://`, `user@host:path`, and — only with
 * `allowLocal` — `file://` and local paths. Never `<transport>::…`, never option-shaped, never a
 * host or user that starts with `-` (ssh would read it as an option).
 */
export function gitUrlProblem(url: unknown, policy: GitUrlPolicy): SourceArgProblem | undefined {
  const basic = basicProblem(url, "the git URL", "EGIT_URL");
  if (basic) return basic;
  const u = url as string;
  if (HELPER_SYNTAX.test(u)) return { code: "EGIT_URL", problem: `the git URL ${shown(u)} uses git's "<transport>::" remote-helper syntax, which can run programs` };
  const scheme = SCHEME.exec(u)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (scheme === "file") return policy.allowLocal ? undefined : { code: "EGIT_URL", problem: `the git URL ${shown(u)} reaches the local disk (file://), which only a source you typed or a marketplace on your disk may do` };
    if (!REMOTE_SCHEMES.has(scheme)) return { code: "EGIT_URL", problem: `the git URL ${shown(u)} uses the transport "${scheme}" (allowed: https, http, ssh, git)` };
    const rest = u.slice(scheme.length + 3);
    const authority = rest.split(/[/?#]/, 1)[0] ?? "";
    const at = authority.lastIndexOf("@");
    const user = at >= 0 ? authority.slice(0, at) : "";
    const hostPort = at >= 0 ? authority.slice(at + 1) : authority;
    const host = hostPort.startsWith("[") ? hostPort.slice(0, hostPort.indexOf("]") + 1) : hostPort.replace(/:\d*$/, "");
    if (!host || !HOST.test(host) || host.startsWith("-")) return { code: "EGIT_URL", problem: `the git URL ${shown(u)} has no valid host name` };
    if (user.startsWith("-") || decodeURIComponentSafe(user).startsWith("-") || decodeURIComponentSafe(host).startsWith("-")) return { code: "EGIT_URL", problem: `the git URL ${shown(u)} has a user or host that starts with "-" and would be read as an option` };
    return undefined;
  }
  const scp = SCP_LIKE.exec(u);
  if (scp) {
    const [, user, host, rest] = scp as unknown as [string, string, string, string];
    if (user.startsWith("-") || host.startsWith("-") || rest.startsWith("-")) return { code: "EGIT_URL", problem: `the git URL ${shown(u)} has a part that starts with "-" and would be read as an option` };
    return undefined;
  }
  if (isLocalPath(u)) return policy.allowLocal ? undefined : { code: "EGIT_URL", problem: `the git URL ${shown(u)} is a local path, which only a source you typed or a marketplace on your disk may use` };
  return { code: "EGIT_URL", problem: `${shown(u)} is not a git URL (expected https://…, ssh://…, git://… or user@host:path)` };
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** A branch, tag or full ref name by `git check-ref-format`'s rules, never option-shaped. */
export function gitRefProblem(ref: unknown): SourceArgProblem | undefined {
  const basic = basicProblem(ref, "the git ref", "EGIT_REF");
  if (basic) return basic;
  const r = ref as string;
  const bad = (why: string): SourceArgProblem => ({ code: "EGIT_REF", problem: `the git ref ${shown(r)} ${why}` });
  if (r.length > 255) return bad("is longer than 255 characters");
  if (/[~^:?*[\\]/.test(r)) return bad('contains one of ~ ^ : ? * [ \\ (not allowed in git ref names)');
  if (r.includes("..")) return bad('contains ".."');
  if (r.includes("@{") || r === "@") return bad('contains "@{" or is "@"');
  if (r.startsWith("/") || r.endsWith("/") || r.includes("//")) return bad("has an empty path component");
  if (r.endsWith(".") || r.endsWith(".lock")) return bad('ends with "." or ".lock"');
  if (r.split("/").some((part) => part.startsWith(".") || part.endsWith(".lock"))) return bad('has a component that starts with "." or ends with ".lock"');
  return undefined;
}

/** A full commit id: 40 hex digits (SHA-1) or 64 (SHA-256); abbreviated shas are refused. */
export function gitShaProblem(sha: unknown): SourceArgProblem | undefined {
  if (typeof sha === "string" && /^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$/.test(sha)) return undefined;
  return { code: "ESHA", problem: `the sha ${typeof sha === "string" ? shown(sha) : String(sha)} is not a full 40-character (or 64-character) commit sha` };
}

const GITHUB_OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
const GITHUB_REPO = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,99}$/;

/** `owner/repo` by GitHub's rules: owner 1-39 letters, digits and inner single hyphens; repo 1-100 of `[A-Za-z0-9._-]`, not `.`/`..`, no leading `-`. */
export function githubRepoProblem(repo: unknown): SourceArgProblem | undefined {
  const basic = basicProblem(repo, "the GitHub repository", "ESOURCE_INVALID");
  if (basic) return basic;
  const r = repo as string;
  const parts = r.split("/");
  const bad = { code: "ESOURCE_INVALID" as const, problem: `the GitHub repository ${shown(r)} is not "owner/repo" by GitHub's naming rules` };
  if (parts.length !== 2) return bad;
  const [owner, name] = parts as [string, string];
  if (!GITHUB_OWNER.test(owner) || !GITHUB_REPO.test(name) || name === "." || name === "..") return bad;
  return undefined;
}

/** A folder inside a repository: relative, no `..` component, no absolute or drive path. */
export function subdirPathProblem(p: unknown): SourceArgProblem | undefined {
  if (typeof p !== "string" || p.length === 0) return { code: "EENTRY_ESCAPE", problem: "the path must be a non-empty string" };
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(p)) return { code: "EENTRY_ESCAPE", problem: `the path ${shown(p)} contains control characters` };
  if (path.posix.isAbsolute(p) || path.win32.isAbsolute(p) || /^[A-Za-z]:/.test(p)) return { code: "EENTRY_ESCAPE", problem: `the path ${shown(p)} is absolute` };
  if (p.split(/[/\\]/).includes("..")) return { code: "EENTRY_ESCAPE", problem: `the path ${shown(p)} leaves the repository with ".."` };
  return undefined;
}

/** An npm version, range or dist-tag as a catalog or spec gives it; never option-shaped. */
export function npmVersionProblem(version: unknown): SourceArgProblem | undefined {
  if (typeof version !== "string" || version.length === 0) return { code: "EVERSION", problem: "the npm version must be a non-empty string" };
  if (version.length > MAX_ARG) return { code: "EVERSION", problem: `the npm version has ${version.length} characters (at most ${MAX_ARG})` };
  // Ranges hold spaces (">=1 <2"), so only control characters are refused outright.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(version)) return { code: "EVERSION", problem: `the npm version ${shown(version)} contains control characters` };
  if (version.trimStart().startsWith("-")) return { code: "EVERSION", problem: `the npm version ${shown(version)} starts with "-" and would be read as an option` };
  if (semver.validRange(version) || /^[A-Za-z][A-Za-z0-9._-]*$/.test(version)) return undefined;
  return { code: "EVERSION", problem: `${shown(version)} is neither a semver version or range nor a dist-tag` };
}

/** An npm registry URL: http(s), no whitespace, no option shape. */
export function registryUrlProblem(url: unknown): SourceArgProblem | undefined {
  const basic = basicProblem(url, "the registry URL", "ESOURCE_URL");
  if (basic) return basic;
  const u = url as string;
  if (!/^https?:\/\//i.test(u)) return { code: "ESOURCE_URL", problem: `the registry URL ${shown(u)} is not an http(s) URL` };
  try {
    new URL(u);
  } catch {
    return { code: "ESOURCE_URL", problem: `the registry URL ${shown(u)} is not a valid URL` };
  }
  return undefined;
}

/** What npm-package-arg makes of a git spec: the fields pacote hands on to git. */
export interface NpmGitSpecParts {
  hosted?: { type?: string; user?: string; project?: string } | null | undefined;
  fetchSpec?: string | null | undefined;
  gitCommittish?: string | null | undefined;
  gitRange?: string | null | undefined;
}

/**
 * A git spec of npm's (`git+ssh://…#ref`, `git+https://…#semver:^1`, `github:owner/repo#ref`), checked
 * as pacote will hand it to git: the hosted owner/repo (from which hosted-git-info builds the URL),
 * or the URL itself (`file://` and paths only with `allowLocal`), the committish and the semver range.
 *
 * npm's git runner (@npmcli/git) does not put `--` before its operands (`git ls-remote <url>`,
 * `git clone <url> <dir>`, `git checkout <committish>`, `git fetch origin <ref>`). What makes that
 * safe here: every operand it passes is either one of these values, which never start with `-`
 * once they pass (nor does a URL's user or host, which ssh would read), or comes from git itself
 * (`ls-remote` ref names always start with `refs/` or are `HEAD`; shas are hex) or is pacote's own
 * temporary folder (absolute). So no operand can be read as an option, and `--` would add nothing.
 * The settings it cannot take as options reach its git through the environment (core/git.ts
 * `gitEnvForNpm`).
 */
export function npmGitSpecProblem(parsed: NpmGitSpecParts, policy: GitUrlPolicy): SourceArgProblem | undefined {
  const hosted = parsed.hosted;
  if (hosted && hosted.user !== undefined && hosted.project !== undefined) {
    const repo = `${hosted.user}/${hosted.project}`;
    if (hosted.type === "github") {
      const found = githubRepoProblem(repo);
      if (found) return found;
    } else if (![...hosted.user.split("/"), hosted.project].every((part) => /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/.test(part))) {
      return { code: "ESOURCE_INVALID", problem: `the ${hosted.type ?? "hosted"} repository ${JSON.stringify(repo)} is not "owner/repo"` };
    }
  } else {
    const found = gitUrlProblem(parsed.fetchSpec, policy);
    if (found) return found;
  }
  if (parsed.gitCommittish) {
    const found = gitRefProblem(parsed.gitCommittish);
    if (found) return found;
  }
  if (parsed.gitRange) return npmVersionProblem(parsed.gitRange);
  return undefined;
}

const HINTS: Record<SourceArgProblem["code"], string> = {
  EGIT_URL: "Use an https://, ssh://, git:// or user@host:path URL; local paths and file:// only for sources you type or marketplaces on your disk.",
  EGIT_REF: 'Use a branch or tag name as `git check-ref-format` accepts it (e.g. "main", "v1.2.0"), or pin a full sha.',
  ESHA: "Pin the full 40-character commit sha (git rev-parse HEAD).",
  ESOURCE_INVALID: 'Write the GitHub repository as "owner/repo" (letters, digits, "-", "_", ".").',
  EENTRY_ESCAPE: 'Use a folder inside the repository, e.g. "plugins/x".',
  EVERSION: 'Use a version, a range or a dist-tag, e.g. "1.2.3", "^1.2.0" or "latest".',
  ESOURCE_URL: "Use the registry URL, e.g. https://registry.npmjs.org.",
  EPACKAGE_NAME: "Use the package name exactly as published on npm, e.g. @scope/name.",
};

/** The standard hint of a problem code. */
export function sourceArgHint(code: SourceArgProblem["code"]): string {
  return HINTS[code];
}

/** A refused value as a coded error (exit 2) naming where it came from (`where`: file and field, or spec). */
export function sourceArgError(found: SourceArgProblem, where: string, options: { file?: string; path?: string; hint?: string } = {}): XcshToolsError {
  return new XcshToolsError(found.code, `${where}: ${found.problem}`, {
    hint: options.hint ?? HINTS[found.code],
    exitCode: 2,
    ...(options.file ? { file: options.file } : {}),
    ...(options.path ? { path: options.path } : {}),
  });
}

/** Throw when `check` found a problem. */
export function assertSourceArg(found: SourceArgProblem | undefined, where: string, options: { file?: string; path?: string; hint?: string } = {}): void {
  if (found) throw sourceArgError(found, where, options);
}

/** True when a `git-subdir` `url` is GitHub's `owner/repo` shorthand rather than a git URL. */
export function isGithubShorthand(url: string): boolean {
  return !url.includes("://") && !HELPER_SYNTAX.test(url) && !SCP_LIKE.test(url) && !isLocalPath(url);
}

/** A `git-subdir` `url`: a git URL, or `owner/repo` for GitHub (`.git` allowed). */
export function subdirUrlProblem(url: unknown, policy: GitUrlPolicy): SourceArgProblem | undefined {
  if (typeof url === "string" && isGithubShorthand(url)) {
    const found = githubRepoProblem(url.replace(/\.git$/, ""));
    return found ? { code: "EGIT_URL", problem: `${shown(url)} is neither a git URL nor a GitHub "owner/repo"` } : undefined;
  }
  return gitUrlProblem(url, policy);
}
