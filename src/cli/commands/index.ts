/**
 * The command registry: one file per command, each exporting `register`. Adding a command is
 * adding its file and one line here. Command files import their engines lazily inside the
 * action so that `--help` and `tools` never load arborist, pacote or listr2.
 */
import type { Command } from "commander";
import type { CommandContext } from "../context.js";

/** A command module: attaches itself to the program; `run` gets the context when invoked. */
export interface CommandModule {
  register(program: Command, getContext: (command: Command) => CommandContext): void;
}

/** Every command, in help order. */
export async function loadCommands(): Promise<CommandModule[]> {
  return Promise.all([import("./tools.js"), import("./validate.js"), import("./new.js"), import("./install.js"), import("./uninstall.js"), import("./list.js"), import("./update.js"), import("./outdated.js"), import("./link.js"), import("./unlink.js"), import("./enable.js"), import("./features.js"), import("./config.js"), import("./doctor.js"), import("./marketplace.js")]);
}
