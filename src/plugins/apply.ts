/**
 * The applier: turns a plan into the new plugins folder, staged, validated, then swapped in by
 * the journal in one commit (mutation.ts wraps it in the lock and the transaction).
 *
 * Why arborist reifies a COPY: `npm install` into a live node_modules is
 * not safe to interrupt (npm/cli#4383) and a host starting meanwhile would load a half-written
 * tree. So, inside the transaction's own folder:
 *
 *     work/package.json, work/package-lock.json, work/node_modules, work/.xcsh-tools/packed
 *         copied from the live folder (work-copy.ts; rebased: links outside the tree stay right)
 *     arborist.reify({add, rm, save: true, ignoreScripts: true}) in work/
 *         npm's own resolution, dedupe and lockfile; no script runs
 *     consent: the hook and extension modules, and the install scripts --allow-scripts would run
 *     arborist.rebuild({nodes}) of the added and changed packages: their scripts, only when
 *         allowed and after the answer (install-scripts.ts)
 *     validate every added or changed plugin in work/ (validatePath: static checks, tools
 *         loaded in a child process) — one failure fails the whole command, nothing is left behind
 *     rebase work/ back to the live location, move each piece into its journal slot
 *     stage the runtime lock and our record (state.ts)
 *
 * and commit swaps all of it in. Until the commit record the live folder is untouched, so any
 * failure — a bad tarball, a validation error, a full disk, a thrown error, SIGINT, kill -9 —
 * leaves package.json, package-lock.json, node_modules and xcsh-plugins.lock.json exactly as
 * they were (the journal deletes the work folder with the transaction).
 *
 * Local sources are made self-contained: a folder is packed (pacote, like `npm pack`) and a
 * tarball file copied into `<ours>/packed/`, and installed from there as
 * `file:.xcsh-tools/packed/<file>.tgz` (relative to the plugins folder, so it reads the same in
 * work/ and live). Reinstalling, `doctor --fix` and `unlink` then never depend on the user's
 * folder still existing. A linked plugin (`link <path>`) is the exception by design: it is a
 * symlink arborist creates (install-links off), saved as `file:<absolute path>` in package.json
 * so the host finds it through `dependencies`. Arborist installs a linked
 * folder's own dependencies inside that folder, as npm does.
 *
 * A change arborist would only write down — a new link to a folder with nothing to install, the
 * unlink of a link that replaced nothing, an uninstall — skips the copy and the reify: its files
 * are written by hand exactly as arborist writes them (direct-edit.ts), validated and staged the
 * same way, in the same transaction.
 *
 * Named steps (for progress and the tests' fault injection): `apply:planned`, `apply:copied`,
 * `apply:packed`, `reify:start`, `reify:done`, `validate:<name>`, `apply:staged`, plus the
 * journal's own (`track:*`, `stage:*`, `commit:*`).
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { ExecutableRequest } from "../components/consent.js";
import { STATE_FILE_MODE, jsonText } from "../core/atomic-fs.js";
import { XcshToolsError } from "../core/errors.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import type { PluginManifest } from "../manifest/plugin-manifest.js";
import { runtimeEnabled } from "../manifest/runtime-lock.js";
import { nextFeatures, planNeedsInstall, type Plan, type PlanAction } from "./plan.js";
import { loadInventory, readInstalledPackage, type InstalledPlugin } from "./inventory.js";
import { runMutation, type Mutation, type MutationWorld } from "./mutation.js";
import { failOnFullDisk, loadArborist, loadPacote, npmError, npmOptions, type NpmClientOptions } from "./npm-client.js";
import {
  stageStateWrites,
  stateFiles,
  withRecordEntry,
  withRuntimePlugin,
  withStoredSecrets,
  withoutRuntimePlugin,
  type InstallRecord,
  type InstallRecordEntry,
  type PluginsPaths,
  type PluginsState,
  type StateFiles,
} from "./state.js";
import type { ArboristDiff, ArboristNode } from "@npmcli/arborist";
import type { ExactPlacement } from "./pinned-placement.js";
import { changedNodes, runInstallScripts, scriptsByPlugin, type PendingScript } from "./install-scripts.js";
import { copyToWork, PACKED_REL, stageWork, type WorkCopy } from "./work-copy.js";
import type { DirectEdit } from "./direct-edit.js";
import { recordedSpec } from "./spec.js";

export interface ApplyOptions {
  client: NpmClientOptions;
  cwd: string;
  /** Extra built-in tool names for validation. */
  builtins?: readonly string[];
  /** Time one tool module may take at validation. */
  moduleTimeoutMs?: number;
  /** Make the plan again from the state read under the lock (pure planner). */
  replan: (inventory: InstalledPlugin[], state: PluginsState) => Plan;
  progress?: (message: string) => void;
  /** Clock (for `installedAt`). */
  now?: () => Date;
  /**
   * Called, after npm's installer and before validation imports anything or anything is
   * committed, for each added or changed plugin whose hook or extension modules change; it
   * throws to refuse (the whole change is rolled back). The CLI's asks the user (cli/consent.ts).
   */
  approveExecutables?: (request: ExecutableRequest) => Promise<void>;
  /** Stage more files in the same transaction before its commit (a team restore's host files and lock: plugins/team.ts). */
  stageMore?: (m: Mutation) => Promise<void>;
  /**
   * A team restore's exact install (plugins/team.ts): the plugins of `names` are not handed to
   * arborist as `add` specs; `prepare` writes those of them the plan installs, with their locked
   * dependencies, into the work copy's package.json and package-lock.json, so that reify installs
   * exactly that tree; `verify` checks the reified copy before anything is validated or staged.
   */
  pinned?: { names: ReadonlySet<string>; prepare(dir: string, names: string[]): Promise<void>; verify(dir: string, placed?: ExactPlacement["packages"]): Promise<void> };
  /** Adjust our record before it is staged (a team restore's `team`/`personal` marks): `had` names the plugins installed before. */
  patchRecord?: (before: InstallRecord, after: InstallRecord, had: ReadonlySet<string>) => InstallRecord;
}

