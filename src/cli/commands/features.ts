/**
 * `xcsh-tools features <name> [--enable a,b] [--disable a] [--set a,b] [--reset]`: without flags,
 * list a plugin's optional features (description, default, on/off, and whether the plugin follows
 * its defaults); with flags, change the selection for the user (runtime lock `enabledFeatures`)
 * or, with `--scope project`, for one project (`features[name]` of plugin-overrides.json).
 * `--enable`/`--disable` start from what is really on (defaults included); `--set`
 * replaces; `*` means every declared feature; unknown names are EUNKNOWN_FEATURE (exit 2).
 */
import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { style } from "../output.js";
import { usageError } from "../command-errors.js";
import { notLoadedLine } from "../project-scope.js";
import { overridesNotLoaded, readStateView, reportStateChange, runStateChange, setScope, stateScope } from "../state-command.js";
import type { FeatureState } from "../../plugins/state-change.js";
import type { CommandModule } from "../context.js";

interface FeaturesFlags {
  yes?: boolean;
  enable?: string;
  disable?: string;
  set?: string;
  reset?: boolean;
  dryRun?: boolean;
  scope?: string;
}

function selectionText(state: FeatureState): string {
  if (state.origin === "project") return `this project's list (${state.project!.length ? state.project!.join(", ") : "none"})`;
  if (state.kind === "defaults") return "defaults";
  return state.kind === "none" ? "none (base tools only)" : `chosen: ${state.stored!.join(", ")}`;
}

function featureLines(ctx: CommandContext, state: FeatureState): string[] {
  if (state.features.length === 0) return [`${state.plugin} declares no optional features.`];
  const lines = [`${style(ctx.output, "bold", state.plugin)} features (${selectionText(state)}):`];
  const width = Math.max(...state.features.map((f) => f.name.length));
  for (const f of state.features) {
    const mark = f.enabled ? style(ctx.output, "green", "on ") : style(ctx.output, "dim", "off");
    lines.push(`  ${mark}  ${f.name.padEnd(width)}  ${f.default ? "default" : "       "}  ${f.description ?? ""}`.trimEnd());
  }
  if (state.unknown.length > 0) lines.push(style(ctx.output, "yellow", `  stored but not declared (ignored): ${state.unknown.join(", ")}`));
  if (state.origin === "project") lines.push(style(ctx.output, "dim", `  the user's selection (${state.user === null ? "defaults" : state.user.join(", ") || "none"}) is overridden in this project`));
  return lines;
}

async function features(ctx: CommandContext, rawName: string, flags: FeaturesFlags): Promise<void> {
  const { parsePackageName } = await import("../../plugins/spec.js");
  const name = parsePackageName(rawName);
  const { featureState, requireManifest, requirePlugin, planFeatures } = await import("../../plugins/state-change.js");
  const { parseFeatureList } = await import("../../plugins/features.js");
  const wantsChange = flags.enable !== undefined || flags.disable !== undefined || flags.set !== undefined || flags.reset === true;
  if (!wantsChange) {
    if (flags.dryRun) throw usageError("--dry-run needs a change (--enable, --disable, --set or --reset)");
    const view = await readStateView(ctx);
    const plugin = requirePlugin(view, name);
    const state = featureState(plugin, requireManifest(plugin), view.state.runtimeLock, view.overrides.value);
    const notLoaded = overridesNotLoaded(ctx, view);
    if (ctx.output.json) return ctx.output.result({ ...state, ...(notLoaded ? { projectNotLoaded: notLoaded } : {}) });
    for (const line of featureLines(ctx, state)) ctx.output.line(line);
    if (notLoaded) ctx.output.line(notLoadedLine(ctx, notLoaded));
    return;
  }
  if (flags.reset && (flags.enable !== undefined || flags.disable !== undefined || flags.set !== undefined)) {
    throw usageError("--reset cannot be combined with --enable, --disable or --set", "Run them as two commands.");
  }
  const where = await setScope(ctx, flags.scope);
  if (where) return (await import("../team-write.js")).changePlugins(ctx, where, `change the project's features (--scope ${flags.scope})`, flags, [rawName], async ({ key, features }) => ({ op: "features", key, features: await featuresAfter(ctx, key, features, flags) }));
  const scope = stateScope(flags.scope);
  const request = flags.reset
    ? ({ reset: true } as const)
    : {
        ...(flags.set !== undefined ? { set: parseFeatureList(flags.set) } : {}),
        ...(flags.enable !== undefined ? { enable: parseFeatureList(flags.enable) } : {}),
        ...(flags.disable !== undefined ? { disable: parseFeatureList(flags.disable) } : {}),
      };
  const dryRun = Boolean(flags.dryRun);
  const applied = await runStateChange(ctx, `features ${name}`, planFeatures(name, request, scope), dryRun, scope);
  const plugin = requirePlugin(applied.view, name);
  const after = featureState(plugin, requireManifest(plugin), applied.change.runtimeLock, applied.change.overrides);
  await reportStateChange(ctx, applied, { dryRun, scope, done: `Features of ${name}: ${after.effective.length ? after.effective.join(", ") : "none"}`, extra: { plugin: name, features: after } });
}

