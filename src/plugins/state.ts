/**
 * The state of the npm plugins folder (`~/.xcsh/plugins`), read whole, changed by pure
 * functions, and written inside a journal transaction.
 *
 * Four files make up the state; three are shared with the host and keep its formats exactly
 *, one is ours:
 *
 *     <plugins>/package.json            {name:"xcsh-plugins", private:true, dependencies:{name: spec}}
 *                                       the host's source of truth for which plugins exist
 *     <plugins>/package-lock.json       npm's lockfile, written by arborist only (exact versions,
 *                                       resolved URLs, integrity): the real lockfile the host lacks
 *     <plugins>/xcsh-plugins.lock.json  the host's runtime state: {plugins:{name:{version,
 *                                       enabledFeatures, enabled}}, settings:{name:{...}}}
 *     <ours>/installs.json              our record: per plugin the spec the user asked for, where it
 *                                       came from, whether it is linked (and what the link replaced),
 *                                       which install scripts it declares
 *
 * Why a record of our own: package.json only holds what npm saved (`^1.2.0`, `file:…`), not what
 * the user typed (`@acme/x@next`, `./plugin`), and `unlink` must put back exactly what the link
 * replaced. The host ignores our folder.
 *
 * Reading is strict where the host is lax: a file that exists but is not JSON, or has
 * the wrong shape, is a coded error naming the file — never "empty", which the host's manager
 * would then overwrite, losing every plugin's settings. Files other programs write (package.json,
 * the runtime lock) are kept whole: unknown keys survive every rewrite.
 *
 * Writing: `stageStateWrites(tx, before, after)` stages exactly the files whose content changes
 * (so an unchanged file stays byte-identical, mtime included), each written into its journal
 * slot; commit swaps them in together. A real mutation creates package.json when missing; a
 * dry run never calls it. The runtime lock may hold secret settings, so it is written 0600.
 */
import path from "node:path";
import { Type, type Static } from "../manifest/typebox.js";
import { jsonText } from "../core/atomic-fs.js";
import { XcshToolsError } from "../core/errors.js";
import type { Transaction } from "../core/journal.js";
import { npa } from "../core/npm-spec.js";
import { xcshPaths, type XcshRoots } from "../core/paths.js";
import { isLocalGitUrl, npmGitSpecProblem, sourceArgHint } from "../core/source-args.js";
import { readCheckedJson, readStrictJson } from "../manifest/json-file.js";
import { validatePluginsPackageJson, type PluginsPackageJson } from "../manifest/plugins-package.js";
import { isRecord, type ValidationIssue } from "../manifest/result.js";
import { checkSchema } from "../manifest/schema-check.js";
import { validateRuntimeLock, type RuntimeLock, type RuntimePluginState } from "../manifest/runtime-lock.js";

/** Every path of the plugins folder state. */
export function pluginsPaths(roots: XcshRoots) {
  const p = xcshPaths(roots);
  return {
    plugins: p.plugins,
    packageJson: p.pluginsPackageJson,
    packageLock: path.join(p.plugins, "package-lock.json"),
    nodeModules: p.pluginsNodeModules,
    runtimeLock: p.runtimeLock,
    npmrc: path.join(p.plugins, ".npmrc"),
    ours: p.ours,
    record: path.join(p.ours, "installs.json"),
    /** Folders we pack into tarballs to install (`install ./folder`), kept for reinstalls. */
    packed: path.join(p.ours, "packed"),
    /** The boot index's module records (what `link` checked before: validate-installed.ts). */
    bootModules: p.bootModules,
  };
}
export type PluginsPaths = ReturnType<typeof pluginsPaths>;

/** How a plugin got here (npm-package-arg's type, plus `link`). */
export const SourceKindSchema = Type.Union([
  Type.Literal("registry"),
  Type.Literal("tarball"),
  Type.Literal("remote"),
  Type.Literal("directory"),
  Type.Literal("git"),
  Type.Literal("link"),
]);
export type SourceKind = Static<typeof SourceKindSchema>;

/** What a link replaced, so `unlink` can put it back. `null` fields: nothing was there. */
export const LinkedOverSchema = Type.Object({
  /** The package.json dependency value before the link, or null when the plugin was absent. */
  dependency: Type.Union([Type.String(), Type.Null()]),
  /** The installed version before the link. */
  version: Type.Union([Type.String(), Type.Null()]),
  /** Our record of it before the link. */
  record: Type.Union([Type.Unknown(), Type.Null()]),
});
export type LinkedOver = Static<typeof LinkedOverSchema>;

