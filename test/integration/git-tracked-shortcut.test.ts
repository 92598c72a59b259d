/**
 * `trackedFiles` (core/git.ts; the restore's ETEAM_GENERATED_TRACKED check) starts no git where
 * git could find no repository (issue 43: a container image built without `.git`), and asks git
 * in every case where it could: a `.git` folder or file above the folder's real path (a link into
 * a repository, a linked work tree), GIT_DIR / GIT_WORK_TREE in the environment, a `.git` that is
 * no repository at all. A `git` first on PATH logs each start and runs the real one.
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { trackedFiles } from "../../src/core/git.js";
import { isolatedGitEnv } from "../helpers/git-remote.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

const exec = promisify(execFile);
const GENERATED = [".xcsh/plugins", ".xcsh/plugin-overrides.json"];
let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-tools-git-tracked-");

/** The environment of a git whose every start is logged; `extra` on top. */
async function loggedGit(extra: NodeJS.ProcessEnv = {}): Promise<{ env: NodeJS.ProcessEnv; starts: () => Promise<string[]> }> {
  const log = path.join(w.root, "git-starts.log");
  const real = (await exec("sh", ["-c", "command -v git"])).stdout.trim();
  const bin = path.join(w.root, "fake-bin");
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, "git"), `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\nexec ${JSON.stringify(real)} "$@"\n`);
  await chmod(path.join(bin, "git"), 0o755);
  const base = isolatedGitEnv(w.home);
  return { env: { ...base, PATH: `${bin}${path.delimiter}${base.PATH}`, ...extra }, starts: async () => (await readFile(log, "utf8").catch(() => "")).split("\n").filter(Boolean) };
}

/** A repository at `dir` whose commit tracks `files` (project-relative, written first). */
async function repoTracking(dir: string, files: string[]): Promise<void> {
  const git = (args: string[]) => exec("git", args, { cwd: dir, env: isolatedGitEnv(w.home) });
  await mkdir(dir, { recursive: true });
  await git(["init", "-q"]);
  for (const file of files) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), "{}\n");
  }
  await git(["add", "-f", ...files]);
  await git(["commit", "-q", "-m", "tracked"]);
}

describe("trackedFiles: git is started only where it could find a repository", () => {
  it("no .git in the folder or any above it: nothing tracked, and git never started", async () => {
    const { env, starts } = await loggedGit();
    expect(await trackedFiles(w.cwd, GENERATED, { env, timeoutMs: 30_000 })).toBeUndefined();
    expect(await starts()).toEqual([]);
  });

  it("a repository reached through a link from outside it: git asked, the tracked file named", async () => {
    await repoTracking(path.join(w.root, "repo"), ["app/.xcsh/plugins/installed_plugins.json"]);
    await mkdir(path.join(w.root, "outside"));
    await symlink(path.join(w.root, "repo", "app"), path.join(w.root, "outside", "app"));
    const { env, starts } = await loggedGit();
    expect(await trackedFiles(path.join(w.root, "outside", "app"), GENERATED, { env, timeoutMs: 30_000 })).toEqual([".xcsh/plugins/installed_plugins.json"]);
    expect((await starts()).length).toBeGreaterThan(0);
  });

  it("a linked work tree (its .git is a file): git asked, the tracked file named", async () => {
    await repoTracking(path.join(w.root, "main-tree"), [".xcsh/plugin-overrides.json"]);
    await exec("git", ["worktree", "add", "-q", path.join(w.root, "linked")], { cwd: path.join(w.root, "main-tree"), env: isolatedGitEnv(w.home) });
    const { env } = await loggedGit();
    expect(await trackedFiles(path.join(w.root, "linked"), GENERATED, { env, timeoutMs: 30_000 })).toEqual([".xcsh/plugin-overrides.json"]);
  });

  it("GIT_DIR and GIT_WORK_TREE in the environment, no .git above: git asked, what its index tracks named", async () => {
    await repoTracking(path.join(w.root, "elsewhere"), [".xcsh/plugin-overrides.json"]);
    const { env, starts } = await loggedGit({ GIT_DIR: path.join(w.root, "elsewhere", ".git"), GIT_WORK_TREE: w.cwd });
    expect(await trackedFiles(w.cwd, GENERATED, { env, timeoutMs: 30_000 })).toEqual([".xcsh/plugin-overrides.json"]);
    expect((await starts()).length).toBeGreaterThan(0);
  });

  it("a .git above that is no repository (an empty folder): git asked, and it finds none", async () => {
    await mkdir(path.join(w.root, ".git"));
    const { env, starts } = await loggedGit();
    expect(await trackedFiles(w.cwd, GENERATED, { env, timeoutMs: 30_000 })).toBeUndefined();
    expect((await starts()).length).toBeGreaterThan(0);
  });
});
