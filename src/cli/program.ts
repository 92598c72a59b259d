/**
 * The CLI program: commander, global flags, and the one place that turns results and errors
 * into output and an exit code (0 ok, 1 failure, 2 usage or validation error).
 */
import { readFileSync } from "node:fs";
import type { Command, CommanderError } from "commander";
import type { XcshToolsError } from "../core/errors.js";
import { ReportedFailure, usageError } from "./command-errors.js";
import { commandNameOf, flagOf, GLOBAL_OPTIONS, takesValue } from "./command-name.js";

// main.ts reads the command's name from the chunk it already loaded (a dynamic import of
// command-name.js of its own is one more file for every command to open).
export { commandNameOf };
import { loadCommands } from "./commands/index.js";
import type { ToolsFlags } from "./commands/tools.js";
import { createContext, type CommandContext, type GlobalFlags } from "./context.js";
import { createOutput, printable, type OutputStreams } from "./output.js";
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
  const contextOf = (flags: GlobalFlags): CommandContext => {
    const output = createOutput(io, { json: Boolean(flags.json), color: flags.color === false ? false : undefined, env: io.env });
    return createContext(flags, { cwd: io.cwd, env: io.env, ...(io.signal ? { signal: io.signal } : {}) }, output);
  };
  let commander: typeof import("commander") | undefined;
  try {
    // `tools` is asked at a host's every boot, and loading commander costs more than the rest of
    // its answer under Bun: a plain `tools` argv runs without it (parsed as commander would).
    const name = commandNameOf(argv);
    const tools = name === "tools" ? await import("./commands/tools.js") : undefined;
    const plain = tools && plainFlags(argv, "tools", tools.TOOLS_OPTIONS);
    if (plain) await tools.runTools(plain as ToolsFlags, contextOf(plain));
    else if ((name === "install" || name === "i") && (await restoredAlready(argv, name, io))) return 0;
    else await runCommander((commander = await import("commander")), argv, io, contextOf);
    return 0;
  } catch (error) {
    if (error instanceof ReportedFailure) return error.exitCode;
    const shown = commander && error instanceof commander.CommanderError ? commanderUsageError(error, argv) : error;
    if (shown === undefined) return 0;
    if (wantsJson) earlyOutput.result(renderErrorJson(shown));
    else io.stderr.write(`${renderError(shown, { debug })}\n`);
    return exitCodeOf(shown);
  }
}

async function runCommander({ Command }: typeof import("commander"), argv: string[], io: RunCliOptions, contextOf: (flags: GlobalFlags) => CommandContext): Promise<void> {
  const wantsJson = argv.includes("--json");
  const program = new Command("xcsh-tools")
    .description("Install, author and load custom tools and plugins for the xcsh coding agent")
    .version(packageVersion(), "-V, --version", "print the version (also -v)")
    .configureOutput({
      // Help is ours, but it may quote what was typed: it goes through the same neutraliser.
      writeOut: (text) => io.stdout.write(printable(text, { newlines: true })),
      writeErr: (text) => {
        if (!wantsJson) io.stderr.write(printable(text, { newlines: true }));
      },
      // Commander's own usage errors are rendered by runCli like every other error (with `Code:`).
      outputError: () => {},
    })
    // Every command's help lists the global options too (set before the commands are added, which inherit it).
    .configureHelp({ showGlobalOptions: true })
    .exitOverride();
  for (const option of GLOBAL_OPTIONS) program.option(option.flags, option.description);
  const getContext = (command: Command) => contextOf(command.optsWithGlobals() as GlobalFlags);
  for (const command of await loadCommands(commandNameOf(argv))) command.register(program, getContext);
  await program.parseAsync(argv, { from: "user" });
}

/**
 * The options of an argv made of the command `name` once and, each at most once with its value
 * given, the global options and (after the name) the command's `options` that take no list,
 * merged as commander's `optsWithGlobals()` gives them; undefined for any other argv (help,
 * operands, repeats, `--path`...), which commander parses.
 */
export function plainFlags(argv: readonly string[], name: string, options: ReadonlyArray<{ flags: string; parse?: (value: string) => unknown }>): (GlobalFlags & Record<string, unknown>) | undefined {
  const flags: GlobalFlags & Record<string, unknown> = { color: true };
  const seen = new Set<string>();
  let named = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === name && !named) {
      named = true;
      continue;
    }
    const at = arg.indexOf("=");
    const flag = at < 0 ? arg : arg.slice(0, at);
    const option = [...GLOBAL_OPTIONS, ...(named ? options : [])].find((o) => flagOf(o.flags) === flag);
    // A list or an optional value is commander's to read.
    if (!option || seen.has(flag) || option.flags.endsWith("...>") || option.flags.includes("[")) return undefined;
    seen.add(flag);
    const key = flag.replace(/^--(no-)?/, "").replace(/-(\w)/g, (_, c: string) => c.toUpperCase()); // commander's camelCase
    if (!takesValue(option.flags)) {
      if (at >= 0) return undefined;
      flags[key] = !flag.startsWith("--no-");
      continue;
    }
    const value = at < 0 ? argv[++i] : arg.slice(at + 1);
    if (!value || value.startsWith("-")) return undefined;
    flags[key] = "parse" in option && option.parse ? option.parse(value) : value;
  }
  return named ? flags : undefined;
}

/** The options of `install` with no spec that a restore with nothing to do honours as the engine would (none of them changes a no-op). */
const FAST_RESTORE_OPTIONS = [{ flags: "--frozen" }, { flags: "--yes" }, { flags: "-y" }, { flags: "--allow-scripts" }, { flags: "--offline" }];

/**
 * `install` with no spec in a project whose set is restored already answers from the restore
 * stamp, without commander or the engine (teamset/fast.ts; the engine decides anything else).
 */
async function restoredAlready(argv: readonly string[], name: string, io: RunCliOptions): Promise<boolean> {
  const flags = plainFlags(argv, name, FAST_RESTORE_OPTIONS);
  if (!flags) return false;
  const { fastRestore } = await import("../teamset/fast.js");
  const upToDate = fastRestore({ cwd: io.cwd, env: io.env, flags });
  const output = createOutput(io, { json: Boolean(flags.json), color: flags.color === false ? false : undefined, env: io.env });
  if (!upToDate) return io.env.XCSH_PLUGIN_SEED_DIR ? restoredFromSeeds(flags, io, output) : false;
  if (output.json) output.result({ ok: true, upToDate: true, plugins: upToDate.plugins });
  else output.line(`Up to date: ${upToDate.plugins} plugin${upToDate.plugins === 1 ? "" : "s"} (xcsh-team.lock.json)`);
  return true;
}

/**
 * `install` with no spec on a machine whose seeds hold the project's whole lock: the host files
 * written as the engine writes them, its report printed through the same code
 * (teamset/fast-seed.ts; the engine decides anything else).
 */
async function restoredFromSeeds(flags: GlobalFlags & Record<string, unknown>, io: RunCliOptions, output: ReturnType<typeof createOutput>): Promise<boolean> {
  const { seededRestore } = await import("../teamset/fast-seed.js");
  const restored = await seededRestore({ cwd: io.cwd, env: io.env, flags, onWarning: (message) => output.note(`warning: ${message}`) });
  if (!restored) return false;
  const { restoreLines, restoreResult } = await import("./restore-output.js");
  if (output.json) output.result(restoreResult(restored.report));
  else for (const line of restoreLines(restored.root, restored.report)) output.line(line);
  return true;
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
