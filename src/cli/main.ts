/**
 * Process entry of the CLI: the only place that touches `process` streams, signals and the exit
 * code. The first SIGINT/SIGTERM aborts the running command (a mutation rolls back and exits
 * non-zero); a second one exits at once, and the next command's journal recovery finishes the
 * rollback.
 */
import { runCli } from "./program.js";

const interrupt = new AbortController();
function onSignal(signal: NodeJS.Signals): void {
  if (interrupt.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
  interrupt.abort(signal);
}
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  env: process.env,
  signal: interrupt.signal,
});
process.exitCode = code;
