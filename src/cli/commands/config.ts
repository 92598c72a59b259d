/**
 * `xcsh-tools config list|get|set|delete|validate <name> [key] [value]`: a plugin's settings, typed
 * by the schema its manifest declares. A value comes from the project
 * (`<cwd>/.xcsh/plugin-overrides.json`), else the user (the runtime lock), else the environment
 * variable the schema names, else the default (plugin-settings.ts). `set` parses and checks the
 * value (type, enum, min/max/step) before anything is written; `delete` removes the stored value
 * at the scope; `validate` checks every stored value and exits 1 listing the problems.
 *
 * Secret settings are never printed — not by `list`, not by `get`, not in plans, JSON or errors:
 * `••••` stands for a set value. They are stored only in the runtime lock, which is written 0600,
 * and never taken from the project's file (`validate` reports one there: `ESECRET_IN_PROJECT`).
 * A value stored as a secret stays masked when a later version of the plugin forgets `secret: true`
 * (runtime lock `secretSettings`).
 *
 * The project's file is read only in a trusted project: elsewhere `list`, `get` and `validate`
 * say it was not loaded, and `set`/`delete --scope project` are `EUNTRUSTED_PROJECT`. `validate`
 * also reports what our own settings ignored in project files (`ECONFIG_PROJECT_SECRET`,
 * `ECONFIG_UNTRUSTED_PROJECT`), as entries with `plugin: null`.
 */
import type { Command } from "commander";
import type { CommandContext } from "../context.js";
import { style } from "../output.js";
import { ReportedFailure } from "../command-errors.js";
import { overridesNotLoaded, readStateView, reportStateChange, runStateChange, setScope, stateScope } from "../state-command.js";
import path from "node:path";
import type { EffectiveSetting, SettingProblem } from "../../plugins/plugin-settings.js";
import { notLoadedLine } from "../project-scope.js";
import type { CommandModule } from "../context.js";

interface MutationFlags {
  dryRun?: boolean;
  scope?: string;
  yes?: boolean;
}

function valueText(setting: Pick<EffectiveSetting, "value" | "origin">): string {
  if (setting.origin === "unset") return "(not set)";
  return typeof setting.value === "string" ? setting.value : JSON.stringify(setting.value);
}

function originText(setting: EffectiveSetting): string {
  return setting.origin === "env" ? `env $${setting.via}` : setting.origin;
}

async function pluginAndManifest(ctx: CommandContext, rawName: string) {
  const { parsePackageName } = await import("../../plugins/spec.js");
  const name = parsePackageName(rawName);
  const engine = await import("../../plugins/state-change.js");
  const view = await readStateView(ctx);
  const plugin = engine.requirePlugin(view, name);
  return { name, view, plugin, manifest: engine.requireManifest(plugin), engine };
}

async function list(ctx: CommandContext, rawName: string): Promise<void> {
  const { view, plugin, manifest, engine } = await pluginAndManifest(ctx, rawName);
  const state = engine.settingsState(view, plugin, manifest, ctx.env);
  const notLoaded = overridesNotLoaded(ctx, view);
  if (ctx.output.json) return ctx.output.result({ ...state, ...(notLoaded ? { projectNotLoaded: notLoaded } : {}) });
  if (notLoaded) ctx.output.line(notLoadedLine(ctx, notLoaded));
  if (state.settings.length === 0 && state.undeclared.length === 0) return ctx.output.line(`${plugin.name} declares no settings.`);
  const { describeAccepted } = await import("../../plugins/plugin-settings.js");
  const rows = state.settings.map((s) => [s.key, s.type + (s.secret ? ", secret" : ""), valueText(s), originText(s)]);
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => r[i]!.length), ["key", "type", "value", "origin"][i]!.length));
  const row = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  ctx.output.line(style(ctx.output, "bold", row(["key", "type", "value", "origin"])) + style(ctx.output, "bold", "  description"));
  state.settings.forEach((s, i) => {
    const schema = manifest.settings![s.key]!;
    const notes = [
      s.description ?? "",
      describeAccepted(schema),
      ...(s.env && s.origin !== "env" ? [`env $${s.env}`] : []),
      ...(s.default !== undefined && s.origin !== "default" ? [`default ${typeof s.default === "string" ? s.default : JSON.stringify(s.default)}`] : []),
    ].filter(Boolean).join("; ");
    ctx.output.line(`${row(rows[i]!)}  ${style(ctx.output, "dim", notes)}`);
  });
  for (const u of state.undeclared) ctx.output.line(style(ctx.output, "yellow", `${u.key}: stored (${u.scope}) but not declared by ${plugin.name}; remove it with xcsh-tools config delete ${plugin.name} ${u.key}${u.scope === "project" ? " --scope project" : ""}`));
}

