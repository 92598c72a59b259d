/**
 * The CLI's one way into the team-set engine (docs/design/team-sets.md (d)): the team world of a
 * command (the marketplace engine's context at the project root, npm's options, the consent
 * prompt) and `restoreProject`, the `npm ci` of plugins that `install` with no operand runs and
 * that every `--scope project` change runs after editing the declaration.
 */
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { projectRootOf, statOrUndefined, teamPaths } from "../core/paths.js";
import type { RestoreReport, TeamWorld } from "../teamset/index.js";
import { assertScopeAllowed } from "./project-scope.js";
import type { CommandContext } from "./context.js";
import { npmClient } from "./plugin-command.js";

/** What `install` with no operand (and a change that restores afterwards) accepts. */
export interface RestoreFlags {
  /** CI: the committed files must already describe the set (`ETEAM_FROZEN` otherwise). */
  frozen?: boolean;
  /** Accept what the set's plugins run without asking. */
  yes?: boolean;
  allowScripts?: boolean;
}

/**
 * The project root whose declared set `install` with no spec restores, or `EUSAGE` when there is
 * none (outside any project, or no xcsh-team.json and no .claude/settings.json at its root): only
 * `stat`, so nothing of an untrusted project is read.
 */
export function teamRootOf(ctx: CommandContext): string {
  const root = projectRootOf(ctx.cwd, ctx.roots);
  const paths = root === undefined ? undefined : teamPaths(root, ctx.roots.configDirName);
  if (paths === undefined || (statOrUndefined(paths.declaration) === undefined && statOrUndefined(paths.claudeSettings) === undefined)) {
    throw new XcshToolsError("EUSAGE", `install needs at least one spec: ${root ?? ctx.cwd} declares no plugin set (no xcsh-team.json, no .claude/settings.json)`, {
      hint: "Give a spec (xcsh-tools install @acme/xcsh-search), or declare the project's set: xcsh-tools install <spec> --scope project.",
      exitCode: 2,
    });
  }
  return root!;
}

/** The team world of a command: marketplace context and npm options of this user, consent as the flags say. */
export async function teamWorldOf(ctx: CommandContext, flags: RestoreFlags = {}): Promise<TeamWorld> {
  const { marketplaceContext } = await import("./commands/marketplace.js");
  const mctx = await marketplaceContext(ctx, { yes: Boolean(flags.yes) });
  const npm = await npmClient(ctx, { allowScripts: Boolean(flags.allowScripts) });
  return { ctx: mctx, npm };
}

/**
 * Restore the project's declared set on this machine and report it. Trust is asked (on a
 * terminal) or refused (`EUNTRUSTED_PROJECT`) before any project file is read.
 */
export async function restoreProject(ctx: CommandContext, flags: RestoreFlags = {}): Promise<RestoreReport> {
  const root = teamRootOf(ctx);
  await assertScopeAllowed(ctx, "project", "restore the project's plugin set");
  const { restoreTeamSet } = await import("../teamset/index.js");
  const world = await teamWorldOf(ctx, flags);
  return restoreTeamSet(root, { world, frozen: Boolean(flags.frozen), ...(ctx.roots.configDirName ? { configDirName: ctx.roots.configDirName } : {}) });
}

/** The human lines of a restore (`--json` prints the report as it is). */
export function restoreLines(root: string, report: RestoreReport): string[] {
  const rel = (file: string) => path.relative(root, file) || file;
  const lines: string[] = [];
  if (report.lockMerged) lines.push("Merged xcsh-team.lock.json (it had conflict markers).");
  const changed = [...report.npmInstalled, ...report.installed];
  if (changed.length > 0) lines.push(`Installed ${changed.join(", ")}`);
  if (report.resolved.length > 0) lines.push(`Locked ${report.resolved.join(", ")}`);
  if (report.removed.length > 0) lines.push(`Removed ${report.removed.join(", ")} (no restored project declares them any more)`);
  for (const line of report.versionMoves) lines.push(`note: ${line}`);
  if (report.undeclared.length > 0) lines.push(`warning: WTEAM_UNDECLARED: the project registry also lists ${report.undeclared.join(", ")}, which the set does not declare (kept as they were)`);
  if (report.written.length > 0) lines.push(`Wrote ${report.written.map(rel).join(", ")}`);
  lines.push(changed.length > 0 || report.removed.length > 0 || report.written.length > 0 ? "Restart xcsh (or /reload-plugins) to load the set." : "Up to date (xcsh-team.lock.json).");
  return lines;
}
