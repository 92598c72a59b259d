/**
 * The CLI program: commander, global flags, and the one place that turns results and errors
 * into output and an exit code (0 ok, 1 failure, 2 usage or validation error).
 */
import { readFileSync } from "node:fs";
import type { Command, CommanderError } from "commander";
import type { XcshToolsError } from "../core/errors.js";
import { ReportedFailure, usageError } from "./command-errors.js";
import { commandNameOf, GLOBAL_OPTIONS, takesValue } from "./command-name.js";

// main.ts reads the command's name from the chunk it already loaded (a dynamic import of
// command-name.js of its own is one more file for every command to open).
export { commandNameOf };
import { loadCommand, loadCommands } from "./commands/index.js";
import { createContext, type CommandContext, type GlobalFlags, type PlainOption, type PlainShape } from "./context.js";
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
    const name = commandNameOf(argv);
    if ((name === "install" || name === "i") && (await restoredAlready(argv, name, io))) return 0;
    // `tools` is asked at a host's every boot, and `enable`, `config set`... are typed dozens of
    // times a day: loading commander costs more than the rest of `tools`' answer under Bun and a
    // good part of a state change's. A plain argv of a command that declares its shape runs
    // without it (parsed as commander would: test/unit/plain-flags.test.ts); anything else
    // (help, errors, usage) is commander's.
    const plain = name === "install" || name === "i" ? undefined : await plainRun(argv, name);
    if (plain) await plain.run(contextOf(plain.globals));
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
export function plainFlags(argv: readonly string[], name: string, options: readonly PlainOption[]): (GlobalFlags & Record<string, unknown>) | undefined {
  const plain = plainArgs(argv, { path: [name], options, operands: 0 });
  return plain && { ...plain.globals, ...plain.flags };
}

/** The plain form of `argv`'s command (commands/index.ts), ready to run, or undefined (commander's). */
async function plainRun(argv: readonly string[], name: string | undefined): Promise<{ globals: GlobalFlags; run(ctx: CommandContext): Promise<void> } | undefined> {
  const module = name === undefined ? undefined : await loadCommand(name);
  for (const shape of module?.plain ?? []) {
    const args = plainArgs(argv, shape);
    if (args) return { globals: args.globals, run: (ctx) => shape.run(ctx, args.operands, args.flags) };
  }
  return undefined;
}

/**
 * An argv made of the command's `path` (global options only before it and between nothing
 * else), then its operands and, each at most once with its value given, the global options and
 * the command's own options that take no list or optional value: the global flags (commander's
 * `optsWithGlobals()` of the program), the command's own (its `opts()`) and the operands, as
 * commander would hand them to the action. Undefined for any other argv (help, `--`, repeats, an
 * unknown option, an operand that starts with `-`, a wrong number of operands, a missing value…),
 * which commander parses.
 */
export function plainArgs(argv: readonly string[], shape: PlainShape): { globals: GlobalFlags & Record<string, unknown>; flags: Record<string, unknown>; operands: string[] } | undefined {
  const globals: GlobalFlags & Record<string, unknown> = { color: true };
  const flags: Record<string, unknown> = {};
  const operands: string[] = [];
  const seen = new Set<string>();
  let matched = 0;
  const named = () => matched === shape.path.length;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("-")) {
      if (named()) operands.push(arg);
      else if (arg === shape.path[matched]) matched++;
      else return undefined;
      continue;
    }
    // Options go before the command or after its whole path: `config --json set` is commander's.
    if (matched > 0 && !named()) return undefined;
    const at = arg.indexOf("=");
    const flag = at < 0 ? arg : arg.slice(0, at);
    const global = GLOBAL_OPTIONS.find((o) => flagNames(o.flags).includes(flag));
    const own = named() ? shape.options.find((o) => flagNames(o.flags).includes(flag)) : undefined;
    const option = global ?? own;
    // A list or an optional value is commander's to read.
    if (!option || option.flags.endsWith("...>") || option.flags.includes("[")) return undefined;
    const long = flagNames(option.flags).find((f) => f.startsWith("--")) ?? flag;
    if (seen.has(long)) return undefined;
    seen.add(long);
    const key = long.replace(/^--(no-)?/, "").replace(/-(\w)/g, (_, c: string) => c.toUpperCase()); // commander's camelCase
    const into = global ? globals : flags;
    if (!takesValue(option.flags)) {
      if (at >= 0) return undefined;
      into[key] = !long.startsWith("--no-");
      continue;
    }
    const value = at < 0 ? argv[++i] : arg.slice(at + 1);
    if (!value || value.startsWith("-")) return undefined;
    into[key] = "parse" in option && option.parse ? option.parse(value) : value;
  }
  const { count, variadic } = typeof shape.operands === "number" ? { count: shape.operands, variadic: false } : shape.operands;
  if (!named() || operands.length < count || (!variadic && operands.length > count)) return undefined;
  return { globals, flags, operands };
}

/** The flags an option answers to: `-y` and `--yes` of `-y, --yes`. */
function flagNames(flags: string): string[] {
  return flags.split(/[ ,|]+/).filter((f) => f.startsWith("-"));
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
