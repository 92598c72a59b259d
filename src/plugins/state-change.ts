/**
 * Changes of an installed plugin's runtime state — enabled, features, settings — for `enable`,
 * `disable`, `features` and `config`, at one of two scopes:
 *
 *     user     <plugins>/xcsh-plugins.lock.json   {plugins: {name: {version, enabledFeatures, enabled}}, settings: {name: {...}}}
 *     project  <cwd>/.xcsh/plugin-overrides.json  {disabled: [name], features: {name: [...]}, settings: {name: {...}}}
 *
 * The host reads both
 * but writes only the first; here both are written, the same way: a pure planner turns
 * the state read under the lock into a plan (ADD / CHANGE / NOOP with reasons) plus the new
 * contents of the two files, and `applyStateChange` stages exactly the files that change in one
 * journal transaction of `runMutation` (lock → recover → transaction → commit → boot index). A
 * failure anywhere before the commit record leaves both files as they were; a dry run plans from
 * a read-only view and writes nothing.
 *
 * Rules the host lacks:
 *   - an unknown plugin is `ENOT_INSTALLED`, an unknown feature `EUNKNOWN_FEATURE` listing the
 *     declared ones, an unknown setting `EUNKNOWN_SETTING` with a did-you-mean, a bad value
 *     `ESETTING_VALUE` (features.ts, plugin-settings.ts) — all before anything is written;
 *   - a plugin without a lock entry (the host counts it as enabled) gets a complete one;
 *   - secrets are masked in every reason and JSON field; they live only in the runtime lock
 *     (written 0600, state.ts), never in the project file, which is meant to be shared
 *     (`ESECRET_SCOPE`);
 *   - a change at one scope that the other scope still overrides says so in its reason;
 *   - the tool modules a change turns on (a plugin enabled, a feature added) must load: checked in
 *     the transaction before anything is staged, `EVALIDATE` otherwise (turned-on.ts).
 */
import { assertNoneRequired } from "../core/policy.js";
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import type { PluginManifest, PluginSettingSchema } from "../manifest/plugin-manifest.js";
import { runtimeEnabled } from "../manifest/runtime-lock.js";
import { describeFeatures, planFeatureChange, type FeatureChange, type FeatureReport } from "./features.js";
import { loadInventory, type InstalledPlugin } from "./inventory.js";
import { readStateForQuery, runMutation, type MutationWorld } from "./mutation.js";
import { notInstalled, type Plan, type PlanAction } from "./plan.js";
import { checkTurnedOn } from "./turned-on.js";
import {
  SECRET_MASK,
  describeAccepted,
  effectiveSettings,
  maskSetting,
  storedSchema,
  parseSettingInput,
  requireSetting,
  type EffectiveSetting,
  type StoredSettings,
} from "./plugin-settings.js";
import {
  assertOverridesWritable,
  isProjectDisabled,
  projectFeatures,
  projectSettings,
  readProjectOverrides,
  stageOverridesWrite,
  withProjectDisabled,
  withProjectFeatures,
  withProjectSettings,
  type OverridesFile,
  type ProjectOverrides,
} from "./project-overrides.js";
import {
  pluginSecretKeys,
  pluginSettings,
  runtimeEntry,
  stageStateWrites,
  stateFiles,
  withPluginSettings,
  withRuntimePlugin,
  type PluginsState,
  type RuntimeLockFile,
} from "./state.js";

/** Where a change is stored. */
export type StateScope = "user" | "project";

/** What the planners read: the plugins folder, what is installed, the project's overrides. */
export interface StateView {
  state: PluginsState;
  inventory: InstalledPlugin[];
  overrides: ProjectOverrides;
}

/** A planned state change: the plan, and the two files as they would be after it. */
export interface StateChange {
  plan: Plan;
  runtimeLock: RuntimeLockFile | undefined;
  overrides: OverridesFile | undefined;
}

/** A pure planner of a state change. */
export type StatePlanner = (view: StateView) => StateChange;

/** The outcome of `applyStateChange`: the change (planned under the lock unless a dry run) and the files written. */
export interface AppliedStateChange {
  change: StateChange;
  view: StateView;
  written: string[];
}

/**
 * Read the view for a query or a dry run (recovers an interrupted command first; writes nothing
 * otherwise). The project's overrides are read only when `projectTrusted` (project-overrides.ts).
 */
export async function loadStateView(world: MutationWorld, cwd: string, options: { projectTrusted: boolean }): Promise<StateView> {
  const state = await readStateForQuery(world);
  return { state, inventory: await loadInventory(state), overrides: await readProjectOverrides(cwd, { trusted: options.projectTrusted }) };
}

