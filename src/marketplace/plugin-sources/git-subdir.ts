/**
 * `{source: "git-subdir", url, path, ref?, sha?}`: one folder of a git repository (a monorepo of
 * plugins). `url` is a git URL, or `owner/repo` for GitHub (the host's rule, §7.5); `path` is
 * relative without `..` (checked before the clone) and must stay inside the clone once symlinks
 * are resolved.
 */
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import type { Static } from "../../manifest/typebox.js";
import { isPathInside } from "../../core/contain.js";
import { XcshToolsError } from "../../core/errors.js";
import { subdirPathProblem } from "../../core/source-args.js";
import { redactUrl } from "../../core/git.js";
import type { GitSubdirSourceSchema } from "../../manifest/marketplace-catalog.js";
import { assertEntryArg, cloneSource, gitTargetOf, probeGit } from "./git-common.js";
import type { PluginSourceKind } from "./types.js";

type GitSubdirSource = Static<typeof GitSubdirSourceSchema>;

export const gitSubdirPluginSource: PluginSourceKind = {
  kind: "git-subdir",
  async fetch(input, scratch, world) {
    const { entry } = input;
    const s = entry.source as GitSubdirSource;
    const target = gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }, { githubShorthand: true });
    assertEntryArg(input, "path", subdirPathProblem(s.path));
    const clone = await cloneSource(target, scratch, world);
    const rootReal = await realpath(clone.dir);
    const dir = path.resolve(clone.dir, s.path);
    const real = await realpath(dir).catch(() => undefined);
    if (!real || !(await stat(real)).isDirectory()) {
      throw new XcshToolsError("ESOURCE_NOT_FOUND", `Plugin "${entry.name}": git-subdir path "${s.path}" does not exist in ${redactUrl(s.url)}${clone.gitCommitSha ? ` at ${clone.gitCommitSha.slice(0, 12)}` : ""}`, {
        hint: "The catalog entry points at a folder the repository does not have at that ref: ask the marketplace owner to fix it.",
      });
    }
    if (!isPathInside(real, rootReal)) {
      throw new XcshToolsError("EENTRY_ESCAPE", `Plugin "${entry.name}": git-subdir path "${s.path}" escapes the cloned repository`, { hint: "Use a folder inside the repository." });
    }
    return { ...clone, dir: real, within: rootReal };
  },
  async probe(input, world) {
    const s = input.entry.source as GitSubdirSource;
    assertEntryArg(input, "path", subdirPathProblem(s.path));
    return probeGit(gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }, { githubShorthand: true }), world);
  },
};
