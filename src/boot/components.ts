/**
 * The component inventory of installed plugins from the boot index (`boot-components.json`,
 * components-format.ts): `installedComponentsIndexed` answers "which plugins are installed for
 * (home, cwd, trusted), and what does each bring" from a fresh view — one read of the file and
 * one `stat` per recorded input, no directory listing, no YAML, no schema library — and scans
 * otherwise (components/installed.ts, which loads the readers), writing the view when allowed.
 *
 * Freshness follows the tool views: every input keeps its signature, or its bytes when its
 * signature moved (fingerprint.ts); components-inputs.ts says what the inputs are (state files,
 * plugin roots and the trees under them). Trust is part of the question, decided by the caller
 * before anything is read: an untrusted project's installs are never read, and a view built for
 * a trusted project never answers an untrusted one.
 *
 * A view is written only when it is known to describe what the scan read: the state files and
 * every plugin tree are fingerprinted before the scan reads them, the scan must find the plugin
 * roots found before, and when the answer names a path the walk did not cover, a second scan
 * must agree. Otherwise the answer stands and nothing is written; the next call scans again.
 *
 * No boot reads the file, `tools` only when an installed plugin brought no tool, and nothing
 * writes it on a mutation: the first `list`, `show` or library call after a change scans once
 * and writes it.
 */
import path from "node:path";
import { errorMessage } from "../core/errors.js";
import { insideAnyOf, isRealPathInside } from "../core/contain.js";
import { xcshPaths, type XcshRoots } from "../core/paths.js";
import { isInPlace, placeOf } from "../core/state-places.js";
import type { InstalledPluginComponents } from "../components/installed.js";
import { captureFingerprints, firstChange } from "./fingerprint.js";
import { BOOT_INDEX_VERSION } from "./format.js";
import { readComponentIndex, sameComponentKey, serializeComponentIndex, type ComponentIndex, type ComponentView, type ComponentViewKey } from "./components-format.js";
import { extraInputs, stateInputs, walkPluginRoots } from "./components-inputs.js";
import { MAX_BOOT_VIEWS, fsPromises } from "./store.js";
import { bootIndexGenerator } from "./world.js";

/** The scanner (and through it the component readers: YAML, schemas), only when a view is rebuilt. */
const installedModule = () => import("../components/installed.js");
const atomicFs = () => import("../core/atomic-fs.js");

/** Options of `installedComponentsIndexed`. */
export interface ComponentIndexOptions {
  roots: XcshRoots;
  cwd: string;
  /** The caller's trust decision for `cwd`. */
  projectTrusted: boolean;
  /** When false, a rebuilt view is not written (`doctor` without `--fix` writes nothing). */
  write?: boolean;
  /**
   * Plugin roots the caller does not want. Filtered from a fresh view; when a scan is needed it
   * skips them unread, and that partial answer is not written.
   */
  skipRoot?: (root: string) => boolean;
}

/** The answer: plugins as the scan finds them (tools by file), and where it came from. */
export interface ComponentIndexAnswer {
  plugins: InstalledPluginComponents[];
  index: {
    /** True when the answer needed no scan. */
    fresh: boolean;
    reason: string;
    written: boolean;
  };
}

function fileOf(roots: XcshRoots): string {
  return xcshPaths(roots).bootComponents;
}

function emptyIndex(): ComponentIndex {
  return { version: BOOT_INDEX_VERSION, generator: bootIndexGenerator(), writtenAt: new Date(0).toISOString(), views: [] };
}

/**
 * Why a view names a path no scan could have produced, or undefined. The index is a file in the
 * user's folder that anything may have edited, and hosts read the files an answer names: a
 * plugin root outside the folders installs live in (xcsh's plugin cache, Claude Code's plugins
 * folder, the npm plugins folder), or a component file outside its plugin root, makes the view
 * stale. Rows with a problem (a registry entry naming another folder) carry no components.
 * Lexical first; real paths only for a path that fails it.
 */
function viewPathOutside(roots: XcshRoots, view: ComponentView): string | undefined {
  const places = [placeOf("xcsh-install", { roots }), placeOf("claude-install", { roots }), placeOf("npm-plugin", { roots })];
  const inPlace = insideAnyOf(places);
  for (const plugin of view.plugins) {
    if (plugin.problem) {
      if (plugin.components.length > 0) return `the boot index gives ${plugin.id} components despite a problem`;
      continue;
    }
    if (!path.isAbsolute(plugin.root)) return "the boot index names a plugin root that is not absolute";
    if (!inPlace(plugin.root) && !places.some((place) => isRealPathInside(plugin.root, place))) return `the boot index names ${plugin.root}, outside every folder plugins are installed in`;
    const inRoot = insideAnyOf([plugin.root]);
    for (const c of plugin.components) {
      if (!path.isAbsolute(c.file)) return "the boot index names a component file that is not absolute";
      if (!inRoot(c.file) && !isRealPathInside(c.file, plugin.root)) return `the boot index names ${c.file}, outside the plugin ${plugin.root}`;
    }
  }
  return undefined;
}

function loadIndex(file: string): { index: ComponentIndex; reason?: string } {
  try {
    const read = readComponentIndex(file, bootIndexGenerator());
    return read.status === "ok" ? { index: read.index } : { index: emptyIndex(), reason: read.reason };
  } catch (error) {
    return { index: emptyIndex(), reason: `cannot read the component index: ${errorMessage(error)}` };
  }
}

