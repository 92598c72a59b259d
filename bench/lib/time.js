/**
 * One whole process, timed: the wall clock of `spawnSync(command, args)`, in ms; a failed run
 * throws with its output (a benchmark of a failure measures nothing).
 */
import { spawnSync } from "node:child_process";

export function timeProcess(command, args, options) {
  const started = process.hrtime.bigint();
  const r = spawnSync(command, args, { ...options, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return ms;
}
