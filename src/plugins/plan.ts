/**
 * The planner: pure functions from what is installed (inventory.ts) and what was resolved
 * (resolve.ts, outdated.ts) to a plan — one action per plugin, ADD / CHANGE / REMOVE / NOOP with
 * a reason, and for each what the applier must do (an arborist `add` spec, a removal, the new
 * runtime state). No I/O, no clock: `--dry-run` prints a plan and stops; the applier computes
 * the same plan again inside the lock from the state it reads there, so two commands run at
 * once never apply a plan made from a view the other has since changed.
 *
 * Runtime state rules (the host resets them on reinstall; we keep them):
 *   - enabled: kept; a new plugin is enabled.
 *   - features: a spec with brackets sets them (`[*]` = every declared feature, `[]` = none);
 *     without brackets they are kept, and a new plugin follows its defaults (`null`). Names the
 *     package does not declare are `EUNKNOWN_FEATURE`, listing the available ones, before
 *     anything is written. Kept names the new version no longer declares are dropped, said in
 *     the reason.
 *   - settings: kept; removed with the plugin on uninstall (as the host does).
 */
import { assertNoneRequired, assertNotForbidden, loadManagedPolicy, policyForChange } from "../core/policy.js";
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { npa } from "../core/npm-spec.js";
import { didYouMean } from "../core/suggest.js";
import { dependencySpecIssue } from "../manifest/plugins-package.js";
import type { PluginManifest } from "../manifest/plugin-manifest.js";
import { declaredFeatures, unknownFeatureError } from "./features.js";
import type { InstalledPlugin } from "./inventory.js";
import type { ResolvedPackage } from "./resolve.js";
import { recordedSpec, type FeatureSelection } from "./spec.js";
import { isLocalGitEntry, type InstallRecordEntry, type SourceKind } from "./state.js";
import { PACKED_REL } from "./work-copy.js";

export type PlanActionType = "ADD" | "CHANGE" | "REMOVE" | "NOOP";

/** One plugin's part of a plan. */
export interface PlanAction {
  type: PlanActionType;
  name: string;
  reason: string;
  from?: { version: string | undefined; dependency: string; linked: boolean };
  to?: { version: string | undefined; spec: string; source: SourceKind };
  /** Stored feature selection before and after (only when a plugin stays or arrives). */
  features?: { from: string[] | null | undefined; to: string[] | null };
  /** `enable`/`disable`: the enabled state at the action's scope, before and after. */
  enabled?: { scope: "user" | "project"; from: boolean; to: boolean };
  /** `config set/delete`: one setting at the action's scope (values masked when secret; undefined: unset). */
  setting?: { scope: "user" | "project"; key: string; secret: boolean; from: unknown; to: unknown };
  apply: ApplyStep;
}

/** The applier's instruction for one action. */
export type ApplyStep =
  | { kind: "none" }
  /** Only the runtime lock changes (features). */
  | { kind: "runtime" }
  /** Install (or replace) the package from a resolved spec. */
  | { kind: "install"; resolved: ResolvedPackage }
  /** Re-resolve an installed dependency: `spec` is given to arborist as `name@spec`. */
  | { kind: "update"; spec: string; scripts: string[] }
  /** Link a folder. */
  | { kind: "link"; target: string; version: string; scripts: string[] }
  /** Put back what a link replaced (dependency null: remove). */
  | { kind: "unlink"; restore: { dependency: string | null; version: string | null; record: InstallRecordEntry | null } }
  | { kind: "remove" }
  /** Only the runtime lock or the project's overrides change (enable, disable, features, config: state-change.ts). */
  | { kind: "state"; scope: "user" | "project" };

/** A plan for one command. */
export interface Plan {
  command: "install" | "uninstall" | "update" | "link" | "unlink" | "enable" | "disable" | "features" | "config";
  actions: PlanAction[];
}

/** True when the plan needs npm's installer (anything but runtime-only changes). */
export function planNeedsInstall(plan: Plan): boolean {
  return plan.actions.some((a) => a.apply.kind !== "none" && a.apply.kind !== "runtime" && a.apply.kind !== "state");
}

