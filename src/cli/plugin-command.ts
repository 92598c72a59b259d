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
import { printable, style } from "./output.js";

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
  const asked = options.allowScripts === true || loaded.settings.allowScripts;
  // The policy wins over the flag and the settings; saying so beats a silent "scripts were not run".
  const forbidden = asked ? (await import("../core/policy.js")).scriptsForbiddenBy() : undefined;
  if (forbidden) ctx.output.note(`Install scripts will not run: ${forbidden}.`);
  return {
    registry,
    home: ctx.roots.home,
    allowScripts: asked && forbidden === undefined,
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

/** What `withProgress` gives its work besides the line updater. */
export interface ProgressControl {
  /**
   * End the live display now and print the remaining progress as plain lines: a question is
   * about to be asked on the terminal, which the display's redrawing would overwrite.
   */
  releaseTerminal(): Promise<void>;
}

/**
 * Run `fn` with progress: a listr2 task on a TTY (its output line follows `update`), plain
 * `… line` notes on stderr otherwise, silent under `--json`.
 */
export async function withProgress<T>(ctx: CommandContext, title: string, fn: (update: ProgressFn, control: ProgressControl) => Promise<T>): Promise<T> {
  const plainControl: ProgressControl = { releaseTerminal: async () => undefined };
  if (ctx.output.json) return fn(() => undefined, plainControl);
  if (!ctx.output.interactive || !process.stderr.isTTY) {
    ctx.output.note(`${title}…`);
    return fn((line) => ctx.output.note(`  ${line}`), plainControl);
  }
  const { Listr } = await import("listr2");
  // The work runs beside the display: the task ends when the work does, or earlier when the work
  // releases the terminal; the work then goes on with plain lines.
  let released = false;
  let release: () => void = () => undefined;
  const releasedSignal = new Promise<void>((resolve) => {
    release = resolve;
  });
  let listDone: Promise<unknown> = Promise.resolve();
  let setOutput: ProgressFn = () => undefined;
  const control: ProgressControl = {
    releaseTerminal: async () => {
      if (released) return;
      released = true;
      release();
      await listDone.catch(() => undefined);
    },
  };
  const update: ProgressFn = (line) => (released ? ctx.output.note(`  ${line}`) : setOutput(line));
  let work: Promise<T> | undefined;
  const list = new Listr(
    [
      {
        title: printable(title),
        task: async (_ctx, task) => {
          // listr2 writes its labels itself: they pass through the sink's neutraliser here.
          setOutput = (line) => {
            task.output = printable(line);
          };
          work = fn(update, control);
          await Promise.race([work, releasedSignal]);
        },
      },
    ],
    { exitOnError: true, rendererOptions: { collapseErrors: true, showErrorMessage: false }, registerSignalListeners: false },
  );
  listDone = list.run();
  await listDone;
  return await work!;
}

const MARK: Record<string, string> = { ADD: "+", CHANGE: "~", REMOVE: "-", NOOP: "=", FAILED: "!" };

/** One line of a plan (npm or marketplace); `width` pads `what` so that the reasons of a list start in one column. */
export function planLine(ctx: CommandContext, op: string, what: string, reason: string, width = 0): string {
  const color = op === "ADD" ? "green" : op === "REMOVE" || op === "FAILED" ? "red" : op === "CHANGE" ? "yellow" : "dim";
  return `${style(ctx.output, color, `${MARK[op] ?? " "} ${op.padEnd(6)}`)} ${what.padEnd(width)}  ${style(ctx.output, "dim", reason)}`;
}

/** The human lines of a plan. */
export function renderPlan(ctx: CommandContext, plan: Plan, options: { dryRun: boolean }): string[] {
  const lines: string[] = [];
  if (options.dryRun) lines.push(style(ctx.output, "bold", `Plan (dry run: nothing was written)`));
  // The reasons start in one column, whatever the names' lengths.
  const width = Math.max(0, ...plan.actions.map((action) => action.name.length));
  for (const action of plan.actions) lines.push(planLine(ctx, action.type, action.name, action.reason, width));
  return lines;
}

/**
 * Plan a mutation from the current state and, unless `dryRun`, apply it in one transaction; the
 * plan and what was applied (nothing on a dry run).
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
    /**
     * Ask before committing plugins that add or change hook or extension modules (`--yes`
     * accepts); absent: nobody is asked (link: the user's own folder).
     */
    consent?: { yes?: boolean };
    /**
     * Not a dry run: plan only under the lock, where the applier plans again from the state it
     * reads there anyway (`link`, `unlink`: reading the state and every plugin's package.json a
     * first time, outside the lock, was most of what `unlink` cost beyond `disable`). A plan that
     * fails then fails inside the transaction, which leaves nothing behind (runMutation).
     */
    planUnderLockOnly?: boolean;
  },
): Promise<{ plan: Plan; applied: ApplyResult | undefined }> {
  if (options.validates && !options.dryRun) {
    // The checker's own start (a Node process, the loader, TypeBox) overlaps resolving,
    // fetching and extracting instead of following them; the applier hands it its roots.
    (await import("../validate/module-check.js")).warmUpChecker({ cwd: ctx.cwd });
  }
  const { mutationWorld } = await import("./plugin-world.js");
  const world = await mutationWorld(ctx);
  const settings = (await ctx.settings()).settings;
  const consent = options.consent;
  return withProgress(ctx, options.title, async (progress, control) => {
    if (!(options.planUnderLockOnly && !options.dryRun && !options.prepare)) {
      const { readStateForQuery } = await import("../plugins/mutation.js");
      const { loadInventory } = await import("../plugins/inventory.js");
      const inventory = await loadInventory(await readStateForQuery(world));
      await options.prepare?.(progress, inventory);
      const plan = options.planFor(inventory);
      if (options.dryRun) return { plan, applied: undefined };
    }
    const { applyPlan } = await import("../plugins/apply.js");
    const applied = await applyPlan(world, options.label, {
      client: options.client,
      cwd: ctx.cwd,
      builtins: settings.builtInTools,
      moduleTimeoutMs: settings.timeouts.importMs,
      replan: (fresh) => options.planFor(fresh),
      progress,
      ...(consent ? { approveExecutables: (await import("./consent.js")).executableApprover(ctx, { ...consent, beforePrompt: () => control.releaseTerminal() }) } : {}),
    });
    return { plan: applied.plan, applied };
  });
}