/** One plugin as it ended up. */
export interface AppliedPlugin {
  name: string;
  type: PlanAction["type"];
  version: string | undefined;
  scripts: string[];
  scriptsRan: boolean;
}

export interface ApplyResult {
  plan: Plan;
  plugins: AppliedPlugin[];
  changed: boolean;
}

function packedFileName(name: string, version: string, integrity: string): string {
  const hash = createHash("sha256").update(integrity).digest("hex").slice(0, 10);
  return `${name.replace(/^@/, "").replace(/\//g, "-")}-${version}-${hash}.tgz`;
}

function readJson(file: string): Record<string, unknown> | undefined {
  const value = readJsonOrUndefined(file);
  return isRecord(value) ? value : undefined;
}

/** Apply `plan` (made again under the lock) as one transaction. */
export async function applyPlan(world: MutationWorld, label: string, options: ApplyOptions): Promise<ApplyResult> {
  return runMutation(world, label, async (m) => {
    const inventory = await loadInventory(m.state);
    const plan = options.replan(inventory, m.state);
    await m.step("apply:planned");
    const before = stateFiles(m.state);
    let result: ApplyResult;
    if (!plan.actions.some((a) => a.type !== "NOOP")) {
      result = { plan, plugins: [], changed: false };
      if (options.patchRecord) await stageStateWrites(m.tx, m.paths, before, { ...before, record: patchedRecord(options, before, before.record, inventory) });
    } else if (!planNeedsInstall(plan)) {
      const runtime = runtimeOnly(plan, before, inventory);
      const after = { ...runtime, record: patchedRecord(options, before, runtime.record, inventory) };
      await stageStateWrites(m.tx, m.paths, before, after);
      await m.step("apply:staged");
      result = { plan, plugins: plan.actions.map((a) => ({ name: a.name, type: a.type, version: a.to?.version, scripts: [], scriptsRan: false })), changed: true };
    } else result = await reifyAndStage(m, plan, inventory, before, options);
    if (options.stageMore) await options.stageMore(m);
    return result;
  });
}

/** Where validation's child keeps what it writes: a scratch root inside the transaction. */
function validationRoots(options: ApplyOptions, scratch: string): { home: string; xcshHome: string; cacheDir: string } {
  return { home: options.client.home, xcshHome: scratch, cacheDir: path.join(scratch, "transpile") };
}

/** Our record after `options.patchRecord`, if any. */
function patchedRecord(options: ApplyOptions, before: StateFiles, record: InstallRecord, inventory: readonly InstalledPlugin[]): InstallRecord {
  return options.patchRecord ? options.patchRecord(before.record, record, new Set(inventory.map((p) => p.name))) : record;
}

function runtimeOnly(plan: Plan, before: StateFiles, inventory: InstalledPlugin[]): StateFiles {
  let runtimeLock = before.runtimeLock;
  for (const action of plan.actions) {
    if (action.apply.kind !== "runtime") continue;
    const current = inventory.find((p) => p.name === action.name);
    runtimeLock = withRuntimePlugin(runtimeLock, action.name, {
      version: current?.version ?? action.to?.version,
      enabledFeatures: action.features?.to ?? null,
      enabled: runtimeEnabled(current?.runtime),
    });
  }
  return { ...before, runtimeLock };
}

