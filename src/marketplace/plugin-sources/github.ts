/** `{source: "github", repo: "owner/repo", ref?, sha?}`: cloned over https from github.com. */
import type { Static } from "../../manifest/typebox.js";
import type { GithubSourceSchema } from "../../manifest/marketplace-catalog.js";
import { cloneSource, gitTargetOf, probeGit } from "./git-common.js";
import type { PluginSourceKind } from "./types.js";

type GithubSource = Static<typeof GithubSourceSchema>;

export const githubPluginSource: PluginSourceKind = {
  kind: "github",
  async fetch(input, scratch, world) {
    const s = input.entry.source as GithubSource;
    return cloneSource(gitTargetOf(input, { repo: s.repo, ref: s.ref, sha: s.sha }), scratch, world);
  },
  async probe(input, world) {
    const s = input.entry.source as GithubSource;
    return probeGit(gitTargetOf(input, { repo: s.repo, ref: s.ref, sha: s.sha }), world);
  },
};