async function get(ctx: CommandContext, rawName: string, key: string): Promise<void> {
  const { name, view, plugin, manifest, engine } = await pluginAndManifest(ctx, rawName);
  const { requireSetting } = await import("../../plugins/plugin-settings.js");
  requireSetting(manifest, { plugin: name, key });
  const setting = engine.settingsState(view, plugin, manifest, ctx.env).settings.find((s) => s.key === key)!;
  const notLoaded = overridesNotLoaded(ctx, view);
  if (notLoaded && !ctx.output.json) ctx.output.note(notLoadedLine(ctx, notLoaded));
  if (setting.origin === "unset") {
    // Like `git config <key>`: a missing value is exit 1, so scripts can tell it from an empty one.
    const { XcshToolsError } = await import("../../core/errors.js");
    throw new XcshToolsError("ESETTING_UNSET", `Setting "${key}" of plugin ${name} is not set (no stored value, no environment variable, no default)`, { hint: `Set it with xcsh-tools config set ${name} ${key} <value>.`, path: key });
  }
  if (ctx.output.json) {
    return ctx.output.result({ plugin: name, key, value: setting.value, origin: setting.origin, secret: setting.secret, ...(setting.via ? { via: setting.via } : {}), ...(notLoaded ? { projectNotLoaded: notLoaded } : {}) });
  }
  ctx.output.line(valueText(setting));
  if (setting.secret) ctx.output.note(`note: ${key} is a secret; its value is never printed (set ${setting.origin === "env" ? `from $${setting.via}` : `in the ${setting.origin} scope`})`);
}

/** `set` with the words of the value, `delete` without them. */
async function change(ctx: CommandContext, rawName: string, key: string, words: string[] | undefined, flags: MutationFlags): Promise<void> {
  const where = await setScope(ctx, flags.scope);
  if (where) return changeInSet(ctx, where, rawName, key, words, flags);
  const { parsePackageName } = await import("../../plugins/spec.js");
  const name = parsePackageName(rawName);
  const scope = stateScope(flags.scope);
  const engine = await import("../../plugins/state-change.js");
  const dryRun = Boolean(flags.dryRun);
  // The host joins the words of the value with spaces (`config set p greeting hello world`).
  const planner = words ? engine.planSettingSet(name, key, words.join(" "), scope) : engine.planSettingDelete(name, key, scope);
  const applied = await runStateChange(ctx, `config ${words ? "set" : "delete"} ${name} ${key}`, planner, dryRun, scope);
  const plugin = engine.requirePlugin(applied.view, name);
  const after = engine.settingsState(applied.view, plugin, engine.requireManifest(plugin), ctx.env, { lock: applied.change.runtimeLock, overrides: applied.change.overrides });
  const setting = after.settings.find((s) => s.key === key);
  const done = `${words ? "Set" : "Deleted"} ${key} of ${name}${scope === "project" ? " in this project" : ""}`;
  await reportStateChange(ctx, applied, { dryRun, scope, done, extra: { plugin: name, key, ...(setting ? { setting } : {}) } });
  if (!ctx.output.json && setting && setting.origin !== scope && !dryRun && applied.change.plan.actions[0]?.type !== "REMOVE") {
    ctx.output.note(`note: the value in effect here comes from ${originText(setting)}`);
  }
}

/**
 * `config set|delete --scope project|local` where the set is written (cli/team-write.ts): the value
 * is parsed and checked against the installed plugin's schema, then written to xcsh-team.json or
 * .xcsh/team.local.json; a secret is `ESECRET_SCOPE` naming the file and `/plugins/<name>/settings/<key>`.
 */
async function changeInSet(ctx: CommandContext, where: NonNullable<ReturnType<typeof import("../team-write.js").setScopeOf>>, rawName: string, key: string, words: string[] | undefined, flags: MutationFlags): Promise<void> {
  const { changePlugins } = await import("../team-write.js");
  const secrets = new Map<string, string[]>();
  await changePlugins(ctx, where, `change the project's plugin settings (--scope ${flags.scope})`, flags, [rawName], async ({ key: plugin }) => {
    if (!words) return { op: "setting-delete", key: plugin, setting: key };
    const engine = await import("../../plugins/state-change.js");
    const { parseSettingInput, requireSetting } = await import("../../plugins/plugin-settings.js");
    const manifest = engine.requireManifest(engine.requirePlugin(await readStateView(ctx), plugin));
    secrets.set(plugin, Object.entries(manifest.settings ?? {}).filter(([, schema]) => schema.secret === true).map(([k]) => k));
    const schema = requireSetting(manifest, { plugin, key });
    // The host joins the words of the value with spaces (`config set p greeting hello world`).
    return { op: "setting-set", key: plugin, setting: key, value: parseSettingInput(words.join(" "), schema, { plugin, key }) };
  }, { secretKeysOf: (plugin) => secrets.get(plugin) });
}