/**
 * Plan with `planner` and, unless `dryRun` or nothing changes, apply the change as one
 * transaction: the planner runs again on the state read under the lock (another command may have
 * changed it meanwhile), and only the files whose content changes are staged.
 */
export async function applyStateChange(world: MutationWorld, label: string, cwd: string, planner: StatePlanner, options: { dryRun: boolean; projectTrusted: boolean }): Promise<AppliedStateChange> {
  // Plan on a read-only view first: a dry run stops here, and so does a plan with nothing to do
  // (no lock, no journal, no boot index refresh: the tree stays byte-identical).
  const view = await loadStateView(world, cwd, options);
  const first = planner(view);
  if (options.dryRun || !first.plan.actions.some((a) => a.type !== "NOOP")) return { change: first, view, written: [] };
  return runMutation(world, label, async (m) => {
    const view: StateView = { state: m.state, inventory: await loadInventory(m.state), overrides: await readProjectOverrides(cwd, { trusted: options.projectTrusted }) };
    const change = planner(view);
    await m.step("apply:planned");
    const changed = new Set(change.plan.actions.filter((a) => a.type !== "NOOP").map((a) => a.name));
    await checkTurnedOn(world, { cwd, scratch: path.join(m.tx.dir, "validate-home") }, view.inventory.filter((p) => changed.has(p.name)), { runtimeLock: view.state.runtimeLock, overrides: view.overrides.value }, change);
    const before = stateFiles(m.state);
    const written = await stageStateWrites(m.tx, m.paths, before, { ...before, runtimeLock: change.runtimeLock });
    if (await stageOverridesWrite(m.tx, view.overrides.file, view.overrides.value, change.overrides)) written.push(view.overrides.file);
    await m.step("apply:staged");
    return { change, view, written };
  }, { shelf: true });
}

// ---- lookups ----------------------------------------------------------------------------------

/** The installed plugin `name`, or `ENOT_INSTALLED`. */
export function requirePlugin(view: StateView, name: string): InstalledPlugin {
  const plugin = view.inventory.find((p) => p.name === name);
  if (!plugin) throw notInstalled(name, view.inventory);
  return plugin;
}

/** The plugin's manifest, or `EPLUGIN_INVALID` when its folder or manifest cannot be used. */
export function requireManifest(plugin: InstalledPlugin): PluginManifest {
  if (plugin.manifest) return plugin.manifest;
  throw new XcshToolsError("EPLUGIN_INVALID", `${plugin.name}: ${plugin.problem ?? "no usable xcsh manifest"}`, {
    hint: "Run `xcsh-tools doctor` (or reinstall the plugin); nothing was changed.",
    file: plugin.dir,
    exitCode: 2,
  });
}

/** The enabled state of a plugin, by scope and in effect. */
export interface EnabledState {
  name: string;
  enabled: boolean;
  user: boolean;
  projectDisabled: boolean;
}

/** Whether `plugin` is enabled for the user, in the project, and in effect. */
export function enabledState(view: Pick<StateView, "state" | "overrides">, name: string, lock = view.state.runtimeLock, overrides = view.overrides.value): EnabledState {
  const user = runtimeEnabled(runtimeEntry(lock, name));
  const projectDisabled = isProjectDisabled(overrides, name);
  return { name, enabled: user && !projectDisabled, user, projectDisabled };
}

/** The feature selection in effect and where it comes from. */
export interface FeatureState extends FeatureReport {
  plugin: string;
  /** `project`: the overrides file sets the list; `user`: the runtime lock does (or nothing: defaults). */
  origin: StateScope;
  /** The user's stored selection, also when the project overrides it. */
  user: string[] | null;
  /** The project's list, when it sets one. */
  project?: string[];
}

export function featureState(plugin: InstalledPlugin, manifest: PluginManifest, lock: RuntimeLockFile | undefined, overrides: OverridesFile | undefined): FeatureState {
  const user = runtimeEntry(lock, plugin.name)?.enabledFeatures ?? null;
  const project = projectFeatures(overrides, plugin.name);
  const report = describeFeatures(manifest, project ?? user);
  return { plugin: plugin.name, ...report, origin: project !== undefined ? "project" : "user", user, ...(project !== undefined ? { project } : {}) };
}

/** The stored setting values of `name`, by layer, with their files. */
export function storedSettings(view: Pick<StateView, "state" | "overrides">, name: string, lock = view.state.runtimeLock, overrides = view.overrides.value): StoredSettings {
  const user = pluginSettings(lock, name);
  const project = projectSettings(overrides, name);
  const secretKeys = pluginSecretKeys(lock, name);
  return {
    ...(Object.keys(user).length > 0 ? { user } : {}),
    userFile: view.state.paths.runtimeLock,
    ...(secretKeys.length > 0 ? { secretKeys } : {}),
    ...(project !== undefined ? { project } : {}),
    projectFile: view.overrides.file,
  };
}