/** The stored feature selection after an install with `selection`. Throws EUNKNOWN_FEATURE. */
export function nextFeatures(
  name: string,
  manifest: PluginManifest,
  selection: FeatureSelection,
  current: string[] | null | undefined,
): { features: string[] | null; dropped: string[] } {
  const declared = declaredFeatures(manifest);
  if (selection === "*") return { features: declared.length > 0 ? declared : null, dropped: [] };
  if (Array.isArray(selection)) {
    const unknown = selection.filter((f) => !declared.includes(f));
    if (unknown.length > 0) throw unknownFeatureError(name, unknown, manifest);
    return { features: selection, dropped: [] };
  }
  if (current === undefined || current === null) return { features: null, dropped: [] };
  const kept = current.filter((f) => f === "*" || declared.includes(f));
  return { features: kept, dropped: current.filter((f) => !kept.includes(f)) };
}

function sameList(a: string[] | null | undefined, b: string[] | null | undefined): boolean {
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? null) === (b ?? null);
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function find(inventory: InstalledPlugin[], name: string): InstalledPlugin | undefined {
  return inventory.find((p) => p.name === name);
}

function fromOf(current: InstalledPlugin) {
  return { version: current.version, dependency: current.dependency, linked: current.linked };
}

/** Plan `install <spec>...` from resolved packages. */
export function planInstall(inventory: InstalledPlugin[], resolved: ResolvedPackage[], options: { allowScripts?: boolean } = {}): Plan {
  const actions: PlanAction[] = resolved.map((pkg) => {
    const current = find(inventory, pkg.name);
    const { features, dropped } = nextFeatures(pkg.name, pkg.manifest, pkg.spec.features, current ? (current.runtime?.enabledFeatures ?? null) : undefined);
    const to = { version: pkg.version, spec: pkg.spec.npmSpec, source: pkg.spec.source };
    const featureChange = { from: current?.runtime?.enabledFeatures, to: features };
    const droppedNote = dropped.length > 0 ? `; features ${dropped.join(", ")} no longer exist and were dropped` : "";
    if (!current) {
      return { type: "ADD", name: pkg.name, reason: `install ${pkg.name}@${pkg.version} from ${describeSource(pkg)}`, to, features: featureChange, apply: { kind: "install", resolved: pkg } };
    }
    const sameSource = (current.record?.source ?? "registry") === "registry";
    // Scripts now allowed but never run: reinstall so that they run.
    const scriptsPending = options.allowScripts === true && pkg.scripts.length > 0 && current.record?.scriptsRan !== true;
    const registryNoop = pkg.spec.source === "registry" && !current.linked && current.version === pkg.version && sameSource && !current.problem && !scriptsPending;
    if (registryNoop) {
      if (sameList(current.runtime?.enabledFeatures ?? null, features) && current.runtime !== undefined) {
        return { type: "NOOP", name: pkg.name, reason: `${pkg.name}@${pkg.version} is already installed`, from: fromOf(current), to, features: featureChange, apply: { kind: "none" } };
      }
      return { type: "CHANGE", name: pkg.name, reason: `${pkg.name}@${pkg.version} is installed; features change${droppedNote}`, from: fromOf(current), to, features: featureChange, apply: { kind: "runtime" } };
    }
    const what = current.linked
      ? `replace the link to ${current.linkTarget ?? "?"} with ${pkg.name}@${pkg.version}`
      : current.version === pkg.version
        ? `reinstall ${pkg.name}@${pkg.version} from ${describeSource(pkg)}${scriptsPending ? ` to run its install scripts (${pkg.scripts.join(", ")})` : ""}`
        : `${pkg.name} ${current.version ?? "(missing)"} → ${pkg.version}`;
    return { type: "CHANGE", name: pkg.name, reason: `${what}${droppedNote}`, from: fromOf(current), to, features: featureChange, apply: { kind: "install", resolved: pkg } };
  });
  return { command: "install", actions };
}

function describeSource(pkg: ResolvedPackage): string {
  switch (pkg.spec.source) {
    case "registry":
      return "the registry";
    case "tarball":
      return `tarball ${recordedSpec(pkg.spec)}`;
    case "remote":
      return pkg.spec.npmSpec;
    case "directory":
      return `folder ${recordedSpec(pkg.spec)}`;
    case "git":
      return pkg.spec.npmSpec;
    default:
      return pkg.spec.npmSpec;
  }
}

/** `ENOT_INSTALLED` naming the installed plugins. */
export function notInstalled(name: string, inventory: InstalledPlugin[]): XcshToolsError {
  const names = inventory.map((p) => p.name);
  return new XcshToolsError("ENOT_INSTALLED", `${name} is not installed`, {
    hint: names.length > 0 ? `${didYouMean(name, names)}Installed plugins: ${names.join(", ")}.` : "No plugin is installed; see `xcsh-tools list`.",
  });
}

