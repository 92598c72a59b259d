/** `{source: "github", repo: "owner/repo", ref?, sha?}`: cloned over https from github.com. */
import type { Static } from "../../manifest/typebox.js";
import type { GithubSourceSchema } from "../../manifest/marketplace-catalog.js";
import { cloneSource, githubUrl, probeGit } from "./git-common.js";
import type { PluginSourceKind } from "./types.js";

type GithubSource = Static<typeof GithubSourceSchema>;

export const githubPluginSource: PluginSourceKind = {
  kind: "github",
  fetch({ entry }, scratch, world) {
    const s = entry.source as GithubSource;
    return cloneSource(githubUrl(s.repo), s, scratch, world);
  },
  probe({ entry }, world) {
    const s = entry.source as GithubSource;
    return probeGit(githubUrl(s.repo), s, world);
  },
};
