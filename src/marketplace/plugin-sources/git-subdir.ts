/**
 * `{source: "git-subdir", url, path, ref?, sha?}`: one folder of a git repository (a monorepo of
 * plugins). `url` is a git URL, or `owner/repo` for GitHub (the host's rule); `path` is
 * relative without `..` (checked before the clone) and must stay inside the clone once symlinks
 * are resolved. A `url` source with a `path` (Claude Code's catalogs have them) is the same thing
 * without the shorthand, so both use `fetchSubdir`.
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import type { Static } from "../../manifest/typebox.js";
import { isPathInside } from "../../core/contain.js";
import { XcshToolsError } from "../../core/errors.js";
import { subdirPathProblem } from "../../core/source-args.js";
import { redactUrl } from "../../core/git.js";
import type { GitSubdirSourceSchema } from "../../manifest/marketplace-catalog.js";
import { assertEntryArg, cloneSource, gitTargetOf, probeGit, type GitTarget } from "./git-common.js";
import type { FetchedPlugin, PluginSourceInput, PluginSourceKind, PluginWorld } from "./types.js";

type GitSubdirSource = Static<typeof GitSubdirSourceSchema>;

/** Clone `target` and hand over its folder `subdir`, checked to exist and to stay inside the clone. */
export async function fetchSubdir(input: PluginSourceInput, target: GitTarget, subdir: string, scratch: string, world: PluginWorld): Promise<FetchedPlugin> {
  const { entry } = input;
  assertEntryArg(input, "path", subdirPathProblem(subdir));
  const clone = await cloneSource(target, scratch, world);
  const rootReal = await realpath(clone.dir);
  const dir = path.resolve(clone.dir, subdir);
  const real = await realpath(dir).catch(() => undefined);
  if (!real || !(await stat(real)).isDirectory()) {
    throw new XcshToolsError("ESOURCE_NOT_FOUND", `Plugin "${entry.name}": path "${subdir}" does not exist in ${redactUrl(target.url)}${clone.gitCommitSha ? ` at ${clone.gitCommitSha.slice(0, 12)}` : ""}`, {
      hint: "The catalog entry points at a folder the repository does not have at that ref: ask the marketplace owner to fix it.",
    });
  }
  if (!isPathInside(real, rootReal)) {
    throw new XcshToolsError("EENTRY_ESCAPE", `Plugin "${entry.name}": path "${subdir}" escapes the cloned repository`, { hint: "Use a folder inside the repository." });
  }
  return { ...clone, dir: real, within: rootReal };
}

export const gitSubdirPluginSource: PluginSourceKind = {
  kind: "git-subdir",
  async fetch(input, scratch, world) {
    const s = input.entry.source as GitSubdirSource;
    return fetchSubdir(input, gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }, { githubShorthand: true }), s.path, scratch, world);
  },
  async probe(input, world) {
    const s = input.entry.source as GitSubdirSource;
    assertEntryArg(input, "path", subdirPathProblem(s.path));
    return probeGit(gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }, { githubShorthand: true }), world);
  },
};
