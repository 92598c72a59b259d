/**
 * Process entry of the CLI: the only place that touches `process` streams, signals and the exit
 * code. The first SIGINT/SIGTERM aborts the running command (a mutation rolls back and exits
 * non-zero); a second one exits at once, and the next command's journal recovery finishes the
 * rollback.
 */
import { fstatSync, writeSync } from "node:fs";

const interrupt = new AbortController();
function onSignal(signal: NodeJS.Signals): void {
  if (interrupt.signal.aborted) process.exit(signal === "SIGINT" ? 130 : 143);
  interrupt.abort(signal);
}
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

/** What the commands write to (cli/output.ts). */
interface Sink {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

// A reader that went away (`xcsh-tools tools | head -1`) is no failure: what is left to print is
// dropped and the command finishes — a mutation is never cut off half-way by a closed pipe.
function guarded(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && error.code !== "ERR_STREAM_DESTROYED") throw error;
  });
  return stream;
}

/**
 * Under Bun, the first touch of `process.stdout` or `process.stderr` loads node:stream, which
 * costs about as much as Bun's own start, and a command that prints one answer and exits (the
 * host's `tools --json`) needs none of it. So under Bun, when the descriptor is no terminal (a
 * pipe or a file: a terminal gets the stream, which listr2 and prompts share), the CLI writes to
 * it directly, synchronously as the stream would on Linux, and builds the stream only if a write
 * would block.
 */
function sinkOf(fd: 1 | 2, stream: () => NodeJS.WriteStream): Sink {
  if (typeof process.versions.bun !== "string" || isTerminal(fd)) return guarded(stream());
  let fallback: NodeJS.WriteStream | undefined;
  let closed = false;
  return {
    isTTY: false,
    write(chunk) {
      if (fallback) return fallback.write(chunk);
      if (closed) return true;
      let bytes = Buffer.from(chunk);
      while (bytes.length > 0) {
        try {
          bytes = bytes.subarray(writeSync(fd, bytes));
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EPIPE") {
            closed = true;
            return true;
          }
          if (code !== "EAGAIN") throw error;
          fallback = guarded(stream());
          return fallback.write(bytes);
        }
      }
      return true;
    },
  };
}

/**
 * Whether `fd` may be a terminal, asked without node:tty (which loads node:stream too): a terminal
 * is a character device, pipes and files are not (/dev/null is one too and gets the stream, which
 * is only slower). Unsure means yes.
 */
function isTerminal(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return true;
  }
}

const argv = process.argv.slice(2);
const { runCli, commandNameOf } = await import("./program.js");
const code = await runCli(argv, {
  stdout: sinkOf(1, () => process.stdout),
  stderr: sinkOf(2, () => process.stderr),
  cwd: process.cwd(),
  env: process.env,
  signal: interrupt.signal,
});
process.exitCode = code;
// `run` ran a tool in this process: whatever it left behind (a timer, a server, a child it did not
// wait for) must not keep the one-off run alive once its answer is written.
if (commandNameOf(argv) === "run") process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
// Once the event loop has nothing left (every write flushed, every child reaped), end the process
// without Node's teardown of the environment, which frees an install's whole heap after its last
// line for nothing. 'beforeExit' is emitted only then, so nothing pending is cut short.
process.once("beforeExit", () => process.exit());
