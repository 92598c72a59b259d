/**
 * A world for hostile cases: the usual temp HOME and project, plus what an attacker is after.
 *
 *   root/
 *     home/            the user's HOME (`.xcsh` inside)
 *     project/         the cwd: an untrusted clone unless `trusted: true`
 *     victim/          a sibling folder holding a fake `~/.ssh` and a dotfile: nothing may touch it
 *     canary/          `canary.sh` writes `canary/RAN` (with its arguments) when anything runs it
 *
 * `assertUntouched()` compares `victim/` with its snapshot from set-up and checks that the canary
 * never ran. Every hostile case ends with it, after asserting the coded error or refusal.
 */
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, expect } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree, type TreeSnapshot } from "../helpers/tree-snapshot.js";

export interface HostileWorld extends TmpWorld {
  /** The folder nothing may touch: `victim/.ssh/id_ed25519`, `victim/.bashrc`. */
  victim: string;
  /** `victim/.ssh`. */
  ssh: string;
  /** An executable that records that it ran: use it wherever an attacker would name a program. */
  canary: string;
  /** The file the canary writes. */
  canaryMarker: string;
  /** Fail when the victim folder changed or the canary ran. */
  assertUntouched(): Promise<void>;
  /** True when the canary ran (its arguments are in the marker). */
  canaryRan(): Promise<boolean>;
}

/** Make a hostile world; the project is untrusted unless `trusted` is set. */
export async function makeHostileWorld(options: { trusted?: boolean } = {}): Promise<HostileWorld> {
  const world = await makeTmpWorld("xcsh-tools-security-", { trustProject: options.trusted === true });
  const victim = path.join(world.root, "victim");
  const ssh = path.join(victim, ".ssh");
  await mkdir(ssh, { recursive: true });
  await writeFile(path.join(ssh, "id_ed25519"), "-----BEGIN OPENSSH PRIVATE KEY-----\nnot a real key\n");
  await writeFile(path.join(ssh, "authorized_keys"), "ssh-ed25519 AAAA user@host\n");
  await writeFile(path.join(victim, ".bashrc"), "export PATH=$PATH\n");
  await chmod(ssh, 0o700);
  const canaryDir = path.join(world.root, "canary");
  await mkdir(canaryDir, { recursive: true });
  const canaryMarker = path.join(canaryDir, "RAN");
  const canary = path.join(canaryDir, "canary.sh");
  await writeFile(canary, `#!/bin/sh\necho "$0 $*" >> '${canaryMarker}'\n`);
  await chmod(canary, 0o755);
  const before: TreeSnapshot = await snapshotTree(victim);
  const canaryRan = async () => {
    try {
      await readFile(canaryMarker);
      return true;
    } catch {
      return false;
    }
  };
  return {
    ...world,
    victim,
    ssh,
    canary,
    canaryMarker,
    canaryRan,
    async assertUntouched() {
      expect(await snapshotTree(victim), "the victim folder changed").toEqual(before);
      expect(await canaryRan(), "the canary program ran").toBe(false);
    },
  };
}

/**
 * For a file of CLI cases: builds dist/ once, and returns a maker of hostile worlds that are
 * removed after each test.
 */
export function hostileWorldsPerTest(): (options?: { trusted?: boolean }) => Promise<HostileWorld> {
  const made: HostileWorld[] = [];
  beforeAll(async () => {
    await buildDist();
  }, 180_000);
  afterEach(async () => {
    for (const w of made.splice(0)) await w.cleanup();
  });
  return async (options = {}) => {
    const w = await makeHostileWorld(options);
    made.push(w);
    return w;
  };
}

/** Run the CLI in `w` (cwd: its project), as the user whose HOME it is. */
export function hostileCli(w: HostileWorld, args: string[], cwd = w.cwd): Promise<ProcessResult> {
  return runCli(args, { cwd, home: w.home, timeoutMs: 60_000 });
}

/** A run's exit code and output, for an assertion's message. */
export function describeRun(r: ProcessResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}
