/**
 * The command registry: one file per command, each exporting `register`. Adding a command is
 * adding its file and one line here. Command files import their engines lazily inside the
 * action so that `--help` and `tools` never load arborist, pacote or listr2; and a run that
 * names its command loads that command's file alone (a `tools` query is on a host's hot path).
 */
import type { CommandModule } from "../context.js";

/** Every command module, in help order, with the top-level command names (and aliases) it registers. */
const COMMANDS: ReadonlyArray<readonly [names: readonly string[], load: () => Promise<CommandModule>]> = [
  [["tools"], () => import("./tools.js")],
  [["validate"], () => import("./validate.js")],
  [["run"], () => import("./run.js")],
  [["new"], () => import("./new.js")],
  [["install", "i"], () => import("./install.js")],
  [["uninstall", "rm", "remove"], () => import("./uninstall.js")],
  [["list", "ls"], () => import("./list.js")],
  [["audit"], () => import("./audit.js")],
  [["show"], () => import("./show.js")],
  [["update"], () => import("./update.js")],
  [["outdated"], () => import("./outdated.js")],
  [["link"], () => import("./link.js")],
  [["unlink"], () => import("./unlink.js")],
  [["enable", "disable"], () => import("./enable.js")],
  [["features"], () => import("./features.js")],
  [["config"], () => import("./config.js")],
  [["doctor"], () => import("./doctor.js")],
  [["marketplace"], () => import("./marketplace.js")],
  [["seed"], () => import("./seed.js")],
  [["trust", "untrust"], () => import("./trust.js")],
];

/**
 * The modules to register: the one that registers `commandName`, or every module when there is
 * no name or it is none of ours (top-level help, `help <command>`, a typo that commander answers
 * with a did-you-mean over all commands).
 */
export async function loadCommands(commandName?: string): Promise<CommandModule[]> {
  const named = commandName === undefined ? undefined : COMMANDS.find(([names]) => names.includes(commandName));
  return Promise.all((named ? [named] : COMMANDS).map(([, load]) => load()));
}

/** The module that registers the top-level command `commandName`, or undefined when none does. */
export async function loadCommand(commandName: string): Promise<CommandModule | undefined> {
  return COMMANDS.find(([names]) => names.includes(commandName))?.[1]();
}
