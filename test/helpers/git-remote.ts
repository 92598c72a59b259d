/**
 * Bare git repositories served by `file://` for tests: a work tree that commits and pushes, and a
 * bare remote that the code under test clones. Git runs isolated from the user's configuration
 * (`GIT_CONFIG_GLOBAL=/dev/null`, `GIT_CONFIG_NOSYSTEM=1`) with a fixed author, so commits are
 * reproducible and nothing of the real HOME is read.
 */
import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);

/** The environment every git of a test runs with (also hand it to the code under test). */
/** Only git's identity and config isolation from `isolatedGitEnv`: what a CLI run under test adds to its env. */
export function gitIdentityEnv(home: string): NodeJS.ProcessEnv {
  const env = isolatedGitEnv(home);
  return { GIT_CONFIG_GLOBAL: env.GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM: env.GIT_CONFIG_NOSYSTEM, GIT_AUTHOR_NAME: env.GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL: env.GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME: env.GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL: env.GIT_COMMITTER_EMAIL };
}

export function isolatedGitEnv(home: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "Test Author",
    GIT_AUTHOR_EMAIL: "author@example.com",
    GIT_COMMITTER_NAME: "Test Author",
    GIT_COMMITTER_EMAIL: "author@example.com",
    GIT_AUTHOR_DATE: "2025-01-01T00:00:00Z",
    GIT_COMMITTER_DATE: "2025-01-01T00:00:00Z",
    ...extra,
  };
}

export type FileTree = Record<string, string | object>;

/** A bare remote and the work tree that feeds it. */
export interface GitRemote {
  /** `file://…/name.git` */
  url: string;
  bare: string;
  work: string;
  /** Write (or with `null`, delete) files, commit and push; resolves to the new commit sha. */
  commit(files: Record<string, string | object | null>, message?: string): Promise<string>;
  /** The sha of the branch tip. */
  head(): Promise<string>;
}

async function git(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await exec("git", args, { cwd, env });
  return stdout.trim();
}

async function writeTree(root: string, files: Record<string, string | object | null>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    if (content === null) {
      await rm(file, { recursive: true, force: true });
      continue;
    }
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
}

/** Create `<root>/<name>.git` (bare) with a first commit of `files` on `main`. */
export async function makeGitRemote(root: string, name: string, files: FileTree, env: NodeJS.ProcessEnv): Promise<GitRemote> {
  const bare = path.join(root, `${name}.git`);
  const work = path.join(root, `${name}-work`);
  await mkdir(work, { recursive: true });
  await git(["init", "-q", "--bare", "-b", "main", bare], root, env);
  await git(["init", "-q", "-b", "main"], work, env);
  await git(["remote", "add", "origin", bare], work, env);
  let tick = 0;
  const remote: GitRemote = {
    url: pathToFileURL(bare).href,
    bare,
    work,
    async commit(changes, message = "change") {
      await writeTree(work, changes);
      await git(["add", "-A"], work, env);
      tick += 1;
      const date = `2025-01-01T00:${String(tick).padStart(2, "0")}:00Z`;
      await git(["commit", "-q", "--allow-empty", "-m", message], work, { ...env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });
      await git(["push", "-q", "origin", "main"], work, env);
      return git(["rev-parse", "HEAD"], work, env);
    },
    head: () => git(["rev-parse", "HEAD"], work, env),
  };
  await remote.commit(files, "initial");
  return remote;
}
