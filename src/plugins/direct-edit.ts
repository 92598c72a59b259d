/**
 * `link` of a folder, `unlink` of a link and `uninstall`, without npm's installer, when the result is known
 * exactly: the symlink in node_modules, the dependency in package.json, and the lockfile entries
 * (package-lock.json and node_modules/.package-lock.json) written by hand as arborist writes them.
 *
 * Why by hand: for these changes arborist fetches nothing and decides nothing, yet the applier's
 * general path (apply.ts) costs a whole reinstall of the plugins folder — npm's libraries loaded
 * (~60 ms of CPU even from the compile cache), node_modules copied into the transaction, the
 * tree loaded, diffed and reified, node_modules staged and swapped whole — about 250 ms of a
 * 300 ms `link`. What arborist writes for a link is small and fixed (@npmcli/arborist
 * lib/shrinkwrap.js `metaFromNode`): `node_modules/<name>` as `{resolved: <relative>, link: true}`,
 * and the target's own entry from its normalized package.json.
 *
 * Exact only when arborist would do nothing more, so anything else takes the general path:
 *   - link: a new link (no plugin of that name yet), to a folder that declares no dependencies
 *     arborist may install into it (`dependencies`, optional, bundled; dev and peer ones, what a
 *     scaffolded plugin declares, as plain ranges: arborist only writes those down for a link's
 *     target) and has no node_modules (arborist would lock or prune what is there), no `bin`,
 *     `directories`, `workspaces` or bundled dependencies (bin links, globbing), and no entry of
 *     its own in the lockfile yet;
 *   - unlink: a link that replaced nothing, whose lockfile entries are exactly the two above;
 *   - uninstall: what nothing left depends on goes, found over the lockfile's graph with a port of
 *     arborist's dependency flags (`removePlugins`), when that port agrees with the lockfile's
 *     flags as they are, nothing removed has bin links, and no packed local source is kept;
 *   - both: lockfiles that are byte for byte what arborist writes of their content (so that
 *     rewriting them changes nothing but the entries), and a package.json/lockfile root that agree.
 * The equality with arborist's files is checked by test/integration/direct-edit.test.ts.
 */
import { lstat, readFile } from "node:fs/promises";
import path from "node:path";
import semver from "semver";
import { isRecord } from "../manifest/result.js";
import type { Plan, PlanAction } from "./plan.js";
import type { PluginsPaths, PluginsState } from "./state.js";

/** The key order arborist's lockfile serializer puts first (lib/shrinkwrap.js `swKeyOrder`). */
const LOCK_KEY_ORDER = ["name", "version", "lockfileVersion", "resolved", "integrity", "requires", "packages", "dependencies"];
const LOCK_KEY_RANK = new Map(LOCK_KEY_ORDER.map((key, i) => [key, i]));
/** What `a.localeCompare(b, "en")` compares with (ECMA-402: the same collator), made at first need: ICU's set-up costs ~15 ms of CPU. */
let en: Intl.Collator | undefined;
/** Printable ASCII in the order of the CLDR root collation that `en` uses (punctuation not ignorable; a letter's case only at the third level). */
const ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz";
const PRIMARY = new Int8Array(128).fill(-1);
for (let i = 0; i < ASCII_ORDER.length; i++) PRIMARY[ASCII_ORDER.charCodeAt(i)] = i;
for (let c = 65; c <= 90; c++) PRIMARY[c] = PRIMARY[c + 32]!;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * `a.localeCompare(b, "en")`, by hand for printable ASCII (every key of a lockfile arborist
 * writes, in practice): letters, digits and punctuation by their primary weights (case folded),
 * then the first case difference, lower before upper. Anything else asks ICU. The equality with
 * ICU is a test (test/unit/lockfile-text.test.ts).
 */
