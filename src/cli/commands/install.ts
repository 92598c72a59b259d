/**
 * `xcsh-tools install <spec>...`: resolve every spec (registry, tarball, URL, folder, git),
 * check each is an xcsh plugin and its requested features exist, then install them all in one
 * transaction (arborist in a staging copy, each plugin validated with its tools loaded in a
 * child process). `--dry-run` prints the plan and writes nothing. Lifecycle scripts run only
 * with `--allow-scripts` (or settings `allowScripts`), and only after the user allowed them with
 * the plugins' hooks (plugins/install-scripts.ts); a dry run names them and runs none.
 */
import type { Command } from "commander";
import { npmClient, planAndApply, printWouldRunScripts, reportPlanned } from "../plugin-command.js";
import { usageError } from "../command-errors.js";
import type { CommandContext, CommandModule } from "../context.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("install [spec...]")
    .alias("i")
    .description("install plugins: with no spec, restore the project's set (xcsh-team.json and its lock); else from npm (name, name@version|range|tag, tarball, URL, folder, git URL; features: name[a,b]) or a marketplace (name@marketplace)")
    .option("--dry-run", "print the plan; write nothing")
    .option("--frozen", "with no spec (CI): fail, writing nothing, unless xcsh-team.lock.json already describes the declared set")
    .option("--allow-scripts", "run the packages' install scripts (off by default)")
    .option("--scope <scope>", "marketplace plugins (name@marketplace): user (default) or project")
    .option("-y, --yes", "accept what the plugins run without asking (marketplace: hooks, MCP/LSP servers, bin/; npm: hook and extension modules, and install scripts with --allow-scripts)")
    .action(async (specs: string[], flags: { dryRun?: boolean; scope?: string; allowScripts?: boolean; yes?: boolean; frozen?: boolean }, command: Command) => {
      const ctx = getContext(command);
      if (specs.length === 0 && flags.scope === undefined) return restoreCommand(ctx, flags);
      if (flags.frozen) throw usageError("--frozen applies to `install` with no spec (restoring the project's set)", "Drop --frozen, or run `xcsh-tools install --frozen` alone.");
      if (await (await import("./marketplace.js")).dispatchChange(ctx, "install", specs, flags)) return;
      if (specs.length === 0) throw usageError("install needs at least one spec", "e.g. xcsh-tools install @acme/xcsh-search");
      const { parseInstallSpec } = await import("../../plugins/spec.js");
      const parsed = specs.map((spec) => parseInstallSpec(spec, ctx.cwd));
      const { resolveSpecs } = await import("../../plugins/resolve.js");
      const { planInstall } = await import("../../plugins/plan.js");
      const client = await npmClient(ctx, { allowScripts: Boolean(flags.allowScripts) });
      // A local repository the user typed (git+file://…) may be cloned; nothing else local may.
      const { isLocalGitUrl } = await import("../../core/source-args.js");
      if (parsed.some((p) => p.source === "git" && typeof p.parsed.fetchSpec === "string" && isLocalGitUrl(p.parsed.fetchSpec))) client.allowLocalGit = true;
      const dryRun = Boolean(flags.dryRun);
      let resolved: Awaited<ReturnType<typeof resolveSpecs>> = [];
      const result = await planAndApply(ctx, {
        title: `Installing ${specs.join(", ")}`,
        validates: true,
        label: `install ${specs.join(" ")}`,
        client,
        dryRun,
        prepare: async (progress) => {
          progress("Resolving");
          resolved = await resolveSpecs(parsed, client, ctx.cwd);
        },
        planFor: (inventory) => planInstall(inventory, resolved, { allowScripts: client.allowScripts }),
        consent: { yes: Boolean(flags.yes) },
      }).catch(async (error: unknown) => {
        // A bare name npm does not know but an added marketplace offers: say which id was meant.
        throw await (await import("./marketplace.js")).withMarketplaceSuggestion(ctx, error, specs, "install");
      });
      // Tool names the new plugins share with built-ins or other tools: said now, not at a session.
      const conflicts = await (await import("../tool-conflicts.js")).toolConflictsAfter(ctx, (result.applied?.plugins ?? []).map((p) => p.name));
      // A dry run runs no script: it names those the real run would, after asking.
      const changing = new Set(result.plan.actions.filter((a) => a.apply.kind === "install").map((a) => a.name));
      const wouldRun = dryRun && client.allowScripts ? resolved.filter((r) => changing.has(r.name)).flatMap((r) => r.installScripts) : [];
      if (!(await reportPlanned(ctx, result, dryRun, { ...conflicts.json, ...(dryRun && client.allowScripts ? { wouldRunScripts: wouldRun } : {}) }))) return;
      if (dryRun && client.allowScripts) await printWouldRunScripts(ctx, wouldRun);
      for (const plugin of result.applied?.plugins ?? []) {
        if (plugin.scripts.length > 0) {
          ctx.output.line(
            plugin.scriptsRan
              ? `${plugin.name} ran its install scripts (${plugin.scripts.join(", ")})`
              : `${plugin.name} declares install scripts (${plugin.scripts.join(", ")}) that were NOT run; reinstall with --allow-scripts if it needs them`,
          );
        }
      }
      if (!dryRun) {
        const n = result.applied?.plugins.length ?? 0;
        ctx.output.line(n > 0 ? `Installed ${result.applied!.plugins.map((p) => `${p.name}@${p.version ?? "?"}`).join(", ")}` : "Nothing to do.");
      }
      conflicts.warn();
    });
};

/** `install` with no spec: restore the project's declared set (cli/team-restore.ts). */
async function restoreCommand(ctx: CommandContext, flags: { dryRun?: boolean; allowScripts?: boolean; yes?: boolean; frozen?: boolean }): Promise<void> {
  const { restoreProject, restoreLines, teamRootOf } = await import("../team-restore.js");
  const report = await restoreProject(ctx, flags);
  // `changed`: anything installed or written on this machine (a dry run: anything it would).
  if (ctx.output.json) return ctx.output.result({ ok: true, changed: report.installed.length + report.npmInstalled.length + report.written.length > 0 || (report.dryRun && report.lockChanged), ...report });
  for (const line of restoreLines(teamRootOf(ctx), report)) ctx.output.line(line);
}
