/**
 * Process entry of the CLI: the only place that touches `process` streams, signals and the exit
 * code. The first SIGINT/SIGTERM aborts the running command (a mutation rolls back and exits
 * non-zero); a second one exits at once, and the next command's journal recovery finishes the
 * rollback.
 */
const interrupt = new AbortController();
function onSignal(signal: NodeJS.Signals): void {
  if (interrupt.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
  interrupt.abort(signal);
}
process.on("SIGINT", onSignal);
// A reader that went away (`xcsh-tools tools | head -1`) is no failure: what is left to print is
// dropped and the command finishes — a mutation is never cut off half-way by a closed pipe.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
  });
}
process.on("SIGTERM", onSignal);

const argv = process.argv.slice(2);
const { runCli } = await import("./program.js");
const code = await runCli(argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  env: process.env,
  signal: interrupt.signal,
});
process.exitCode = code;
// Once the event loop has nothing left (every write flushed, every child reaped), end the process
// without Node's teardown of the environment, which frees an install's whole heap after its last
// line for nothing. 'beforeExit' is emitted only then, so nothing pending is cut short.
process.once("beforeExit", () => process.exit());
