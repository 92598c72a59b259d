/**
 * `{source: "git-subdir", url, path, ref?, sha?}`: one folder of a git repository (a monorepo of
 * plugins). `url` is a git URL, or `owner/repo` for GitHub (the host's rule); `path` is
 * relative without `..` (checked before the clone) and must stay inside the clone once symlinks
 * are resolved.
 */
import { gitPluginSource } from "./git-common.js";

export const gitSubdirPluginSource = gitPluginSource("git-subdir", "url", { subdir: "required", githubShorthand: true });
