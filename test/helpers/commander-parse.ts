/**
 * What commander hands a command's action for an argv, for the tests that hold the CLI's plain
 * forms (cli/program.ts `plainArgs`) against it: the program with our global options, the
 * command module registered alone, the action stopped before it runs.
 */
import { Command } from "commander";
import { GLOBAL_OPTIONS } from "../../src/cli/command-name.js";
import type { CommandModule } from "../../src/cli/context.js";

/** `command`: the command commander chose (its `opts()`, `optsWithGlobals()`, `processedArgs`); undefined when commander refuses the argv. */
export async function commanderParse(register: CommandModule["register"], argv: string[]): Promise<Command | undefined> {
  const program = new Command("xcsh-tools").exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {}, outputError: () => {} });
  for (const option of GLOBAL_OPTIONS) program.option(option.flags, option.description);
  let seen: Command | undefined;
  const stop = new Error("parsed");
  register(program, (command) => {
    seen = command;
    throw stop;
  });
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error !== stop) return undefined;
  }
  return seen;
}