export function compareEn(a: string, b: string): number {
  if (!PRINTABLE_ASCII.test(a) || !PRINTABLE_ASCII.test(b)) return (en ??= new Intl.Collator("en")).compare(a, b);
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const diff = PRIMARY[a.charCodeAt(i)]! - PRIMARY[b.charCodeAt(i)]!;
    if (diff !== 0) return diff < 0 ? -1 : 1;
  }
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i);
    const cb = b.charCodeAt(i);
    if (ca !== cb) return ca > cb ? -1 : 1; // same letter, other case: the lower-case one (the higher code) first
  }
  return 0;
}

/**
 * Text of a lockfile as arborist serializes it (json-stringify-nice with `swKeyOrder`, 2-space
 * indent, `\n`: checked on the file it replaces). Written by hand, the same rules: every
 * object's keys sorted, scalars and arrays before objects, the preferred keys first in their
 * order, then the others by `localeCompare(…, "en")`; the library calls `localeCompare` (a new
 * collator each time) in every comparison and `includes` on the key list, about 10–20 ms of
 * CPU for each of the four texts an `unlink` makes of a 21-plugin lockfile. The equality with
 * the library is a test (test/unit/lockfile-text.test.ts).
 */
export function lockfileText(lock: unknown): string {
  return `${JSON.stringify(sortedKeys(lock, new Map()), null, 2)}\n`;
}

const isObject = (value: unknown): value is Record<string, unknown> => !!value && !Array.isArray(value) && typeof value === "object";

function compareKeys(a: string, b: string): number {
  const ra = LOCK_KEY_RANK.get(a);
  const rb = LOCK_KEY_RANK.get(b);
  if (ra !== undefined || rb !== undefined) return ra === undefined ? 1 : rb === undefined ? -1 : ra - rb;
  return compareEn(a, b);
}

/** `value` with every object's keys in lockfile order (a value met twice: its one sorted copy, as the library keeps it). */
function sortedKeys(value: unknown, seen: Map<object, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => sortedKeys(item, seen));
  if (!isObject(value)) return value;
  const known = seen.get(value);
  if (known !== undefined) return known;
  const out: Record<string, unknown> = {};
  seen.set(value, out);
  const entries = Object.entries(value).sort(([ak, av], [bk, bv]) => (isObject(av) === isObject(bv) ? compareKeys(ak, bk) : isObject(av) ? 1 : -1));
  for (const [key, item] of entries) out[key] = sortedKeys(item, seen);
  return out;
}

/** The edits of a direct change, for the applier to validate and stage in its transaction. */
export interface DirectEdit {
  dependencies: Record<string, string>;
  packageLock: string;
  hiddenLock: string;
  /** New links: name → absolute target folder (the link itself says the path relative to its folder). */
  links: Map<string, string>;
  /** Links to remove (their own paths: the journal never follows them). */
  removals: string[];
}

/** A lockfile read as text and parsed, or undefined when it is absent or not what arborist wrote. */
async function readLock(file: string): Promise<{ packages: Record<string, Record<string, unknown>> } & Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return undefined;
  }
  let lock: unknown;
  try {
    lock = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(lock) || !isRecord(lock.packages) || lock.lockfileVersion !== 3 || lockfileText(lock) !== text) return undefined;
  if (!Object.values(lock.packages).every(isRecord)) return undefined;
  return lock as { packages: Record<string, Record<string, unknown>> } & Record<string, unknown>;
}

/** `path.relative` with `/` (arborist's `relpath`). */
function relpath(from: string, to: string): string {
  return path.relative(from, to).split(path.sep).join("/");
}

const DEPENDENCY_FIELDS = ["dependencies", "optionalDependencies", "peerDependencies", "bundleDependencies", "bundledDependencies"] as const;
/** The dependencies arborist may install for a link's target (or bundles it handles): such a link is arborist's. */
const INSTALLED_FIELDS = ["dependencies", "optionalDependencies", "bundleDependencies", "bundledDependencies"] as const;
/** Fields that make arborist do more than lock the folder (bin links, workspaces) or that we do not reproduce. */
const UNHANDLED_FIELDS = ["bin", "directories", "workspaces", "acceptDependencies"] as const;

