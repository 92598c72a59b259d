/**
 * `xcsh-tools unlink <name>`: remove a link and put back exactly what it replaced — the
 * previous dependency spec and version and its record — or nothing when nothing was there.
 */
import type { Command } from "commander";
import { npmClient, planAndApply, reportPlanned } from "../plugin-command.js";
import type { CommandModule } from "../context.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("unlink <name>")
    .description("remove a linked plugin and restore what was installed before the link")
    .option("--dry-run", "print the plan; write nothing")
    .action(async (raw: string, flags: { dryRun?: boolean }, command: Command) => {
      const ctx = getContext(command);
      const { parsePackageName } = await import("../../plugins/spec.js");
      const name = parsePackageName(raw);
      const { planUnlink } = await import("../../plugins/plan.js");
      const dryRun = Boolean(flags.dryRun);
      const result = await planAndApply(ctx, {
        title: `Unlinking ${name}`,
        label: `unlink ${name}`,
        client: await npmClient(ctx),
        dryRun,
        planUnderLockOnly: true,
        planFor: (inventory) => planUnlink(inventory, name),
      });
      if (!(await reportPlanned(ctx, result, dryRun))) return;
      if (!dryRun) ctx.output.line(`Unlinked ${name}`);
    });
};
