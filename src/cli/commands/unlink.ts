/**
 * `xcsh-tools unlink <name>`: remove a link and put back exactly what it replaced — the
 * previous dependency spec and version and its record — or nothing when nothing was there.
 */
import type { Command } from "commander";
import { npmClient, planAndApply, reportPlanned } from "../plugin-command.js";
import type { CommandContext, CommandModule } from "../context.js";

const OPTIONS = [{ flags: "--dry-run", description: "print the plan; write nothing" }];

async function unlinkPlugin(ctx: CommandContext, raw: string, flags: { dryRun?: boolean }): Promise<void> {
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
}

export const register: CommandModule["register"] = (program, getContext) => {
  const command = program.command("unlink <name>").description("remove a linked plugin and restore what was installed before the link");
  for (const { flags, description } of OPTIONS) command.option(flags, description);
  command.action(async (raw: string, flags: { dryRun?: boolean }, invoked: Command) => unlinkPlugin(getContext(invoked), raw, flags));
};

/** `unlink <name> [--dry-run]` without commander (program.ts `plainRun`): typed in every round of an author's loop. */
export const plain: CommandModule["plain"] = [{ path: ["unlink"], options: OPTIONS, operands: 1, run: (ctx, [raw], flags) => unlinkPlugin(ctx, raw!, flags) }];
