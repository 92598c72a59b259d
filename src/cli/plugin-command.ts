/**
 * What the npm plugin commands share: the npm client options (the user's .npmrc, our settings,
 * `--registry`), the progress display (listr2 on a TTY, plain stderr lines otherwise, nothing
 * under `--json`), and the rendering of plans. Heavy modules (listr2) load only when used.
 */
import type { ApplyResult } from "../plugins/apply.js";
import type { InstalledPlugin } from "../plugins/inventory.js";
import type { Plan } from "../plugins/plan.js";
import type { NpmClientOptions } from "../plugins/npm-client.js";
import { xcshPaths } from "../core/paths.js";
import type { CommandContext } from "./context.js";
import { style } from "./output.js";

/** The npm client options for this command. */
export async function npmClient(ctx: CommandContext, options: { allowScripts?: boolean } = {}): Promise<NpmClientOptions> {
  const { loadRegistryOptions } = await import("../plugins/npmrc.js");
  const loaded = await ctx.settings();
  const { options: registry } = await loadRegistryOptions({
    home: ctx.roots.home,
    env: ctx.env,
    pluginsDir: xcshPaths(ctx.roots).plugins,
    settingsRegistry: loaded.settings.registry,
    flagRegistry: ctx.flags.registry,
  });
  return {
    registry,
    home: ctx.roots.home,
    allowScripts: options.allowScripts === true || loaded.settings.allowScripts,
    fetchTimeoutMs: loaded.settings.timeouts.fetchMs,
    tarballLimits: {
      unpackedBytes: loaded.settings.limits.tarballUnpackedBytes,
      entries: loaded.settings.limits.tarballEntries,
      pathLength: loaded.settings.limits.tarballPathLength,
    },
    signal: ctx.signal,
    packumentCache: new Map(),
  };
}

/** A progress reporter: `update(line)` while `fn` runs. */
export type ProgressFn = (line: string) => void;

/**
 * Run `fn` with progress: a listr2 task on a TTY (its output line follows `update`), plain
 * `… line` notes on stderr otherwise, silent under `--json`.
 */
export async function withProgress<T>(ctx: CommandContext, title: string, fn: (update: ProgressFn) => Promise<T>): Promise<T> {
  if (ctx.output.json) return fn(() => undefined);
  if (!ctx.output.interactive || !process.stderr.isTTY) {
    ctx.output.note(`${title}…`);
    return fn((line) => ctx.output.note(`  ${line}`));
  }
  const { Listr } = await import("listr2");
  let result: T | undefined;
  const list = new Listr(
    [
      {
        title,
        task: async (_ctx, task) => {
          result = await fn((line) => {
            task.output = line;
          });
        },
      },
    ],
    { exitOnError: true, rendererOptions: { collapseErrors: true, showErrorMessage: false }, registerSignalListeners: false },
  );
  await list.run();
  return result as T;
}

const MARK: Record<string, string> = { ADD: "+", CHANGE: "~", REMOVE: "-", NOOP: "=" };

/** The human lines of a plan. */
export function renderPlan(ctx: CommandContext, plan: Plan, options: { dryRun: boolean }): string[] {
  const lines: string[] = [];
  if (options.dryRun) lines.push(style(ctx.output, "bold", `Plan (dry run: nothing was written)`));
  // The reasons start in one column, whatever the names' lengths.
  const width = Math.max(0, ...plan.actions.map((action) => action.name.length));
  for (const action of plan.actions) {
    const color = action.type === "ADD" ? "green" : action.type === "REMOVE" ? "red" : action.type === "CHANGE" ? "yellow" : "dim";
    lines.push(`${style(ctx.output, color, `${MARK[action.type]} ${action.type.padEnd(6)}`)} ${action.name.padEnd(width)}  ${style(ctx.output, "dim", action.reason)}`);
  }
  return lines;
}

/** A planned mutation's outcome: the plan, and what was applied (none on a dry run). */
export interface PlannedMutation {
  plan: Plan;
  applied: ApplyResult | undefined;
}

/**
 * Plan a mutation from the current state and, unless `dryRun`, apply it in one transaction.
 * `prepare` does the slow work once (registry look-ups) before the first plan; `planFor` must be
 * pure, because the applier calls it again on the state it reads under the lock.
 */
export async function planAndApply(
  ctx: CommandContext,
  options: {
    title: string;
    label: string;
    client: NpmClientOptions;
    dryRun: boolean;
    /** The mutation may bring plugins to validate: start the module checker now (see below). */
    validates?: boolean;
    prepare?: (progress: ProgressFn, inventory: InstalledPlugin[]) => Promise<void>;
    planFor: (inventory: InstalledPlugin[]) => Plan;
  },
): Promise<PlannedMutation> {
  if (options.validates && !options.dryRun) {
    // The checker's own start (a Node process, the loader, TypeBox) overlaps resolving,
    // fetching and extracting instead of following them; the applier hands it its roots.
    (await import("../validate/module-check.js")).warmUpChecker({ cwd: ctx.cwd });
  }
  const { mutationWorld } = await import("./plugin-world.js");
  const { readStateForQuery } = await import("../plugins/mutation.js");
  const { loadInventory } = await import("../plugins/inventory.js");
  const world = await mutationWorld(ctx);
  const settings = (await ctx.settings()).settings;
  return withProgress(ctx, options.title, async (progress) => {
    const inventory = await loadInventory(await readStateForQuery(world));
    await options.prepare?.(progress, inventory);
    const plan = options.planFor(inventory);
    if (options.dryRun) return { plan, applied: undefined };
    const { applyPlan } = await import("../plugins/apply.js");
    const applied = await applyPlan(world, options.label, {
      client: options.client,
      cwd: ctx.cwd,
      builtins: settings.builtInTools,
      moduleTimeoutMs: settings.timeouts.importMs,
      replan: (fresh) => options.planFor(fresh),
      progress,
    });
    return { plan: applied.plan, applied };
  });
}

/**
 * Report a planned mutation: under `--json` its one document (returns false: print nothing
 * more), else the plan's lines (returns true: the command may add its own closing lines).
 */
export async function reportPlanned(ctx: CommandContext, result: PlannedMutation, dryRun: boolean): Promise<boolean> {
  if (ctx.output.json) {
    const { planJson } = await import("../plugins/plan.js");
    ctx.output.result({ ok: true, dryRun, ...planJson(result.plan), plugins: result.applied?.plugins ?? [] });
    return false;
  }
  for (const line of renderPlan(ctx, result.plan, { dryRun })) ctx.output.line(line);
  return true;
}
