/**
 * Doctor's checks of the npm plugins folder (`~/.xcsh/plugins`), read the way the host reads it
 * and then some:
 *
 *   plugins folder  the folder, package.json, node_modules, the runtime lock, our record, each
 *                   read strictly (a malformed file is an error naming it, never "empty")
 *   plugins         every dependency: installed, readable, an xcsh plugin, its manifest entries
 *                   (tools, hooks, extensions, commands, features) checked by validate's own
 *                   static checks, linked folders that still exist, its runtime entry
 *                   (runtime-repair.ts), orphans of the runtime lock, the record and node_modules
 *   lockfile        npm's package-lock.json against package.json and against node_modules:
 *                   every locked package present at its version, and installed from the same
 *                   tarball (`integrity`/`resolved` of arborist's hidden lockfile
 *                   node_modules/.package-lock.json, which records what was actually reified)
 *
 * Reads only; every problem says what `--fix` does about it (`repair`) or why it cannot (`manual`).
 */
import { lstat, readdir, readlink } from "node:fs/promises";
import path from "node:path";
import { Type } from "../manifest/typebox.js";
import type { XcshRoots } from "../core/paths.js";
import { readJsonFile } from "../manifest/json-file.js";
import { validatePluginsPackageJson } from "../manifest/plugins-package.js";
import { isRecord } from "../manifest/result.js";
import { checkSchema } from "../manifest/schema-check.js";
import { runtimeEnabled, validateRuntimeLock } from "../manifest/runtime-lock.js";
import { dependencyNames, loadInventory, type InstalledPlugin } from "../plugins/inventory.js";
import { EMPTY_INSTALL_RECORD, InstallRecordSchema, dependenciesOf, isTypedLocalGit, pluginsPaths, stateFiles, type InstallRecord, type PluginsState } from "../plugins/state.js";
import { ValidateRun } from "../validate/run.js";
import { checkPluginPackage } from "../validate/static-checks.js";
import { repairRuntimeState } from "./runtime-repair.js";
import { AreaFindings, readDoc, type Read } from "./world.js";

/** What the plugins checks found, for the areas after them and for `--fix`. */
export interface PluginsDiagnosis {
  folder: AreaFindings;
  plugins: AreaFindings;
  lockfile: AreaFindings;
  /** The state, when package.json and the runtime lock could be read. */
  state: PluginsState | undefined;
  inventory: InstalledPlugin[];
}

const manualStateFile = "doctor does not rewrite a file it cannot read (that would lose what is in it); fix it by hand or move it away";

/** Every check of the plugins folder. */
export async function checkPlugins(roots: XcshRoots): Promise<PluginsDiagnosis> {
  const paths = pluginsPaths(roots);
  const folder = new AreaFindings("plugins folder");
  const plugins = new AreaFindings("plugins");
  const lockfile = new AreaFindings("lockfile");
  const result: PluginsDiagnosis = { folder, plugins, lockfile, state: undefined, inventory: [] };

  const dirInfo = await lstat(paths.plugins).catch(() => undefined);
  if (!dirInfo) {
    folder.ok("plugins:folder", `${paths.plugins} does not exist yet (no npm plugin installed)`);
    return result;
  }
  if (!dirInfo.isDirectory()) {
    folder.problem("plugins:folder", "error", `${paths.plugins} is not a folder`, { hint: "Move it away; xcsh-tools creates the folder at the next install.", manual: "doctor does not move your files" });
    return result;
  }
  folder.ok("plugins:folder", `found ${paths.plugins}`);
  const state = await readPluginsState(paths, folder, lockfile);
  if (!state) return result;
  result.state = state;
  const deps = dependenciesOf(state.packageJson);
  const names = Object.keys(deps);

  const nmInfo = await lstat(paths.nodeModules).catch(() => undefined);
  if (!nmInfo) {
    if (names.length > 0) folder.problem("plugins:node-modules", "error", `${paths.nodeModules} is missing, but package.json lists ${names.length} plugin${names.length > 1 ? "s" : ""}`, { hint: "Run `xcsh-tools doctor --fix` to install them from the lockfile.", repair: { kind: "reify", reinstall: [] }, repairText: "install every plugin package.json lists, at the locked versions" });
    else folder.ok("plugins:node-modules", "no node_modules (nothing installed)");
  } else folder.ok("plugins:node-modules", `found ${paths.nodeModules}`);

  const inventory = await loadInventory(state);
  result.inventory = inventory;
  const runtime = runtimeFindings(state, inventory, plugins);
  for (const plugin of inventory) await checkOnePlugin(plugin, plugins, runtime.emit, nmInfo !== undefined);
  runtime.emitLeft(); // the orphans of the runtime lock and the record
  await checkOrphanFolders(paths.nodeModules, deps, state.packageLock, plugins);
  await checkLockfile(paths.plugins, deps, state.packageLock, lockfile, names.length > 0 && nmInfo !== undefined);
  if (plugins.findings.length === 0) plugins.ok("plugins", names.length === 0 ? "no npm plugin installed" : "every plugin is healthy");
  return result;
}