/** Our record of one installed plugin. */
export const InstallRecordEntrySchema = Type.Object({
  /** The spec as the user gave it, without feature brackets (`@acme/x@^1`, `./p`, `git+file://…`). */
  spec: Type.String(),
  source: SourceKindSchema,
  /** The folder a linked plugin points at (absolute). */
  linkTarget: Type.Optional(Type.String()),
  /** Present on linked plugins: what the link replaced. */
  linkedOver: Type.Optional(LinkedOverSchema),
  /** Lifecycle scripts the package declares (preinstall, install, postinstall, prepare). */
  scripts: Type.Array(Type.String()),
  /** Whether its scripts were allowed to run at install. */
  scriptsRan: Type.Optional(Type.Boolean()),
  installedAt: Type.String(),
  /**
   * Installed for team sets (teamset/restore.ts): each project root (realpath) whose restore
   * installed it, with the version that project locks. A restore that no longer finds it declared
   * drops its root; with none left and not `personal`, the plugin is uninstalled.
   */
  team: Type.Optional(Type.Object({ projects: Type.Record(Type.String(), Type.String()) })),
  /** The user installed it themselves (a restore never removes it). An entry with no `team` is the user's too. */
  personal: Type.Optional(Type.Boolean()),
});
export type InstallRecordEntry = Static<typeof InstallRecordEntrySchema>;

export const InstallRecordSchema = Type.Object({
  version: Type.Literal(1),
  plugins: Type.Record(Type.String(), InstallRecordEntrySchema),
});
export type InstallRecord = Static<typeof InstallRecordSchema>;

export const EMPTY_INSTALL_RECORD: InstallRecord = { version: 1, plugins: {} };

/** The runtime lock as we hold it: the host's shape plus whatever else is in the file. */
export type RuntimeLockFile = RuntimeLock & Record<string, unknown>;
/** The plugins package.json as we hold it, unknown keys kept. */
export type PluginsPackageFile = PluginsPackageJson & Record<string, unknown>;

/** The whole state of the plugins folder. `undefined` file: it does not exist. */
export interface PluginsState {
  paths: PluginsPaths;
  packageJson: PluginsPackageFile | undefined;
  /** npm's lockfile, parsed (read-only for us: arborist writes it). */
  packageLock: Record<string, unknown> | undefined;
  runtimeLock: RuntimeLockFile | undefined;
  record: InstallRecord;
  /** Non-fatal findings of the reads (typos of keys…), for the CLI to show. */
  warnings: ValidationIssue[];
}

/** The files a mutation may change; each undefined means "delete" only if `before` had it. */
export interface StateFiles {
  packageJson: PluginsPackageFile | undefined;
  runtimeLock: RuntimeLockFile | undefined;
  record: InstallRecord;
}

/**
 * True when our record says the user installed `name` from a local repository (`git+file://…`):
 * only then may its spec, read back from package.json or the lockfile, reach the local disk.
 */
export function isTypedLocalGit(record: InstallRecord, name: string): boolean {
  return isLocalGitEntry(Object.hasOwn(record.plugins, name) ? record.plugins[name] : undefined);
}

/** The record entry of a plugin installed from a local repository (see isTypedLocalGit). */
export function isLocalGitEntry(entry: InstallRecordEntry | undefined): boolean {
  if (entry?.source !== "git") return false;
  try {
    const parsed = npa(entry.spec);
    return parsed.type === "git" && typeof parsed.fetchSpec === "string" && isLocalGitUrl(parsed.fetchSpec);
  } catch {
    return false;
  }
}

/**
 * The git sources arborist would fetch again from npm's lockfile (`packages[…].resolved`), checked
 * like package.json's specs: a hand-edited lockfile must not hand git an option or a remote
 * helper. A top-level plugin's own entry may be local when the user typed it so; a dependency's never.
 */
function checkLockGitSources(lock: Record<string, unknown>, file: string, localGit: (name: string) => boolean): void {
  const packages = isRecord(lock.packages) ? lock.packages : {};
  for (const [key, value] of Object.entries(packages)) {
    if (!isRecord(value) || typeof value.resolved !== "string" || !/^git(\+|:)|^github:/.test(value.resolved)) continue;
    let parsed: ReturnType<typeof npa>;
    try {
      parsed = npa(value.resolved);
    } catch {
      continue; // not a spec npm would fetch from git
    }
    if (parsed.type !== "git") continue;
    const top = /^node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key)?.[1];
    const problem = npmGitSpecProblem(parsed, { allowLocal: top !== undefined && localGit(top) });
    if (problem) {
      throw new XcshToolsError(problem.code, `${file} /packages/${key}/resolved: ${problem.problem}`, {
        file,
        path: `/packages/${key}/resolved`,
        hint: `${sourceArgHint(problem.code)} Nothing was fetched. Delete package-lock.json and run \`xcsh-tools update\` to regenerate it.`,
        exitCode: 2,
      });
    }
  }
}