/** Every declared setting of `plugin` under the given files (masked), and the stored keys it does not declare. */
export function settingsState(
  view: Pick<StateView, "state" | "overrides">,
  plugin: InstalledPlugin,
  manifest: PluginManifest,
  env: NodeJS.ProcessEnv,
  files: { lock?: RuntimeLockFile | undefined; overrides?: OverridesFile | undefined } = {},
): { plugin: string; settings: EffectiveSetting[]; undeclared: { key: string; scope: StateScope; file: string }[] } {
  const lock = "lock" in files ? files.lock : view.state.runtimeLock;
  const overrides = "overrides" in files ? files.overrides : view.overrides.value;
  const stored = storedSettings(view, plugin.name, lock, overrides);
  const declared = manifest.settings ?? {};
  const undeclared: { key: string; scope: StateScope; file: string }[] = [];
  for (const [scope, values, file] of [["user", stored.user, stored.userFile], ["project", stored.project, stored.projectFile]] as const) {
    for (const key of Object.keys(values ?? {})) if (!Object.hasOwn(declared, key)) undeclared.push({ key, scope, file: file ?? "" });
  }
  return { plugin: plugin.name, settings: effectiveSettings(manifest, stored, env), undeclared };
}

// ---- planners ---------------------------------------------------------------------------------

/** A project-scope plan needs the project's overrides, read: `EUNTRUSTED_PROJECT` otherwise. */
function projectWritable(view: StateView, doing: string): void {
  assertOverridesWritable(view.overrides, path.dirname(path.dirname(view.overrides.file)), doing);
}

function action(type: PlanAction["type"], name: string, reason: string, scope: StateScope, extra: Partial<PlanAction> = {}): PlanAction {
  return { type, name, reason, ...extra, apply: type === "NOOP" ? { kind: "none" } : { kind: "state", scope } };
}

/** The runtime lock with a complete entry for `plugin` patched (the host's shape: version, enabledFeatures, enabled). */
function patchRuntime(lock: RuntimeLockFile | undefined, plugin: InstalledPlugin, patch: { enabled?: boolean; enabledFeatures?: string[] | null }): RuntimeLockFile {
  const current = runtimeEntry(lock, plugin.name);
  const base = current ?? { version: plugin.version, enabledFeatures: null, enabled: true };
  return withRuntimePlugin(lock, plugin.name, { ...base, ...patch, ...(base.version === undefined && plugin.version !== undefined ? { version: plugin.version } : {}) });
}

/** Plan `enable` / `disable` of `names` at `scope`. */
export function planSetEnabled(names: string[], enabled: boolean, scope: StateScope): StatePlanner {
  return (view) => {
    let runtimeLock = view.state.runtimeLock;
    let overrides = view.overrides.value;
    const verb = enabled ? "enable" : "disable";
    if (!enabled) assertNoneRequired(names, "disable");
    if (scope === "project") projectWritable(view, `${verb} plugins in the project (--scope project)`);
    const actions = [...new Set(names)].map((name): PlanAction => {
      const plugin = requirePlugin(view, name);
      const now = enabledState(view, name, runtimeLock, overrides);
      if (scope === "user") {
        const still = now.projectDisabled && enabled ? ` (still disabled in this project by ${view.overrides.file}: xcsh-tools enable --scope project ${name})` : "";
        if (now.user === enabled) return action("NOOP", name, `${name} is already ${verb}d for the user${still}`, scope, { enabled: { scope, from: now.user, to: enabled } });
        runtimeLock = patchRuntime(runtimeLock, plugin, { enabled });
        return action("CHANGE", name, `${verb} ${name} for the user${still}`, scope, { enabled: { scope, from: now.user, to: enabled } });
      }
      const from = !now.projectDisabled;
      if (from === enabled) {
        const why = enabled ? `${name} is not disabled in this project` : `${name} is already disabled in this project`;
        const still = enabled && !now.user ? ` (it is disabled for the user: xcsh-tools enable ${name})` : "";
        return action("NOOP", name, `${why}${still}`, scope, { enabled: { scope, from, to: enabled } });
      }
      overrides = withProjectDisabled(overrides, name, !enabled);
      const still = enabled && !now.user ? ` (still disabled for the user: xcsh-tools enable ${name})` : "";
      return action("CHANGE", name, enabled ? `remove ${name} from the project's disabled list${still}` : `disable ${name} in this project (${view.overrides.file})`, scope, { enabled: { scope, from, to: enabled } });
    });
    return { plan: { command: enabled ? "enable" : "disable", actions }, runtimeLock, overrides };
  };
}

