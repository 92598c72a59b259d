/**
 * What `enable`, `disable`, `features` and `config` share: `--scope`, running a state planner
 * through the transactional path (or only planning it, for `--dry-run`), and reporting the plan —
 * the same plan lines as install/uninstall, or one JSON document. Engines load lazily.
 */
import type { AppliedStateChange, StatePlanner, StateScope, StateView } from "../plugins/state-change.js";
import type { CommandContext } from "./context.js";
import { renderPlan } from "./plugin-command.js";
import { assertScopeAllowed, projectNotLoaded, type ProjectNotLoaded } from "./project-scope.js";
import { usageError } from "./command-errors.js";

/** `--scope user|project` (default user). */
export function stateScope(value: string | undefined): StateScope {
  if (value === undefined || value === "user") return "user";
  if (value === "project") return "project";
  throw usageError(`--scope must be user or project, not "${value}"`, "user: your runtime lock (~/.xcsh/plugins); project: <cwd>/.xcsh/plugin-overrides.json.");
}

/**
 * `setScopeOf` (team-write.ts) of a change's `--scope`; the set's writer (the team-set engine,
 * the restore and its output) is loaded only for a scope that may send the change there.
 */
export async function setScope(ctx: CommandContext, scope: string | undefined): Promise<ReturnType<typeof import("./team-write.js").setScopeOf>> {
  return scope === "project" || scope === "local" ? (await import("./team-write.js")).setScopeOf(ctx, scope) : undefined;
}

/** The read-only view (queries). */
export async function readStateView(ctx: CommandContext): Promise<StateView> {
  const { mutationWorld } = await import("./plugin-world.js");
  const { loadStateView } = await import("../plugins/state-change.js");
  return loadStateView(await mutationWorld(ctx), ctx.cwd, { projectTrusted: await ctx.projectTrusted() });
}

/**
 * Plan with `planner` and apply it in one transaction unless `dryRun`. A project-scope change in
 * an untrusted project is `EUNTRUSTED_PROJECT` before anything is read (the planners refuse too).
 */
export async function runStateChange(ctx: CommandContext, label: string, planner: StatePlanner, dryRun: boolean, scope: StateScope = "user"): Promise<AppliedStateChange> {
  await assertScopeAllowed(ctx, scope, `run \`${label} --scope project\``);
  const { mutationWorld } = await import("./plugin-world.js");
  const { applyStateChange } = await import("../plugins/state-change.js");
  return applyStateChange(await mutationWorld(ctx), label, ctx.cwd, planner, { dryRun, projectTrusted: await ctx.projectTrusted() });
}

/**
 * Report a state change: under `--json` one document (`{ok, dryRun, scope, command, actions,
 * written, ...extra}`), else the plan's lines and, when something was written, `done`.
 */
export async function reportStateChange(ctx: CommandContext, applied: AppliedStateChange, options: { dryRun: boolean; scope: StateScope; done: string; extra?: Record<string, unknown> }): Promise<void> {
  const { planJson } = await import("../plugins/plan.js");
  const changed = applied.change.plan.actions.some((a) => a.type !== "NOOP");
  if (ctx.output.json) {
    ctx.output.result({ ok: true, dryRun: options.dryRun, scope: options.scope, ...planJson(applied.change.plan), written: applied.written, ...options.extra });
    return;
  }
  for (const line of renderPlan(ctx, applied.change.plan, { dryRun: options.dryRun })) ctx.output.line(line);
  if (!options.dryRun) ctx.output.line(changed ? options.done : "Nothing to do.");
}

/** The project's overrides left unread in `view` (untrusted project), for the report. */
export function overridesNotLoaded(ctx: CommandContext, view: StateView): ProjectNotLoaded | undefined {
  return view.overrides.untrusted?.present ? projectNotLoaded(ctx, [view.overrides.file]) : undefined;
}
