/**
 * Run a program (never through a shell) as the leader of its own process group, collect its
 * output, and kill the whole group on a timeout or an abort. Both things that start programs
 * use it: a tool's `api.exec` (host/exec.ts) and git (core/git.ts).
 *
 * Why a group: the programs we start start others (`npm test` → node → …; git → ssh,
 * git-remote-https, a credential helper). Those inherit the pipes; killing only the direct child
 * left them running and holding the pipes open, so the caller waited past its deadline. On POSIX
 * the child leads a group of its own (`detached`) and a kill goes to `-pid`; Windows has no
 * groups and gets the child alone.
 *
 * Stopping: with `graceMs` > 0, SIGTERM first and SIGKILL when the group is still there after
 * the grace; with 0, SIGKILL at once. After SIGKILL the pipes are dropped and the exit is enough
 * to settle: whatever escaped the group must not keep us waiting. The promise never rejects:
 * callers turn the result into their own answers (an exit code for a tool, a coded error for git).
 */
import { spawn } from "node:child_process";

export interface GroupRunOptions {
  cwd?: string | undefined;
  env?: NodeJS.ProcessEnv | undefined;
  /** Kill the group after this many milliseconds (none when undefined or ≤ 0). */
  timeoutMs?: number | undefined;
  /** Kill the group when this aborts (also before the start: nothing is spawned then). */
  signal?: AbortSignal | undefined;
  /** Milliseconds between SIGTERM and SIGKILL; 0 kills at once. */
  graceMs: number;
}

export interface GroupRunResult {
  stdout: string;
  stderr: string;
  /** The exit code, or null when a signal ended the program (or it never started). */
  code: number | null;
  /** The signal that ended it, ours or anyone's. */
  signal: NodeJS.Signals | null;
  /** Why we killed it, when we did. */
  killedBy: "timeout" | "abort" | undefined;
  /** Set when the program could not be started (ENOENT, EACCES, …). */
  spawnError: NodeJS.ErrnoException | undefined;
}

const useGroups = process.platform !== "win32";

/** Run `command` with `args` in a process group of its own; see the module comment. */
export function runInProcessGroup(command: string, args: readonly string[], options: GroupRunOptions): Promise<GroupRunResult> {
  const empty = { stdout: "", stderr: "", code: null, signal: null };
  if (options.signal?.aborted) return Promise.resolve({ ...empty, killedBy: "abort", spawnError: undefined });
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command, [...args], { cwd: options.cwd, env: options.env, shell: false, stdio: ["ignore", "pipe", "pipe"], detached: useGroups, windowsHide: true });
    } catch (error) {
      resolve({ ...empty, killedBy: undefined, spawnError: error as NodeJS.ErrnoException });
      return;
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));

    let killedBy: GroupRunResult["killedBy"];
    let hardKilled = false;
    let settled = false;
    let deadline: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;

    const send = (name: NodeJS.Signals) => {
      try {
        if (useGroups && child.pid !== undefined) process.kill(-child.pid, name);
        else child.kill(name);
      } catch {
        // The group is gone already: the child alone, if it is still there.
        try {
          child.kill(name);
        } catch {
          // nothing left to kill
        }
      }
    };
    const killHard = () => {
      hardKilled = true;
      send("SIGKILL");
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    const kill = (why: "timeout" | "abort") => {
      if (settled || killedBy) return;
      killedBy = why;
      if (options.graceMs <= 0) {
        killHard();
        return;
      }
      send("SIGTERM");
      grace = setTimeout(killHard, options.graceMs);
      grace.unref();
    };
    const onAbort = () => kill("abort");
    const settle = (result: Omit<GroupRunResult, "stdout" | "stderr" | "killedBy">) => {
      if (settled) return;
      settled = true;
      if (deadline) clearTimeout(deadline);
      if (grace) clearTimeout(grace);
      options.signal?.removeEventListener("abort", onAbort);
      resolve({ ...result, stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8"), killedBy });
    };

    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.timeoutMs !== undefined && options.timeoutMs > 0) deadline = setTimeout(() => kill("timeout"), options.timeoutMs);

    child.on("error", (error: NodeJS.ErrnoException) => {
      // Start failures arrive here before any exit; a later error (a failed kill) changes nothing.
      if (child.pid === undefined) settle({ code: null, signal: null, spawnError: error });
    });
    child.on("close", (code, signal) => settle({ code, signal, spawnError: undefined }));
    child.on("exit", (code, signal) => {
      if (hardKilled) settle({ code, signal, spawnError: undefined });
    });
  });
}
