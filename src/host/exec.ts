/**
 * `CustomToolAPI.exec`: run a program without a shell (arguments reach it literally, so
 * `"; echo pwned"` is just an argument), collect its output, and never reject — a tool decides
 * what a non-zero exit means. Cancellation must reach the process: an aborted `signal` or an
 * expired `timeout` kills its whole process group (core/process-group.ts), so the grandchildren
 * it spawned (`npm test` → node → …) die with it.
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
import os from "node:os";
import type { runInProcessGroup as RunInProcessGroup } from "../core/process-group.js";
import type { ExecOptions, ExecResult } from "../core/contract.js";

/** Milliseconds between SIGTERM and SIGKILL when a killed process does not exit (docs/contract.md states it; its test reads it here). */
export const KILL_GRACE_MS = 2000;
/** The `code` of a process we killed, and of an exec whose signal was aborted before it started (143). */
export const SIGTERM_CODE = 128 + (os.constants.signals.SIGTERM ?? 15);

/*
 * node:child_process (through the process-group runner) loads on the first exec, not with the
 * loader: every host start imports the loader and few tools run a command at boot.
 */
let runnerOnce: Promise<typeof RunInProcessGroup> | undefined;
function loadRunner(): Promise<typeof RunInProcessGroup> {
  return (runnerOnce ??= import("../core/process-group.js").then((module) => module.runInProcessGroup));
}

/** Run `command` with `args` (no shell) in `options.cwd`; resolves with output and exit code. */
export async function execCommand(command: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> {
  const { signal, timeout, cwd } = options;
  if (signal?.aborted) return { stdout: "", stderr: "", code: SIGTERM_CODE, killed: true };
  const run = await loadRunner();
  const result = await run(command, args, { cwd, signal, timeoutMs: timeout, graceMs: KILL_GRACE_MS });
  if (result.spawnError) {
    const code = result.spawnError.code === "ENOENT" ? 127 : result.spawnError.code === "EACCES" ? 126 : 1;
    return { stdout: "", stderr: result.spawnError.message, code, killed: false };
  }
  const killed = result.killedBy !== undefined;
  const code = result.code ?? (result.signal ? 128 + (os.constants.signals[result.signal] ?? 15) : killed ? SIGTERM_CODE : 0);
  return { stdout: result.stdout, stderr: result.stderr, code, killed };
}