/** A non-empty value as arborist's `metaFieldFromPkg` keeps it (empty objects and falsy values dropped). */
function kept(value: unknown): boolean {
  return Boolean(value) && (typeof value !== "object" || Object.keys(value as object).length > 0);
}

/** Folder name → package name as arborist reads it (`@scope/name` when the parent folder is a scope). */
function nameFromFolder(dir: string): string {
  const base = path.basename(dir);
  const parent = path.basename(path.dirname(dir));
  return parent.startsWith("@") ? `${parent}/${base}` : base;
}

/**
 * The lockfile entry arborist writes for a top-level link target `dir` with package.json `pkg`
 * (metaFromNode over @npmcli/package-json's normalization: `_` keys dropped, a string `funding`
 * made `{url}`), or undefined when the folder is not one we write by hand (see the header).
 */
export async function linkTargetEntry(dir: string, name: string, pkg: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
  if (INSTALLED_FIELDS.some((field) => pkg[field] !== undefined && kept(pkg[field]))) return undefined;
  if (UNHANDLED_FIELDS.some((field) => pkg[field] !== undefined)) return undefined;
  // Dev and peer dependencies, as a scaffolded plugin declares them: arborist only writes them down
  // for a link's target (it installs neither there); plain ranges, non-empty where written.
  if (pkg.devDependencies !== undefined && !isRangeMap(pkg.devDependencies, true)) return undefined;
  if (pkg.peerDependencies !== undefined && !isRangeMap(pkg.peerDependencies, false)) return undefined;
  if (pkg.peerDependenciesMeta !== undefined && !isPeerMeta(pkg.peerDependenciesMeta, pkg.peerDependencies)) return undefined;
  if (typeof pkg.version !== "string" || semver.valid(pkg.version) !== pkg.version) return undefined;
  for (const other of ["node_modules", "npm-shrinkwrap.json", "binding.gyp"]) {
    if (await lstat(path.join(dir, other)).then(() => true, () => false)) return undefined;
  }
  const entry: Record<string, unknown> = {};
  if (name !== nameFromFolder(dir)) entry.name = name;
  entry.version = pkg.version;
  const funding = typeof pkg.funding === "string" ? { url: pkg.funding } : pkg.funding;
  if (kept(funding)) entry.funding = funding;
  for (const key of ["engines", "os", "cpu", "libc"] as const) if (kept(pkg[key])) entry[key] = pkg[key];
  const license = isRecord(pkg.license) && pkg.license.type ? pkg.license.type : pkg.license;
  if (kept(license)) entry.license = license;
  const scripts = isRecord(pkg.scripts) ? pkg.scripts : {};
  if (["install", "preinstall", "postinstall"].some((event) => typeof scripts[event] === "string" && scripts[event] !== "")) entry.hasInstallScript = true;
  if (kept(pkg.deprecated)) entry.deprecated = pkg.deprecated;
  // A top node's devDependencies are written even when empty (metaFromNode: `node.isTop && …`).
  if (isRecord(pkg.devDependencies)) entry.devDependencies = pkg.devDependencies;
  if (pkg.peerDependencies !== undefined) entry.peerDependencies = pkg.peerDependencies;
  if (pkg.peerDependenciesMeta !== undefined) entry.peerDependenciesMeta = pkg.peerDependenciesMeta;
  return entry;
}

/** Names to semver ranges (`emptyOk`: `{}` too), as written by hand; anything else (a URL, a tag, a link) is arborist's. */
function isRangeMap(value: unknown, emptyOk: boolean): boolean {
  if (!isRecord(value)) return false;
  const entries = Object.entries(value);
  return (emptyOk || entries.length > 0) && entries.every(([dep, spec]) => dep !== "" && typeof spec === "string" && spec !== "" && semver.validRange(spec) !== null);
}

