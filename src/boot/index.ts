/**
 * The boot index (issue 7): what discovery found and what each tool entry exports, kept in
 * `<xcshHome>/plugins/.xcsh-tools/boot-index.json` (the views, all a boot reads) and
 * `boot-modules.json` (the module records; format.ts) so that a host boots without scanning and
 * `xcsh-tools tools` answers without importing plugin code.
 *
 * Freshness key. An index answers one question — "which tool paths and discovery errors for
 * (home, cwd, configuredPaths, providers, trusted)" — and records every input that answer was computed
 * from (inputs.ts: state files and manifests hashed, tools folders and entries by signature).
 * It is fresh for that question exactly when every input still has its signature, or its bytes
 * when the signature moved (fingerprint.ts). Checking costs one read of the index and one `stat`
 * per input, with no directory listing; a scan lists every tools folder, parses every state file
 * and manifest and checks them against their schemas.
 *
 * Why views per cwd rather than a user part plus an always-scanned project part: the project
 * folder changes user-level results — `.xcsh/plugin-overrides.json` disables npm plugins and
 * picks their features, and Claude Code `project` entries of `~/.claude/plugins/installed_plugins.json`
 * apply inside their folder only — so splitting would need every provider to report what it read
 * per level. A view per question is simple and exact; the file keeps the 8 most recently built
 * views, and a question without a view costs one ordinary scan (and writes its view).
 *
 * Trust. Whether the project may bring code (core/trust.ts) is decided before the index is read,
 * once per call, and is part of the question: a view built for a trusted project is never the
 * answer for an untrusted one, nor the other way round. The user's trust record is also an input
 * of every view, so `trust`/`untrust` or a hand edit make the views stale. Deciding costs one
 * small read of that record and two realpaths, next to the stats of a fresh check. A refresh
 * after a mutation rebuilds a trusted view only while the user's record still trusts its project
 * (a host may have trusted it for itself): the rebuild imports its tools in the validation child.
 *
 * Who writes it:
 * - every committed mutation (plugins/mutation.ts → `refreshBootIndex`, under the lock): each kept
 *   view is scanned again, plus the view of the command's cwd, and every tool entry whose bytes
 *   are new is imported in the validation child (validate/module-check.ts) with the real
 *   transpile cache, which records its tools' names, descriptions and parameter schemas and
 *   leaves TypeScript compiled for the next boot;
 * - a host boot or `tools` that found its view stale: it scans and writes the new view (without
 *   the lock: an index is only a cache, a lost race costs one more scan later, never a wrong
 *   answer, because every view carries its own inputs).
 *
 * Writes happen only when two scans on either side of taking the fingerprints agree, so a file
 * changed while the index was being built makes the index stale rather than wrong.
 *
 * `listInstalledTools` uses module records for the answer (simulate.ts); an entry without a
 * record (a tools-folder tool the host scanned but nobody validated yet) is validated in the
 * child — out of process, so a tool that hangs or exits cannot take the CLI with it — and its
 * record is kept. A host never fails because of the index: any problem means a full scan.
 */
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { errorMessage } from "../core/errors.js";
import { insideAnyOf, isRealPathInside } from "../core/contain.js";
import { projectFolder, projectPaths, resolveRoots, resolveUserPath, xcshPaths, type XcshPaths, type XcshRoots } from "../core/paths.js";
import { selectProviders } from "../discovery/select.js";
import { DEFAULT_BUILTIN_TOOL_NAMES } from "../host/builtins.js";
import { decideProjectTrustOf, trustWorldOf, type ProjectTrustOption } from "../core/trust.js";
import type { ProviderId } from "../core/host-options.js";
import type { ToolLoadError, ToolSource, UntrustedProjectReport } from "../core/contract.js";
import { captureFingerprints, currentSignature, firstChange } from "./fingerprint.js";
import { BOOT_INDEX_VERSION, readBootIndex, sameKey, serializeBootIndex, type BootIndex, type BootView, type ModuleRecord, type ViewKey } from "./format.js";
import type { PreparedModule } from "./simulate.js";
import type { ModuleOutcome } from "../validate/module-check.js";

export type { BootIndex, BootView, ModuleRecord, ViewKey } from "./format.js";
export { BOOT_INDEX_VERSION } from "./format.js";

