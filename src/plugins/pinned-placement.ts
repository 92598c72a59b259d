/**
 * A team restore into an empty plugins folder, placed without npm's installer when the result is
 * known exactly (issue 42's restore target, docs/benchmarks.md "Team sets").
 *
 * Why by hand: for such a restore arborist fetches nothing and decides nothing. The package-lock
 * the restore synthesised (team.ts `writePinned`/`layoutOf`) fixes every location, and every
 * package's files are already unpacked and checked against the lock's integrity (unpacked.ts):
 * its reify only moves those folders into place and writes the two lockfiles, at ~45 ms of CPU
 * for 21 packages. Written here, it is the same moves (unpacked.ts `moveInto`, the folder handed
 * over for exactly its integrity) and the same lockfile bytes (direct-edit.ts `lockfileText`:
 * arborist's serializer and key order; the hidden lockfile is the package-lock without its root
 * entry, as arborist's `Shrinkwrap` writes it).
 *
 * Exact only when arborist would do nothing more, so anything else goes to arborist, having
 * moved nothing: the staging copy holds no `node_modules` (a folder that had packages keeps
 * arborist, which diffs against them); the root's package.json is ours (`name`, `private`,
 * `dependencies`); each lock entry is a registry package at a plain `node_modules/<name>` path
 * with only `version`, `resolved`, `integrity`, `dependencies` and `license` (no bin links, no
 * install scripts, no engines/os/cpu checks, no peer, optional or aliased edges, no bundled
 * packages), its unpacked folder is on offer for its integrity, on the staging copy's file system
 * and without a `node_modules` of its own; and every dependency, the root's included, resolves by Node's rule to an entry whose
 * version satisfies its range, with no entry left that nothing reaches (arborist would prune it).
 * The equality with arborist's tree and files is checked by test/integration/teamset-placement.test.ts.
 *
 * The same knowledge answers, without loading arborist, the two tree reads around it: the live
 * tree of a plugins folder with no `node_modules` (`emptyLiveTree`: no packages) and the closure
 * check of the placed copy (`placedTopNodes`: the tree the placed lock describes, which is what
 * arborist's `loadActual` reads back, through the hidden lockfile written last, each package's
 * name, version and edges checked equal to its own package.json's). Anything else is read by
 * arborist, as before.
 */
