/**
 * `xcsh-tools update [name...]`: move plugins to the highest version their saved range allows,
 * or with `--latest` to the `latest` tag, rewriting the saved range as `npm install pkg@latest`
 * would (`^x.y.z`). Enabled state, features and settings are kept. Registry failures are errors.
 */
import type { Command } from "commander";
import { npmClient, planAndApply, planLine, printWouldRunScripts, renderPlan, withProgress } from "../plugin-command.js";
import type { NpmClientOptions } from "../../plugins/npm-client.js";
import { ReportedFailure, usageError } from "../command-errors.js";
import type { CommandContext, CommandModule } from "../context.js";
import { style } from "../output.js";
import type { TeamUpdateEntry, TeamUpdatePlan } from "../../teamset/index.js";
import { shortState } from "./outdated.js";
import type { Plan, VersionInfo } from "../../plugins/plan.js";

/**
 * The one line that ends `update`, said of everything above it (npm and marketplace plugins): what
 * was updated; else "Everything is up to date" only when every plugin was checked and none failed.
 * (It once followed the npm lines alone: "Everything is up to date." above a marketplace plugin
 * that was just updated, or that failed, or under plugins no registry can tell about.)
 */
function closingLine(plan: Plan, infos: readonly VersionInfo[], npmChanged: readonly string[], mkt: { failed: boolean; changed: string[] } | undefined): string {
  const changed = [...npmChanged, ...(mkt?.changed ?? [])];
  if (changed.length > 0) return `Updated ${changed.join(", ")}${mkt?.failed ? "; some plugins failed (see above)" : ""}`;
  if (mkt?.failed) return "Nothing was updated: see the failures above.";
  // Linked plugins and plugins from a folder, a tarball or a URL have no registry to ask.
  const unchecked = plan.actions.filter((a) => a.type === "NOOP" && (infos.find((i) => i.name === a.name)?.wanted ?? null) === null).map((a) => a.name);
  if (unchecked.length > 0) return `Nothing was updated; ${unchecked.join(", ")} ${unchecked.length === 1 ? "has" : "have"} no registry to check (see above).`;
  return "Everything is up to date.";
}

/**
 * The commit of each git-sourced plugin, from npm's lockfile (`resolved`: `git+…#<sha>`): a
 * re-resolve that found no new commit changed nothing, and must not be reported as an update.
 */
