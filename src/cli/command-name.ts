/**
 * The program's global options, and the command an argv names: the program registers that
 * command alone (commands/index.ts). It imports nothing.
 */

/** The program's own options (program.ts adds them in this order), before any command. */
export const GLOBAL_OPTIONS: ReadonlyArray<{ flags: string; description: string }> = [
  { flags: "--json", description: "print one JSON document on stdout" },
  { flags: "--cwd <dir>", description: "project folder (default: the current directory)" },
  { flags: "--home <dir>", description: "the xcsh root (default: $XCSH_HOME, else ~/.xcsh)" },
  { flags: "--registry <url>", description: "npm registry to use" },
  { flags: "--no-color", description: "never print colors (NO_COLOR is respected too)" },
  { flags: "--debug", description: "print stacks of errors" },
];

/** An option's flag: `--cwd` of `--cwd <dir>`. */
export const flagOf = (flags: string): string => flags.split(" ")[0]!;

/** Whether an option takes a value (`<required>` or `[optional]`), in commander's flags syntax. */
export const takesValue = (flags: string): boolean => /[<[]/.test(flags);

/** The global options whose value is the next argument (`--cwd D tools` names `tools`). */
const TAKES_VALUE = new Set(GLOBAL_OPTIONS.filter((option) => takesValue(option.flags)).map((option) => flagOf(option.flags)));

/** The first operand of `argv`, skipping the global options and their values; `undefined` when there is none before `--`. */
export function commandNameOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return undefined;
    if (!arg.startsWith("-")) return arg;
    if (!arg.includes("=") && TAKES_VALUE.has(arg)) i++;
  }
  return undefined;
}