/**
 * The feature list a set file gets: `--reset` drops it (the plugin's defaults), `--set` replaces
 * it, `--enable`/`--disable` start from what the set chooses now (its list, all for "*", else the
 * installed plugin's defaults). Names are checked against the locked version by the restore
 * (`EUNKNOWN_FEATURE`, nothing written).
 */
async function featuresAfter(ctx: CommandContext, key: string, current: string[] | "*" | undefined, flags: FeaturesFlags): Promise<string[] | "*" | undefined> {
  const { parseFeatureList, declaredFeatures, effectiveFeatures } = await import("../../plugins/features.js");
  if (flags.reset) return undefined;
  if (flags.set !== undefined) return parseFeatureList(flags.set);
  let base: string[] = Array.isArray(current) ? current : [];
  if (!Array.isArray(current)) {
    // "*" or the defaults: only the installed plugin's manifest knows which those are.
    const { requireManifest } = await import("../../plugins/state-change.js");
    const plugin = (await readStateView(ctx)).inventory.find((p) => p.name === key);
    const manifest = plugin?.manifest ? requireManifest(plugin) : undefined;
    base = manifest ? (current === "*" ? declaredFeatures(manifest) : effectiveFeatures(manifest, null)) : [];
  }
  const on = flags.enable === undefined ? [] : parseFeatureList(flags.enable);
  const off = flags.disable === undefined ? [] : parseFeatureList(flags.disable);
  if (on === "*") return "*";
  if (off === "*") return [];
  return [...base.filter((f) => !off.includes(f)), ...on.filter((f) => !base.includes(f) && !off.includes(f))];
}

const OPTIONS = [
  { flags: "--enable <list>", description: "turn these on (comma list; * = all), keeping the others" },
  { flags: "--disable <list>", description: "turn these off (comma list; * = all)" },
  { flags: "--set <list>", description: 'exactly these (comma list; * = all; "" = none)' },
  { flags: "--reset", description: "user: follow the plugin's defaults again; project: drop the project's list" },
  { flags: "--dry-run", description: "print the plan; write nothing" },
  { flags: "--scope <scope>", description: "user (default: the runtime lock), project (xcsh-team.json in a repository, else <cwd>/.xcsh/plugin-overrides.json) or local (your own choice in the project: .xcsh/team.local.json)" },
  { flags: "-y, --yes", description: "accept what the plugins run without asking (a project change restores the set)" },
];

export const register: CommandModule["register"] = (program, getContext) => {
  const command = program.command("features <name>").description("list a plugin's optional features, or change which are on");
  for (const { flags, description } of OPTIONS) command.option(flags, description);
  command.action(async (name: string, flags: FeaturesFlags, invoked: Command) => {
    await features(getContext(invoked), name, flags);
  });
};

export const plain: CommandModule["plain"] = [{ path: ["features"], options: OPTIONS, operands: 1, run: (ctx, [name], flags) => features(ctx, name!, flags as FeaturesFlags) }];
