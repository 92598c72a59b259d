/** `{source: "github", repo: "owner/repo", ref?, sha?}`: cloned over https from github.com. */
import { wholeRepositorySource } from "./git-common.js";

export const githubPluginSource = wholeRepositorySource("github", "repo");
