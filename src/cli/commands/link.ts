/**
 * `xcsh-tools link <path>`: make a local plugin folder an installed plugin, live (a symlink in
 * node_modules, `"name": "file:<abs path>"` in dependencies so the host finds it: the
 * host's own link is not listed in `dependencies` and is not found). What it replaces is remembered; `unlink` puts it back.
 */
import path from "node:path";
import { readTextBounded } from "../../core/bounded-read.js";
import type { Command } from "commander";
import { XcshToolsError } from "../../core/errors.js";
import { resolveUserPath, xcshPaths } from "../../core/paths.js";
import { npmClient, planAndApply, reportPlanned } from "../plugin-command.js";
import type { CommandContext, CommandModule } from "../context.js";

const OPTIONS = [{ flags: "--dry-run", description: "print the plan; write nothing" }];

async function linkFolder(ctx: CommandContext, target: string, flags: { dryRun?: boolean }): Promise<void> {
  const folder = resolveUserPath(target, ctx.cwd, ctx.roots.home);
  // A linked folder loads at boot like an installed one: the organization policy judges it first.
  (await import("../../core/policy.js")).assertSourcesAllowed([{ source: { kind: "folder", path: folder }, what: "plugin", subject: `link ${folder}` }]);
  const { readFile, realpath } = await import("node:fs/promises");
  const { validatePluginPackageJson } = await import("../../manifest/plugin-manifest.js");
  const { declaredScripts } = await import("../../plugins/inventory.js");
  let abs: string;
  let pkg: unknown;
  try {
    abs = await realpath(folder);
    pkg = JSON.parse(readTextBounded(path.join(abs, "package.json")) ?? "");
  } catch (error) {
    throw new XcshToolsError("ENOT_FOUND", `${folder} is not a plugin folder: ${(error as Error).message}`, { hint: "Give the folder that holds the plugin's package.json." });
  }
  const dryRun = Boolean(flags.dryRun);
  // The module checker starts now, so that its Node start overlaps all that comes before the
  // import (reading the state under the lock, the plan, the files written by hand); none for a
  // dry run, none when `link` checked this folder before and it is unchanged (its records answer).
  const { linkRecorded } = await import("../../boot/prevalidated.js");
  if (!dryRun && !(await linkRecorded(abs, xcshPaths(ctx.roots).bootModules))) (await import("../../validate/module-check.js")).warmUpChecker({ cwd: ctx.cwd });
  const checked = validatePluginPackageJson(pkg);
  if (!checked.ok) throw new XcshToolsError("EPLUGIN_INVALID", `${abs}/package.json: ${checked.issues[0]!.message}`, { hint: checked.issues[0]!.hint ?? "Run `xcsh-tools validate` on the folder.", exitCode: 2 });
  const link = { name: checked.value.pkg.name, version: checked.value.pkg.version, target: abs, scripts: declaredScripts(pkg), manifest: checked.value.manifest };
  const { planLink } = await import("../../plugins/plan.js");
  const result = await planAndApply(ctx, {
    title: `Linking ${link.name} → ${abs}`,
    label: `link ${abs}`,
    client: await npmClient(ctx),
    dryRun,
    planUnderLockOnly: true,
    planFor: (inventory) => planLink(inventory, link),
  });
  // Tool names the new plugins share with built-ins or other tools: said now, not at a session.
  const conflicts = await (await import("../tool-conflicts.js")).toolConflictsAfter(ctx, (result.applied?.plugins ?? []).map((p) => p.name));
  if (!(await reportPlanned(ctx, result, dryRun, conflicts.json))) return;
  if (!dryRun) ctx.output.line(`Linked ${link.name} → ${abs}`);
  conflicts.warn();
}

export const register: CommandModule["register"] = (program, getContext) => {
  const command = program.command("link <path>").description("use a local plugin folder as an installed plugin (live: edits apply at the next start)");
  for (const { flags, description } of OPTIONS) command.option(flags, description);
  command.action(async (target: string, flags: { dryRun?: boolean }, invoked: Command) => linkFolder(getContext(invoked), target, flags));
};

/** `link <path> [--dry-run]` without commander (program.ts `plainRun`): typed in every round of an author's loop. */
export const plain: CommandModule["plain"] = [{ path: ["link"], options: OPTIONS, operands: 1, run: (ctx, [target], flags) => linkFolder(ctx, target!, flags) }];