/** Read and report package.json, the runtime lock, the record and package-lock.json; `undefined` when one of the first three is unusable. */
async function readPluginsState(paths: PluginsState["paths"], folder: AreaFindings, lockfile: AreaFindings): Promise<PluginsState | undefined> {
  const record = await readDoc<InstallRecord>(paths.record, (v) => checkSchema(InstallRecordSchema, v));
  // A git dependency may be a local repository only when our record says the user typed it so.
  const typedLocal = (name: string) => record.status === "ok" && isTypedLocalGit(record.value, name);
  const pkg = await readDoc(paths.packageJson, (v) => validatePluginsPackageJson(v, { localGit: typedLocal }));
  const lock = await readDoc(paths.runtimeLock, validateRuntimeLock);
  const report = (id: string, file: string, read: Read<unknown>, missing: () => void) => {
    if (read.status === "bad") folder.problem(id, "error", read.message, { hint: read.hint, manual: manualStateFile });
    else if (read.status === "missing") missing();
    else {
      folder.ok(id, `${file} is valid`);
      for (const [i, w] of read.warnings.entries()) folder.problem(`${id}:warning:${i}`, "warn", `${file}: ${w.message}`, { hint: w.hint ?? "Fix the key named.", manual: "a typo in a file other programs write is left to you" });
    }
  };
  report("plugins:package-json", paths.packageJson, pkg, () => folder.ok("plugins:package-json", `${paths.packageJson} does not exist yet (no npm plugin installed)`));
  report("plugins:runtime-lock", paths.runtimeLock, lock, () => folder.ok("plugins:runtime-lock", `${paths.runtimeLock} does not exist yet`));
  report("plugins:record", paths.record, record, () => folder.ok("plugins:record", `${paths.record} does not exist yet`));

  let packageLock: Record<string, unknown> | undefined;
  const lockRead = await readDoc<Record<string, unknown>>(paths.packageLock, (v) => checkSchema(Type.Object({ packages: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }), v));
  if (lockRead.status === "bad") lockfile.problem("lockfile:file", "error", lockRead.message, { hint: "Delete package-lock.json, then run `xcsh-tools doctor --fix` to regenerate it from package.json.", manual: manualStateFile });
  else if (lockRead.status === "ok") packageLock = lockRead.value;

  if (pkg.status === "bad" || lock.status === "bad" || record.status === "bad") return undefined;
  return {
    paths,
    packageJson: pkg.status === "ok" ? pkg.value : undefined,
    packageLock,
    runtimeLock: lock.status === "ok" ? lock.value : undefined,
    record: record.status === "ok" ? (record.value as InstallRecord) : EMPTY_INSTALL_RECORD,
    warnings: [],
  };
}

