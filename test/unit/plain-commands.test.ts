/**
 * The commands that run without commander for a plain argv (cli/program.ts `plainArgs`, each
 * command's `plain` forms): for every argv a plain form accepts, the global flags, the command's
 * own flags and the operands must be exactly what commander hands the command's action, and
 * every other argv (help, `--`, repeats, unknown options, operands that look like options, a
 * wrong count of operands, options between a command and its subcommand) must go to commander.
 */
import { describe, expect, it } from "vitest";
import { loadCommand } from "../../src/cli/commands/index.js";
import type { CommandModule } from "../../src/cli/context.js";
import { plainArgs } from "../../src/cli/program.js";
import { commanderParse } from "../helpers/commander-parse.js";

interface Parsed {
  globals: Record<string, unknown>;
  flags: Record<string, unknown>;
  operands: string[];
}

/** What commander hands the action for `argv`, or undefined when it refuses the argv. */
async function commanderArgs(module: CommandModule, argv: string[]): Promise<Parsed | undefined> {
  const command = await commanderParse(module.register, argv);
  if (!command) return undefined;
  const flags = command.opts();
  const globals = Object.fromEntries(Object.entries(command.optsWithGlobals()).filter(([key]) => !(key in flags)));
  const operands = (command.processedArgs as unknown[]).flat().filter((arg): arg is string => arg !== undefined);
  return { globals, flags, operands };
}

async function plainOf(argv: string[]): Promise<Parsed | undefined> {
  const module = await loadCommand(argv.find((arg) => !arg.startsWith("-") && !["/p", "/h"].includes(arg))!);
  for (const shape of module?.plain ?? []) {
    const parsed = plainArgs(argv, shape);
    if (parsed) return parsed;
  }
  return undefined;
}

const PLAIN = [
  ["enable", "a"],
  ["disable", "a", "@s/b", "c"],
  ["disable", "a", "--dry-run", "b"],
  ["--json", "enable", "a", "--scope", "project"],
  ["enable", "--scope=user", "a", "-y"],
  ["disable", "a", "--yes", "--no-color", "--cwd", "/p"],
  ["--home", "/h", "disable", "a", "--debug"],
  ["features", "p", "--enable", "extra"],
  ["features", "p", "--disable", "a,b", "--json"],
  ["features", "p", "--set", "*", "--scope", "project", "--dry-run"],
  ["features", "p", "--reset"],
  ["features", "p"],
  ["config", "set", "p", "level", "high"],
  ["config", "set", "p", "greeting", "hello", "world", "--json"],
  ["--cwd", "/p", "config", "set", "p", "k", "v", "--scope", "local", "-y"],
  ["config", "delete", "p", "k", "--dry-run"],
  ["trust"],
  ["trust", "/p"],
  ["trust", "--list", "--json"],
  ["untrust", "/p"],
  ["untrust"],
  ["tools", "--json"],
  ["link", "/p"],
  ["link", "./dev/x", "--dry-run", "--json"],
  ["--cwd", "/p", "link", "x"],
  ["unlink", "a"],
  ["--json", "unlink", "@s/b", "--dry-run"],
];

const TO_COMMANDER = [
  ["enable"],
  ["enable", "--help"],
  ["enable", "a", "-h"],
  ["enable", "a", "--", "b"],
  ["enable", "a", "--dry-run", "--dry-run"],
  ["enable", "a", "-y", "--yes"],
  ["enable", "a", "--scope"],
  ["enable", "a", "--scope", "--json"],
  ["enable", "a", "--dry-run=1"],
  ["enable", "a", "--force"],
  ["enable", "-x"],
  ["--dry-run", "enable", "a"],
  ["features"],
  ["features", "p", "q"],
  ["features", "p", "--set", ""],
  ["features", "p", "--set="],
  ["config", "set", "p", "k"],
  ["config", "set", "p", "k", "-1"],
  ["config", "--json", "set", "p", "k", "v"],
  ["config", "delete", "p", "k", "extra"],
  ["config", "get", "p", "k"],
  ["config", "set"],
  ["config"],
  ["trust", "a", "b"],
  ["untrust", "--list"],
  ["link"],
  ["link", "a", "b"],
  ["link", "--help"],
  ["link", "a", "--dry-run", "--dry-run"],
  ["unlink"],
  ["unlink", "a", "--force"],
  ["unlink", "-a"],
  ["unlink", "a", "--", "b"],
];

describe("plain forms of the state commands, link and unlink", () => {
  it("give the flags and operands commander gives, for every argv they accept", async () => {
    for (const argv of PLAIN) {
      const plain = await plainOf(argv);
      expect(plain, argv.join(" ")).toBeDefined();
      const module = (await loadCommand(argv.find((arg) => !arg.startsWith("-") && !["/p", "/h"].includes(arg))!))!;
      expect(plain, argv.join(" ")).toEqual(await commanderArgs(module, argv));
    }
  });

  it("leave everything else to commander", async () => {
    for (const argv of TO_COMMANDER) expect(await plainOf(argv), argv.join(" ")).toBeUndefined();
    // Some of those are fine for commander: the plain form only gives up on them.
    const config = (await loadCommand("config"))!;
    expect(await commanderArgs(config, ["config", "set", "p", "k", "--", "-1"])).toMatchObject({ operands: ["p", "k", "-1"] });
  });
});