/*
 * Loaded only when needed: a fresh boot reads the index and stats its inputs, nothing more. Under
 * Bun each module costs about half a millisecond to load, and the whole fresh check about ten.
 */
/** Discovery (its providers and their validators), when a question must be scanned. */
const discovery = () => import("../discovery/index.js");
/** What a scan read (inputs.js), what writes the file (atomic-fs.js), what `tools` needs. */
const inputsModule = () => import("./inputs.js");
const atomicFs = () => import("../core/atomic-fs.js");
const prevalidated = () => import("./prevalidated.js");
const simulate = () => import("./simulate.js");
/** node:fs/promises (about 2 ms to load under Bun), for writes and refreshes only. */
const fsPromises = () => import("node:fs/promises");

/**
 * Load the modules a refresh uses, running nothing: for a process that refreshes soon and waits
 * meanwhile (an install, while its validation child imports the plugins).
 */
export function preloadRefresh(): void {
  const providers = () => import("../discovery/providers/index.js");
  for (const load of [discovery, providers, inputsModule, atomicFs, prevalidated, fsPromises]) void load().catch(() => undefined);
}

/** Views kept in the file (most recently built first). */
export const MAX_BOOT_VIEWS = 8;

/** Where to look: the roots, and the question (cwd, configured paths, providers). */
export interface BootIndexOptions {
  home?: string;
  xcshHome?: string;
  /** With `xcshHome`: the host's folders as resolved (core/paths.ts `XcshRoots`). */
  configDirName?: string;
  pluginsDir?: string;
  agentDir?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  configuredPaths?: readonly string[];
  providers?: ProviderId[];
  disabledProviders?: ProviderId[];
  /** Whether the project may bring code; default the user's record (see `DiscoverCustomToolsOptions`). */
  projectTrust?: ProjectTrustOption;
}

/** A discovery answer: the loader's input and the discovery errors. */
export interface BootDiscovery {
  paths: { path: string; source: ToolSource }[];
  errors: ToolLoadError[];
  /** When the project was not trusted: what it had that was left out. */
  untrusted?: UntrustedProjectReport;
  /** Whether the answer came from a fresh index, and if not why. */
  index: { fresh: boolean; reason: string; written: boolean };
}

let generatorCache: string | undefined;
/** `xcsh-tools@<version>`: an index written by another version is rebuilt (discovery may differ). */
export function bootIndexGenerator(): string {
  if (generatorCache === undefined) {
    try {
      const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
      generatorCache = `xcsh-tools@${pkg.version ?? "unknown"}`;
    } catch {
      generatorCache = "xcsh-tools@unknown";
    }
  }
  return generatorCache;
}

function runtimeName(): string {
  return process.versions.bun ? "bun" : "node";
}

interface World {
  roots: XcshRoots;
  paths: XcshPaths;
  /** The views file (what a boot reads); the records are in `paths.bootModules`. */
  file: string;
}

function worldOf(options: Pick<BootIndexOptions, "home" | "xcshHome" | "env" | "configDirName" | "pluginsDir" | "agentDir">): World {
  const roots = resolveRoots(options);
  const paths = xcshPaths(roots);
  return { roots, paths, file: paths.bootIndex };
}

function keyOf(world: World, configuredPaths: readonly string[], cwd: string, options: Pick<BootIndexOptions, "providers" | "disabledProviders">, trusted: boolean): ViewKey {
  return { home: world.roots.home, cwd: path.resolve(cwd), configuredPaths: [...configuredPaths], providers: selectProviders(options), trusted };
}

/** The trust decision for `cwd`, once per call (core/trust.ts: fails closed). */
function decideTrust(world: World, cwd: string, option: ProjectTrustOption | undefined): boolean | Promise<boolean> {
  // About the project root found from cwd, as discovery decides it (discovery/index.ts).
  return decideProjectTrustOf(path.resolve(cwd), projectFolder(cwd, world.roots), option, trustWorldOf(world.roots));
}

/** Whether the user's own record trusts `cwd` now. */
function userTrusts(world: World, cwd: string): boolean {
  return decideProjectTrustOf(cwd, projectFolder(cwd, world.roots), undefined, trustWorldOf(world.roots)) === true;
}