/** `{name: {optional: true|false}}` for declared peers only, non-empty. */
function isPeerMeta(value: unknown, peers: unknown): boolean {
  if (!isRecord(value) || !isRecord(peers) || Object.keys(value).length === 0) return false;
  return Object.entries(value).every(([dep, meta]) => peers[dep] !== undefined && isRecord(meta) && Object.keys(meta).length === 1 && typeof meta.optional === "boolean");
}

/** The dependencies in the order arborist saves them (sorted, as @npmcli/package-json does). */
function sortedDependencies(deps: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(deps).sort(([a], [b]) => compareEn(a, b)));
}

/** Set (or, `spec` undefined, drop) `name` in the lockfile root's dependencies; false when the root is not there to edit. */
function editRoot(lock: { packages: Record<string, Record<string, unknown>> }, name: string, spec: string | undefined): boolean {
  const root = lock.packages[""];
  if (!root) return false;
  const deps = isRecord(root.dependencies) ? { ...(root.dependencies as Record<string, string>) } : {};
  if (spec === undefined) delete deps[name];
  else deps[name] = spec;
  if (Object.keys(deps).length > 0) root.dependencies = sortedDependencies(deps);
  else delete root.dependencies;
  return true;
}

/**
 * The direct edit for `plan`, or undefined when it is not exactly what arborist would do (the
 * applier then reifies).
 */
export async function planDirectEdit(state: PluginsState, paths: PluginsPaths, plan: Plan): Promise<DirectEdit | undefined> {
  const changes = plan.actions.filter((action) => action.type !== "NOOP");
  if (changes.length === 0 || !state.packageJson) return undefined;
  const lock = await readLock(paths.packageLock);
  const hidden = await readLock(path.join(paths.nodeModules, ".package-lock.json"));
  if (!lock || !hidden) return undefined;
  const deps = { ...(isRecord(state.packageJson.dependencies) ? (state.packageJson.dependencies as Record<string, string>) : {}) };
  // package.json and the lockfile's root must agree: otherwise arborist would change more than our entries.
  const rootDeps = lock.packages[""]?.dependencies ?? {};
  if (JSON.stringify(sortedDependencies(deps)) !== JSON.stringify(isRecord(rootDeps) ? sortedDependencies(rootDeps as Record<string, string>) : {})) return undefined;
  const edit: DirectEdit = { dependencies: deps, packageLock: "", hiddenLock: "", links: new Map(), removals: [] };
  const removed: string[] = [];
  for (const action of changes) {
    if (action.apply.kind === "remove") {
      removed.push(action.name);
      continue;
    }
    const done = action.apply.kind === "link" && action.type === "ADD" ? await addLink(action, action.apply.target, paths, lock, hidden, edit) : isPlainUnlink(action) ? await removeLink(action.name, paths, lock, hidden, edit) : false;
    if (!done) return undefined;
  }
  if (removed.length > 0 && !(await removePlugins(removed, paths, lock, hidden, edit))) return undefined;
  edit.dependencies = sortedDependencies(deps);
  edit.packageLock = lockfileText(lock);
  edit.hiddenLock = lockfileText(hidden);
  return edit;
}

function isPlainUnlink(action: PlanAction): boolean {
  return action.apply.kind === "unlink" && action.apply.restore.dependency === null;
}