/** Read the plugins folder state; a malformed file is `ESTATE_FILE` naming it, never "empty". */
export async function loadPluginsState(roots: XcshRoots): Promise<PluginsState> {
  const paths = pluginsPaths(roots);
  const warnings: ValidationIssue[] = [];
  const repair = "Fix or move the file away, then run `xcsh-tools doctor`; nothing was changed.";
  // Our record first: it says which git dependencies the user typed as local repositories.
  const record = (await readCheckedJson(paths.record, (v) => checkSchema(InstallRecordSchema, v), { code: "ESTATE_FILE", hint: "This file is xcsh-tools' own record; move it away to rebuild it with `xcsh-tools doctor --fix`.", warnings })) ?? EMPTY_INSTALL_RECORD;
  const localGit = (name: string) => isTypedLocalGit(record as InstallRecord, name);
  const packageJson = await readCheckedJson(paths.packageJson, (value) => validatePluginsPackageJson(value, { localGit }), { code: "ESTATE_FILE", hint: repair, warnings });
  const runtimeLock = await readCheckedJson(paths.runtimeLock, validateRuntimeLock, { code: "ESTATE_FILE", hint: repair, warnings });
  const parsed = await readStrictJson(paths.packageLock, "ESTATE_FILE", "Delete package-lock.json and reinstall your plugins (`xcsh-tools update`) to regenerate it.");
  let packageLock: Record<string, unknown> | undefined;
  if (parsed !== undefined) {
    if (!isRecord(parsed)) throw new XcshToolsError("ESTATE_FILE", `${paths.packageLock} is not an npm lockfile (not an object)`, { file: paths.packageLock, hint: "Delete it and run `xcsh-tools update` to regenerate it." });
    checkLockGitSources(parsed, paths.packageLock, localGit);
    packageLock = parsed;
  }
  return { paths, packageJson, packageLock, runtimeLock, record: record as InstallRecord, warnings };
}

/** The current files of a state, as a `StateFiles` to derive a new one from. */
export function stateFiles(state: PluginsState): StateFiles {
  return { packageJson: state.packageJson, runtimeLock: state.runtimeLock, record: state.record };
}

// ---- pure updates ---------------------------------------------------------------------------

/** The dependencies of a package.json (empty when there is none). */
export function dependenciesOf(pkg: PluginsPackageJson | undefined): Record<string, string> {
  return { ...(pkg?.dependencies ?? {}) };
}

export function runtimeEntry(lock: RuntimeLock | undefined, name: string): RuntimePluginState | undefined {
  const plugins = lock?.plugins ?? {};
  return Object.hasOwn(plugins, name) ? plugins[name] : undefined;
}

/** The runtime lock with `name`'s entry replaced by `patch` merged over the current one. */
export function withRuntimePlugin(lock: RuntimeLockFile | undefined, name: string, patch: Partial<RuntimePluginState>): RuntimeLockFile {
  const base: RuntimeLockFile = lock ?? { plugins: {}, settings: {} };
  const current = runtimeEntry(base, name) ?? {};
  const next: RuntimePluginState = { ...current, ...patch };
  return { ...base, plugins: { ...(base.plugins ?? {}), [name]: next } };
}

/** The runtime lock without `name` (its entry and, unless `keepSettings`, its settings). */
export function withoutRuntimePlugin(lock: RuntimeLockFile | undefined, name: string, options: { keepSettings?: boolean } = {}): RuntimeLockFile | undefined {
  if (!lock) return lock;
  const plugins = { ...(lock.plugins ?? {}) };
  delete plugins[name];
  const next: RuntimeLockFile = { ...lock, plugins };
  if (!options.keepSettings && lock.settings && Object.hasOwn(lock.settings, name)) {
    const settings = { ...lock.settings };
    delete settings[name];
    next.settings = settings;
  }
  if (!options.keepSettings && lock.secretSettings && Object.hasOwn(lock.secretSettings, name)) {
    const { [name]: _, ...secretSettings } = lock.secretSettings;
    next.secretSettings = secretSettings;
  }
  return next;
}