async function reifyAndStage(m: Mutation, plan: Plan, inventory: InstalledPlugin[], before: StateFiles, options: ApplyOptions): Promise<ApplyResult> {
  const progress = options.progress ?? (() => undefined);
  const scratch = path.join(m.tx.dir, "validate-home");
  await warmUpChecker(plan, options, scratch, m.paths);
  // A link or unlink whose files are known exactly skips npm's installer (direct-edit.ts says why
  // and when); install scripts to run after consent need arborist's tree, so they never take it.
  if (!options.pinned && !options.client.allowScripts) {
    const edit = await (await import("./direct-edit.js")).planDirectEdit(m.state, m.paths, plan);
    if (edit) return stageDirectEdit(m, plan, inventory, before, edit, { options, scratch });
  }

  progress("Preparing a staging copy of the plugins folder");
  const copy = await copyToWork(m);
  await m.step("apply:copied");
  const request = await arboristRequest(plan, copy, options);
  const pinned = options.pinned;
  if (pinned) await pinned.prepare(copy.dir, plan.actions.filter((a) => a.apply.kind === "install" && pinned.names.has(a.name)).map((a) => a.name));
  await m.step("apply:packed");
  const { savedDeps, scripts, placed }: Awaited<ReturnType<typeof reifyCopy>> & { placed?: ExactPlacement["packages"] } =
    (pinned && (await placeExactly(m, copy, request, options))) || (await reifyCopy(m, plan, copy, request, options));
  if (pinned) await pinned.verify(copy.dir, placed);
  const arrived = await readArrived(plan, (name) => path.join(copy.nodeModules, name));
  if (options.approveExecutables) await approveModules(options.approveExecutables, plan.actions, arrived, inventory, { liveNodeModules: m.paths.nodeModules, scripts: scripts.byPlugin });
  const withScripts = [...scripts.byPlugin].filter(([, list]) => list.length > 0).map(([name]) => name);
  if (withScripts.length > 0) {
    // Only now, after the answer: the scripts run in the staging copy, before validation.
    options.progress?.(`Running install scripts (${namesLabel(withScripts)})`);
    await runInstallScripts(scripts.nodes, copy.dir, options.client, [...arrived.keys()].join(" "));
    if (m.signal.aborted) throw new XcshToolsError("EABORTED", "Interrupted; the change was rolled back", { hint: "Nothing was changed." });
    await m.step("scripts:done");
  }
  await validateArrived(m, plan, arrived, { options, scratch, root: copy.dir });
  const { applied, runtimeLock, record: next } = nextInstallState(plan, inventory, before, arrived, savedDeps, options);
  const record = patchedRecord(options, before, next, inventory);
  // Settings of removed plugins go with them (withoutRuntimePlugin); of others, they stay.
  await collectPacked(copy.dir, copy.packed, record);

  // Back to live-relative references, then into the journal's slots.
  await stageWork(m, copy, ["packageJson", "packageLock", "nodeModules", "packed"]);
  for (const name of arrived.keys()) m.added.push(path.join(m.paths.nodeModules, name));
  await stageStateWrites(m.tx, m.paths, before, { packageJson: before.packageJson, runtimeLock, record });
  await m.step("apply:staged");
  progress("Committing");
  return { plan, plugins: applied, changed: true };
}

/** Validate and stage a direct edit (direct-edit.ts): the same checks and state as after a reify, without it. */
async function stageDirectEdit(m: Mutation, plan: Plan, inventory: InstalledPlugin[], before: StateFiles, edit: DirectEdit, how: { options: ApplyOptions; scratch: string }): Promise<ApplyResult> {
  const { options } = how;
  const arrived = await readArrived(plan, (name) => edit.links.get(name) ?? path.join(m.paths.nodeModules, name));
  if (options.approveExecutables) await approveModules(options.approveExecutables, plan.actions, arrived, inventory, { liveNodeModules: m.paths.nodeModules, scripts: new Map() });
  await validateArrived(m, plan, arrived, { ...how, root: m.paths.plugins });
  const { applied, runtimeLock, record } = nextInstallState(plan, inventory, before, arrived, edit.dependencies, options);
  // The links and removals first, the hidden lockfile after them: arborist trusts it only when it
  // is not older than the folders of node_modules.
  for (const [name, target] of edit.links) {
    const live = path.join(m.paths.nodeModules, name);
    await symlink(path.relative(path.dirname(live), target), await m.tx.stage(live));
    m.added.push(live);
  }
  for (const removal of edit.removals) await m.tx.stageRemoval(removal, m.paths.nodeModules);
  await writeFile(await m.tx.stage(m.paths.packageLock), edit.packageLock, { mode: STATE_FILE_MODE });
  await writeFile(await m.tx.stage(path.join(m.paths.nodeModules, ".package-lock.json")), edit.hiddenLock, { mode: STATE_FILE_MODE });
  const packageJson = { ...(before.packageJson ?? {}), dependencies: edit.dependencies } as StateFiles["packageJson"];
  await stageStateWrites(m.tx, m.paths, before, { packageJson, runtimeLock, record: patchedRecord(options, before, record, inventory) });
  await m.step("apply:staged");
  options.progress?.("Committing");
  return { plan, plugins: applied, changed: true };
}