import { lstat, readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import semver from "semver";
import validateNpmPackageName from "validate-npm-package-name";
import { XcshToolsError } from "../core/errors.js";
import { isRecord } from "../manifest/result.js";
import { lockfileText } from "./direct-edit.js";
import { moveInto, type UnpackedFolders } from "./unpacked.js";

type Entry = Record<string, unknown>;

const ROOT_KEYS = new Set(["name", "private", "dependencies"]);
const ENTRY_KEYS = new Set(["version", "resolved", "integrity", "dependencies", "license"]);

/** The package-lock key's folder chain, or undefined when it is not `node_modules/<name>(/node_modules/<name>)*`. */
function namesOf(location: string): string[] | undefined {
  const parts = location.split("/node_modules/");
  const first = parts[0]!;
  if (!first.startsWith("node_modules/")) return undefined;
  parts[0] = first.slice("node_modules/".length);
  return parts.every((name) => validateNpmPackageName(name).validForNewPackages && !name.includes("\\")) ? parts : undefined;
}

/** The location Node's resolution finds `name` at from the package at `from` (`""`: the root). */
function resolveFrom(packages: Readonly<Record<string, Entry>>, from: string, name: string): string | undefined {
  for (let folder = from; ; ) {
    const at = folder === "" ? `node_modules/${name}` : `${folder}/node_modules/${name}`;
    if (packages[at] !== undefined) return at;
    if (folder === "") return undefined;
    const cut = folder.lastIndexOf("/node_modules/");
    folder = cut < 0 ? "" : folder.slice(0, cut);
  }
}

/** The entries to place (location → entry) when the lock is one this module places exactly, else undefined. */
function exactEntries(pkg: unknown, lock: unknown): Map<string, Entry> | undefined {
  if (!isRecord(pkg) || !Object.keys(pkg).every((key) => ROOT_KEYS.has(key)) || typeof pkg.name !== "string" || !isRecord(pkg.dependencies)) return undefined;
  if (!isRecord(lock) || lock.lockfileVersion !== 3 || !isRecord(lock.packages)) return undefined;
  const packages: Record<string, Entry> = {};
  for (const [location, entry] of Object.entries(lock.packages)) {
    if (location === "" || !isRecord(entry)) continue;
    if (!namesOf(location) || !Object.keys(entry).every((key) => ENTRY_KEYS.has(key))) return undefined;
    if (typeof entry.version !== "string" || typeof entry.resolved !== "string" || typeof entry.integrity !== "string") return undefined;
    packages[location] = entry;
  }
  // Every edge resolves to an entry in its range; what nothing reaches would be pruned by arborist.
  const reached = new Set<string>();
  const walk = (from: string, deps: unknown): boolean => {
    if (!isRecord(deps)) return deps === undefined;
    for (const [name, range] of Object.entries(deps)) {
      if (typeof range !== "string" || semver.validRange(range) === null) return false;
      const at = resolveFrom(packages, from, name);
      if (at === undefined || !semver.satisfies(packages[at]!.version as string, range)) return false;
      if (reached.has(at)) continue;
      reached.add(at);
      if (!walk(at, packages[at]!.dependencies)) return false;
    }
    return true;
  };
  if (!walk("", pkg.dependencies) || reached.size !== Object.keys(packages).length) return undefined;
  return new Map(Object.entries(packages));
}

/** Edge fields arborist reads besides `dependencies`: a package declaring any is left to it. */
const OTHER_EDGES = ["optionalDependencies", "peerDependencies", "peerDependenciesMeta", "bundleDependencies", "bundledDependencies"];

/** A dependencies field, order-free, for comparing the package's own with its lock entry's (none and `{}` alike). */
function edgesText(deps: unknown): string {
  const entries = deps === undefined ? [] : isRecord(deps) ? Object.entries(deps).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)) : [["(not an object)", deps]];
  return JSON.stringify(entries);
}

/** A JSON file's value, or undefined when it cannot be read or parsed. */
const read = (file: string): Promise<unknown> => readFile(file, "utf8").then((text) => JSON.parse(text) as unknown, () => undefined);

/** A placement: `place` moves the packages in and writes the lockfiles; `packages` is what it places (lock location → entry). */
export interface ExactPlacement {
  place(): Promise<void>;
  packages: ReadonlyMap<string, Readonly<Entry>>;
}

/**
 * How to place the restore's packages into the staging copy at `dir` as arborist's reify would,
 * with its two lockfiles; undefined, having changed nothing, when this is not a case placed
 * exactly (the caller then runs arborist).
 */
export async function exactPlacement(dir: string, unpacked: UnpackedFolders | undefined): Promise<ExactPlacement | undefined> {
  if (!unpacked) return undefined;
  const nodeModules = path.join(dir, "node_modules");
  if (await readdir(nodeModules).then(() => true, () => false)) return undefined;
  const pkg = await read(path.join(dir, "package.json"));
  const entries = exactEntries(pkg, await read(path.join(dir, "package-lock.json")));
  if (!entries) return undefined;
  const folders = new Set<string>();
  const device = (await stat(dir)).dev;
  for (const [location, entry] of entries) {
    const folder = unpacked.peek(entry.integrity as string);
    if (folder === undefined || folders.has(folder)) return undefined;
    // Moved by rename: never across file systems, never a package that brings its own node_modules.
    if ((await stat(folder).catch(() => undefined))?.dev !== device) return undefined;
    if ((await readdir(folder).catch(() => ["node_modules"])).includes("node_modules")) return undefined;
    // The name, version and edges arborist would read from the package's own package.json are the
    // lock's (placedTopNodes answers from the lock): a package that says otherwise goes to arborist.
    const manifest = await read(path.join(folder, "package.json"));
    if (!isRecord(manifest) || manifest.name !== namesOf(location)!.at(-1) || manifest.version !== entry.version) return undefined;
    if (edgesText(manifest.dependencies) !== edgesText(entry.dependencies) || OTHER_EDGES.some((key) => manifest[key] !== undefined)) return undefined;
    folders.add(folder);
  }
  const { name, dependencies } = pkg as { name: string; dependencies: Record<string, string> };
  const place = async () => {
    // Parents first: a nested package's folder goes inside its parent's, beside its files.
    for (const location of [...entries.keys()].sort((a, b) => a.length - b.length)) {
      const folder = unpacked.take(entries.get(location)!.integrity as string);
      if (folder === undefined || !(await moveInto(folder, path.join(dir, location)))) {
        throw new XcshToolsError("EINSTALL", `Could not place ${location} in the staging copy of the plugins folder`, { hint: "Run the command again; nothing was changed." });
      }
    }
    const packages = Object.fromEntries(entries);
    await writeFile(path.join(dir, "package-lock.json"), lockfileText({ name, lockfileVersion: 3, requires: true, packages: { "": { name, dependencies }, ...packages } }));
    // Last: arborist trusts the hidden lockfile only when no package folder is newer than it.
    await writeFile(path.join(nodeModules, ".package-lock.json"), lockfileText({ name, lockfileVersion: 3, requires: true, packages }));
  };
  return { place, packages: entries };
}