/**
 * The runtime lock with each of `keys` of `name` that has a stored value marked as stored as a
 * secret: called with the keys the version being replaced declares secret, so that a value the
 * host or an older xcsh-tools stored stays masked after a version that forgets `secret: true`.
 */
export function withStoredSecrets(lock: RuntimeLockFile | undefined, name: string, keys: readonly string[]): RuntimeLockFile | undefined {
  let next = lock;
  for (const key of keys) {
    const values = pluginSettings(next, name);
    if (Object.hasOwn(values, key) && !pluginSecretKeys(next, name).includes(key)) next = withPluginSettings(next, name, values, { key, secret: true });
  }
  return next;
}

export function pluginSettings(lock: RuntimeLock | undefined, name: string): Record<string, unknown> {
  const all = lock?.settings ?? {};
  return Object.hasOwn(all, name) ? { ...all[name] } : {};
}

/** The keys of `name` whose stored value was stored as a secret (runtime-lock.ts `secretSettings`). */
export function pluginSecretKeys(lock: RuntimeLock | undefined, name: string): string[] {
  const all = lock?.secretSettings ?? {};
  return Object.hasOwn(all, name) && Array.isArray(all[name]) ? [...all[name]] : [];
}

/**
 * The runtime lock with `name`'s settings replaced (an empty object removes the section). `secret`:
 * whether the value of that key now stored is a secret; secret marks of keys no longer stored go.
 */
export function withPluginSettings(lock: RuntimeLockFile | undefined, name: string, values: Record<string, unknown>, secret?: { key: string; secret: boolean }): RuntimeLockFile {
  const base: RuntimeLockFile = lock ?? { plugins: {}, settings: {} };
  const settings = { ...(base.settings ?? {}) };
  if (Object.keys(values).length === 0) delete settings[name];
  else settings[name] = values;
  const marked = new Set(pluginSecretKeys(base, name).filter((k) => Object.hasOwn(values, k)));
  if (secret?.secret) marked.add(secret.key);
  else if (secret) marked.delete(secret.key);
  const secretSettings = { ...(base.secretSettings ?? {}) };
  if (marked.size === 0) delete secretSettings[name];
  else secretSettings[name] = [...marked].sort();
  const { secretSettings: _, ...rest } = base;
  return Object.keys(secretSettings).length > 0 ? { ...rest, settings, secretSettings } : { ...rest, settings };
}

/** Our record with `name` set (or removed with `undefined`). */
export function withRecordEntry(record: InstallRecord, name: string, entry: InstallRecordEntry | undefined): InstallRecord {
  const plugins = { ...record.plugins };
  if (entry === undefined) delete plugins[name];
  else plugins[name] = entry;
  return { ...record, plugins };
}

// ---- writing ---------------------------------------------------------------------------------

/** What `stageStateWrites` would change, by file (for plans and tests). */
export function changedStateFiles(before: StateFiles, after: StateFiles, paths: PluginsPaths): string[] {
  const changed: string[] = [];
  const same = (a: unknown, b: unknown) => (a === undefined ? b === undefined : b !== undefined && jsonText(a) === jsonText(b));
  if (!same(before.packageJson, after.packageJson)) changed.push(paths.packageJson);
  if (!same(before.runtimeLock, after.runtimeLock)) changed.push(paths.runtimeLock);
  const emptyRecord = (r: InstallRecord) => Object.keys(r.plugins).length === 0;
  if (!(emptyRecord(before.record) && emptyRecord(after.record)) && !same(before.record, after.record)) changed.push(paths.record);
  return changed;
}

/**
 * Stage the state files that change from `before` to `after` in `tx`: each is written whole into
 * its journal slot (or staged for removal when `after` drops it); commit swaps them in together.
 * Files that do not change are not touched. Returns the paths staged.
 */
export async function stageStateWrites(tx: Transaction, paths: PluginsPaths, before: StateFiles, after: StateFiles): Promise<string[]> {
  const changed = changedStateFiles(before, after, paths);
  const values = new Map<string, unknown>([
    [paths.packageJson, after.packageJson],
    [paths.runtimeLock, after.runtimeLock],
    [paths.record, after.record],
  ]);
  for (const file of changed) {
    const value = values.get(file);
    if (value === undefined) {
      await tx.stageRemoval(file, paths.plugins);
      continue;
    }
    // package.json and the record hold specs (git URLs may carry tokens): owner-only, as the lock.
    await tx.stageJson(file, value);
  }
  return changed;
}
