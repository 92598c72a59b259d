/**
 * Consent for what a plugin runs: the one `approveExecutables` the CLI gives both engines (the
 * marketplace engine, and the npm applier through `planAndApply`). An install or update that
 * adds or changes a marketplace plugin's hooks, MCP/LSP servers, monitors or bin/ executables,
 * or an npm plugin's hook or extension modules and (with --allow-scripts) the install scripts
 * that will run, prints each before anything is committed or any of them ran;
 * `--yes` accepts; on a terminal (stdin and stdout TTYs, no `--json`) it asks y/N; otherwise it
 * refuses with `EUNCONFIRMED`, listing them, and nothing is written. A dry run prints and never
 * asks; an update that only removes some prints them and goes on. Each command is one line
 * (cli/output.ts escapes a newline or escape sequence inside it), so what is asked about is what
 * runs.
 */
import { XcshToolsError } from "../core/errors.js";
import type { ExecutableRequest } from "../components/consent.js";
import type { CommandContext } from "./context.js";
import { printable, style } from "./output.js";

export interface ApproverOptions {
  yes?: boolean;
  /**
   * Called before the question is asked, to give the terminal back (a progress display that
   * redraws its lines would overwrite the question).
   */
  beforePrompt?: () => Promise<void>;
}

export function executableApprover(ctx: CommandContext, options: ApproverOptions): (request: ExecutableRequest) => Promise<void> {
  const batch = batchApprover(ctx, options);
  return (request) => batch([request]);
}

/**
 * Consent for several plugins at once (a team restore: docs/design/team-sets.md (d) 5.): every
 * plugin's lines printed, then ONE question for all of them; `--yes`, a dry run and refusals as
 * for one plugin, whose texts a batch of one keeps.
 */
export function batchApprover(ctx: CommandContext, options: ApproverOptions): (requests: readonly ExecutableRequest[]) => Promise<void> {
  return async (requests) => {
    if (requests.length === 0) return;
    const { describeExecutableChanges, describeInstallScripts, needsConsent } = await import("../components/consent.js");
    const items = requests.map((request) => {
      // Install scripts that --allow-scripts runs are asked about like hooks: none has run yet.
      const scripts = (request.scripts?.length ?? 0) > 0;
      return {
        request,
        scripts,
        lines: [...describeExecutableChanges(request.changes), ...describeInstallScripts(request.scripts)],
        what: `${request.id} ${request.version}${request.update ? " (update)" : ""}`,
        ask: needsConsent(request.changes) || scripts,
      };
    });
    const asked = items.filter((item) => item.ask);
    const { canPrompt, createPrompter } = await import("./prompt.js");
    const willAsk = asked.length > 0 && !requests.some((r) => r.dryRun) && !options.yes;
    const canAsk = !ctx.output.json && canPrompt(process.stdin, process.stdout);
    // A refusal without a question carries the lines in its error: printing them as notes too
    // would show every command twice.
    if (!ctx.output.json && !(willAsk && !canAsk)) {
      if (willAsk && options.beforePrompt) await options.beforePrompt();
      for (const { request, lines, what, ask } of items) {
        const verb = request.source === "npm" ? "has the host run code" : "runs programs";
        const heading = !ask ? `${what} no longer runs:` : request.update ? `${what} changes what it runs:` : `${what} ${verb} on your machine:`;
        ctx.output.note(style(ctx.output, "yellow", heading));
        for (const line of lines) ctx.output.note(`  ${line}`);
      }
    }
    if (!willAsk) return;
    const one = asked.length === 1 ? asked[0]! : undefined;
    const update = asked.every((item) => item.request.update);
    if (canAsk) {
      const prompter = createPrompter(process.stdin, process.stdout);
      try {
        if (await prompter.confirm(one ? `Allow ${one.request.id} to run these?` : `Allow these ${asked.length} plugins to run these?`, false)) return;
      } finally {
        prompter.close();
      }
      const npmWhat = one?.scripts ? "its hooks, extensions and install scripts" : "its hooks and extensions";
      throw new XcshToolsError("EUNCONFIRMED", one ? `Not ${update ? "updated" : "installed"}: ${one.what} was not allowed to run ${one.request.source === "npm" ? npmWhat : "its commands"}` : `Not installed: ${asked.map((item) => item.what).join(", ")} were not allowed to run what they run`, {
        // Never a command that imports the plugin just refused: `validate --static` reads it without running any of it.
        hint: "Nothing was written and none of the plugin's code ran. The lines above list what it would run; to read the rest without running it: `xcsh-tools validate --static <folder>` on a checkout.",
      });
    }
    const listed = (lines: readonly string[], indent: string) => lines.map((l) => `${indent}${printable(l)}`).join("\n");
    const message = one
      ? `${one.what} ${update ? "adds or changes" : "brings"} ${one.request.source === "npm" ? (one.scripts ? "hooks, extensions or install scripts that run" : "hooks or extensions the host runs") : "commands that run on this machine"}, and nobody confirmed them:\n${listed(one.lines, "  ")}`
      : `${asked.length} plugins bring commands, hooks or extensions that run on this machine, and nobody confirmed them:\n${asked.map((item) => `  ${printable(item.what)}:\n${listed(item.lines, "    ")}`).join("\n")}`;
    throw new XcshToolsError("EUNCONFIRMED", message, {
      hint: "Nothing was written. Read them, then run the command again with --yes to accept (or on a terminal to be asked).",
      exitCode: 1,
    });
  };
}