async function gitCommits(ctx: CommandContext): Promise<Map<string, string>> {
  const [{ readJsonOrUndefined }, { pluginsPaths }] = await Promise.all([import("../../manifest/json-file.js"), import("../../plugins/state.js")]);
  const lock = readJsonOrUndefined(pluginsPaths(ctx.roots).packageLock) as { packages?: Record<string, { resolved?: unknown }> } | undefined;
  const commits = new Map<string, string>();
  for (const [key, entry] of Object.entries(lock?.packages ?? {})) {
    const sha = typeof entry?.resolved === "string" ? /^git.*#([0-9a-f]{40,64})$/.exec(entry.resolved)?.[1] : undefined;
    if (sha && key.startsWith("node_modules/")) commits.set(key.slice("node_modules/".length), sha);
  }
  return commits;
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("update [name...]")
    .description("update plugins within their saved range (--latest: beyond it)")
    .option("--latest", "update to the latest version, rewriting the saved range")
    .option("--dry-run", "print the plan; write nothing")
    .option("--allow-scripts", "run the packages' install scripts (off by default)")
    .option("--scope <scope>", "marketplace plugins (name@marketplace): user (default) or project")
    .option("-y, --yes", "accept new or changed things the plugins run without asking (marketplace: hooks, MCP/LSP servers, bin/; npm: hook and extension modules, and install scripts with --allow-scripts)")
    .action(async (names: string[], flags: { latest?: boolean; dryRun?: boolean; allowScripts?: boolean; scope?: string; yes?: boolean }, command: Command) => {
      const ctx = getContext(command);
      // A project that declares a set: --scope project moves its lock (without a set, project-scope installs as before);
      // without --scope its marketplace plugins are left to the lock (the user's are updated, as everywhere).
      const setRoot = (await import("../team-restore.js")).declaredRootOf(ctx);
      if (flags.scope === "project" && setRoot !== undefined) return updateProjectSet(ctx, setRoot, names, flags);
      if (flags.scope === undefined && setRoot !== undefined && names.length > 0) await refuseSetPlugins(ctx, setRoot, names);
      const market = await import("./marketplace.js");
      if (await market.dispatchChange(ctx, "update", names, flags)) return;
      const { parsePackageName } = await import("../../plugins/spec.js");
      const wanted = names.map(parsePackageName);
      await (await import("../seeded.js")).refuseSeeded(ctx, wanted, "update");
      const { checkOutdated } = await import("../../plugins/outdated.js");
      const { planUpdate, planJson } = await import("../../plugins/plan.js");
      const client = await npmClient(ctx, { allowScripts: Boolean(flags.allowScripts) });
      const latest = Boolean(flags.latest);
      let infos: Awaited<ReturnType<typeof checkOutdated>> = [];
      let commitsBefore = new Map<string, string>();
      const result = await planAndApply(ctx, {
        title: wanted.length ? `Updating ${wanted.join(", ")}` : "Updating plugins",
        validates: true,
        label: `update ${wanted.join(" ")}`.trim(),
        client,
        dryRun: Boolean(flags.dryRun),
        prepare: async (progress, inventory) => {
          progress("Checking for new versions");
          const targets = wanted.length ? inventory.filter((p) => wanted.includes(p.name)) : inventory;
          // A plugin the user installed from a local repository (git+file://…) is fetched again
          // from it: npm's git may read the local disk, as at its install (and only then).
          const { isLocalGitEntry } = await import("../../plugins/state.js");
          if (targets.some((p) => isLocalGitEntry(p.record))) client.allowLocalGit = true;
          // The organization policy of each plugin's recorded source, before any registry or git request.
          (await import("../../plugins/resolve.js")).assertInstalledAllowed(targets, client);
          infos = await checkOutdated(targets, client);
          commitsBefore = await gitCommits(ctx);
        },
        planFor: (inventory) => planUpdate(inventory, infos, { names: wanted, latest }),
        consent: { yes: Boolean(flags.yes) },
      });
      const dryRun = Boolean(flags.dryRun);
      // A dry run runs no script: it names those of each new version the real run would, after asking.
      const wouldRun = dryRun && client.allowScripts ? await updateScripts(result.plan, client) : undefined;
      const mkt = names.length === 0 ? await market.updateAllMarketplacePlugins(ctx, { ...flags, userOnly: setRoot !== undefined }) : undefined;
      if (ctx.output.json) {
        ctx.output.result({ ok: !mkt?.failed, dryRun, ...planJson(result.plan), plugins: result.applied?.plugins ?? [], ...(wouldRun ? { wouldRunScripts: wouldRun } : {}), ...mkt?.json });
        if (mkt?.failed) throw new ReportedFailure(1);
        return;
      }
      for (const line of renderPlan(ctx, result.plan, { dryRun })) ctx.output.line(line);
      if (wouldRun) await printWouldRunScripts(ctx, wouldRun);
      for (const line of mkt?.lines ?? []) ctx.output.line(line);
      if (setRoot !== undefined && names.length === 0) ctx.output.line(style(ctx.output, "dim", "The project's set (xcsh-team.lock.json) is not updated here: xcsh-tools update --scope project"));
      if (!dryRun) {
        const commits = await gitCommits(ctx);
        // A git plugin is updated when its commit moved (shown), not whenever it was fetched again.
        const npmChanged = (result.applied?.plugins ?? []).flatMap((p) => {
          const [from, to] = [commitsBefore.get(p.name), commits.get(p.name)];
          if (to !== undefined && from === to) return [];
          return [`${p.name}@${p.version ?? "?"}${to !== undefined ? ` (commit ${to.slice(0, 7)})` : ""}`];
        });
        ctx.output.line(closingLine(result.plan, infos, npmChanged, mkt));
      }
      if (mkt?.failed) throw new ReportedFailure(1);
    });
};

/** The install scripts of the registry versions an update plan moves to (a git plugin's are known only once fetched). */
async function updateScripts(plan: Plan, client: NpmClientOptions) {
  const { registryInstallScripts } = await import("../../plugins/install-scripts.js");
  const moving = plan.actions.filter((a) => a.type === "CHANGE" && a.to?.source === "registry" && a.to.version !== undefined);
  return (await Promise.all(moving.map((a) => registryInstallScripts(a.name, a.to!.version!, client)))).flat();
}