function emptyIndex(): BootIndex {
  return { version: BOOT_INDEX_VERSION, generator: bootIndexGenerator(), writtenAt: new Date(0).toISOString(), views: [], modules: {} };
}

/** The index, with its module records when `withModules` (a boot needs only the views). */
async function loadIndex(world: World, withModules: boolean): Promise<{ index: BootIndex; reason?: string; status: string; modulesProblem?: string }> {
  try {
    const read = await readBootIndex({ views: world.file, modules: world.paths.bootModules }, bootIndexGenerator(), withModules);
    if (read.status === "ok") return { index: read.index, status: "ok", ...(read.modulesProblem ? { modulesProblem: read.modulesProblem } : {}) };
    return { index: emptyIndex(), reason: read.reason, status: read.status };
  } catch (error) {
    return { index: emptyIndex(), reason: `cannot read the boot index: ${errorMessage(error)}`, status: "corrupt" };
  }
}

/**
 * Write the views file, and first the records file when `withModules` (an index loaded without
 * its records must not overwrite them with none).
 */
async function writeIndex(world: World, index: BootIndex, withModules: boolean): Promise<void> {
  index.writtenAt = new Date().toISOString();
  index.generator = bootIndexGenerator();
  await (await fsPromises()).mkdir(path.dirname(world.file), { recursive: true });
  const { writeFileAtomic } = await atomicFs();
  const texts = serializeBootIndex(index);
  if (withModules) await writeFileAtomic(world.paths.bootModules, texts.modules);
  await writeFileAtomic(world.file, texts.views);
}

function findView(index: BootIndex, key: ViewKey): BootView | undefined {
  return index.views.find((view) => sameKey(view.key, key));
}

function upsertView(index: BootIndex, view: BootView): void {
  index.views = [view, ...index.views.filter((v) => !sameKey(v.key, view.key))].slice(0, MAX_BOOT_VIEWS);
}

/** Why `view` is stale, or undefined when every input is unchanged. */
async function viewChange(view: BootView): Promise<string | undefined> {
  return firstChange(view.inputs);
}

/**
 * Why a view names a tool path no scan could have produced, or undefined. The host imports a
 * fresh view's paths as they are, and the index is a file in the user's folder that anything may
 * have edited: a path outside every folder discovery reads (the xcsh root, the Claude Code and
 * Codex tools and plugin folders, the project's tools folders, the configured paths) makes the
 * view stale, so the answer comes from a scan instead. Lexical first (no file system call at a
 * fresh boot); real paths only for a path that fails it.
 */
function viewPathOutside(world: World, key: ViewKey, view: BootView): string | undefined {
  const project = projectPaths(key.cwd);
  const roots = [
    world.paths.root,
    // Outside the root when the host's folders are moved (XDG data folder, PI_CODING_AGENT_DIR).
    world.paths.plugins,
    world.paths.userTools,
    path.join(world.paths.claudeRoot, "tools"),
    path.join(world.paths.claudeRoot, "plugins"),
    path.join(world.paths.codexRoot, "tools"),
    project.tools,
    project.claudeTools,
    project.codexTools,
    ...key.configuredPaths.map((p) => resolveUserPath(p, key.cwd, world.roots.home)),
  ];
  const lexicallyInside = insideAnyOf(roots);
  for (const found of view.paths) {
    if (typeof found?.path !== "string" || !path.isAbsolute(found.path)) return "the boot index names a tool path that is not absolute";
    if (lexicallyInside(found.path)) continue;
    if (roots.some((root) => isRealPathInside(found.path, root))) continue;
    return `the boot index names ${found.path}, outside every folder discovery reads`;
  }
  return undefined;
}

function answerOf(result: { paths: BootView["paths"]; errors: ToolLoadError[]; untrusted?: UntrustedProjectReport }): string {
  return JSON.stringify({ paths: result.paths, errors: result.errors, untrusted: result.untrusted });
}

/**
 * Scan for `key`, fingerprint what the scan read, scan again. The first scan is the answer; the
 * view is only `consistent` (safe to store) when the second scan, made after the fingerprints
 * were taken, gives the same answer.
 */
