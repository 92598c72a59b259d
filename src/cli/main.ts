/** Process entry of the CLI: the only place that touches `process` streams and the exit code. */
import { runCli } from "./program.js";

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  env: process.env,
});
process.exitCode = code;