async function addLink(action: PlanAction, target: string, paths: PluginsPaths, lock: { packages: Record<string, Record<string, unknown>> }, hidden: { packages: Record<string, Record<string, unknown>> }, edit: DirectEdit): Promise<boolean> {
  const name = action.name;
  const at = `node_modules/${name}`;
  const rel = relpath(paths.plugins, target);
  if (edit.dependencies[name] !== undefined || lock.packages[at] || hidden.packages[at]) return false;
  if (await lstat(path.join(paths.nodeModules, name)).then(() => true, () => false)) return false;
  // Nothing of the lockfile may sit at or below the target already (another link to it, its own dependencies).
  if ([...Object.keys(lock.packages), ...Object.keys(hidden.packages)].some((key) => key === rel || key.startsWith(`${rel}/`))) return false;
  let pkg: unknown;
  try {
    pkg = JSON.parse(await readFile(path.join(target, "package.json"), "utf8"));
  } catch {
    return false;
  }
  if (!isRecord(pkg) || pkg.name !== name) return false;
  const entry = await linkTargetEntry(target, name, pkg);
  if (!entry) return false;
  // The dependency the applier saves for a link (apply.ts `fixDependency`): the absolute folder.
  const spec = `file:${target}`;
  if (!editRoot(lock, name, spec)) return false;
  edit.dependencies[name] = spec;
  for (const file of [lock, hidden]) {
    file.packages[at] = { resolved: rel, link: true };
    file.packages[rel] = structuredClone(entry);
  }
  edit.links.set(name, target);
  return true;
}

async function removeLink(name: string, paths: PluginsPaths, lock: { packages: Record<string, Record<string, unknown>> }, hidden: { packages: Record<string, Record<string, unknown>> }, edit: DirectEdit): Promise<boolean> {
  const at = `node_modules/${name}`;
  const entry = lock.packages[at];
  const rel = entry?.resolved;
  if (!entry || entry.link !== true || typeof rel !== "string" || Object.keys(entry).length !== 2) return false;
  if (JSON.stringify(hidden.packages[at]) !== JSON.stringify(entry)) return false;
  if (!(await lstat(path.join(paths.nodeModules, name)).then((info) => info.isSymbolicLink(), () => false))) return false;
  // The target's entry goes too, unless another link shares it; nothing may be locked below it (or bin links to undo).
  const keys = [...Object.keys(lock.packages), ...Object.keys(hidden.packages)];
  if (keys.some((key) => key.startsWith(`${rel}/`))) return false;
  if (lock.packages[rel]?.bin !== undefined) return false;
  const shared = Object.entries(lock.packages).some(([key, other]) => key !== at && other.link === true && other.resolved === rel);
  if (edit.dependencies[name] === undefined || !editRoot(lock, name, undefined)) return false;
  delete edit.dependencies[name];
  for (const file of [lock, hidden]) {
    delete file.packages[at];
    if (!shared) delete file.packages[rel];
  }
  // The link itself (an emptied scope folder stays, as after a reify).
  edit.removals.push(path.join(paths.nodeModules, name));
  return true;
}

type Lock = { packages: Record<string, Record<string, unknown>> };
type Flag = "dev" | "optional" | "devOptional" | "peer" | "extraneous";
const FLAGS: readonly Flag[] = ["dev", "optional", "devOptional", "peer", "extraneous"];
interface Edge {
  name: string;
  spec: string;
  dev: boolean;
  optional: boolean;
  peer: boolean;
}

/** The edges out of a lockfile entry (the root's from `rootDeps`), as arborist's Node builds them for a non-top package. */
function edgesOf(entry: Record<string, unknown>): Edge[] | undefined {
  if (entry.bundleDependencies !== undefined || entry.inBundle !== undefined) return undefined;
  const edges: Edge[] = [];
  const meta = isRecord(entry.peerDependenciesMeta) ? entry.peerDependenciesMeta : {};
  const kinds = [["dependencies", false, false], ["optionalDependencies", true, false], ["peerDependencies", false, true]] as const;
  for (const [field, optional, peer] of kinds) {
    const deps = entry[field];
    if (deps === undefined) continue;
    if (!isRecord(deps)) return undefined;
    for (const [name, spec] of Object.entries(deps)) {
      if (typeof spec !== "string") return undefined;
      const peerOptional = peer && isRecord(meta[name]) && meta[name].optional === true;
      edges.push({ name, spec, dev: false, optional: optional || peerOptional, peer });
    }
  }
  return edges;
}