/**
 * Start the module checker now, when the plan validates anything: its own start (the loader, the
 * TypeBox it hands to tools, and for the validation roots the module map) overlaps copying,
 * fetching and extracting instead of following them.
 */
async function warmUpChecker(plan: Plan, options: ApplyOptions, scratch: string, paths: PluginsPaths): Promise<void> {
  const validated = plan.actions.filter(needsValidation);
  if (validated.length === 0) return;
  // Links of folders `link` checked before, unchanged: their records answer, no child (validate-installed.ts decides).
  if (validated.every((action) => action.apply.kind === "link") && (await recordsAnswerLinks(validated, paths))) return;
  (await import("../validate/module-check.js")).warmUpChecker({ cwd: options.cwd, ...validationRoots(options, scratch) });
}

/** Whether each linked folder of `actions` is, as it is now, one the boot index holds `link`'s records of (a guess for the warm-up only). */
async function recordsAnswerLinks(actions: readonly PlanAction[], paths: PluginsPaths): Promise<boolean> {
  const { linkRecorded } = await import("../boot/prevalidated.js");
  for (const action of actions) if (action.apply.kind !== "link" || !(await linkRecorded(action.apply.target, paths.bootModules))) return false;
  return true;
}

/** The specs arborist adds and the names it removes, and dependencies to restore exactly after it saves. */
interface ArboristRequest {
  add: string[];
  rm: string[];
  fixDependency: Map<string, string>;
}

/** Translate the plan into arborist's `add` and `rm`, packing local sources into the copy. */
async function arboristRequest(plan: Plan, copy: WorkCopy, options: ApplyOptions): Promise<ArboristRequest> {
  const request: ArboristRequest = { add: [], rm: [], fixDependency: new Map() };
  for (const action of plan.actions) {
    const step = action.apply;
    switch (step.kind) {
      case "install": {
        const r = step.resolved;
        // A pinned plugin is written into the copy's lockfile instead (ApplyOptions.pinned).
        if (options.pinned?.names.has(r.name)) {
          if (action.type === "CHANGE") await rm(path.join(copy.nodeModules, r.name), { recursive: true, force: true });
          break;
        }
        if (r.spec.source === "directory" || r.spec.source === "tarball") {
          // Absolute here (arborist resolves add specs against the process cwd); it saves the
          // spec relative to the root: `file:.xcsh-tools/packed/<file>`, the same in work/ and live.
          request.add.push(`${r.name}@file:${copy.packed}/${await packLocal(r.spec.parsed.fetchSpec ?? r.spec.npmSpec, r.name, r.version, r.spec.source, copy.packed, options.client)}`);
        } else {
          request.add.push(r.spec.source === "registry" ? r.spec.npmSpec : `${r.name}@${r.spec.npmSpec}`);
        }
        // A reinstall replaces the package whole (arborist would keep an identical-looking one,
        // and would not run its scripts again).
        if (action.type === "CHANGE") await rm(path.join(copy.nodeModules, r.name), { recursive: true, force: true });
        break;
      }
      case "update":
        request.add.push(`${action.name}@${step.spec}`);
        break;
      case "link":
        request.add.push(`${action.name}@file:${step.target}`);
        request.fixDependency.set(action.name, `file:${step.target}`);
        break;
      case "unlink":
        if (step.restore.dependency === null) request.rm.push(action.name);
        else {
          const dep = step.restore.dependency;
          const relativeFile = dep.startsWith("file:") && !path.isAbsolute(dep.slice(5));
          const exact = relativeFile
            ? `file:${path.resolve(copy.dir, dep.slice(5))}` // relative to the root, not to the cwd
            : step.restore.version && !/^(file:|git|https?:|github:)/.test(dep)
              ? step.restore.version
              : dep;
          request.add.push(`${action.name}@${exact}`);
          request.fixDependency.set(action.name, dep);
        }
        break;
      case "remove":
        request.rm.push(action.name);
        break;
      default:
        break;
    }
  }
  return request;
}

