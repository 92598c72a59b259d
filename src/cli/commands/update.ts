/**
 * `xcsh-tools update [name...]`: move plugins to the highest version their saved range allows,
 * or with `--latest` to the `latest` tag, rewriting the saved range as `npm install pkg@latest`
 * would (`^x.y.z`). Enabled state, features and settings are kept. Registry failures are errors.
 */
import type { Command } from "commander";
import { mutationWorld } from "../plugin-world.js";
import { npmClient, renderPlan, withProgress } from "../plugin-command.js";
import { ReportedFailure } from "../program.js";
import type { CommandModule } from "./index.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("update [name...]")
    .description("update plugins within their saved range (--latest: beyond it)")
    .option("--latest", "update to the latest version, rewriting the saved range")
    .option("--dry-run", "print the plan; write nothing")
    .option("--allow-scripts", "run the packages' install scripts (off by default)")
    .option("--scope <scope>", "marketplace plugins (name@marketplace): user (default) or project")
    .action(async (names: string[], flags: { latest?: boolean; dryRun?: boolean; allowScripts?: boolean; scope?: string }, command: Command) => {
      const ctx = getContext(command);
      const market = await import("./marketplace.js");
      if (await market.dispatchUpdate(ctx, names, flags)) return;
      const { parsePackageName } = await import("../../plugins/spec.js");
      const wanted = names.map(parsePackageName);
      const { readStateForQuery } = await import("../../plugins/mutation.js");
      const { loadInventory } = await import("../../plugins/inventory.js");
      const { checkOutdated } = await import("../../plugins/outdated.js");
      const { planUpdate, planJson } = await import("../../plugins/plan.js");
      const world = await mutationWorld(ctx);
      const client = await npmClient(ctx, { allowScripts: Boolean(flags.allowScripts) });
      const settings = (await ctx.settings()).settings;
      const latest = Boolean(flags.latest);
      const result = await withProgress(ctx, wanted.length ? `Updating ${wanted.join(", ")}` : "Updating plugins", async (progress) => {
        progress("Checking the registry");
        const inventory = await loadInventory(await readStateForQuery(world));
        const infos = await checkOutdated(wanted.length ? inventory.filter((p) => wanted.includes(p.name)) : inventory, client);
        const plan = planUpdate(inventory, infos, { names: wanted, latest });
        if (flags.dryRun) return { plan, applied: undefined };
        const { applyPlan } = await import("../../plugins/apply.js");
        const applied = await applyPlan(world, `update ${wanted.join(" ")}`.trim(), {
          client,
          cwd: ctx.cwd,
          builtins: settings.builtInTools,
          moduleTimeoutMs: settings.timeouts.importMs,
          replan: (fresh) => planUpdate(fresh, infos, { names: wanted, latest }),
          progress,
        });
        return { plan: applied.plan, applied };
      });
      const dryRun = Boolean(flags.dryRun);
      const mkt = names.length === 0 ? await market.updateAllMarketplacePlugins(ctx, flags) : undefined;
      if (ctx.output.json) {
        ctx.output.result({ ok: !mkt?.failed, dryRun, ...planJson(result.plan), plugins: result.applied?.plugins ?? [], ...mkt?.json });
        if (mkt?.failed) throw new ReportedFailure(1);
        return;
      }
      for (const line of renderPlan(ctx, result.plan, { dryRun })) ctx.output.line(line);
      const changed = result.applied?.plugins ?? [];
      if (!dryRun) ctx.output.line(changed.length ? `Updated ${changed.map((p) => `${p.name}@${p.version ?? "?"}`).join(", ")}` : "Everything is up to date.");
      for (const line of mkt?.lines ?? []) ctx.output.line(line);
      if (mkt?.failed) throw new ReportedFailure(1);
    });
};