async function scanView(world: World, key: ViewKey): Promise<{ view: BootView; consistent: boolean }> {
  const discoverOptions = { ...world.roots, env: {}, providers: key.providers as ProviderId[], projectTrust: key.trusted };
  const first = await (await discovery()).discoverToolPaths(key.configuredPaths, key.cwd, discoverOptions);
  const requests = await (await inputsModule()).collectInputs({ cwd: key.cwd, home: world.roots.home, paths: world.paths, configuredPaths: key.configuredPaths, trusted: key.trusted }, first);
  const inputs = await captureFingerprints(requests);
  const second = await (await discovery()).discoverToolPaths(key.configuredPaths, key.cwd, discoverOptions);
  const view: BootView = { key, builtAt: new Date().toISOString(), inputs, paths: first.paths, errors: first.errors, ...(first.untrusted ? { untrusted: first.untrusted } : {}) };
  return { view, consistent: answerOf(first) === answerOf(second) };
}

/**
 * The discovery answer for a host boot: from the index when it is fresh, else from a scan that
 * then rewrites the index. Never throws because of the index (any problem → a plain scan).
 */
export async function discoverWithBootIndex(configuredPaths: readonly string[], cwd: string, options: BootIndexOptions = {}): Promise<BootDiscovery> {
  let world: World;
  let key: ViewKey;
  let loaded: Awaited<ReturnType<typeof loadIndex>>;
  let reason: string;
  // Decided once: the scans below and any fallback get the decision, never the host's question again.
  let trusted = false;
  try {
    world = worldOf(options);
    const decided = decideTrust(world, cwd, options.projectTrust);
    trusted = typeof decided === "boolean" ? decided : await decided;
    key = keyOf(world, configuredPaths, cwd, options, trusted);
    loaded = await loadIndex(world, false);
    const view = findView(loaded.index, key);
    if (view) {
      const change = await viewChange(view);
      // The index was parsed for this call alone: its arrays are the caller's, no copy needed.
      const outside = change === undefined ? viewPathOutside(world, key, view) : undefined;
      if (change === undefined && outside === undefined) return { paths: view.paths, errors: view.errors, ...(view.untrusted ? { untrusted: view.untrusted } : {}), index: { fresh: true, reason: "fresh", written: false } };
      reason = change ?? outside!;
    } else reason = loaded.reason ?? "no entry for this project folder and configured paths";
  } catch (error) {
    const result = await (await discovery()).discoverToolPaths(configuredPaths, cwd, { ...options, projectTrust: trusted });
    return { ...discoveryAnswer(result), index: { fresh: false, reason: `boot index unusable: ${errorMessage(error)}`, written: false } };
  }
  let written = false;
  try {
    const { view, consistent } = await scanView(world, key);
    if (consistent) {
      try {
        upsertView(loaded.index, view);
        await writeIndex(world, loaded.index, false);
        written = true;
      } catch {
        // A read-only root or a full disk: the host still boots, from the scan.
      }
    }
    return { ...discoveryAnswer(view), index: { fresh: false, reason, written } };
  } catch (error) {
    const result = await (await discovery()).discoverToolPaths(configuredPaths, cwd, { ...options, projectTrust: trusted });
    return { ...discoveryAnswer(result), index: { fresh: false, reason: `${reason}; rebuilding failed: ${errorMessage(error)}`, written } };
  }
}

function discoveryAnswer(result: Pick<BootView, "paths" | "errors" | "untrusted">): Omit<BootDiscovery, "index"> {
  return { paths: result.paths, errors: result.errors, ...(result.untrusted ? { untrusted: result.untrusted } : {}) };
}

/** What `checkBootIndex` reports (for `doctor`). */
export interface BootIndexCheck {
  file: string;
  /** `fresh`: usable as is; `stale`: a view's inputs changed; the others: the file itself. */
  state: "fresh" | "stale" | "missing" | "corrupt" | "unknown-version" | "other-generator" | "no-view";
  fresh: boolean;
  reason: string;
  views: number;
  modules: number;
  /** Tool entries of the checked views without a module record (`tools` would validate them). */
  unvalidated: number;
  /** Why the records file was read as no records (corrupt, another version), when it was. */
  modulesProblem?: string;
}

/**
 * Check the index without changing anything. With `cwd`, the view for that question (cwd,
 * configuredPaths, providers) is checked; without, every view, and the first stale one is named.
 */