/** The runtime-state repairs, reported by plugin id: `emit(id)` with that plugin's findings, `emitLeft()` for the rest. */
function runtimeFindings(state: PluginsState, inventory: InstalledPlugin[], plugins: AreaFindings): { emit: (id: string) => boolean; emitLeft: () => void } {
  const runtime = repairRuntimeState(stateFiles(state), inventory);
  const runtimeById = new Map<string, typeof runtime.changes>();
  for (const change of runtime.changes) runtimeById.set(change.id, [...(runtimeById.get(change.id) ?? []), change]);
  const emit = (id: string) => {
    const changes = runtimeById.get(id);
    if (!changes) return false;
    plugins.problem(id, "warn", changes.map((c) => c.problem).join("; "), { hint: "Run `xcsh-tools doctor --fix`.", repair: { kind: "runtime" }, repairText: changes.map((c) => c.repair).join("; ") });
    runtimeById.delete(id);
    return true;
  };
  const emitLeft = () => {
    for (const id of [...runtimeById.keys()]) emit(id);
  };
  return { emit, emitLeft };
}

async function checkOnePlugin(plugin: InstalledPlugin, area: AreaFindings, emitRuntime: (id: string) => boolean, haveNodeModules: boolean): Promise<void> {
  const { name } = plugin;
  const id = `plugin:${name}`;
  const reinstall = { kind: "reify" as const, reinstall: [name] };
  if (plugin.linked && plugin.linkTarget === undefined) {
    const raw = await readlink(plugin.dir).catch(() => undefined);
    const target = plugin.record?.linkTarget ?? (raw === undefined ? "?" : path.resolve(path.dirname(plugin.dir), raw));
    area.problem(`${id}:link`, "error", `${name} is linked to ${target}, which no longer exists`, {
      hint: `Restore the folder, or \`xcsh-tools unlink ${name}\` (puts back what the link replaced) or \`xcsh-tools uninstall ${name}\`.`,
      manual: "the linked folder is yours: doctor cannot bring it back",
    });
    return;
  }
  if (plugin.problem && plugin.pkg === undefined) {
    const missing = plugin.problem.endsWith("is missing");
    if (missing && !haveNodeModules) return; // reported once, as node_modules missing
    area.problem(id, "error", missing ? `${name} is listed in package.json (${plugin.dependency}) but not installed: ${plugin.problem}` : `${name}: ${plugin.problem}`, {
      hint: "Run `xcsh-tools doctor --fix` to install it again from the lockfile.",
      repair: reinstall,
      repairText: `reinstall ${name} (its locked version, else the newest its package.json range allows)`,
    });
    return;
  }
  const pkg = plugin.pkg!;
  if (pkg.name !== name) {
    area.problem(id, "error", `${plugin.dir} holds package ${JSON.stringify(pkg.name)}, not ${name}`, { hint: "Run `xcsh-tools doctor --fix` to install the right package.", repair: reinstall, repairText: `reinstall ${name} from the lockfile` });
    return;
  }
  const version = plugin.version ?? "?";
  const reinstallHint = plugin.linked
    ? `Fix it in the linked folder ${plugin.linkTarget}.`
    : `Reinstall it (\`xcsh-tools install ${name}@${version}\`) in case the installed copy was damaged; if the published package itself is broken, \`xcsh-tools uninstall ${name}\` or ask its author.`;
  if (!pkg.xcsh && !pkg.pi) {
    area.problem(id, "warn", `${name}@${version}: ${plugin.problem ?? "not an xcsh plugin"}`, {
      hint:
        pkg.omp !== undefined && pkg.omp !== null
          ? `The host's plugin loader skips it. Its extensions load with \`xcsh --extension ${plugin.dir}\` (that loader reads "omp"), or once its author publishes an "xcsh" manifest; \`xcsh-tools uninstall ${name}\` if you do not need it.`
          : `The host ignores it; \`xcsh-tools uninstall ${name}\` if you do not need it.`,
      manual: "the package itself has no manifest",
    });
    return;
  }
  // The manifest entries, exactly as `xcsh-tools validate <dir>` checks them statically.
  const run = new ValidateRun();
  await checkPluginPackage(run, plugin.dir);
  let bad = false;
  for (const issue of run.errors) {
    bad = true;
    area.problem(`${id}:${issue.code}:${issue.path}`, "error", `${name}@${version} ${path.relative(plugin.dir, issue.file) || "."}${issue.path ? ` ${issue.path}` : ""}: ${issue.message}`, {
      hint: reinstallHint,
      manual: plugin.linked ? "the linked folder is yours to fix" : "reinstalling the same version gives the same files; doctor does not guess",
    });
  }
  for (const issue of run.warnings) {
    area.problem(`${id}:${issue.code}:${issue.path}`, "warn", `${name}@${version} ${path.relative(plugin.dir, issue.file) || "."}${issue.path ? ` ${issue.path}` : ""}: ${issue.message}`, {
      // A package installed from a registry is not the user's to edit: the author's advice
      // ("remove the key") is for `validate` of their own folder; a linked folder is theirs.
      hint: plugin.linked ? (issue.hint ?? "See the message.") : (issue.forUser ?? `This is in ${name} as published, not something to change here; if it matters to you, tell the package's author.`),
      manual: "the problem is in the package itself",
    });
  }
  const runtimeProblem = emitRuntime(`${id}:runtime`);
  let featureProblem = false;
  for (const feature of plugin.runtime?.enabledFeatures ?? []) featureProblem = emitRuntime(`${id}:feature:${feature}`) || featureProblem;
  if (!bad && !runtimeProblem && !featureProblem) {
    const features = plugin.runtime?.enabledFeatures;
    area.ok(id, `${name}@${version}${plugin.linked ? ` (linked → ${plugin.linkTarget})` : ""}: ${runtimeEnabled(plugin.runtime) ? "enabled" : "disabled"}, features ${features === null || features === undefined ? "defaults" : features.length ? features.join(",") : "none"}`);
  }
}

