/**
 * `{source: "url", url, path?, ref?, sha?}`: a plugin that is a whole git repository, or, with
 * `path`, one folder of it (as `git-subdir`, without the GitHub shorthand).
 */
import type { Static } from "../../manifest/typebox.js";
import type { UrlSourceSchema } from "../../manifest/marketplace-catalog.js";
import { subdirPathProblem } from "../../core/source-args.js";
import { assertEntryArg, gitTargetOf, probeGit, wholeRepositorySource } from "./git-common.js";
import { fetchSubdir } from "./git-subdir.js";
import type { PluginSourceKind } from "./types.js";

type UrlSource = Static<typeof UrlSourceSchema>;

const whole = wholeRepositorySource("url", "url");

export const urlPluginSource: PluginSourceKind = {
  kind: "url",
  async fetch(input, scratch, world) {
    const s = input.entry.source as UrlSource;
    if (s.path === undefined) return whole.fetch(input, scratch, world);
    return fetchSubdir(input, gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }), s.path, scratch, world);
  },
  async probe(input, world) {
    const s = input.entry.source as UrlSource;
    if (s.path !== undefined) assertEntryArg(input, "path", subdirPathProblem(s.path));
    return probeGit(gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }), world);
  },
};