export async function checkBootIndex(options: BootIndexOptions = {}): Promise<BootIndexCheck> {
  const world = worldOf(options);
  const loaded = await loadIndex(world, true);
  const base = {
    file: world.file,
    views: loaded.index.views.length,
    modules: Object.keys(loaded.index.modules).length,
    ...(loaded.modulesProblem ? { modulesProblem: loaded.modulesProblem } : {}),
  };
  if (loaded.status !== "ok") {
    return { ...base, state: loaded.status as BootIndexCheck["state"], fresh: false, reason: loaded.reason ?? loaded.status, unvalidated: 0 };
  }
  const key = options.cwd !== undefined ? keyOf(world, options.configuredPaths ?? [], options.cwd, options, await decideTrust(world, options.cwd, options.projectTrust)) : undefined;
  const views = key ? [findView(loaded.index, key)].filter((v): v is BootView => v !== undefined) : loaded.index.views;
  if (views.length === 0) {
    const reason = options.cwd !== undefined ? `no entry for ${path.resolve(options.cwd)}` : "the index holds no entry";
    return { ...base, state: "no-view", fresh: false, reason, unvalidated: 0 };
  }
  let unvalidated = 0;
  for (const view of views) {
    const change = (await viewChange(view)) ?? viewPathOutside(world, view.key, view);
    if (change !== undefined) return { ...base, state: "stale", fresh: false, reason: change, unvalidated: 0 };
    for (const module of await prepareModules(view, loaded.index)) if (!module.record) unvalidated += 1;
  }
  return { ...base, state: "fresh", fresh: true, reason: "fresh", unvalidated };
}

/** The real path the loader keys a module by (one realpath(3), synchronous as in the loader). */
function realOrResolved(file: string): string {
  try {
    return realpathSync.native(file);
  } catch {
    return path.resolve(file);
  }
}

/** The view's entries as the loader would take them, each with its record when still valid. */
async function prepareModules(view: Pick<BootView, "paths">, index: BootIndex): Promise<PreparedModule[]> {
  return Promise.all(
    view.paths.map(async (entry) => {
      const file = path.resolve(entry.path);
      const key = realOrResolved(file);
      const record = index.modules[key];
      let valid: ModuleRecord | undefined;
      if (record && record.file === file && record.runtime === runtimeName()) {
        const current = currentSignature(file);
        if (current === record.sig) valid = record;
        else if (current !== "missing" && record.sha !== undefined) {
          const [fingerprint] = await captureFingerprints([{ path: file, hash: true }]);
          if (fingerprint?.sha === record.sha) valid = { ...record, sig: fingerprint.sig };
        }
      }
      return { entry, file, key, record: valid };
    }),
  );
}

/**
 * Validate `modules` that have no record, in the validation child, and store their records.
 * Fingerprints are taken before the child imports anything. Returns how many were validated.
 */
async function validateMissing(world: World, cwd: string, modules: PreparedModule[], index: BootIndex, piModule?: string): Promise<number> {
  const missing = new Map<string, PreparedModule>();
  for (const module of modules) if (!module.record && !missing.has(module.key)) missing.set(module.key, module);
  if (missing.size === 0) return 0;
  const list = [...missing.values()];
  const fingerprints = await captureFingerprints(list.map((m) => ({ path: m.file, hash: true })));
  const shaOf = (file: string) => fingerprints.find((f) => f.path === file)?.sha;
  // Bytes this process validated moments ago in an install's staging copy need no second child.
  const { recallValidated } = await prevalidated();
  const known = list.map((m) => recallValidated(m.file, shaOf(m.file)));
  const toCheck = list.filter((_, i) => known[i] === undefined);
  let checked: ModuleOutcome[] = [];
  if (toCheck.length > 0) {
    const { checkModules } = await import("../validate/module-check.js");
    checked = await checkModules(
      toCheck.map((m) => m.file),
      { cwd, ...world.roots, cacheDir: world.paths.transpileCache, ...(piModule !== undefined ? { piModule } : {}) },
    );
  }
  const outcomes = known.map((outcome) => outcome ?? checked.shift()!);
  const runtime = runtimeName();
  outcomes.forEach((outcome, i) => {
    const module = list[i]!;
    const fingerprint = fingerprints.find((f) => f.path === module.file);
    if (!fingerprint || fingerprint.sig === "missing") return;
    // A checker that could not run says nothing about the module: no record, try again later.
    if (outcome.failure && (outcome.failure.code === "ECHILD" || outcome.failure.code === "EVALIDATE_TIMEOUT")) return;
    const record: ModuleRecord = {
      file: module.file,
      sig: fingerprint.sig,
      ...(fingerprint.sha ? { sha: fingerprint.sha } : {}),
      runtime,
      tools: outcome.tools.map((tool) => ({
        ...(tool.index !== undefined ? { index: tool.index } : {}),
        ...(tool.name !== undefined ? { name: tool.name } : {}),
        ...(tool.label !== undefined ? { label: tool.label } : {}),
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
        problems: tool.problems,
      })),
      ...(outcome.failure ? { failure: { code: outcome.failure.code, message: outcome.failure.message } } : {}),
    };
    // Records made with a stand-in for the host's exports (`--pi`), or that failed for want of
    // any (`EHOST_EXPORTS`: the host package may be installed later), answer this call only.
    if (piModule === undefined && outcome.failure?.code !== "EHOST_EXPORTS") index.modules[module.key] = record;
    module.record = record;
  });
  return list.length;
}