/** Top-level folders of node_modules (scoped ones as `@scope/name`), without npm's own dotfiles. */
async function topLevelPackages(nodeModules: string): Promise<string[]> {
  const out: string[] = [];
  const names = await readdir(nodeModules).catch(() => [] as string[]);
  for (const name of names.sort()) {
    if (name.startsWith(".")) continue;
    if (name.startsWith("@")) {
      for (const inner of (await readdir(path.join(nodeModules, name)).catch(() => [] as string[])).sort()) if (!inner.startsWith(".")) out.push(`${name}/${inner}`);
    } else out.push(name);
  }
  return out;
}

/** Folders in node_modules that neither package.json, the lockfile nor any installed package needs. */
async function checkOrphanFolders(nodeModules: string, deps: Record<string, string>, packageLock: Record<string, unknown> | undefined, area: AreaFindings): Promise<void> {
  const present = await topLevelPackages(nodeModules);
  if (present.length === 0) return;
  const locked = new Set(Object.keys(isRecord(packageLock?.packages) ? packageLock.packages : {}));
  const needed = new Set<string>();
  const queue = Object.keys(deps);
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (needed.has(name)) continue;
    needed.add(name);
    queue.push(...dependencyNames(await readJsonFile(path.join(nodeModules, name, "package.json")).catch(() => undefined)));
  }
  for (const name of present) {
    if (needed.has(name) || locked.has(`node_modules/${name}`)) continue;
    area.problem(`orphan:node_modules:${name}`, "warn", `${path.join(nodeModules, name)} is not in package.json and nothing installed needs it (an orphan: the host ignores it)`, {
      hint: "Run `xcsh-tools doctor --fix` to remove it.",
      repair: { kind: "reify", reinstall: [] },
      repairText: `remove the orphan ${name} from node_modules (npm's installer prunes it)`,
    });
  }
}