/** Plan `uninstall <name>...`. An unknown name is `ENOT_INSTALLED` (nothing is changed). */
export function planUninstall(inventory: InstalledPlugin[], names: string[]): Plan {
  assertNoneRequired(names, "uninstall");
  const actions: PlanAction[] = [...new Set(names)].map((name) => {
    const current = find(inventory, name);
    if (!current) throw notInstalled(name, inventory);
    return { type: "REMOVE", name, reason: current.linked ? `remove the link to ${current.linkTarget ?? "?"}` : `remove ${name}@${current.version ?? "?"}`, from: fromOf(current), apply: { kind: "remove" } };
  });
  return { command: "uninstall", actions };
}

/** What the registry says about one installed dependency (outdated.ts). */
export interface VersionInfo {
  name: string;
  current: string | undefined;
  /** Highest version the saved range allows (null: not a registry dependency). */
  wanted: string | null;
  /** The `latest` dist-tag. */
  latest: string | null;
}

/** Plan `update [name...]`: within the saved range, or to `latest` with `latest: true`. */
export function planUpdate(inventory: InstalledPlugin[], infos: VersionInfo[], options: { names: string[]; latest: boolean }): Plan {
  const wanted = options.names.length > 0 ? options.names : inventory.map((p) => p.name);
  const actions: PlanAction[] = wanted.map((name) => {
    const current = find(inventory, name);
    if (!current) throw notInstalled(name, inventory);
    const info = infos.find((i) => i.name === name);
    const from = fromOf(current);
    if (current.linked) return { type: "NOOP", name, reason: `linked to ${current.linkTarget ?? "?"}: update it there`, from, apply: { kind: "none" } };
    const source = current.record?.source ?? "registry";
    if (source === "git") {
      return { type: "CHANGE", name, reason: `re-resolve ${current.dependency}`, from, to: { version: undefined, spec: current.dependency, source }, apply: { kind: "update", spec: current.dependency, scripts: current.scripts } };
    }
    if (!info || info.wanted === null) {
      // The recorded spec of a folder or tarball is its absolute path (spec.ts recordedSpec): the
      // command to run again; the dependency names our packed copy of it.
      const local = source === "directory" || source === "tarball";
      const origin = local ? `${source === "directory" ? "folder" : "tarball"} ${current.record?.spec ?? "?"}` : current.dependency;
      return { type: "NOOP", name, reason: `installed from ${origin}: reinstall it to update${local && current.record ? ` (\`xcsh-tools install ${current.record.spec}\`)` : ""}`, from, apply: { kind: "none" } };
    }
    const target = options.latest ? info.latest : info.wanted;
    if (!target || target === current.version) {
      const beyond = !options.latest && info.latest && info.latest !== current.version ? ` (latest is ${info.latest}: \`xcsh-tools update --latest ${name}\`)` : "";
      return { type: "NOOP", name, reason: `${name}@${current.version ?? "?"} is up to date${beyond}`, from, apply: { kind: "none" } };
    }
    const spec = options.latest ? "latest" : current.dependency;
    return { type: "CHANGE", name, reason: `${name} ${current.version ?? "(missing)"} → ${target}${options.latest ? " (latest)" : ` (within ${current.dependency})`}`, from, to: { version: target, spec, source: "registry" }, apply: { kind: "update", spec, scripts: current.scripts } };
  });
  return { command: "update", actions };
}

/** Plan `link <folder>` of package `name`@`version` at `target` (absolute). */
export function planLink(inventory: InstalledPlugin[], link: { name: string; version: string; target: string; scripts: string[]; manifest: PluginManifest }): Plan {
  const loaded = loadManagedPolicy();
  assertNotForbidden(policyForChange(loaded), link.name, loaded.file);
  const current = find(inventory, link.name);
  const to = { version: link.version, spec: `file:${link.target}`, source: "link" as const };
  const base = { name: link.name, to, features: { from: current?.runtime?.enabledFeatures, to: current?.runtime?.enabledFeatures ?? null } };
  const apply: ApplyStep = { kind: "link", target: link.target, version: link.version, scripts: link.scripts };
  if (!current) return { command: "link", actions: [{ type: "ADD", reason: `link ${link.name} to ${link.target}`, ...base, apply }] };
  if (current.linked && current.linkTarget === link.target) {
    return { command: "link", actions: [{ type: "NOOP", reason: `${link.name} is already linked to ${link.target}`, from: fromOf(current), ...base, apply: { kind: "none" } }] };
  }
  return { command: "link", actions: [{ type: "CHANGE", reason: `link ${link.name} to ${link.target} (replacing ${current.linked ? `the link to ${current.linkTarget ?? "?"}` : `${current.version ?? "?"}; unlink puts it back`})`, from: fromOf(current), ...base, apply }] };
}

/** Plan `unlink <name>`: put back what the link replaced. */
export function planUnlink(inventory: InstalledPlugin[], name: string): Plan {
  const current = find(inventory, name);
  if (!current) throw notInstalled(name, inventory);
  if (!current.linked) {
    throw new XcshToolsError("ENOT_LINKED", `${name} is not a linked plugin (it is installed from ${current.dependency})`, { hint: "Use `xcsh-tools uninstall` to remove it." });
  }
  const over = current.record?.linkedOver;
  const restore = {
    dependency: over?.dependency ?? null,
    version: over?.version ?? null,
    record: (over?.record as InstallRecordEntry | null | undefined) ?? null,
  };
  if (restore.dependency !== null) checkRestoredSpec(name, restore.dependency, restore.record);
  if (restore.dependency === null) {
    return { command: "unlink", actions: [{ type: "REMOVE", name, reason: `remove the link to ${current.linkTarget ?? "?"} (nothing was installed before it)`, from: fromOf(current), apply: { kind: "unlink", restore } }] };
  }
  return {
    command: "unlink",
    actions: [{ type: "CHANGE", name, reason: `remove the link and put back ${name}@${restore.version ?? "?"} (${restore.dependency})`, from: fromOf(current), to: { version: restore.version ?? undefined, spec: restore.dependency, source: restore.record?.source ?? "registry" }, apply: { kind: "unlink", restore } }],
  };
}

/**
 * The dependency `unlink` restores is read back from our record, so it passes the gate every spec
 * of the plugins package.json passes (dependencySpecIssue: no option-shaped git URL or ref, no
 * local repository the user did not type), and, being what package.json held before the link, a
 * `file:` spec may only name a packed source inside the plugins folder (`file:.xcsh-tools/packed/…`).
 */
function checkRestoredSpec(name: string, spec: string, record: InstallRecordEntry | null): void {
  const at = `/plugins/${name}/linkedOver/dependency`;
  const where = "xcsh-tools' install record (installs.json)";
  const remedy = "If you did not write this spec, `xcsh-tools uninstall` the plugin and install it again.";
  const issue = dependencySpecIssue(name, spec, at, { localGit: () => isLocalGitEntry(record ?? undefined) }, remedy);
  if (issue) throw new XcshToolsError(issue.code, `${where} ${issue.message}`, { path: at, hint: `${issue.hint} Nothing was changed.` });
  const parsed = npa.resolve(name, spec, "/");
  if (parsed.type !== "file" && parsed.type !== "directory") return;
  const rel = spec.replace(/^file:/, "");
  const packed = path.posix.normalize(rel);
  if (path.isAbsolute(rel) || rel.includes("\\") || !packed.startsWith(`${PACKED_REL}/`) || packed.split("/").includes("..")) {
    throw new XcshToolsError("EPATH_OUTSIDE", `${where} ${at}: ${JSON.stringify(spec)} is not a packed source of the plugins folder; unlink restores only what an install put there`, { path: at, hint: `Expected file:${PACKED_REL}/<file>.tgz. Nothing was changed. ${remedy}` });
  }
}

/** The plan as the `--json` document and the human lines show it (no resolved internals). */
export function planJson(plan: Plan) {
  return {
    command: plan.command,
    actions: plan.actions.map((a) => ({
      type: a.type,
      name: a.name,
      reason: a.reason,
      ...(a.from ? { from: a.from } : {}),
      ...(a.to ? { to: a.to } : {}),
      ...(a.features ? { features: { from: a.features.from ?? null, to: a.features.to } } : {}),
      ...(a.enabled ? { enabled: a.enabled } : {}),
      ...(a.setting ? { setting: { ...a.setting, from: a.setting.from ?? null, to: a.setting.to ?? null } } : {}),
    })),
  };
}
