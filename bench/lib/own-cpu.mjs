/**
 * Preloaded into every Node process of a measured run (`NODE_OPTIONS=--import <this file>`, with
 * BENCH_OWN_CPU_FILE set): at exit, a process appends its own CPU time (user + system of all its
 * threads, not its children's) to that file as one JSON line. The install benchmark reads it to
 * split an install's CPU between the CLI's own process and what it forks (the module checker).
 * A process killed before its exit handlers run writes nothing; the benchmark counts children as
 * the whole run's CPU minus the CLI's own, which does not depend on them writing.
 */
import { appendFileSync } from "node:fs";

const file = process.env.BENCH_OWN_CPU_FILE;
if (file) {
  process.once("exit", () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(file, `${JSON.stringify({ script: process.argv[1] ?? "", cpu: (user + system) / 1000 })}\n`);
  });
}
