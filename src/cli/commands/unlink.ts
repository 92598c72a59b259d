/**
 * `xcsh-tools unlink <name>`: remove a link and put back exactly what it replaced — the
 * previous dependency spec and version and its record — or nothing when nothing was there.
 */
import type { Command } from "commander";
import { mutationWorld } from "../plugin-world.js";
import { npmClient, renderPlan, withProgress } from "../plugin-command.js";
import type { CommandModule } from "./index.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("unlink <name>")
    .description("remove a linked plugin and restore what was installed before the link")
    .option("--dry-run", "print the plan; write nothing")
    .action(async (raw: string, flags: { dryRun?: boolean }, command: Command) => {
      const ctx = getContext(command);
      const { parsePackageName } = await import("../../plugins/spec.js");
      const name = parsePackageName(raw);
      const { readStateForQuery } = await import("../../plugins/mutation.js");
      const { loadInventory } = await import("../../plugins/inventory.js");
      const { planUnlink, planJson } = await import("../../plugins/plan.js");
      const world = await mutationWorld(ctx);
      const client = await npmClient(ctx);
      const settings = (await ctx.settings()).settings;
      const result = await withProgress(ctx, `Unlinking ${name}`, async (progress) => {
        const plan = planUnlink(await loadInventory(await readStateForQuery(world)), name);
        if (flags.dryRun) return { plan, applied: undefined };
        const { applyPlan } = await import("../../plugins/apply.js");
        const applied = await applyPlan(world, `unlink ${name}`, { client, cwd: ctx.cwd, builtins: settings.builtInTools, replan: (inventory) => planUnlink(inventory, name), progress });
        return { plan: applied.plan, applied };
      });
      const dryRun = Boolean(flags.dryRun);
      if (ctx.output.json) {
        ctx.output.result({ ok: true, dryRun, ...planJson(result.plan), plugins: result.applied?.plugins ?? [] });
        return;
      }
      for (const line of renderPlan(ctx, result.plan, { dryRun })) ctx.output.line(line);
      if (!dryRun) ctx.output.line(`Unlinked ${name}`);
    });
};