/** Plugin names in a progress line: the first five, then how many more. */
function namesLabel(names: readonly string[]): string {
  return names.length > 5 ? `${names.slice(0, 5).join(", ")} and ${names.length - 5} more` : names.join(", ");
}

/**
 * A pinned restore into an empty plugins folder whose result is known exactly, placed without
 * npm's installer (pinned-placement.ts says when); undefined, having changed nothing, otherwise.
 * The same steps are reported as around a reify, so a fault or a kill lands where it would.
 */
async function placeExactly(m: Mutation, copy: WorkCopy, request: ArboristRequest, options: ApplyOptions): Promise<(Awaited<ReturnType<typeof reifyCopy>> & { placed: ExactPlacement["packages"] }) | undefined> {
  if (request.add.length > 0 || request.rm.length > 0 || request.fixDependency.size > 0 || options.client.allowScripts) return undefined;
  const placement = await (await import("./pinned-placement.js")).exactPlacement(copy.dir, options.client.unpacked);
  if (!placement) return undefined;
  options.progress?.("Placing the locked packages");
  await m.step("reify:start");
  await placement.place();
  if (m.signal.aborted) throw new XcshToolsError("EABORTED", "Interrupted; the change was rolled back", { hint: "Nothing was changed." });
  await m.step("reify:done");
  const workPkg = readJson(copy.packageJson) ?? {};
  return { savedDeps: (isRecord(workPkg.dependencies) ? workPkg.dependencies : {}) as Record<string, string>, scripts: { nodes: [], byPlugin: new Map() }, placed: placement.packages };
}

/** Run arborist on the copy; returns the dependencies the copy's package.json saved. */
async function reifyCopy(m: Mutation, plan: Plan, copy: WorkCopy, request: ArboristRequest, options: ApplyOptions) {
  const { add, rm: rmNames } = request;
  // Plugins by name, never the specs handed to arborist: those name packed tarballs in the journal.
  const added = add.map((spec) => spec.split(/(?<=.)@/)[0]!);
  // In words: a removal once read `(-name)`, which looks like a flag.
  const doing = [added.length > 0 ? namesLabel(added) : "", rmNames.length > 0 ? `removing ${namesLabel(rmNames)}` : ""].filter(Boolean);
  options.progress?.(`Installing with npm's installer${doing.length > 0 ? ` (${doing.join("; ")})` : ""}`);
  await m.step("reify:start");
  const Arborist = await loadArborist();
  const arb = new Arborist({ ...npmOptions(options.client), path: copy.dir });
  try {
    // npmOptions turns scripts off: they run after consent (install-scripts.ts), never here.
    await failOnFullDisk(copy.dir, doing.join("; "), () => arb.reify({ ...(add.length ? { add } : {}), ...(rmNames.length ? { rm: rmNames } : {}), save: true }));
  } catch (error) {
    // A pinned install (ApplyOptions.pinned) adds nothing by spec: the plugins of the plan name it.
    const what = add.join(" ") || rmNames.join(" ") || plan.actions.filter((a) => a.type !== "NOOP").map((a) => a.name).join(" ");
    throw npmError(error, what, options.client, add.length === 1 ? plan.actions[0]?.name : undefined);
  }
  if (m.signal.aborted) throw new XcshToolsError("EABORTED", "Interrupted; the change was rolled back", { hint: "Nothing was changed." });
  await m.step("reify:done");
  if (request.fixDependency.size > 0) await setDependencies(copy.dir, request.fixDependency);
  const workPkg = (readJson(copy.packageJson)) ?? {};
  if (!isRecord(workPkg.dependencies)) {
    // Arborist drops an empty `dependencies`; the host's file always has one.
    workPkg.dependencies = {};
    await writeFile(copy.packageJson, jsonText(workPkg));
  }
  return { savedDeps: workPkg.dependencies as Record<string, string>, scripts: pendingScripts(arb, plan, options.client) };
}

/** The added or changed packages whose install scripts run after consent (none without --allow-scripts), by plugin. */
function pendingScripts(arb: { diff: ArboristDiff | null }, plan: Plan, client: NpmClientOptions): { nodes: ArboristNode[]; byPlugin: Map<string, PendingScript[]> } {
  if (!client.allowScripts) return { nodes: [], byPlugin: new Map() };
  const nodes = changedNodes(arb.diff);
  const byName = new Map(nodes.map((node) => [node.name, node]));
  const plugins = plan.actions.filter(needsValidation).flatMap((action) => {
    const node = byName.get(action.name);
    return node && node.isProjectRoot === false ? [node] : [];
  });
  return { nodes, byPlugin: scriptsByPlugin(nodes, plugins) };
}

