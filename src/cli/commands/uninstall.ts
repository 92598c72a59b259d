/**
 * `xcsh-tools uninstall <name>...`: remove plugins (their runtime state and settings go with
 * them, as in the host) in one transaction. An unknown name is `ENOT_INSTALLED`; nothing changes.
 */
import type { Command } from "commander";
import { mutationWorld } from "../plugin-world.js";
import { npmClient, renderPlan, withProgress } from "../plugin-command.js";
import type { CommandModule } from "./index.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("uninstall <name...>")
    .description("remove installed plugins")
    .option("--dry-run", "print the plan; write nothing")
    .option("--scope <scope>", "marketplace plugins (name@marketplace): user (default) or project")
    .action(async (names: string[], flags: { dryRun?: boolean; scope?: string }, command: Command) => {
      const ctx = getContext(command);
      if (await (await import("./marketplace.js")).dispatchUninstall(ctx, names, flags)) return;
      const { parsePackageName } = await import("../../plugins/spec.js");
      const wanted = names.map(parsePackageName);
      const { readStateForQuery } = await import("../../plugins/mutation.js");
      const { loadInventory } = await import("../../plugins/inventory.js");
      const { planUninstall, planJson } = await import("../../plugins/plan.js");
      const world = await mutationWorld(ctx);
      const client = await npmClient(ctx);
      const settings = (await ctx.settings()).settings;
      const result = await withProgress(ctx, `Uninstalling ${wanted.join(", ")}`, async (progress) => {
        const state = await readStateForQuery(world);
        const plan = planUninstall(await loadInventory(state), wanted);
        if (flags.dryRun) return { plan, applied: undefined };
        const { applyPlan } = await import("../../plugins/apply.js");
        const applied = await applyPlan(world, `uninstall ${wanted.join(" ")}`, {
          client,
          cwd: ctx.cwd,
          builtins: settings.builtInTools,
          replan: (inventory) => planUninstall(inventory, wanted),
          progress,
        });
        return { plan: applied.plan, applied };
      });
      const dryRun = Boolean(flags.dryRun);
      if (ctx.output.json) {
        ctx.output.result({ ok: true, dryRun, ...planJson(result.plan), plugins: result.applied?.plugins ?? [] });
        return;
      }
      for (const line of renderPlan(ctx, result.plan, { dryRun })) ctx.output.line(line);
      if (!dryRun) ctx.output.line(`Removed ${wanted.join(", ")}`);
    });
};
