/**
 * What a restore prints: the human lines and the `--json` result of `install` with no spec. Its own
 * module, light to load, so that the seed-satisfied restore (teamset/fast-seed.ts, answered from
 * cli/program.ts before commander) prints through the very same code as the engine's path.
 */
import path from "node:path";
import type { OptOut, RestoreReport } from "../teamset/restore.js";
import { USER_CONFIG_HINT, describeUserConfigUse } from "../validate/host-differences.js";

/** Who switched a declared plugin off, as `list` says it: `you (.xcsh/team.local.json)`, `team (xcsh-team.json)`. */
export function decidedBy(root: string, optOut: Pick<OptOut, "by" | "file">): string {
  const who = optOut.by === "local" || optOut.by === "claude-local" || optOut.by === "user" ? "you" : optOut.by === "claude" ? "team (Claude Code)" : "team";
  return `${who} (${path.relative(root, optOut.file) || optOut.file})`;
}

/** The human lines of a restore (`--json` prints the report as it is). */
export function restoreLines(root: string, report: RestoreReport): string[] {
  const rel = (file: string) => path.relative(root, file) || file;
  const lines: string[] = [];
  const would = report.dryRun ? "Would " : "";
  if (report.lockMerged) lines.push(report.dryRun ? "Would merge xcsh-team.lock.json (it has conflict markers)." : "Merged xcsh-team.lock.json (it had conflict markers).");
  const changed = [...report.npmInstalled, ...report.installed];
  if (changed.length > 0) lines.push(`${would}${would ? "install" : "Installed"} ${changed.join(", ")}`);
  if (report.fromSeeds && report.fromSeeds.length > 0) lines.push(`Used from the seed, in place: ${report.fromSeeds.join(", ")}`);
  if (report.resolved.length > 0) lines.push(`${would}${would ? "lock" : "Locked"} ${report.resolved.join(", ")}`);
  if (report.removed.length > 0) lines.push(`Removed ${report.removed.join(", ")} (no restored project declares them any more)`);
  for (const line of report.versionMoves) lines.push(`note: ${line}`);
  if (report.dryRun) {
    for (const plugin of report.wouldRun) {
      lines.push(`${plugin.id} ${plugin.version} would run${plugin.source === "npm" ? " (hook and extension modules)" : ""}:`);
      for (const line of plugin.lines) lines.push(`  ${line}`);
    }
  }
  for (const optOut of report.optOuts) lines.push(`${optOut.plugin}: off — ${decidedBy(root, optOut)}`);
  if (report.undeclared.length > 0) lines.push(`warning: WTEAM_UNDECLARED: the project registry also lists ${report.undeclared.join(", ")}, which the set does not declare (kept as they were)`);
  if (report.written.length > 0) lines.push(`Wrote ${report.written.map(rel).join(", ")}`);
  for (const s of report.secretsNeeded) lines.push(`needs a secret: xcsh-tools config set ${s.plugin} ${s.key} <value>${s.env ? `  (or ${s.env})` : ""}`);
  for (const u of report.userConfigUnread ?? []) lines.push(`warning: WHOST_USER_CONFIG: ${u.plugin} ${describeUserConfigUse(u.use)}, which the xcsh host neither asks for nor fills. ${USER_CONFIG_HINT}`);
  if (report.dryRun) lines.push(changed.length > 0 || report.lockChanged || report.lockMerged ? "Dry run: nothing was asked, written or run." : "Up to date (xcsh-team.lock.json); dry run: nothing was written.");
  else lines.push(changed.length > 0 || report.removed.length > 0 || report.written.length > 0 ? "Restart xcsh (or /reload-plugins) to load the set." : "Up to date (xcsh-team.lock.json).");
  return lines;
}

/** `install --json` with no spec: the report, with whether anything was installed or written on this machine (a dry run: would be). */
export function restoreResult(report: RestoreReport): Record<string, unknown> {
  return { ok: true, changed: report.installed.length + report.npmInstalled.length + report.written.length > 0 || (report.dryRun && report.lockChanged), ...report };
}
