/**
 * The CLI and git in a world's project folder (a repository the test makes), for tests that run a
 * team's commands as a process: `git(args)` its stdout, `cli(args)` the result, `ok(args)` the
 * result of a run that must exit 0 (both streams in the failure message).
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "vitest";
import { isolatedGitEnv } from "./git-remote.js";
import { runCli } from "./run-cli.js";
import type { TmpWorld } from "./tmp-home.js";

const exec = promisify(execFile);

export function projectCli(world: () => TmpWorld) {
  const git = async (args: string[]) => (await exec("git", args, { cwd: world().cwd, env: isolatedGitEnv(world().home) })).stdout;
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: world().cwd, home: world().home, env });
  const ok = async (args: string[]) => {
    const r = await cli(args);
    expect(r.code, `${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(0);
    return r;
  };
  return { git, cli, ok };
}