/** A feature request: a change, or `reset` (user: back to the defaults; project: drop the project's list). */
export type FeatureRequest = FeatureChange | { reset: true };

function listText(list: readonly string[]): string {
  return list.length > 0 ? list.join(", ") : "none";
}

/** Plan `features <name> --enable/--disable/--set/--reset` at `scope`. */
export function planFeatures(name: string, request: FeatureRequest, scope: StateScope): StatePlanner {
  return (view) => {
    if (scope === "project") projectWritable(view, "change the project's features (--scope project)");
    const plugin = requirePlugin(view, name);
    const manifest = requireManifest(plugin);
    let runtimeLock = view.state.runtimeLock;
    let overrides = view.overrides.value;
    const now = featureState(plugin, manifest, runtimeLock, overrides);
    const plan = (a: PlanAction): StateChange => ({ plan: { command: "features", actions: [a] }, runtimeLock, overrides });
    const shadowed = scope === "user" && now.project !== undefined ? ` (this project's list in ${view.overrides.file} still applies here)` : "";

    if ("reset" in request) {
      if (scope === "user") {
        const from = now.user;
        if (from === null) return plan(action("NOOP", name, `${name} already follows its default features${shadowed}`, scope, { features: { from, to: null } }));
        runtimeLock = patchRuntime(runtimeLock, plugin, { enabledFeatures: null });
        return plan(action("CHANGE", name, `${name} follows its default features again (${listText(describeFeatures(manifest, null).effective)})${shadowed}`, scope, { features: { from, to: null } }));
      }
      if (now.project === undefined) return plan(action("NOOP", name, `this project sets no features for ${name}`, scope));
      overrides = withProjectFeatures(overrides, name, undefined);
      return plan(action("CHANGE", name, `drop this project's feature list of ${name}; the user's selection applies`, scope, { features: { from: now.project, to: now.user } }));
    }

    const before = scope === "project" ? (now.project ?? now.user) : now.user;
    const change = planFeatureChange(name, manifest, before, request);
    const stored = scope === "project" ? now.project : now.user;
    // At project scope the list is written even when the effective set is unchanged but the
    // project had no list of its own and `--set` asked for one explicitly.
    const changed = scope === "project" ? change.changed || (stored === undefined && request.set !== undefined) : change.changed;
    const after = change.after ?? null;
    const delta = [change.added.length ? `on: ${change.added.join(", ")}` : "", change.removed.length ? `off: ${change.removed.join(", ")}` : ""].filter(Boolean).join("; ");
    if (!changed) return plan(action("NOOP", name, `${name} features unchanged (${listText(change.effectiveAfter)})${shadowed}`, scope, { features: { from: stored ?? null, to: stored ?? null } }));
    if (scope === "user") runtimeLock = patchRuntime(runtimeLock, plugin, { enabledFeatures: after });
    else overrides = withProjectFeatures(overrides, name, change.effectiveAfter);
    const where = scope === "user" ? "for the user" : "in this project";
    return plan(action("CHANGE", name, `${name} features ${where}: ${listText(change.effectiveAfter)}${delta ? ` (${delta})` : ""}${shadowed}`, scope, { features: { from: stored ?? null, to: scope === "user" ? after : change.effectiveAfter } }));
  };
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function shownValue(value: unknown, schema: PluginSettingSchema | undefined): string {
  if (value === undefined) return "(unset)";
  const masked = maskSetting(value, schema);
  return masked === SECRET_MASK ? SECRET_MASK : JSON.stringify(masked);
}

/** `ESECRET_SCOPE`: secrets are stored for the user only. */
function secretScopeError(plugin: string, key: string): XcshToolsError {
  return new XcshToolsError("ESECRET_SCOPE", `Setting "${key}" of plugin ${plugin} is a secret; secrets are not stored in the project's plugin-overrides.json, which is meant to be shared`, {
    hint: `Store it for the user (owner-only file): xcsh-tools config set ${plugin} ${key} <value>, or use the environment variable the setting names, if any. Nothing was changed.`,
    path: key,
    exitCode: 2,
  });
}

/** Plan `config set <name> <key> <value>` at `scope`: parsed and checked against the manifest's schema. */
export function planSettingSet(name: string, key: string, raw: string, scope: StateScope): StatePlanner {
  return (view) => {
    if (scope === "project") projectWritable(view, "change the project's plugin settings (--scope project)");
    const plugin = requirePlugin(view, name);
    const manifest = requireManifest(plugin);
    const schema = requireSetting(manifest, { plugin: name, key });
    const value = parseSettingInput(raw, schema, { plugin: name, key });
    const secret = schema.secret === true;
    if (secret && scope === "project") throw secretScopeError(name, key);
    let runtimeLock = view.state.runtimeLock;
    let overrides = view.overrides.value;
    const values = scope === "user" ? pluginSettings(runtimeLock, name) : { ...(projectSettings(overrides, name) ?? {}) };
    const from = Object.hasOwn(values, key) ? values[key] : undefined;
    // The value replaced is shown as it was stored: masked if it was stored as a secret.
    const fromSchema = scope === "user" ? storedSchema(key, schema, { secretKeys: pluginSecretKeys(runtimeLock, name) }) : schema;
    const setting = { scope, key, secret, from: maskSetting(from, fromSchema), to: maskSetting(value, schema) };
    const shadowed = scope === "user" && Object.hasOwn(projectSettings(overrides, name) ?? {}, key) ? ` (this project's value in ${view.overrides.file} still applies here)` : "";
    const where = scope === "user" ? "for the user" : "in this project";
    const plan = (a: PlanAction): StateChange => ({ plan: { command: "config", actions: [a] }, runtimeLock, overrides });
    if (from !== undefined && sameValue(from, value)) return plan(action("NOOP", name, `${key} is already ${shownValue(value, fromSchema)} ${where}${shadowed}`, scope, { setting }));
    values[key] = value;
    if (scope === "user") runtimeLock = withPluginSettings(runtimeLock, name, values, { key, secret });
    else overrides = withProjectSettings(overrides, name, values);
    const what = from === undefined ? `set ${key} = ${shownValue(value, schema)}` : `${key}: ${shownValue(from, fromSchema)} → ${shownValue(value, schema)}`;
    return plan(action(from === undefined ? "ADD" : "CHANGE", name, `${what} ${where}${shadowed}`, scope, { setting }));
  };
}

/** Plan `config delete <name> <key>` at `scope`: a declared key, or one stored there that the manifest no longer declares. */
export function planSettingDelete(name: string, key: string, scope: StateScope): StatePlanner {
  return (view) => {
    if (scope === "project") projectWritable(view, "change the project's plugin settings (--scope project)");
    const plugin = requirePlugin(view, name);
    const manifest = requireManifest(plugin);
    let runtimeLock = view.state.runtimeLock;
    let overrides = view.overrides.value;
    const values = scope === "user" ? pluginSettings(runtimeLock, name) : { ...(projectSettings(overrides, name) ?? {}) };
    const declared = manifest.settings ?? {};
    const marked = scope === "user" && pluginSecretKeys(runtimeLock, name).includes(key);
    const declaredSchema = Object.hasOwn(declared, key) ? declared[key] : undefined;
    if (!declaredSchema && !Object.hasOwn(values, key)) requireSetting(manifest, { plugin: name, key });
    // A value stored as a secret is shown masked even when the manifest no longer declares the key.
    const schema = declaredSchema ? storedSchema(key, declaredSchema, { secretKeys: marked ? [key] : [] }) : marked ? ({ type: "string", secret: true } as PluginSettingSchema) : undefined;
    const secret = schema?.secret === true;
    const where = scope === "user" ? "for the user" : "in this project";
    const plan = (a: PlanAction): StateChange => ({ plan: { command: "config", actions: [a] }, runtimeLock, overrides });
    if (!Object.hasOwn(values, key)) return plan(action("NOOP", name, `${key} is not set ${where}`, scope, { setting: { scope, key, secret, from: undefined, to: undefined } }));
    const from = values[key];
    delete values[key];
    if (scope === "user") runtimeLock = withPluginSettings(runtimeLock, name, values);
    else overrides = withProjectSettings(overrides, name, values);
    const fallback = schema ? `; ${describeFallback(schema)}` : "";
    return plan(action("REMOVE", name, `delete ${key} (was ${shownValue(from, schema)}) ${where}${fallback}`, scope, { setting: { scope, key, secret, from: maskSetting(from, schema), to: undefined } }));
  };
}

function describeFallback(schema: PluginSettingSchema): string {
  if (schema.env !== undefined) return `falls back to $${schema.env}${schema.default !== undefined ? `, then the default ${shownValue(schema.default, schema)}` : ""}`;
  if (schema.default !== undefined) return `falls back to the default ${shownValue(schema.default, schema)}`;
  return `unset (${describeAccepted(schema)})`;
}
