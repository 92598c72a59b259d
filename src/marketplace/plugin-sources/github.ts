/** `{source: "github", repo: "owner/repo", ref?, sha?}`: cloned over https from github.com. */
import { gitPluginSource } from "./git-common.js";

export const githubPluginSource = gitPluginSource("github", "repo", { subdir: "none" });
