/**
 * Consent for what a plugin runs: the `approveExecutables` the CLI gives the marketplace engine.
 * An install or update that adds or changes hooks, MCP/LSP servers, monitors or bin/ executables
 * prints each command before anything is committed; `--yes` accepts; on a terminal (stdin and
 * stdout TTYs, no `--json`) it asks y/N; otherwise it refuses with `EUNCONFIRMED`, listing the
 * commands, and nothing is written. A dry run prints and never asks.
 */
import { XcshToolsError } from "../core/errors.js";
import type { ExecutableRequest } from "../marketplace/context.js";
import type { CommandContext } from "./context.js";
import { style } from "./output.js";

export function executableApprover(ctx: CommandContext, options: { yes?: boolean }): (request: ExecutableRequest) => Promise<void> {
  return async (request) => {
    const { describeExecutableChanges } = await import("../components/consent.js");
    const lines = describeExecutableChanges(request.changes);
    const what = `${request.id} ${request.version}${request.update ? " (update)" : ""}`;
    if (!ctx.output.json) {
      ctx.output.note(style(ctx.output, "yellow", `${what} ${request.update ? "changes what it runs" : "runs programs on your machine"}:`));
      for (const line of lines) ctx.output.note(`  ${line}`);
    }
    if (request.dryRun || options.yes) return;
    const { canPrompt, createPrompter } = await import("./prompt.js");
    if (!ctx.output.json && canPrompt(process.stdin, process.stdout)) {
      const prompter = createPrompter(process.stdin, process.stdout);
      try {
        if (await prompter.confirm(`Allow ${request.id} to run these?`, false)) return;
      } finally {
        prompter.close();
      }
      throw new XcshToolsError("EUNCONFIRMED", `Not installed: ${what} was not allowed to run its commands`, { hint: "Nothing was written. Read the plugin first: `xcsh-tools validate <folder>` on a checkout lists what it runs." });
    }
    throw new XcshToolsError("EUNCONFIRMED", `${what} ${request.update ? "adds or changes" : "brings"} commands that run on this machine, and nobody confirmed them:\n${lines.map((l) => `  ${l}`).join("\n")}`, {
      hint: "Nothing was written. Read them, then run the command again with --yes to accept (or on a terminal to be asked).",
      exitCode: 1,
    });
  };
}
