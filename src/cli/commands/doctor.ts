/**
 * `xcsh-tools doctor [--fix] [--dry-run]`: check the plugins folder, its state files, npm's
 * lockfile against node_modules, every plugin's manifest entries, name conflicts, marketplace
 * state, the project's overrides, transactions (journal, lock) and our own settings with the
 * origin of each value; `--fix` repairs what it can through the same lock and journal as every
 * change and says what it could not. Exit 0 when no error remains (warnings are fine), else 1.
 *
 * Our settings may be the problem doctor reports, so this command never lets a malformed
 * settings file stop it: the engine reports it as a failed check, and the fix world falls back
 * to the defaults for the lock wait and the registry options.
 */
import type { Command } from "commander";
import { isXcshToolsError } from "../../core/errors.js";
import type { CommandContext } from "../context.js";
import { style } from "../output.js";
import { ReportedFailure, usageError } from "../command-errors.js";
import type { CommandModule } from "../context.js";

async function fixWorld(ctx: CommandContext) {
  const { mutationWorld, testFaultHook } = await import("../plugin-world.js");
  const { npmClient } = await import("../plugin-command.js");
  let mutation: Awaited<ReturnType<typeof mutationWorld>>;
  try {
    mutation = await mutationWorld(ctx);
  } catch (error) {
    if (!isXcshToolsError(error, "ECONFIG")) throw error;
    const fault = testFaultHook(ctx.env);
    mutation = { roots: ctx.roots, env: ctx.env, signal: ctx.signal, onWait: (m) => ctx.output.note(m), onWarning: (m) => ctx.output.note(`warning: ${m}`), ...(fault ? { onStep: fault } : {}) };
  }
  return {
    mutation,
    npmClient: async () => {
      try {
        return await npmClient(ctx);
      } catch (error) {
        if (!isXcshToolsError(error, "ECONFIG")) throw error;
        const { loadRegistryOptions } = await import("../../plugins/npmrc.js");
        const { pluginsPaths } = await import("../../plugins/state.js");
        const { options } = await loadRegistryOptions({ home: ctx.roots.home, env: ctx.env, pluginsDir: pluginsPaths(ctx.roots).plugins, flagRegistry: ctx.flags.registry });
        return { registry: options, home: ctx.roots.home, allowScripts: false, signal: ctx.signal, packumentCache: new Map() };
      }
    },
  };
}

function formatValue(value: unknown): string {
  if (value === null || value === undefined) return "(unset)";
  return Array.isArray(value) ? (value.length ? value.join(",") : "[]") : String(value);
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("doctor")
    .description("check installed plugins, state files, lockfile, conflicts, marketplaces and settings; --fix repairs what it can")
    .option("--fix", "repair what can be repaired, through the same lock and journal as every change")
    .option("--dry-run", "with --fix: print what would be fixed; write nothing")
    .action(async (flags: { fix?: boolean; dryRun?: boolean }, command: Command) => {
      const ctx = getContext(command);
      if (flags.dryRun && !flags.fix) throw usageError("doctor --dry-run needs --fix: doctor without --fix writes nothing anyway", "Run `xcsh-tools doctor --fix --dry-run` to see what --fix would repair, or `xcsh-tools doctor` to check.");
      const { runDoctor } = await import("../../doctor/index.js");
      const fix = Boolean(flags.fix);
      const dryRun = Boolean(flags.dryRun);
      const report = await runDoctor(
        { roots: ctx.roots, cwd: ctx.cwd, env: ctx.env, projectTrusted: await ctx.projectTrusted(), ...(ctx.flags.registry ? { settingsFlags: { registry: ctx.flags.registry } } : {}) },
        { fix, dryRun, ...(fix && !dryRun ? { fixWorld: await fixWorld(ctx) } : {}) },
      );
      const { output } = ctx;
      if (output.json) {
        output.result(report);
      } else {
        if (fix && dryRun) output.line(style(output, "bold", "Dry run: nothing was written"));
        let area = "";
        const mark = { ok: style(output, "green", "ok   "), warn: style(output, "yellow", "warn "), error: style(output, "red", "error") };
        for (const check of report.checks) {
          if (check.area !== area) {
            area = check.area;
            output.line(style(output, "bold", area));
          }
          output.line(`  ${mark[check.status]}  ${check.message}`);
          if (check.hint) output.line(`         ${check.fixed === true ? style(output, "green", check.hint) : style(output, "dim", check.hint)}`);
        }
        output.line(style(output, "bold", "our settings"));
        if (report.settings.length === 0) output.line("  (not shown: the settings could not be loaded, see above)");
        const width = Math.max(0, ...report.settings.map((s) => s.key.length));
        const valueWidth = Math.max(0, ...report.settings.map((s) => formatValue(s.value).length));
        for (const s of report.settings) output.line(`  ${s.key.padEnd(width)}  ${formatValue(s.value).padEnd(valueWidth)}  ${style(output, "dim", s.via ? `${s.origin} (${s.via})` : s.origin)}`);
        const count = (status: string) => report.checks.filter((c) => c.status === status && c.fixed !== true).length;
        const fixed = report.checks.filter((c) => c.fixed === true).length;
        output.line(`Summary: ${report.checks.filter((c) => c.status === "ok").length} ok, ${count("warn")} warning${count("warn") === 1 ? "" : "s"}, ${count("error")} error${count("error") === 1 ? "" : "s"}${fix && !dryRun ? `, ${fixed} fixed` : ""}`);
        if (!report.ok && !fix) output.line("Run `xcsh-tools doctor --fix` to repair what can be repaired.");
      }
      if (!report.ok) throw new ReportedFailure(1);
    });
};
