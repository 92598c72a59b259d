/**
 * `xcsh-tools enable <name>...` and `disable <name>...`: switch installed plugins on or off for
 * the user (the runtime lock's `enabled`) or, with `--scope project`, for one project (the
 * `disabled` list of `<cwd>/.xcsh/plugin-overrides.json`). A plugin is on when both allow it,
 * as the host computes it. `name@marketplace` plugins go to the
 * marketplace engine. One transaction for all names: an unknown one changes nothing.
 */
import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { assertScopeAllowed, notLoadedLine } from "../project-scope.js";
import { overridesNotLoaded, reportStateChange, runStateChange, setScope, stateScope } from "../state-command.js";
import type { CommandModule } from "../context.js";

interface EnableFlags {
  dryRun?: boolean;
  scope?: string;
  yes?: boolean;
}

async function setEnabled(ctx: CommandContext, names: string[], enabled: boolean, flags: EnableFlags): Promise<void> {
  // Before anything is read: a project-scope change needs a trusted project, whichever engine owns the names.
  await assertScopeAllowed(ctx, flags.scope, `${enabled ? "enable" : "disable"} plugins in the project (--scope project)`);
  // In a repository (or a project with a set): the team's declaration, or the personal file (--scope local).
  const where = await setScope(ctx, flags.scope);
  if (where) return (await import("../team-write.js")).changePlugins(ctx, where, `${enabled ? "enable" : "disable"} plugins in the project (--scope ${flags.scope})`, flags, names, ({ key }) => ({ op: "enable", key, enabled }), { switchOff: !enabled });
  // Marketplace plugins are the marketplace engine's (its --scope is the install's scope).
  const { mayNameMarketplacePlugin } = await import("../../manifest/installed-plugins.js");
  if (names.some(mayNameMarketplacePlugin) && (await (await import("./marketplace.js")).dispatchChange(ctx, enabled ? "enable" : "disable", names, flags))) return;
  const scope = stateScope(flags.scope);
  const { parsePackageName } = await import("../../plugins/spec.js");
  const wanted = names.map(parsePackageName);
  if (scope === "user") await (await import("../seeded.js")).refuseSeeded(ctx, wanted, enabled ? "enable" : "disable");
  const { planSetEnabled, enabledState } = await import("../../plugins/state-change.js");
  const dryRun = Boolean(flags.dryRun);
  const verb = enabled ? "enable" : "disable";
  let applied: Awaited<ReturnType<typeof runStateChange>>;
  try {
    applied = await runStateChange(ctx, `${verb} ${wanted.join(" ")}`, planSetEnabled(wanted, enabled, scope), dryRun, scope);
  } catch (error) {
    throw await (await import("./marketplace.js")).withMarketplaceSuggestion(ctx, error, names, verb);
  }
  const after = [...new Set(wanted)].map((name) => enabledState(applied.view, name, applied.change.runtimeLock, applied.change.overrides));
  await reportStateChange(ctx, applied, {
    dryRun,
    scope,
    done: `${enabled ? "Enabled" : "Disabled"} ${wanted.join(", ")}${scope === "project" ? " in this project" : ""}`,
    extra: { plugins: after },
  });
  const notLoaded = overridesNotLoaded(ctx, applied.view);
  if (notLoaded && !ctx.output.json) ctx.output.note(notLoadedLine(ctx, notLoaded));
  if (!ctx.output.json && !dryRun) {
    for (const state of after) {
      if (state.enabled !== enabled) ctx.output.note(`note: ${state.name} is ${state.enabled ? "still enabled" : "still disabled"} here (user: ${state.user ? "enabled" : "disabled"}, project: ${state.projectDisabled ? "disabled" : "not disabled"})`);
    }
  }
}

const OPTIONS = [
  { flags: "--dry-run", description: "print the plan; write nothing" },
  { flags: "--scope <scope>", description: "user (default: the runtime lock), project (the project's xcsh-team.json in a repository, else <cwd>/.xcsh/plugin-overrides.json; for name@marketplace, the install's scope) or local (your own choice in the project: .xcsh/team.local.json)" },
  { flags: "-y, --yes", description: "accept what the plugins run without asking (a project change restores the set)" },
];

export const register: CommandModule["register"] = (program, getContext) => {
  for (const enabled of [true, false]) {
    const command = program
      .command(`${enabled ? "enable" : "disable"} <name...>`)
      .description(enabled ? "enable installed plugins (for the user, or --scope project)" : "disable installed plugins (for the user, or --scope project) without uninstalling them");
    for (const { flags, description } of OPTIONS) command.option(flags, description);
    command.action(async (names: string[], flags: EnableFlags, invoked: Command) => {
      await setEnabled(getContext(invoked), names, enabled, flags);
    });
  }
};

export const plain: CommandModule["plain"] = [true, false].map((enabled) => ({
  path: [enabled ? "enable" : "disable"],
  options: OPTIONS,
  operands: { count: 1, variadic: true },
  run: (ctx, names, flags) => setEnabled(ctx, names, enabled, flags as EnableFlags),
}));