async function validate(ctx: CommandContext, rawName: string | undefined): Promise<void> {
  const engine = await import("../../plugins/state-change.js");
  const { checkStoredSettings } = await import("../../plugins/plugin-settings.js");
  const view = await readStateView(ctx);
  let plugins = view.inventory;
  if (rawName !== undefined) {
    const { parsePackageName } = await import("../../plugins/spec.js");
    plugins = [engine.requirePlugin(view, parsePackageName(rawName))];
  }
  const problems: (Omit<SettingProblem, "plugin" | "code"> & { plugin: string | null; code: string })[] = [];
  const checked: string[] = [];
  for (const plugin of plugins) {
    if (!plugin.manifest) {
      if (rawName !== undefined) engine.requireManifest(plugin);
      continue;
    }
    checked.push(plugin.name);
    problems.push(...checkStoredSettings(plugin.name, plugin.manifest, engine.storedSettings(view, plugin.name), ctx.env));
  }
  // Our own settings' project files: a secret key there, or a file of an untrusted folder, is
  // ignored; say so here too (the warnings name the file and field).
  for (const w of (await ctx.settings()).warnings) {
    if (w.code !== "ECONFIG_PROJECT_SECRET" && w.code !== "ECONFIG_UNTRUSTED_PROJECT") continue;
    problems.push({
      plugin: null,
      key: w.path,
      source: w.source,
      severity: "warning" as const,
      code: w.code,
      message: w.message,
      hint: w.code === "ECONFIG_PROJECT_SECRET" ? `Remove "${w.path}" from ${w.source}; set it in ~/.xcsh/xcsh-tools.json, its XCSH_TOOLS_* variable or on the command line.` : `If you know who wrote the project: xcsh-tools trust ${path.dirname(w.source)}`,
    });
  }
  const notLoaded = overridesNotLoaded(ctx, view);
  const errors = problems.filter((p) => p.severity === "error");
  if (ctx.output.json) {
    ctx.output.result({ ok: errors.length === 0, valid: errors.length === 0, plugins: checked, problems, ...(notLoaded ? { projectNotLoaded: notLoaded } : {}) });
  } else {
    if (notLoaded) ctx.output.line(notLoadedLine(ctx, notLoaded));
    for (const p of problems) {
      ctx.output.line(`${p.severity === "error" ? style(ctx.output, "red", "error") : style(ctx.output, "yellow", "warning")} ${p.code} ${p.message}`);
      ctx.output.line(`  Try this: ${p.hint}`);
    }
    if (errors.length === 0) ctx.output.line(`Settings valid (${checked.length ? checked.join(", ") : "no plugins"})${problems.length ? ` with ${problems.length} warning(s)` : ""}.`);
    else ctx.output.line(`${errors.length} invalid setting value(s).`);
  }
  if (errors.length > 0) throw new ReportedFailure(1);
}

/** The options of `set` and `delete`. */
const CHANGE_OPTIONS = [
  { flags: "--dry-run", description: "print the plan; write nothing" },
  {
    flags: "--scope <scope>",
    description: "user (default: the runtime lock), project (xcsh-team.json in a repository, else <cwd>/.xcsh/plugin-overrides.json; not for secrets) or local (your own value in the project: .xcsh/team.local.json; not for secrets)",
  },
  { flags: "-y, --yes", description: "accept what the plugins run without asking (a project change restores the set)" },
];

export const plain: CommandModule["plain"] = [
  { path: ["config", "set"], options: CHANGE_OPTIONS, operands: { count: 3, variadic: true }, run: (ctx, [name, key, ...value], flags) => change(ctx, name!, key!, value, flags as MutationFlags) },
  { path: ["config", "delete"], options: CHANGE_OPTIONS, operands: 2, run: (ctx, [name, key], flags) => change(ctx, name!, key!, undefined, flags as MutationFlags) },
];

export const register: CommandModule["register"] = (program, getContext) => {
  const config = program.command("config").description("a plugin's settings: list, get, set, delete, validate");

  config
    .command("list <name>")
    .description("every setting the plugin declares: type, value (secrets masked), origin, description")
    .action(async (name: string, _flags: unknown, command: Command) => list(getContext(command), name));

  config
    .command("get <name> <key>")
    .description("the value in effect (project > user > env > default); secrets are never printed")
    .action(async (name: string, key: string, _flags: unknown, command: Command) => get(getContext(command), name, key));

  const set = config.command("set <name> <key> <value...>").description("store a value, checked against the plugin's schema");
  for (const { flags, description } of CHANGE_OPTIONS) set.option(flags, description);
  set.action(async (name: string, key: string, value: string[], flags: MutationFlags, command: Command) => change(getContext(command), name, key, value, flags));

  const del = config.command("delete <name> <key>").description("remove the stored value (the env variable or the default applies again)");
  for (const { flags, description } of CHANGE_OPTIONS) del.option(flags, description);
  del.action(async (name: string, key: string, flags: MutationFlags, command: Command) => change(getContext(command), name, key, undefined, flags));

  config
    .command("validate [name]")
    .description("check stored values against the schemas (every plugin without a name); exit 1 on a problem")
    .action(async (name: string | undefined, _flags: unknown, command: Command) => validate(getContext(command), name));
};