/** What `refreshBootIndex` did. */
export interface BootRefreshReport {
  file: string;
  views: number;
  /** Tool entries imported in the validation child (new or changed bytes). */
  validated: number;
  written: boolean;
}

/**
 * Rebuild the index after a mutation: scan every kept view again (and the view of `cwd`, or of
 * the home folder when the index is empty), validate entries whose bytes are new in the child
 * (compiling their TypeScript into the transpile cache), drop records nobody references, write.
 * Throws on a write failure (the mutation reports it as a warning).
 */
export async function refreshBootIndex(options: BootIndexOptions & { validate?: boolean } = {}): Promise<BootRefreshReport> {
  const world = worldOf(options);
  const { index } = await loadIndex(world, true);
  const keys: ViewKey[] = [];
  if (options.cwd !== undefined) keys.push(keyOf(world, options.configuredPaths ?? [], options.cwd, options, await decideTrust(world, options.cwd, options.projectTrust)));
  const { stat } = await fsPromises();
  for (const view of index.views) {
    if (keys.some((k) => sameKey(k, view.key))) continue;
    if (!(await stat(view.key.cwd).then((s) => s.isDirectory(), () => false))) continue;
    // Rebuilding validates (imports) the view's tools: a project's only while the user trusts it.
    if (view.key.trusted && !userTrusts(world, view.key.cwd)) continue;
    keys.push(view.key);
  }
  if (keys.length === 0) keys.push(keyOf(world, [], world.roots.home, options, userTrusts(world, world.roots.home)));

  const fresh: BootIndex = { ...emptyIndex(), modules: {} };
  const views: BootView[] = [];
  for (const key of keys.slice(0, MAX_BOOT_VIEWS)) {
    let scanned = await scanView(world, key);
    // Something changed while scanning: once more, then keep what the second attempt saw.
    if (!scanned.consistent) scanned = await scanView(world, key);
    if (scanned.consistent) views.push(scanned.view);
  }
  fresh.views = views;
  const prepared: PreparedModule[] = [];
  for (const view of views) prepared.push(...(await prepareModules(view, index)));
  for (const module of prepared) if (module.record) fresh.modules[module.key] = module.record;
  const validated = options.validate === false ? 0 : await validateMissing(world, keys[0]!.cwd, prepared, fresh);
  // Nothing new (a mutation that changed no input, a second refresh): leave the file alone, so a
  // command that changed nothing changes no byte, the index included.
  if (sameAnswers(fresh, index)) return { file: world.file, views: views.length, validated, written: false };
  await writeIndex(world, fresh, true);
  return { file: world.file, views: views.length, validated, written: true };
}

/** The same views (inputs and answers) and module records, whenever each was built. */
function sameAnswers(a: BootIndex, b: BootIndex): boolean {
  const canonical = (index: BootIndex) =>
    JSON.stringify({
      generator: index.generator,
      views: index.views.map(({ builtAt: _builtAt, ...view }) => view),
      modules: Object.keys(index.modules)
        .sort()
        .map((key) => [key, index.modules[key]]),
    });
  return b.generator === bootIndexGenerator() && canonical({ ...a, generator: b.generator }) === canonical(b);
}