/** Where `name` resolves from the package at `loc` (node's lookup over lockfile locations). */
function resolveIn(packages: Lock["packages"], loc: string, name: string): string | undefined {
  for (let base = loc; ; ) {
    const key = base === "" ? `node_modules/${name}` : `${base}/node_modules/${name}`;
    if (packages[key]) return key;
    if (base === "") return undefined;
    const up = base.lastIndexOf("/node_modules/");
    base = up === -1 ? "" : base.slice(0, up);
  }
}

/** A lockfile location made only of `node_modules/<name>` steps (no `.`, `..` or empty segment). */
function isPackageLocation(key: string): boolean {
  return /^node_modules\/(?:@[^/]+\/)?[^/]+(?:\/node_modules\/(?:@[^/]+\/)?[^/]+)*$/.test(key) && !key.split("/").some((segment) => segment === "." || segment === "..");
}

/** The package whose node_modules holds `loc` (arborist's `resolveParent`), "" for the top. */
function parentOf(loc: string): string {
  const up = loc.lastIndexOf("/node_modules/");
  return up === -1 ? "" : loc.slice(0, up);
}

/**
 * Arborist's dependency flags (lib/calc-dep-flags.js) over the lockfile's graph, the root depending
 * on `rootDeps`: every flag starts set and is unset along the edges. Undefined when the graph is
 * not one this port covers (a link target's own dependencies, a dependency that does not resolve
 * or whose version does not satisfy its range, specs other than semver ranges, bundles).
 */
function dependencyFlags(packages: Lock["packages"], rootDeps: Record<string, string>): Map<string, Record<Flag, boolean>> | undefined {
  const flags = new Map<string, Record<Flag, boolean>>();
  for (const key of Object.keys(packages)) if (key !== "") flags.set(key, { dev: true, optional: true, devOptional: true, peer: true, extraneous: true });
  const root = { dev: false, optional: false, devOptional: false, peer: false, extraneous: false };
  const flagsOf = (key: string) => (key === "" ? root : flags.get(key)!);
  const queue = [""];
  const seen = new Set<string>();
  for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
    seen.add(key);
    const node = flagsOf(key);
    if (!node.extraneous) for (let up = parentOf(key); up !== "" && flags.get(up)?.extraneous; up = parentOf(up)) flags.get(up)!.extraneous = false;
    const entry = key === "" ? {} : packages[key]!;
    if (entry.link === true) {
      const target = typeof entry.resolved === "string" ? flags.get(entry.resolved) : undefined;
      if (!target) return undefined;
      const targetEntry = packages[entry.resolved as string]!;
      if (DEPENDENCY_FIELDS.some((field) => targetEntry[field] !== undefined) || (isRecord(targetEntry.devDependencies) && Object.keys(targetEntry.devDependencies).length > 0)) return undefined;
      let changed = false;
      for (const flag of FLAGS) {
        if (target[flag] && !node[flag]) {
          target[flag] = false;
          changed = true;
        }
      }
      if (changed || !seen.has(entry.resolved as string)) queue.push(entry.resolved as string);
      continue;
    }
    const edges = key === "" ? Object.entries(rootDeps).map(([name, spec]) => ({ name, spec, dev: false, optional: false, peer: false })) : edgesOf(entry);
    if (!edges) return undefined;
    for (const edge of edges) {
      const toKey = resolveIn(packages, key, edge.name);
      if (toKey === undefined) {
        if (edge.optional) continue; // an optional dependency that is not there: arborist leaves it so
        return undefined;
      }
      // The root's own specs (a link, a packed source, a git URL) are what arborist installed; a
      // package's must be ranges its dependency satisfies, or arborist would fix the tree.
      if (key !== "" || semver.validRange(edge.spec, true) !== null) {
        const version = packages[toKey]!.version;
        if (typeof version !== "string" || semver.validRange(edge.spec, true) === null) return undefined;
        if (edge.spec !== "*" && !semver.satisfies(version, edge.spec, true)) return undefined;
      }
      const to = flags.get(toKey)!;
      let changed = false;
      if (to.extraneous && !node.extraneous && !(edge.peer && edge.optional)) (to.extraneous = false), (changed = true);
      if (to.dev && !node.dev && !edge.dev) (to.dev = false), (changed = true);
      if (to.optional && !node.optional && !edge.optional) (to.optional = false), (changed = true);
      if (to.devOptional && !node.devOptional && !node.dev && !node.optional && !edge.dev && !edge.optional) (to.devOptional = false), (changed = true);
      if (to.peer && !node.peer && !edge.peer) (to.peer = false), (changed = true);
      if (changed) queue.push(toKey);
    }
  }
  for (const [key, node] of flags) if (seen.has(key) && node.devOptional && (node.dev || node.optional)) node.devOptional = false;
  return flags;
}