/**
 * Report a planned mutation: under `--json` its one document with `extra` (returns false: print
 * nothing more), else the plan's lines (returns true: the command may add its own closing lines).
 */
export async function reportPlanned(ctx: CommandContext, result: { plan: Plan; applied: ApplyResult | undefined }, dryRun: boolean, extra: Record<string, unknown> = {}): Promise<boolean> {
  if (ctx.output.json) {
    const { planJson } = await import("../plugins/plan.js");
    ctx.output.result({ ok: true, dryRun, ...planJson(result.plan), plugins: result.applied?.plugins ?? [], ...extra });
    return false;
  }
  for (const line of renderPlan(ctx, result.plan, { dryRun })) ctx.output.line(line);
  // Consent comes before code: a dry run imports none of the plugins it would install.
  if (dryRun && result.plan.actions.some((a) => a.type === "ADD" || a.type === "CHANGE")) {
    ctx.output.line(style(ctx.output, "dim", "No plugin code ran: tool modules are imported and checked only by the real run, after you allow what the plugins run."));
  }
  return true;
}

/**
 * What a dry run with --allow-scripts says of install scripts: the real run asks first, then runs
 * these (the plugins' own; their dependencies' are known only once npm resolved them). None ran.
 */
export async function printWouldRunScripts(ctx: CommandContext, scripts: readonly { pkg: string; event: string; command: string }[]): Promise<void> {
  if (ctx.output.json) return;
  const { describeInstallScripts } = await import("../components/consent.js");
  ctx.output.line("With --allow-scripts the real run asks first, then runs these install scripts (and any its dependencies declare); none ran now:");
  for (const line of describeInstallScripts(scripts)) ctx.output.line(`  ${line}`);
  if (scripts.length === 0) ctx.output.line("  (the plugins declare none)");
}