/** One tool `listInstalledTools` reports. */
export interface InstalledTool {
  name: string;
  label?: string;
  description?: string;
  /** The parameter schema as JSON, as the tool declared it when validated. */
  parameters?: unknown;
  /** The file the host imports. */
  file: string;
  /** The path as discovered. */
  path: string;
  source?: ToolSource;
}

/** What `listInstalledTools` returns. */
export interface InstalledToolsList {
  cwd: string;
  tools: InstalledTool[];
  /** Discovery errors, then load errors, as `discoverAndLoadCustomTools` orders them. */
  errors: ToolLoadError[];
  /** When the project was not trusted: what it had that was left out (not loaded, not validated). */
  untrusted?: UntrustedProjectReport;
  index: {
    /** True when the answer needed no scan and no plugin code. */
    fresh: boolean;
    reason: string;
    /** Tool entries imported in the validation child for this answer. */
    validated: number;
    written: boolean;
  };
}

/** Options of `listInstalledTools`. */
export interface ListInstalledToolsOptions extends BootIndexOptions {
  /** Built-in names to check conflicts against; default the host's (host/builtins.ts). */
  builtInToolNames?: readonly string[];
  /** When false, entries without a record are not validated (never imports plugin code). */
  validate?: boolean;
  /**
   * `api.pi` for the factories (`tools --pi`): a module path (relative to `cwd`) or package name.
   * Every entry is validated again with it, and those records are not kept.
   */
  piModule?: string;
  /** When false, a rebuilt view is not written back (`doctor` without `--fix` writes nothing). */
  write?: boolean;
}

/**
 * What a host would load at boot from `cwd` — each tool's name, description, parameters, file
 * and source, and every error — without importing plugin code in this process. With a fresh
 * index nothing is scanned or imported at all; otherwise the view is rebuilt and entries without
 * a record are validated in a child process (see the header).
 */
export async function listInstalledTools(options: ListInstalledToolsOptions = {}): Promise<InstalledToolsList> {
  const world = worldOf(options);
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const key = keyOf(world, options.configuredPaths ?? [], cwd, options, await decideTrust(world, cwd, options.projectTrust));
  const loaded = await loadIndex(world, true);
  const index = loaded.index;
  let view = findView(index, key);
  let reason = view ? ((await viewChange(view)) ?? viewPathOutside(world, key, view) ?? "fresh") : (loaded.reason ?? "no entry for this project folder and configured paths");
  let dirty = false;
  if (reason !== "fresh" || !view) {
    const scanned = await scanView(world, key);
    view = scanned.view;
    if (scanned.consistent) {
      upsertView(index, view);
      dirty = true;
    }
  }
  const modules = await prepareModules(view, index);
  if (options.piModule !== undefined) for (const module of modules) delete module.record;
  const unvalidated = modules.filter((m) => !m.record).length;
  if (reason === "fresh" && unvalidated > 0) reason = `${unvalidated} tool entr${unvalidated === 1 ? "y was" : "ies were"} never validated`;
  let validated = 0;
  if (options.validate !== false && unvalidated > 0) {
    validated = await validateMissing(world, cwd, modules, index, options.piModule);
    if (validated > 0) dirty = true;
  }
  let written = false;
  if (dirty && options.write !== false) {
    try {
      await writeIndex(world, index, true);
      written = true;
    } catch {
      // The answer stands; the next call scans again.
    }
  }
  const simulated = (await simulate()).simulateLoad(modules, options.builtInToolNames ?? DEFAULT_BUILTIN_TOOL_NAMES);
  return {
    cwd,
    tools: simulated.tools.map((tool) => ({
      name: tool.name,
      ...(tool.label !== undefined ? { label: tool.label } : {}),
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
      file: tool.resolvedPath,
      path: tool.path,
      ...(tool.source ? { source: tool.source } : {}),
    })),
    errors: [...view.errors, ...simulated.errors],
    ...(view.untrusted ? { untrusted: view.untrusted } : {}),
    index: { fresh: reason === "fresh", reason, validated, written },
  };
}