/** package-lock.json against package.json and node_modules. */
async function checkLockfile(plugins: string, deps: Record<string, string>, packageLock: Record<string, unknown> | undefined, area: AreaFindings, expected: boolean): Promise<void> {
  const reify = (names: string[], text: string) => ({ repair: { kind: "reify" as const, reinstall: names }, repairText: text, hint: "Run `xcsh-tools doctor --fix`." });
  if (!packageLock) {
    if (area.findings.length > 0) return; // unreadable: reported
    if (expected) area.problem("lockfile:file", "warn", `${path.join(plugins, "package-lock.json")} is missing: versions are not pinned`, reify([], "regenerate package-lock.json from what is installed"));
    else area.ok("lockfile:file", "no package-lock.json (nothing installed)");
    return;
  }
  const packages = isRecord(packageLock.packages) ? packageLock.packages : {};
  const root = isRecord(packages[""]) ? packages[""] : {};
  const lockedDeps = isRecord(root.dependencies) ? (root.dependencies as Record<string, unknown>) : {};
  const drift = [...Object.keys(deps).filter((n) => lockedDeps[n] !== deps[n]), ...Object.keys(lockedDeps).filter((n) => !Object.hasOwn(deps, n))];
  if (drift.length > 0) {
    area.problem("lockfile:root", "warn", `package-lock.json does not match package.json for ${[...new Set(drift)].join(", ")}`, reify([], "update package-lock.json from package.json (npm's installer)"));
  }
  const hidden = await readJsonFile(path.join(plugins, "node_modules", ".package-lock.json")).catch(() => undefined);
  const actual = isRecord(hidden) && isRecord(hidden.packages) ? hidden.packages : undefined;
  let checked = 0;
  for (const [key, value] of Object.entries(packages)) {
    if (key === "" || !key.startsWith("node_modules/") || !isRecord(value)) continue;
    const dir = path.join(plugins, key);
    const name = key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length);
    const topName = key.split("node_modules/")[1]!.replace(/\/$/, "");
    const id = `lockfile:${key}`;
    checked += 1;
    if (value.link === true) {
      const target = typeof value.resolved === "string" ? path.resolve(plugins, value.resolved) : undefined;
      if (target && !(await lstat(target).catch(() => undefined))) {
        area.problem(id, "error", `${key} is a link to ${target}, which no longer exists`, { hint: `Restore the folder or \`xcsh-tools unlink ${name}\`.`, manual: "the linked folder is yours: doctor cannot bring it back" });
      }
      continue;
    }
    const installed = await readJsonFile(path.join(dir, "package.json")).catch(() => undefined);
    const version = isRecord(installed) && typeof installed.version === "string" ? installed.version : undefined;
    if (version === undefined) {
      if (value.optional === true) continue; // an optional dependency may be absent (platform)
      area.problem(id, "error", `${key}@${String(value.version)} is in package-lock.json but not installed`, reify([topName], `install ${name}@${String(value.version)} from the lockfile`));
      continue;
    }
    if (typeof value.version === "string" && version !== value.version) {
      area.problem(id, "error", `${key} is ${version} on disk but package-lock.json locks ${value.version}`, reify([topName], `reinstall ${name}@${value.version} from the lockfile`));
      continue;
    }
    const seen = actual && isRecord(actual[key]) ? actual[key] : undefined;
    if (seen) {
      for (const field of ["integrity", "resolved"] as const) {
        if (typeof value[field] === "string" && typeof seen[field] === "string" && value[field] !== seen[field]) {
          area.problem(id, "error", `${key}@${version} was installed from another tarball than package-lock.json records (${field} ${String(seen[field]).slice(0, 40)}… ≠ ${String(value[field]).slice(0, 40)}…)`, reify([topName], `reinstall ${name}@${version} from the lockfile (checked against its integrity)`));
          break;
        }
      }
    }
  }
  if (area.findings.length === 0) area.ok("lockfile", `${checked} locked package${checked === 1 ? "" : "s"}: every one installed at its locked version${actual ? " and from its locked tarball" : " (no hidden lockfile: tarballs not compared)"}`);
}
