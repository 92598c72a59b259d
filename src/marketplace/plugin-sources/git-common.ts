/**
 * The git-based plugin sources (`url`, `github`, `git-subdir`): clone at the entry's `ref`/`sha` (the sha honoured even
 * off the tip, core/git.ts) into the scratch folder, and probe the remote without cloning. The
 * catalog was validated when it was read; the values are checked again here, right before git
 * sees them (core/source-args.ts), naming the entry, and again inside core/git.ts.
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { isPathInside } from "../../core/contain.js";
import { XcshToolsError } from "../../core/errors.js";
import { cloneAt, remoteHead } from "../../core/git.js";
import { redactSecrets } from "../../core/redact.js";
import { assertSourceArg, gitRefProblem, gitShaProblem, githubRepoProblem, gitUrlProblem, isGithubShorthand, subdirPathProblem, subdirUrlProblem, type SourceArgProblem } from "../../core/source-args.js";
import { catalogOriginOf } from "../catalog.js";
import type { FetchedPlugin, PluginSourceInput, PluginSourceKind, PluginWorld, Revision } from "./types.js";

export interface GitPinned {
  ref?: string;
  sha?: string;
}

/** A git source as the kinds hand it over: where to clone, at which pin, for which entry. */
export interface GitTarget {
  url: string;
  pin: GitPinned;
  /** The entry may name a local URL: its catalog came from the local disk. */
  allowLocal: boolean;
}

function gitOptions(world: PluginWorld, allowLocal: boolean) {
  return { env: world.env, timeoutMs: world.gitTimeoutMs, allowLocal, ...(world.signal ? { signal: world.signal } : {}) };
}

/** Throw the entry's refused value as a coded error naming the catalog, entry and field. */
export function assertEntryArg(input: PluginSourceInput, field: string, found: SourceArgProblem | undefined): void {
  const index = input.catalog.plugins.indexOf(input.entry);
  const at = `/plugins/${index >= 0 ? index : "?"}/source/${field}`;
  assertSourceArg(found, `Plugin "${input.entry.name}" of marketplace "${input.marketplace.name}" (${input.marketplace.catalogPath} ${at})`, { file: input.marketplace.catalogPath, path: at });
}

/** The git target of a `url`, `github` or `git-subdir` entry, every value checked. */
export function gitTargetOf(input: PluginSourceInput, source: { url?: unknown; repo?: unknown; ref?: unknown; sha?: unknown }, options: { githubShorthand?: boolean } = {}): GitTarget {
  const { allowLocal } = catalogOriginOf(input.marketplace);
  let url: string;
  if (source.repo !== undefined) {
    assertEntryArg(input, "repo", githubRepoProblem(source.repo));
    url = githubUrl(source.repo as string);
  } else {
    assertEntryArg(input, "url", options.githubShorthand ? subdirUrlProblem(source.url, { allowLocal }) : gitUrlProblem(source.url, { allowLocal }));
    const raw = source.url as string;
    url = options.githubShorthand && isGithubShorthand(raw) ? githubUrl(raw.replace(/\.git$/, "")) : raw;
  }
  if (source.ref !== undefined) assertEntryArg(input, "ref", gitRefProblem(source.ref));
  if (source.sha !== undefined) assertEntryArg(input, "sha", gitShaProblem(source.sha));
  const pin: GitPinned = { ...(typeof source.ref === "string" ? { ref: source.ref } : {}), ...(typeof source.sha === "string" ? { sha: source.sha } : {}) };
  return { url, pin, allowLocal };
}

/** Clone the target at its pin into `<scratch>/repo`. */
export async function cloneSource(target: GitTarget, scratch: string, world: PluginWorld): Promise<FetchedPlugin> {
  const dir = path.join(scratch, "repo");
  const sha = await cloneAt(target.url, dir, target.pin, gitOptions(world, target.allowLocal));
  return { dir, within: dir, gitCommitSha: sha };
}

/** The pinned sha, or the commit the remote ref points at now. */
export async function probeGit(target: GitTarget, world: PluginWorld): Promise<Revision> {
  if (target.pin.sha) return { gitCommitSha: target.pin.sha.toLowerCase() };
  const sha = await remoteHead(target.url, target.pin.ref, gitOptions(world, target.allowLocal));
  return sha ? { gitCommitSha: sha } : {};
}

/** `owner/repo` → the GitHub https clone URL. */
export function githubUrl(repo: string): string {
  return `https://github.com/${repo}.git`;
}

/** Clone `target` and hand over its folder `subdir`, checked to exist and to stay inside the clone. */
async function fetchSubdir(input: PluginSourceInput, target: GitTarget, subdir: string, scratch: string, world: PluginWorld): Promise<FetchedPlugin> {
  const { entry } = input;
  const clone = await cloneSource(target, scratch, world);
  const rootReal = await realpath(clone.dir);
  const real = await realpath(path.resolve(clone.dir, subdir)).catch(() => undefined);
  if (!real || !(await stat(real)).isDirectory()) {
    throw new XcshToolsError("ESOURCE_NOT_FOUND", `Plugin "${entry.name}": path "${subdir}" does not exist in ${redactSecrets(target.url)}${clone.gitCommitSha ? ` at ${clone.gitCommitSha.slice(0, 12)}` : ""}`, {
      hint: "The catalog entry points at a folder the repository does not have at that ref: ask the marketplace owner to fix it.",
    });
  }
  if (!isPathInside(real, rootReal)) {
    throw new XcshToolsError("EENTRY_ESCAPE", `Plugin "${entry.name}": path "${subdir}" escapes the cloned repository`, { hint: "Use a folder inside the repository." });
  }
  return { ...clone, dir: real, within: rootReal };
}

/**
 * A git source kind: the plugin is the repository `where` names (`url`, or `repo` on GitHub) at
 * the entry's pin, or its folder `path` where the kind has one: `required` for `git-subdir` (a
 * monorepo of plugins), `optional` for `url`, `none` for `github`, whose schema has no `path` (a
 * stray one is an unknown key there, and Claude Code installs the whole repository).
 * `githubShorthand` lets `git-subdir`'s url be `owner/repo`, the host's rule.
 */
export function gitPluginSource(kind: string, where: "url" | "repo", options: { subdir: "required" | "optional" | "none"; githubShorthand?: boolean }): PluginSourceKind {
  const partsOf = (input: PluginSourceInput) => {
    const s = input.entry.source as { url?: unknown; repo?: unknown; path?: unknown; ref?: unknown; sha?: unknown };
    const target = gitTargetOf(input, { [where]: s[where], ref: s.ref, sha: s.sha }, options);
    if (options.subdir === "none" || (options.subdir === "optional" && s.path === undefined)) return { target, subdir: undefined };
    assertEntryArg(input, "path", subdirPathProblem(s.path));
    return { target, subdir: s.path as string };
  };
  return {
    kind,
    // async: a refused value rejects like every other failure of a source kind.
    async fetch(input, scratch, world) {
      const { target, subdir } = partsOf(input);
      return subdir === undefined ? cloneSource(target, scratch, world) : fetchSubdir(input, target, subdir, scratch, world);
    },
    async probe(input, world) {
      return probeGit(partsOf(input).target, world);
    },
  };
}