/** A plugin that arrived in the copy, read once: its records are made from the same reads (validation changes no package). */
type ArrivedPlugin = Awaited<ReturnType<typeof readInstalledPackage>> & { manifest: PluginManifest };

/** Read every added or changed plugin from the copy; one npm did not produce, or without a manifest, fails. */
async function readArrived(plan: Plan, folderOf: (name: string) => string): Promise<Map<string, ArrivedPlugin>> {
  const arrived = new Map<string, ArrivedPlugin>();
  for (const action of plan.actions.filter(needsValidation)) {
    const dir = folderOf(action.name);
    const installed = await readInstalledPackage(path.dirname(dir), path.basename(dir));
    if (!installed.pkg || installed.pkg.name !== action.name) {
      throw new XcshToolsError("EINSTALL", `npm's installer did not produce ${action.name} in node_modules${installed.problem ? ` (${installed.problem})` : ""}`, { hint: "Retry with --debug; nothing was changed." });
    }
    if (!installed.manifest) throw new XcshToolsError("EPLUGIN_INVALID", `${action.name}@${installed.version ?? "?"}: ${installed.problem ?? "no usable xcsh manifest"}`, { hint: "Run `xcsh-tools validate --static` on the package (it imports nothing); nothing was changed.", exitCode: 2 });
    arrived.set(action.name, { ...installed, manifest: installed.manifest });
  }
  return arrived;
}

/** Validate the arrived plugins, several at once (each validation is a child process that imports the plugin's tools). */
async function validateArrived(m: Mutation, plan: Plan, arrived: Map<string, ArrivedPlugin>, how: { options: ApplyOptions; scratch: string; root: string }): Promise<void> {
  const dirs = [...arrived].map(([name, installed]) => ({ name, dir: installed.dir }));
  if (dirs.length === 0) return;
  const { options } = how;
  options.progress?.(`Validating ${namesLabel(dirs.map((d) => d.name))}`);
  const { validatePlugins } = await import("./validate-installed.js");
  // This process mostly waits for the child now; the boot index refresh after the commit will not.
  void import("../boot/refresh.js").then((boot) => boot.preloadRefresh(), () => undefined);
  // The validator's transpile cache goes into the transaction folder: validation writes nothing live.
  const reports = await validatePlugins(dirs, {
    cwd: options.cwd,
    ...validationRoots(options, how.scratch),
    // Packages resolve in the staged plugins folder (and a linked folder, which keeps its own
    // node_modules), never in the folders above them.
    confineTo: [how.root, ...plan.actions.flatMap((action) => (action.apply.kind === "link" ? [action.apply.target] : []))],
    linked: { folders: new Map(plan.actions.flatMap((action) => (action.apply.kind === "link" ? [[action.name, action.apply.target] as const] : []))), bootModules: m.paths.bootModules },
    ...(options.builtins ? { builtins: options.builtins } : {}),
    ...(options.moduleTimeoutMs ? { moduleTimeoutMs: options.moduleTimeoutMs } : {}),
  });
  for (const report of reports) {
    if (report.errors.length > 0) {
      const apply = plan.actions.find((action) => action.name === report.name)?.apply;
      throw validationError(report.name, report.dir, report.errors, apply?.kind === "link" ? apply.target : undefined);
    }
    await m.step(`validate:${report.name}`);
  }
}

/** The runtime lock, install record and report after the plan, from what arrived. */
function nextInstallState(plan: Plan, inventory: InstalledPlugin[], before: StateFiles, arrived: Map<string, ArrivedPlugin>, savedDeps: Record<string, string>, options: ApplyOptions) {
  const now = options.now ?? (() => new Date());
  const applied: AppliedPlugin[] = [];
  let runtimeLock = before.runtimeLock;
  let record: InstallRecord = before.record;
  for (const action of plan.actions) {
    const current = inventory.find((p) => p.name === action.name);
    if (action.type === "NOOP") continue;
    if (!needsValidation(action)) {
      runtimeLock = withoutRuntimePlugin(runtimeLock, action.name);
      record = withRecordEntry(record, action.name, undefined);
      applied.push({ name: action.name, type: action.type, version: undefined, scripts: [], scriptsRan: false });
      continue;
    }
    const installed = arrived.get(action.name)!; // every plugin that stays was read and checked above
    // Runtime state: kept unless the spec asked otherwise (plan.ts), checked against what arrived.
    const selection = action.apply.kind === "install" ? action.apply.resolved.spec.features : null;
    const stored = current?.runtime?.enabledFeatures;
    const { features } = nextFeatures(action.name, installed.manifest, selection, current ? (stored ?? null) : undefined);
    runtimeLock = withRuntimePlugin(runtimeLock, action.name, { version: installed.version, enabledFeatures: features, enabled: runtimeEnabled(current?.runtime) });
    const wasSecret = Object.entries(current?.manifest?.settings ?? {}).filter(([, schema]) => schema.secret === true).map(([key]) => key);
    runtimeLock = withStoredSecrets(runtimeLock, action.name, wasSecret);
    const scriptsRan = options.client.allowScripts && installed.scripts.length > 0;
    record = withRecordEntry(record, action.name, recordFor(action, current, installed.scripts, scriptsRan, now().toISOString(), savedDeps[action.name]));
    applied.push({ name: action.name, type: action.type, version: installed.version, scripts: installed.scripts, scriptsRan });
  }
  return { applied, runtimeLock, record };
}