/**
 * `EUSAGE` for a named marketplace plugin the project's set declares, without `--scope`: its
 * project entry is the lock's to decide (the marketplace engine does not even know a declared
 * marketplace), so say which command moves it rather than fail on it or move it off the lock. An
 * untrusted project's set is not read; a declaration that does not load is `install`'s to report.
 */
async function refuseSetPlugins(ctx: CommandContext, root: string, names: readonly string[]): Promise<void> {
  if (!(await ctx.projectTrusted())) return;
  const { loadTeamSet } = await import("../../teamset/index.js");
  let declared: ReadonlySet<string>;
  try {
    const set = loadTeamSet(root, ctx.roots.configDirName ? { configDirName: ctx.roots.configDirName } : {});
    declared = new Set([...(set?.plugins.values() ?? [])].filter((p) => p.kind === "marketplace").map((p) => p.key));
  } catch {
    return;
  }
  const ours = names.filter((name) => declared.has(name));
  if (ours.length === 0) return;
  throw usageError(`${ours.join(", ")} ${ours.length === 1 ? "is" : "are"} declared by the project's set (xcsh-team.json), whose lock decides ${ours.length === 1 ? "its" : "their"} version here`, `Move the lock: xcsh-tools update --scope project ${ours.join(" ")}. Your own copy (if you installed one): xcsh-tools update ${ours.join(" ")} --scope user.`);
}

/** One line per entry of the plan: old → new, or unchanged; a range `--latest` rewrote says so. */
function teamPlanLines(ctx: CommandContext, plan: TeamUpdatePlan): string[] {
  const what = (e: TeamUpdateEntry) => `${e.section === "marketplaces" ? "marketplace " : ""}${e.key}`;
  const width = Math.max(0, ...plan.entries.map((e) => what(e).length));
  return plan.entries.map((e) => {
    const moved = e.from !== e.to;
    const range = e.range ? `; xcsh-team.json ${e.range.from} → ${e.range.to}` : "";
    const shown = (state: string | undefined) => shortState(state) ?? "(not locked)";
    return planLine(ctx, moved || e.range ? "CHANGE" : "NOOP", what(e), moved ? `${shown(e.from)} → ${shown(e.to)}${range}` : `${shown(e.to)} (newest allowed)${range}`, width);
  });
}

/**
 * `update --scope project [name...]` in a project that declares a set: plan the new lock (and,
 * with --latest, ranges) in scratch; `--dry-run` prints it, otherwise the restore applies it with
 * its consent and in one transaction (cli/team-restore.ts).
 */
async function updateProjectSet(ctx: CommandContext, root: string, names: string[], flags: { latest?: boolean; dryRun?: boolean; allowScripts?: boolean; yes?: boolean }): Promise<void> {
  const { assertScopeAllowed } = await import("../project-scope.js");
  await assertScopeAllowed(ctx, "project", "update the project's plugin set (--scope project)");
  const team = await import("../team-restore.js");
  const { planTeamUpdate } = await import("../../teamset/index.js");
  const world = await team.teamWorldOf(ctx, flags);
  const plan = await withProgress(ctx, "Checking the project's set", () =>
    planTeamUpdate(root, { world, names, latest: Boolean(flags.latest), ...(ctx.roots.configDirName ? { configDirName: ctx.roots.configDirName } : {}) }),
  );
  const dryRun = Boolean(flags.dryRun);
  const report = dryRun ? undefined : await team.restoreProject(ctx, flags, { set: plan.set, lock: plan.lock, ...(plan.declaration !== undefined ? { declaration: plan.declaration } : {}) });
  if (ctx.output.json) {
    ctx.output.result({ ok: true, dryRun, entries: plan.entries, declarationChanged: plan.declaration !== undefined, ...(report ?? {}) });
    return;
  }
  if (dryRun) ctx.output.line(style(ctx.output, "bold", "Plan (dry run: nothing was written)"));
  for (const line of teamPlanLines(ctx, plan)) ctx.output.line(line);
  for (const line of report ? team.restoreLines(root, report) : []) ctx.output.line(line);
}
