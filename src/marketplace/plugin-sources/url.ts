/**
 * `{source: "url", url, path?, ref?, sha?}`: a plugin that is a whole git repository, or, with
 * `path`, one folder of it (as `git-subdir`, without the GitHub shorthand).
 */
import { gitPluginSource } from "./git-common.js";

export const urlPluginSource = gitPluginSource("url", "url", { subdir: "optional" });