/**
 * Ask about the hook and extension modules each arriving plugin adds or changes, compared with
 * the installed version (consent for npm plugins: components/consent.ts says what counts), and
 * about the install scripts it brings that --allow-scripts will run (none has run yet).
 */
/** The package.json key a plugin's manifest is read from: `pi` only for a package that has no `xcsh`. */
export const manifestKeyOf = (pkg: unknown): "pi" | "xcsh" => (isRecord(pkg) && pkg.xcsh === undefined && pkg.pi !== undefined ? "pi" : "xcsh");

async function approveModules(
  approve: (request: ExecutableRequest) => Promise<void>,
  actions: readonly PlanAction[],
  arrived: ReadonlyMap<string, { dir: string; version: string | undefined; manifest: PluginManifest; pkg?: unknown }>,
  inventory: readonly InstalledPlugin[],
  where: { liveNodeModules: string; scripts: ReadonlyMap<string, PendingScript[]> },
): Promise<void> {
  const { npmExecutableChanges, hasChanges } = await import("../components/consent.js");
  for (const action of actions) {
    const next = arrived.get(action.name);
    if (!next) continue;
    const current = inventory.find((p) => p.name === action.name && p.manifest !== undefined);
    const changes = npmExecutableChanges(
      current?.manifest ? { dir: current.dir, manifest: current.manifest, manifestKey: manifestKeyOf(current.pkg) } : undefined,
      { dir: next.dir, manifest: next.manifest, manifestKey: manifestKeyOf(next.pkg) },
      path.join(where.liveNodeModules, action.name),
    );
    const scripts = where.scripts.get(action.name) ?? [];
    if (!hasChanges(changes) && scripts.length === 0) continue;
    await approve({ id: action.name, version: next.version ?? "?", source: "npm", scope: "user", update: current !== undefined, dryRun: false, changes, ...(scripts.length > 0 ? { scripts } : {}) });
  }
}

function recordFor(action: PlanAction, current: InstalledPlugin | undefined, scripts: string[], scriptsRan: boolean, installedAt: string, saved: string | undefined): InstallRecordEntry {
  const step = action.apply;
  // Installed or linked by the user: theirs, whatever team sets also installed it (a team restore re-marks its own: ApplyOptions.patchRecord).
  const team = current?.record?.team;
  const base = { scripts, scriptsRan, installedAt };
  const mine = { ...(team ? { team } : {}), personal: true };
  switch (step.kind) {
    case "install":
      return { spec: recordedSpec(step.resolved.spec), source: step.resolved.spec.source, ...base, ...mine };
    case "link": {
      // Linking over a link keeps what the first link replaced.
      const linkedOver = current?.linked && current.record?.linkedOver
        ? current.record.linkedOver
        : { dependency: current?.dependency ?? null, version: current?.version ?? null, record: current?.record ?? null };
      return { spec: `file:${step.target}`, source: "link", linkTarget: step.target, linkedOver, ...base, ...mine };
    }
    case "unlink":
      return step.restore.record ? { ...step.restore.record, scripts, scriptsRan, installedAt } : { spec: step.restore.dependency ?? "", source: "registry", ...base };
    case "update": {
      const prior = current?.record ?? { spec: action.name, source: "registry" as const };
      // An updated registry plugin is now what its saved range says, not what was first typed.
      return { ...prior, ...(prior.source === "registry" && saved ? { spec: `${action.name}@${saved}` } : {}), ...base };
    }
    default:
      return { spec: current?.dependency ?? action.name, source: "registry", ...base };
  }
}

