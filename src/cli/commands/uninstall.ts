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
    .option("--scope <scope>", "user (default) or project: in a repository, taken out of xcsh-team.json and restored; elsewhere marketplace plugins only")
    .option("-y, --yes", "accept what the rest of the project's set runs without asking (a project change restores the set)")
    .action(async (names: string[], flags: { dryRun?: boolean; scope?: string; yes?: boolean }, command: Command) => {
      const ctx = getContext(command);
      if (flags.scope === "project") {
        const team = await import("../team-write.js");
        const root = team.teamWriteRoot(ctx);
        if (root !== undefined) {
          const keys = await Promise.all(names.map(team.setKeyOf));
          const { splitPluginId } = await import("../../manifest/installed-plugins.js");
          await team.changeDeclaration(ctx, root, "uninstall plugins from the project (--scope project)", flags, () => keys.map((key) => ({ op: "remove-plugin" as const, key })), { removed: keys.filter((k) => splitPluginId(k) !== undefined && !k.startsWith("@")) });
          // The host loads npm plugins per user: taking one out of the set does not remove it from this user's tree.
          const npm = keys.filter((k) => splitPluginId(k) === undefined || k.startsWith("@"));
          if (npm.length > 0 && !flags.dryRun && !ctx.output.json) ctx.output.note(`note: ${npm.join(", ")} ${npm.length === 1 ? "stays" : "stay"} installed for you (npm plugins load per user); remove ${npm.length === 1 ? "it" : "them"} with xcsh-tools uninstall ${npm.join(" ")}`);
          return;
        }
      }
      if (await (await import("./marketplace.js")).dispatchChange(ctx, "uninstall", names, flags)) return;
      const { parsePackageName } = await import("../../plugins/spec.js");
      const wanted = names.map(parsePackageName);
      await (await import("../seeded.js")).refuseSeeded(ctx, wanted, "uninstall");
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