/** The parts of an arborist node a closure walk reads (team.ts `closureOf`), as `loadActual` sets them. */
export interface PlacedNode {
  packageName: string;
  version: string;
  resolved: string;
  integrity: string;
  inBundle: boolean;
  edgesOut: Map<string, { to: PlacedNode | null }>;
}

/**
 * The top-level nodes arborist's `loadActual` reads from a staging copy `exactPlacement` placed
 * `packages` into, without reading it: each package at its location with the lock's version,
 * resolved and integrity (arborist takes them from the hidden lockfile the placement wrote last),
 * its dependencies resolved by Node's rule (exactEntries checked that each resolves in range).
 * Equal to arborist's answer: test/integration/teamset-placement.test.ts.
 */
export function placedTopNodes(packages: ReadonlyMap<string, Readonly<Entry>>): Map<string, PlacedNode> {
  const lock = Object.fromEntries(packages);
  const nodes = new Map<string, PlacedNode>();
  for (const [location, entry] of packages) {
    nodes.set(location, { packageName: namesOf(location)!.at(-1)!, version: entry.version as string, resolved: entry.resolved as string, integrity: entry.integrity as string, inBundle: false, edgesOut: new Map() });
  }
  for (const [location, entry] of packages) {
    const deps = isRecord(entry.dependencies) ? entry.dependencies : {};
    for (const dep of Object.keys(deps)) {
      const at = resolveFrom(lock, location, dep);
      nodes.get(location)!.edgesOut.set(dep, { to: at === undefined ? null : nodes.get(at)! });
    }
  }
  const top = new Map<string, PlacedNode>();
  for (const [location, node] of nodes) if (namesOf(location)!.length === 1) top.set(node.packageName, node);
  return top;
}

/**
 * Whether arborist's `loadActual` of the plugins folder `dir` finds no packages, known without it:
 * a folder (arborist fails on a missing one) with no `node_modules` (not even a link or a file by
 * that name) and a package.json that is absent or ours (no `workspaces`, which arborist would link
 * in). Anything else: false, and arborist reads it.
 */
export async function emptyLiveTree(dir: string): Promise<boolean> {
  if (!(await stat(dir).then((s) => s.isDirectory(), () => false))) return false;
  const absent = await lstat(path.join(dir, "node_modules")).then(
    () => false,
    (error: NodeJS.ErrnoException) => error.code === "ENOENT",
  );
  if (!absent) return false;
  const text = await readFile(path.join(dir, "package.json"), "utf8").catch((error: NodeJS.ErrnoException) => (error.code === "ENOENT" ? null : undefined));
  if (text === null) return true;
  if (text === undefined) return false;
  let pkg: unknown;
  try {
    pkg = JSON.parse(text);
  } catch {
    return false;
  }
  return isRecord(pkg) && Object.keys(pkg).every((key) => ROOT_KEYS.has(key));
}