/** A bare package an import could not find, from Node's or Bun's message. */
const MISSING_PACKAGE = /Cannot find (?:package|module) '((?:@[^/'\s]+\/)?[^/.'\s][^/'\s]*)/;

/**
 * `linkedDir`: the folder of a plugin being linked. A link uses the folder as it is, with its own
 * node_modules (like `npm link`), so a package its tools cannot find usually means nobody ran
 * `npm install` there yet: the hint says so instead of pointing at `validate`.
 */
function validationError(name: string, dir: string, errors: readonly { code: string; file: string; path?: string; message: string }[], linkedDir?: string): XcshToolsError {
  const shown = errors.slice(0, 3).map((e) => `${e.code} ${path.relative(dir, e.file) || "."}${e.path ? ` ${e.path}` : ""}: ${e.message}`);
  const more = errors.length > 3 ? ` (and ${errors.length - 3} more)` : "";
  const missing = linkedDir === undefined ? undefined : errors.map((e) => MISSING_PACKAGE.exec(e.message)?.[1]).find((found) => found !== undefined);
  return new XcshToolsError("EVALIDATE", `${name} failed validation, so it was not installed: ${shown.join("; ")}${more}`, {
    hint:
      missing !== undefined
        ? `Nothing was changed. ${linkedDir} has no ${missing} in its node_modules: a link uses the folder as it is, so run \`npm install\` there first, then link again.`
        : "Nothing was changed. See every problem with `xcsh-tools validate <the plugin's folder>`.",
  });
}

/** Whether `action` leaves a plugin in place whose tools must be checked before it counts. */
function needsValidation(action: Plan["actions"][number]): boolean {
  return action.type !== "NOOP" && action.apply.kind !== "remove" && !(action.apply.kind === "unlink" && action.apply.restore.dependency === null);
}

/** Pack a folder or copy a tarball into `packedDir`; returns the file name. */
async function packLocal(source: string, name: string, version: string, kind: "directory" | "tarball", packedDir: string, client: NpmClientOptions): Promise<string> {
  await mkdir(packedDir, { recursive: true });
  let bytes: Buffer;
  try {
    if (kind === "tarball") bytes = await readFile(source);
    else {
      const pacote = await loadPacote();
      // Packing a folder needs arborist (pacote's DirFetcher reads the folder's tree with it).
      bytes = await pacote.tarball(`file:${source}`, { ...npmOptions(client), Arborist: await loadArborist() } as never);
    }
  } catch (error) {
    throw npmError(error, source, client);
  }
  const file = packedFileName(name, version, createHash("sha512").update(bytes).digest("base64"));
  await writeFile(path.join(packedDir, file), bytes);
  return file;
}

/** Set package.json (and the lockfile's root) dependency values arborist would save otherwise. */
async function setDependencies(work: string, values: Map<string, string>): Promise<void> {
  const pkgFile = path.join(work, "package.json");
  const pkg = (readJson(pkgFile)) ?? {};
  const deps = isRecord(pkg.dependencies) ? pkg.dependencies : {};
  for (const [name, spec] of values) deps[name] = spec;
  pkg.dependencies = deps;
  await writeFile(pkgFile, jsonText(pkg));
  const lockFile = path.join(work, "package-lock.json");
  const lock = readJson(lockFile);
  const root = lock && isRecord(lock.packages) && isRecord(lock.packages[""]) ? lock.packages[""] : undefined;
  if (lock && root) {
    const rootDeps = isRecord(root.dependencies) ? root.dependencies : {};
    for (const [name, spec] of values) rootDeps[name] = spec;
    root.dependencies = rootDeps;
    await writeFile(lockFile, jsonText(lock));
  }
}

/** Drop packed tarballs nothing refers to any more (package.json or a link's saved past). */
async function collectPacked(work: string, packedDir: string, record: InstallRecord): Promise<void> {
  let files: string[];
  try {
    files = await readdir(packedDir);
  } catch {
    return;
  }
  const pkg = (readJson(path.join(work, "package.json"))) ?? {};
  const refs = new Set<string>();
  const note = (spec: unknown) => {
    if (typeof spec === "string" && spec.startsWith(`file:${PACKED_REL}/`)) refs.add(spec.slice(`file:${PACKED_REL}/`.length));
  };
  for (const spec of Object.values(isRecord(pkg.dependencies) ? pkg.dependencies : {})) note(spec);
  for (const entry of Object.values(record.plugins)) note(entry.linkedOver?.dependency);
  for (const file of files) if (!refs.has(file)) await rm(path.join(packedDir, file), { force: true });
  if ((await readdir(packedDir)).length === 0) await rm(packedDir, { recursive: true, force: true });
}
