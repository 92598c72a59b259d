/**
 * Process entry of the CLI: the only place that touches `process` streams, signals and the exit
 * code. The first SIGINT/SIGTERM aborts the running command (a mutation rolls back and exits
 * non-zero); a second one exits at once, and the next command's journal recovery finishes the
 * rollback.
 */
import { statSync } from "node:fs";
import { commandNameOf } from "./command-name.js";

/**
 * The commands that start sooner from the program's separate modules than from its bundle: `tools`
 * (on a host's hot path, it answers from the boot index and loads little), and no command at all
 * (help, version). The bundle costs them its whole compile and the built-ins it loads up front.
 */
const STARTS_SOONER_UNBUNDLED = new Set(["tools", undefined]);

/**
 * The build of the program that runs `argv`. `npm run build` also writes the program with every
 * module it may load as one file (scripts/bundle-cli.mjs), which Node loads much sooner than ~80
 * separate ES modules (an install ~50 ms, `list` ~20 ms); a plain `tsc` build has only the
 * separate modules. Both are the same code, and a process loads one of them: the choice only
 * changes how fast the command starts. A bundle older than tsc's output is a previous build's
 * (tsc ran alone since, rewriting every file) and is not used.
 */
async function loadProgram(argv: readonly string[]): Promise<typeof import("./program.js")> {
  if (!STARTS_SOONER_UNBUNDLED.has(commandNameOf(argv))) {
    const bundle = new URL("./program.bundle.js", import.meta.url);
    const bundled = statSync(bundle, { throwIfNoEntry: false });
    const separate = statSync(new URL("./program.js", import.meta.url), { throwIfNoEntry: false });
    if (bundled && separate && bundled.mtimeMs >= separate.mtimeMs) return (await import(bundle.href)) as typeof import("./program.js");
  }
  return import("./program.js");
}

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
const { runCli } = await loadProgram(argv);
const code = await runCli(argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  env: process.env,
  signal: interrupt.signal,
});
process.exitCode = code;
// Once the event loop has nothing left (every write flushed, every child reaped), end the process
// without Node's teardown of the environment: freeing an install's heap took 10-20 ms after its
// last line. 'beforeExit' is emitted only then, so nothing pending is cut short.
process.once("beforeExit", () => process.exit());