async function writeIndex(file: string, index: ComponentIndex): Promise<void> {
  index.writtenAt = new Date().toISOString();
  index.generator = bootIndexGenerator();
  await (await fsPromises()).mkdir(path.dirname(file), { recursive: true });
  await (await atomicFs()).writeFileAtomic(file, serializeComponentIndex(index));
}

/** The plugin roots a scan would read (state files only: every root is skipped unread). */
async function rootsOf(options: ComponentIndexOptions): Promise<string[]> {
  const found: string[] = [];
  const { collectInstalledComponents } = await installedModule();
  await collectInstalledComponents({ roots: options.roots, cwd: options.cwd, projectTrusted: options.projectTrusted, skipRoot: (root) => (found.push(path.resolve(root)), true) });
  return found;
}

const sameRoots = (a: readonly string[], b: readonly string[]) => JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

/**
 * Scan for `key` with its inputs fingerprinted first (see the header). `consistent`: the view may
 * be stored; otherwise `why` says why not.
 */
async function scanView(options: ComponentIndexOptions, key: ComponentViewKey): Promise<{ view: ComponentView; consistent: boolean; why?: string }> {
  const paths = xcshPaths(options.roots);
  const { collectInstalledComponents } = await installedModule();
  const scan = () => collectInstalledComponents({ roots: options.roots, cwd: key.cwd, projectTrusted: key.trusted });
  const state = await captureFingerprints(stateInputs(paths, key.cwd, key.trusted));
  const roots = await rootsOf(options);
  const placed = (root: string) => isInPlace("xcsh-install", root, { roots: options.roots }) || isInPlace("claude-install", root, { roots: options.roots }) || isInPlace("npm-plugin", root, { roots: options.roots });
  const walk = walkPluginRoots(roots, placed);
  const walked = await captureFingerprints(walk.requests);
  const plugins = await scan();
  const extras = extraInputs(plugins, walk.covered);
  const inputs = [...state, ...walked, ...(await captureFingerprints(extras.requests))];
  const view: ComponentView = { key, builtAt: new Date().toISOString(), inputs, plugins };
  if (walk.incomplete) return { view, consistent: false, why: walk.incomplete };
  if (!sameRoots(roots, plugins.map((p) => path.resolve(p.root)))) return { view, consistent: false, why: "the installed plugins changed while they were read" };
  if (extras.uncovered.length > 0 && JSON.stringify(await scan()) !== JSON.stringify(plugins)) return { view, consistent: false, why: "a plugin changed while it was read" };
  return { view, consistent: true };
}

/**
 * The part of a view a caller with `skipRoot` asks for: its plugins and the inputs outside the
 * skipped roots (state files, the wanted plugins' trees), so a skipped plugin's files are not
 * checked. A plugin installed or removed since changes the state files, which stay checked.
 */
function wanted(view: ComponentView, skipRoot: (root: string) => boolean): Pick<ComponentView, "plugins" | "inputs"> {
  const skipped = view.plugins.filter((p) => skipRoot(p.root));
  if (skipped.length === 0) return view;
  const inSkipped = insideAnyOf(skipped.map((p) => p.root));
  return { plugins: view.plugins.filter((p) => !skipped.includes(p)), inputs: view.inputs.filter((input) => !inSkipped(input.path)) };
}

/**
 * Installed plugins' components for (`cwd`, trust): from a fresh view of the index, else from a
 * scan that rewrites the view (unless `write: false` or `skipRoot`). Tools are by file: name
 * and price them with the module records (components/installed.ts `withKnownTools`).
 */
export async function installedComponentsIndexed(options: ComponentIndexOptions): Promise<ComponentIndexAnswer> {
  const key: ComponentViewKey = { home: options.roots.home, cwd: path.resolve(options.cwd), trusted: options.projectTrusted };
  const file = fileOf(options.roots);
  const loaded = loadIndex(file);
  const found = loaded.index.views.find((v) => sameComponentKey(v.key, key));
  let reason = loaded.reason ?? "no entry for this project folder";
  if (found) {
    const { plugins, inputs } = options.skipRoot ? wanted(found, options.skipRoot) : found;
    const change = (await firstChange(inputs)) ?? viewPathOutside(options.roots, found);
    if (change === undefined) return { plugins, index: { fresh: true, reason: "fresh", written: false } };
    reason = change;
  }
  if (options.skipRoot) {
    const { collectInstalledComponents } = await installedModule();
    const plugins = await collectInstalledComponents({ roots: options.roots, cwd: key.cwd, projectTrusted: key.trusted, skipRoot: options.skipRoot });
    return { plugins, index: { fresh: false, reason, written: false } };
  }
  const scanned = await scanView(options, key);
  let written = false;
  if (scanned.consistent && options.write !== false) {
    try {
      loaded.index.views = [scanned.view, ...loaded.index.views.filter((v) => !sameComponentKey(v.key, key))].slice(0, MAX_BOOT_VIEWS);
      await writeIndex(file, loaded.index);
      written = true;
    } catch {
      // A read-only root or a full disk: the answer stands, the next call scans again.
    }
  }
  return { plugins: scanned.view.plugins, index: { fresh: false, reason: scanned.why ? `${reason}; not indexed: ${scanned.why}` : reason, written } };
}