/** True when the entry's flags in the lockfile are `computed` (absent means false; an extraneous one has only that). */
function sameFlags(entry: Record<string, unknown>, computed: Record<Flag, boolean>): boolean {
  if (computed.extraneous) return entry.extraneous === true;
  return FLAGS.every((flag) => (entry[flag] === true) === computed[flag]);
}

/**
 * Uninstall `names` by hand: what nothing left depends on goes (arborist's extraneous nodes after
 * the dependency is dropped: its folders under node_modules and its lockfile entries), the flags
 * of what stays are computed again. Only when the flags computed for the tree as it is match the
 * lockfile's (the graph is one this port understands) and nothing removed has bin links.
 */
async function removePlugins(names: string[], paths: PluginsPaths, lock: Lock, hidden: Lock, edit: DirectEdit): Promise<boolean> {
  const withoutRoot = Object.fromEntries(Object.entries(lock.packages).filter(([key]) => key !== ""));
  if (JSON.stringify(withoutRoot) !== JSON.stringify(hidden.packages)) return false;
  const rootEntry = lock.packages[""] ?? {};
  if (["devDependencies", "optionalDependencies", "peerDependencies"].some((field) => rootEntry[field] !== undefined)) return false;
  const before = dependencyFlags(withoutRoot, edit.dependencies);
  if (!before || [...before].some(([key, computed]) => !sameFlags(withoutRoot[key]!, computed))) return false;
  // Packed local sources' tarballs are collected with their plugins (apply.ts collectPacked): the reify path does that.
  if (await lstat(paths.packed).then(() => true, () => false)) return false;
  for (const name of names) {
    if (edit.dependencies[name] === undefined || !editRoot(lock, name, undefined)) return false;
    delete edit.dependencies[name];
  }
  const after = dependencyFlags(withoutRoot, edit.dependencies);
  if (!after) return false;
  const gone = [...after].filter(([, computed]) => computed.extraneous).map(([key]) => key);
  // Arborist also removes a removed package's bin links (node_modules/.bin).
  if (gone.some((key) => withoutRoot[key]!.bin !== undefined)) return false;
  for (const file of [lock, hidden]) {
    for (const key of gone) delete file.packages[key];
    for (const [key, computed] of after) {
      const entry = file.packages[key];
      if (!entry || computed.extraneous) continue;
      for (const flag of FLAGS) {
        if (computed[flag]) entry[flag] = true;
        else delete entry[flag];
      }
    }
  }
  // The outermost folders under node_modules (a nested one goes with its parent); a link's own path, never its target.
  // The lockfile is a file like any other: a key that is not a plain package location never names what is deleted.
  const inTree = gone.filter((key) => key.startsWith("node_modules/"));
  if (!inTree.every(isPackageLocation)) return false;
  const folders = inTree.filter((key) => !gone.some((other) => other !== key && key.startsWith(`${other}/`)));
  for (const key of folders) edit.removals.push(path.join(paths.plugins, ...key.split("/")));
  return true;
}
