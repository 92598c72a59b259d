/**
 * `xcsh-tools uninstall <name>...`: remove plugins (their runtime state and settings go with
 * them, as in the host) in one transaction. An unknown name is `ENOT_INSTALLED`; nothing changes.
 */
import type { Command } from "commander";
import { npmClient, planAndApply, reportPlanned } from "../plugin-command.js";
import type { CommandModule } from "../context.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("uninstall <name...>")
    .aliases(["rm", "remove"])
    .description("remove installed plugins (npm names or name@marketplace), with their runtime state and settings")
    .option("--dry-run", "print the plan; write nothing")
    .option("--scope <scope>", "marketplace plugins (name@marketplace): user (default) or project")
    .action(async (names: string[], flags: { dryRun?: boolean; scope?: string }, command: Command) => {
      const ctx = getContext(command);
      if (await (await import("./marketplace.js")).dispatchChange(ctx, "uninstall", names, flags)) return;
      const { parsePackageName } = await import("../../plugins/spec.js");
      const wanted = names.map(parsePackageName);
      const { planUninstall } = await import("../../plugins/plan.js");
      const dryRun = Boolean(flags.dryRun);
      const result = await planAndApply(ctx, {
        title: `Uninstalling ${wanted.join(", ")}`,
        label: `uninstall ${wanted.join(" ")}`,
        client: await npmClient(ctx),
        dryRun,
        planFor: (inventory) => planUninstall(inventory, wanted),
      }).catch(async (error: unknown) => {
        // `uninstall hookify` with hookify@market installed: say which id was meant.
        throw await (await import("./marketplace.js")).withMarketplaceSuggestion(ctx, error, names, "uninstall");
      });
      if (!(await reportPlanned(ctx, result, dryRun))) return;
      if (!dryRun) ctx.output.line(`Removed ${wanted.join(", ")}`);
    });
};
