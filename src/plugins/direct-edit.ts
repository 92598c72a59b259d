/**
 * `link` of a folder and `unlink` of a link, without npm's installer, when the result is known
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
 *   - link: a new link (no plugin of that name yet), to a folder that declares no dependencies of
 *     any kind (arborist installs a top-level link target's dependencies, dev ones included, into
 *     the folder) and has no node_modules (arborist would lock or prune what is there), no `bin`,
 *     `directories`, `workspaces` or bundled dependencies (bin links, globbing), and no entry of
 *     its own in the lockfile yet;
 *   - unlink: a link that replaced nothing, whose lockfile entries are exactly the two above;
 *   - both: lockfiles that are byte for byte what arborist writes of their content (so that
 *     rewriting them changes nothing but the entries), and a package.json/lockfile root that agree.
 * The equality with arborist's files is checked by test/integration/direct-edit.test.ts.
 */
import { lstat, readFile } from "node:fs/promises";
import path from "node:path";
import stringify from "json-stringify-nice";
import semver from "semver";
import { isRecord } from "../manifest/result.js";
import type { Plan, PlanAction } from "./plan.js";
import type { PluginsPaths, PluginsState } from "./state.js";

/** The key order arborist's lockfile serializer puts first (lib/shrinkwrap.js `swKeyOrder`). */
const LOCK_KEY_ORDER = ["name", "version", "lockfileVersion", "resolved", "integrity", "requires", "packages", "dependencies"];

/** Text of a lockfile as arborist serializes it (2-space indent, `\n`: checked on the file it replaces). */
export function lockfileText(lock: unknown): string {
  return stringify(lock, LOCK_KEY_ORDER, 2);
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
/** Fields that make arborist do more than lock the folder (bin links, workspaces) or that we do not reproduce. */
const UNHANDLED_FIELDS = ["bin", "directories", "workspaces", "acceptDependencies", "peerDependenciesMeta"] as const;

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
  if (DEPENDENCY_FIELDS.some((field) => pkg[field] !== undefined && kept(pkg[field]))) return undefined;
  if (UNHANDLED_FIELDS.some((field) => pkg[field] !== undefined)) return undefined;
  if (isRecord(pkg.devDependencies) && Object.keys(pkg.devDependencies).length > 0) return undefined;
  if (pkg.devDependencies !== undefined && !isRecord(pkg.devDependencies)) return undefined;
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
  return entry;
}

/** The dependencies in the order arborist saves them (sorted, as @npmcli/package-json does). */
function sortedDependencies(deps: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(deps).sort(([a], [b]) => a.localeCompare(b, "en")));
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
  for (const action of changes) {
    const done = action.apply.kind === "link" && action.type === "ADD" ? await addLink(action, action.apply.target, paths, lock, hidden, edit) : isPlainUnlink(action) ? await removeLink(action.name, paths, lock, hidden, edit) : false;
    if (!done) return undefined;
  }
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
