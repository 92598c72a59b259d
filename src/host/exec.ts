/**
 * `CustomToolAPI.exec`: run a program without a shell (arguments reach it literally, so
 * `"; echo pwned"` is just an argument), collect its output, and never reject — a tool decides
 * what a non-zero exit means. Cancellation must reach the process: an aborted `signal` or an
 * expired `timeout` kills it, and on POSIX the child leads its own process group so that the
 * grandchildren it spawned (`npm test` → node → …) die with it.
 *
 * Result codes:
 * - normal exit: the exit code;
 * - terminated by a signal (ours or anyone's): 128 + the signal number (SIGTERM → 143,
 *   SIGKILL → 137), as shells report it;
 * - `killed` is true only when we killed it (abort or timeout), also when the signal was already
 *   aborted before the start (then nothing is spawned and `code` is 143);
 * - the program could not be started: 127 when it does not exist (ENOENT), 126 when it is not
 *   executable (EACCES), 1 otherwise; `stderr` holds the reason.
 */
import type { spawn as Spawn } from "node:child_process";
import os from "node:os";
import type { ExecOptions, ExecResult } from "./types.js";

/** Milliseconds between SIGTERM and SIGKILL when a killed process does not exit. */
const KILL_GRACE_MS = 2000;
const SIGTERM_CODE = 128 + (os.constants.signals.SIGTERM ?? 15);

/*
 * node:child_process loads on the first exec, not with the loader: every host start imports the
 * loader, few tools run a command at boot, and under Bun the module costs about 3 ms to load.
 */
let spawnOnce: Promise<typeof Spawn> | undefined;
function loadSpawn(): Promise<typeof Spawn> {
  return (spawnOnce ??= import("node:child_process").then((module) => module.spawn));
}

/** Run `command` with `args` (no shell) in `options.cwd`; resolves with output and exit code. */
export async function execCommand(command: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> {
  const { signal, timeout, cwd } = options;
  if (signal?.aborted) return { stdout: "", stderr: "", code: SIGTERM_CODE, killed: true };
  const spawn = await loadSpawn();
  if (signal?.aborted) return { stdout: "", stderr: "", code: SIGTERM_CODE, killed: true };
  return new Promise<ExecResult>((resolve) => {
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const useGroup = process.platform !== "win32";
    let killed = false;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const child = spawn(command, args, {
      cwd,
      shell: false,
      stdio: ["ignore", "pipe", "pipe"],
      detached: useGroup,
      windowsHide: true,
    });
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));

    const sendSignal = (name: NodeJS.Signals) => {
      try {
        if (useGroup && child.pid !== undefined) process.kill(-child.pid, name);
        else child.kill(name);
      } catch {
        // Already gone, or the group is: fall back to the child itself.
        try {
          child.kill(name);
        } catch {
          // nothing left to kill
        }
      }
    };
    const kill = () => {
      if (settled || killed) return;
      killed = true;
      sendSignal("SIGTERM");
      graceTimer = setTimeout(() => sendSignal("SIGKILL"), KILL_GRACE_MS);
      graceTimer.unref();
    };
    const finish = (result: ExecResult) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      signal?.removeEventListener("abort", kill);
      resolve(result);
    };

    signal?.addEventListener("abort", kill, { once: true });
    if (timeout !== undefined && timeout > 0) timer = setTimeout(kill, timeout);

    child.on("error", (error: NodeJS.ErrnoException) => {
      // Spawn failures arrive here before any exit; later errors (a failed kill) are ignored.
      if (child.pid !== undefined) return;
      const code = error.code === "ENOENT" ? 127 : error.code === "EACCES" ? 126 : 1;
      finish({ stdout: "", stderr: error.message, code, killed: false });
    });
    child.on("close", (exitCode, signalName) => {
      const code =
        exitCode ?? (signalName ? 128 + (os.constants.signals[signalName] ?? 15) : killed ? SIGTERM_CODE : 0);
      finish({
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8"),
        code,
        killed,
      });
    });
  });
}
