/**
 * The CLI program: commander, global flags, and the one place that turns results and errors
 * into output and an exit code (0 ok, 1 failure, 2 usage or validation error).
 */
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import type { XcshToolsError } from "../core/errors.js";
import { ReportedFailure, usageError } from "./command-errors.js";
import { commandNameOf, GLOBAL_OPTIONS } from "./command-name.js";
import { loadCommands } from "./commands/index.js";
import { createContext, type CommandContext, type GlobalFlags } from "./context.js";
import { createOutput, type OutputStreams } from "./output.js";
import { exitCodeOf, renderError, renderErrorJson } from "./render-error.js";

/** Our own version, read from package.json next to dist/. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

export interface RunCliOptions extends OutputStreams {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Aborted on SIGINT/SIGTERM: mutations roll back and the command fails with EABORTED. */
  signal?: AbortSignal;
}

/**
 * `-v` as npm users type it: the version, as `-V` / `--version` (commander takes one short flag
 * per option, and `-V` is the documented one).
 */
function normalizeArgv(argv: string[]): string[] {
  return argv.length === 1 && argv[0] === "-v" ? ["--version"] : argv;
}

/** Run the CLI with `argv` (without node and script); resolves to the exit code. */
export async function runCli(rawArgv: string[], io: RunCliOptions): Promise<number> {
  const argv = normalizeArgv(rawArgv);
  const wantsJson = argv.includes("--json");
  const debug = argv.includes("--debug");
  const earlyOutput = createOutput(io, { json: wantsJson, env: io.env });
  const program = new Command("xcsh-tools")
    .description("Install, author and load custom tools and plugins for the xcsh coding agent")
    .version(packageVersion(), "-V, --version", "print the version (also -v)")
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => {
        if (!wantsJson) io.stderr.write(text);
      },
      // Commander's own usage errors are rendered below like every other error (with `Code:`).
      outputError: () => {},
    })
    .exitOverride();
  for (const option of GLOBAL_OPTIONS) program.option(option.flags, option.description);

  const getContext = (command: Command): CommandContext => {
    const flags = command.optsWithGlobals() as GlobalFlags;
    const output = createOutput(io, { json: Boolean(flags.json), color: flags.color === false ? false : undefined, env: io.env });
    return createContext(flags, { cwd: io.cwd, env: io.env, ...(io.signal ? { signal: io.signal } : {}) }, output);
  };
  for (const command of await loadCommands(commandNameOf(argv))) command.register(program, getContext);

  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    if (error instanceof ReportedFailure) return error.exitCode;
    const shown = error instanceof CommanderError ? commanderUsageError(error, argv) : error;
    if (shown === undefined) return 0;
    if (wantsJson) earlyOutput.result(renderErrorJson(shown));
    else io.stderr.write(`${renderError(shown, { debug })}\n`);
    return exitCodeOf(shown);
  }
}

/**
 * Commander's own errors (unknown command or option, missing argument, bad choice) as `EUSAGE`
 * (exit 2) with the command's help as the hint; `undefined` for help and version, which are no error.
 */
function commanderUsageError(error: CommanderError, argv: readonly string[]): XcshToolsError | undefined {
  if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help") return undefined;
  const name = commandNameOf(argv);
  const known = error.code !== "commander.unknownCommand" && name !== undefined;
  return usageError(error.message.replace(/^error: /, ""), `Run \`xcsh-tools ${known ? `${name} ` : ""}--help\` for usage.`);
}
