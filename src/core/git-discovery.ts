/**
 * Where git could find a repository, told without starting it; node built-ins only, so that a
 * caller can tell before loading core/git.ts and its process helpers (the restore's host files).
 */
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";

/**
 * Whether git, started in `dir`, can find no repository, known without starting it (a process:
 * the restore of a container image built without `.git` pays for nothing else; issue 43). Git
 * finds one through GIT_DIR (GIT_WORK_TREE, GIT_COMMON_DIR: any of them set, git is asked), else
 * through a `.git` file or folder in the folder it runs in or one above, walking the real path
 * (its cwd has no links); any of these present, or a path that cannot be resolved, and git is
 * asked. Settings that only stop the search (GIT_CEILING_DIRECTORIES, safe.directory) can only
 * make git find less.
 */
export function outsideEveryRepository(dir: string, env: NodeJS.ProcessEnv): boolean {
  if (env.GIT_DIR !== undefined || env.GIT_WORK_TREE !== undefined || env.GIT_COMMON_DIR !== undefined) return false;
  try {
    for (let at = realpathSync(dir); ; at = path.dirname(at)) {
      if (lstatSync(path.join(at, ".git"), { throwIfNoEntry: false }) !== undefined) return false;
      if (path.dirname(at) === at) return true;
    }
  } catch {
    return false;
  }
}
