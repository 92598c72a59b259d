/**
 * GitHub shorthand: `owner/repo` or `github:owner/repo`, optionally `#ref`, cloned from
 * `https://github.com/owner/repo.git` (https, so the user's credential helper answers for private
 * repositories). A bare `owner/repo` that is also a folder under the project is ambiguous (the
 * host silently took it as GitHub) and is refused with both spellings.
 */
import path from "node:path";
import { XcshToolsError } from "../../core/errors.js";
import { statOrUndefined } from "../../core/paths.js";
import { assertSourceArg, gitRefProblem, githubRepoProblem } from "../../core/source-args.js";
import { fetchGitCatalog } from "./git.js";
import { splitRef, type CatalogSource } from "./types.js";

const SHORTHAND = /^(github:)?([A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+?)(\.git)?(#.+)?$/;

/** The clone URL of a recorded GitHub source (`owner/repo[#ref]`). */
export function githubCloneUrl(uri: string): string {
  const { url, ref } = splitRef(uri);
  assertSourceArg(githubRepoProblem(url), `Marketplace source ${uri}`);
  if (ref !== undefined) assertSourceArg(gitRefProblem(ref), `Marketplace source ${uri}`);
  return `https://github.com/${url}.git${ref ? `#${ref}` : ""}`;
}

export const githubSource: CatalogSource = {
  kind: "github",
  parse(input, world) {
    const match = SHORTHAND.exec(input);
    if (!match) return undefined;
    const repo = match[2]!;
    if (repo.startsWith(".") || repo.includes("..")) return undefined;
    // `-o/x`, `a/-b`: shaped like the shorthand but no GitHub name; refused, never a folder or git guess.
    assertSourceArg(githubRepoProblem(repo), `Marketplace source "${input}"`);
    if (match[4]) assertSourceArg(gitRefProblem(match[4].slice(1)), `Marketplace source "${input}"`);
    if (!match[1]) {
      const local = path.resolve(world.typedFrom ?? world.cwd, splitRef(input).url);
      if (statOrUndefined(local)?.isDirectory()) {
        throw new XcshToolsError("ESOURCE_AMBIGUOUS", `"${input}" is both a GitHub shorthand and a folder (${local})`, {
          hint: `Write ./${input} for the folder, or github:${input} for the GitHub repository.`,
          exitCode: 2,
        });
      }
    }
    return { kind: "github", uri: `${repo}${match[4] ?? ""}` };
  },
  fetch(spec, scratch, world) {
    return fetchGitCatalog(githubCloneUrl(spec.uri), scratch, world, spec.folder);
  },
};
