/**
 * What the git-based plugin sources share: clone at the entry's `ref`/`sha` (the sha honoured even
 * off the tip, ../git.ts) into the scratch folder, and probe the remote without cloning.
 */
import path from "node:path";
import { cloneAt, remoteHead } from "../git.js";
import type { FetchedPlugin, PluginWorld, Revision } from "./types.js";

export interface GitPinned {
  ref?: string;
  sha?: string;
}

function gitOptions(world: PluginWorld) {
  return { env: world.env, timeoutMs: world.gitTimeoutMs, ...(world.signal ? { signal: world.signal } : {}) };
}

/** Clone `url` at the pin into `<scratch>/repo`. */
export async function cloneSource(url: string, pin: GitPinned, scratch: string, world: PluginWorld): Promise<FetchedPlugin> {
  const dir = path.join(scratch, "repo");
  const sha = await cloneAt(url, dir, { ...(pin.ref ? { ref: pin.ref } : {}), ...(pin.sha ? { sha: pin.sha } : {}) }, gitOptions(world));
  return { dir, within: dir, gitCommitSha: sha };
}

/** The pinned sha, or the commit the remote ref points at now. */
export async function probeGit(url: string, pin: GitPinned, world: PluginWorld): Promise<Revision> {
  if (pin.sha) return { gitCommitSha: pin.sha.toLowerCase() };
  const sha = await remoteHead(url, pin.ref, gitOptions(world));
  return sha ? { gitCommitSha: sha } : {};
}

/** `owner/repo` → the GitHub https clone URL. */
export function githubUrl(repo: string): string {
  return `https://github.com/${repo}.git`;
}
