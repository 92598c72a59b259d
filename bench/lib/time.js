/**
 * One whole process, timed: the wall clock of `spawnSync(command, args)`, in ms; a failed run
 * throws with its output (a benchmark of a failure measures nothing).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

function run(command, args, options) {
  const started = process.hrtime.bigint();
  const r = spawnSync(command, args, { ...options, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return { ms, stdout: r.stdout };
}

export function timeProcess(command, args, options) {
  return run(command, args, options).ms;
}

const hasTime = existsSync("/usr/bin/time");

/**
 * The same, with the process's CPU time (user + system, its children included) beside the wall
 * clock, read by /usr/bin/time where there is one: on a machine busy with other work, CPU time
 * moves much less than wall time. `{ wall, cpu, stdout }`, times in ms; cpu is undefined without
 * /usr/bin/time.
 */
export function timeProcessClocks(command, args, options) {
  if (!hasTime) {
    const r = run(command, args, options);
    return { wall: r.ms, cpu: undefined, stdout: r.stdout };
  }
  const out = path.join(os.tmpdir(), `xcsh-tools-bench-time-${process.pid}.txt`);
  const r = run("/usr/bin/time", ["-f", "%U %S", "-o", out, command, ...args], options);
  const [user, system] = readFileSync(out, "utf8").trim().split("\n").pop().split(" ").map(Number);
  rmSync(out, { force: true });
  return { wall: r.ms, cpu: (user + system) * 1000, stdout: r.stdout };
}

/**
 * CPU time (user + system, ms) of this process's waited-for children so far, from /proc (Linux);
 * undefined elsewhere. Read before and after a batch of `spawnSync` calls, its difference is the
 * batch's CPU at the kernel's tick (10 ms), which over a batch of N processes is 10/N ms each:
 * finer than /usr/bin/time's per-process 10 ms steps for processes that take tens of ms.
 */
export function childrenCpuMs() {
  let stat;
  try {
    stat = readFileSync("/proc/self/stat", "utf8");
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces, inside parentheses): cutime and cstime
  // are the 16th and 17th fields of the line, in clock ticks (USER_HZ, 100 on Linux).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** This process's CPU time (user + system, all threads) since `from` (a `process.cpuUsage()`), in ms. */
export function cpuMsSince(from) {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
}
