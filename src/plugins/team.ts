/**
 * What the team-set engine needs of this one (docs/design/team-sets.md (c) "npm plugins,
 * precisely", (d) 4. and 6.): npm plugins installed into the user's tree exactly as a team lock
 * names them, the plugin and its whole dependency closure, in one transaction that the caller can
 * add its own staged files to (the generated host files, the lock), so the whole restore commits
 * at once.
 *
 * Why a package-lock synthesised from the team lock, not arborist's own resolution: arborist
 * resolves a dependency range to the newest version the registry offers now (so a dependency
 * published after locking would be installed), and overrides cannot say "this version here and
 * that one there" when a closure holds two versions of one name. Arborist trusts a v2/v3
 * package-lock it loads as its virtual tree and only re-resolves edges the tree leaves invalid
 * (build-ideal-tree.js `#problemEdges`), so writing the plugin and its locked closure into the
 * work copy's package-lock.json, each at a location where Node's resolution finds exactly the
 * locked version, makes `reify` install that tree and nothing else, fetching each tarball by its
 * locked integrity. A locked package never shares a folder the user's tree already has (that
 * package's own dependencies are not the lock's): it goes to the top level when the name is free
 * there, as npm hoists, else into the plugin's own `node_modules`. What arborist installed is then
 * compared with the lock (any difference: the caller's `EINTEGRITY`, inside the transaction, so
 * nothing is committed); a later `install` of another plugin that moved a shared package shows as
 * a difference at the next restore, which reinstalls the plugin as locked.
 *
 * No packuments: each package's manifest is read from its tarball, fetched by the URL npm's
 * registry layout gives (`<registry of its scope>/<name>/-/<base>-<version>.tgz`) and the locked
 * integrity, so npm's cache answers a warm restore without a request; a 404 there falls back to
 * the packument's tarball URL (a registry with another layout). A git plugin is fetched at its
 * locked commit, which is its identity (packing a git checkout gives other bytes on other machines).
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import validateNpmPackageName from "validate-npm-package-name";
import { jsonText } from "../core/atomic-fs.js";
import { nodeErrorCode } from "../core/errors.js";
import { semver } from "../core/npm-spec.js";
import type { ExecutableRequest } from "../components/consent.js";
import { isRecord } from "../manifest/result.js";
import { applyPlan, type ApplyResult } from "./apply.js";
import type { MutationWorld, Mutation } from "./mutation.js";
import { cachedTarball, loadArborist, loadPacote, npmError, npmOptions, type NpmClientOptions } from "./npm-client.js";
import { registryFor } from "./npmrc.js";
import { planInstall, type Plan, type PlanAction } from "./plan.js";
import { packageOf, type ResolvedPackage } from "./resolve.js";
import { assertGitSpec, parseInstallSpec } from "./spec.js";
import { pluginsPaths, withRecordEntry, type InstallRecord } from "./state.js";
import { HELD_BYTES_OPTION, TARBALL_CHECK_OPTION } from "./tarball-check.js";
import { UnpackedFolders } from "./unpacked.js";
import type { ExactPlacement } from "./pinned-placement.js";

/** An npm plugin as a team lock pins it. */
export interface PinnedNpmPlugin {
  name: string;
  version: string;
  integrity: string;
  from?: { kind: "git"; url: string; commit: string } | { kind: "tarball"; url: string };
  /** The locked closure, layout-free: `name@version` → integrity. */
  dependencies: Record<string, string>;
}

/** Bytes that are not the locked ones: `at` is the lock field under `/npm/<plugin>` (`["integrity"]`, `["dependencies", "dep@1.0.0"]`). */
export interface PinnedMismatch {
  plugin: string;
  at: string[];
  expected: string;
  got: string;
}

/** One package of a pinned tree, read from its bytes. */
export interface PinnedPackage {
  name: string;
  version: string;
  resolved: string;
  integrity: string | undefined;
  pkg: Record<string, unknown>;
  /** Where these very bytes were unpacked to read `pkg` (resolvePinned's `unpackInto`); the consent preview reads them there. */
  dir?: string;
}

/** A pinned plugin fetched now: its manifest and every package of its closure, read from the locked bytes. */
export interface ResolvedPinned {
  pinned: PinnedNpmPlugin;
  resolved: ResolvedPackage;
  /** The integrity of the plugin's bytes as fetched (the lock's; none for a git plugin, whose identity is its commit). */
  integrity: string | undefined;
  /** The feature names the package's manifest offers (for `features: "*"`). */
  features: string[];
  /** The plugin as fetched: `top.resolved` is the URL (or git spec at the commit) its bytes come from. */
  top: PinnedPackage;
  closure: PinnedPackage[];
}

/** A lock field's bytes differ: thrown by the fetch, turned into the caller's error. */
class Mismatch extends Error {
  constructor(readonly found: PinnedMismatch) {
    super(`${found.plugin}: ${found.at.join("/")}: expected ${found.expected}, got ${found.got}`);
  }
}

/** The tarball URL of `name@version` in npm's registry layout, on the registry the user's .npmrc gives its scope. */
export function registryTarballUrl(name: string, version: string, client: NpmClientOptions): string {
  const base = registryFor(name, client.registry).replace(/\/*$/, "/");
  return `${base}${name}/-/${name.slice(name.lastIndexOf("/") + 1)}-${version}.tgz`;
}

/** The `name@version` key of a closure entry split (a scoped name keeps its `@`). */
function splitKey(key: string): { name: string; version: string } {
  const at = key.lastIndexOf("@");
  return { name: key.slice(0, at), version: key.slice(at + 1) };
}

/** What an integrity error of ssri found, as text. */
function foundOf(error: unknown): string {
  const found = (error as { found?: unknown }).found;
  return found === undefined || found === null ? "other bytes" : String(found);
}

/**
 * The manifest of exactly the locked bytes: a registry package by its derived tarball URL and
 * integrity (the packument only when that URL is a 404), a tarball URL by integrity, a git
 * plugin at its commit. Bytes other than the integrity: `Mismatch` naming `at`.
 */
async function fetchLocked(client: NpmClientOptions, cwd: string, what: { plugin: string; at: string[]; name: string; version: string; integrity?: string; from?: PinnedNpmPlugin["from"] }, into?: string): Promise<PinnedPackage> {
  const pacote = await loadPacote();
  const check = { [TARBALL_CHECK_OPTION]: { what: `${what.name}@${what.version}`, requirePackageJson: true, ...(client.tarballLimits ? { limits: client.tarballLimits } : {}) } };
  const options = { ...npmOptions(client), ...check, where: cwd };
  let unpacked: string | undefined;
  const read = async (spec: string, integrity: string | undefined, manifestOnly = false) => {
    try {
      // A warm cache: the locked bytes read by their content address, handed to the fetcher (tarball-check.ts `HELD_BYTES_OPTION`).
      const held = integrity && !manifestOnly && what.from?.kind !== "git" ? await cachedTarball(options, integrity) : undefined;
      const opts = { ...options, ...(integrity ? { integrity } : {}), ...(held ? { [HELD_BYTES_OPTION]: { integrity, bytes: held } } : {}) } as never;
      // pacote's `manifest` of a tarball unpacks it whole into a temporary folder and reads its
      // package.json there; unpacked into `into` instead (same fetcher, same check, same
      // integrity), the same bytes also serve the consent preview, which would unpack them again.
      // A git spec is read from its checkout (its packed bytes differ), a packument (`manifestOnly`) has no bytes: pacote's own way.
      if (into === undefined || what.from?.kind === "git" || manifestOnly) return (await pacote.manifest(spec, opts)) as unknown as Record<string, unknown>;
      const { integrity: got } = (await pacote.extract(spec, into, opts)) as { integrity?: string };
      unpacked = into;
      const pkg = (await pacote.manifest(`file:${into}`, { ...npmOptions(client), where: cwd } as never)) as unknown as Record<string, unknown>;
      return { ...pkg, _integrity: got, _resolved: spec };
    } catch (error) {
      if (nodeErrorCode(error) === "EINTEGRITY" && integrity) throw new Mismatch({ plugin: what.plugin, at: what.at, expected: integrity, got: foundOf(error) });
      throw error;
    }
  };
  let pkg: Record<string, unknown>;
  let resolved: string;
  try {
    if (what.from?.kind === "git") {
      resolved = `git+${what.from.url}#${what.from.commit}`;
      assertGitSpec(parseInstallSpec(resolved, cwd));
      pkg = await read(resolved, undefined);
    } else if (what.from?.kind === "tarball") {
      resolved = what.from.url;
      pkg = await read(resolved, what.integrity);
    } else {
      resolved = registryTarballUrl(what.name, what.version, client);
      try {
        pkg = await read(resolved, what.integrity);
      } catch (error) {
        if (nodeErrorCode(error) !== "E404" && (error as { statusCode?: number }).statusCode !== 404) throw error;
        // Not npm's layout on this registry: its packument says where the tarball is.
        const doc = await read(`${what.name}@${what.version}`, what.integrity, true);
        resolved = String(doc._resolved);
        pkg = await read(resolved, what.integrity);
      }
    }
  } catch (error) {
    if (error instanceof Mismatch) throw error;
    throw npmError(error, `${what.name}@${what.version}`, client, what.name);
  }
  if (pkg.name !== what.name || pkg.version !== what.version) {
    throw new Mismatch({ plugin: what.plugin, at: what.at, expected: `${what.name}@${what.version}`, got: `${String(pkg.name)}@${String(pkg.version)}` });
  }
  const integrity = typeof pkg._integrity === "string" ? pkg._integrity : what.integrity;
  return { name: what.name, version: what.version, resolved, integrity: what.from?.kind === "git" ? undefined : integrity, pkg, ...(unpacked !== undefined ? { dir: unpacked } : {}) };
}

/**
 * Fetch pinned plugins and their closures (bytes into npm's cache; nothing of ours written but
 * into `unpackInto`, a scratch folder, when given: each package's bytes unpacked there once, the
 * folder in `PinnedPackage.dir`).
 * Bytes other than the lock's: the error `mismatch` makes of it, before anything is installed.
 */
export async function resolvePinned(client: NpmClientOptions, cwd: string, pinned: readonly PinnedNpmPlugin[], mismatch: (found: PinnedMismatch) => Error, unpackInto?: string): Promise<ResolvedPinned[]> {
  // A package several plugins lock at the same bytes (a shared library) is read once, not once
  // per plugin; a mismatch still names the lock field of each plugin that asked for it.
  const fetched = new Map<string, Promise<PinnedPackage>>();
  const fetchOnce = async (what: Parameters<typeof fetchLocked>[2]): Promise<PinnedPackage> => {
    const key = JSON.stringify([what.name, what.version, what.integrity ?? null, what.from ?? null]);
    let pending = fetched.get(key);
    if (!pending) fetched.set(key, (pending = fetchLocked(client, cwd, what, unpackInto === undefined ? undefined : path.join(unpackInto, `pinned-${fetched.size}`))));
    try {
      return await pending;
    } catch (error) {
      throw error instanceof Mismatch ? new Mismatch({ ...error.found, plugin: what.plugin, at: what.at }) : error;
    }
  };
  try {
    return await settledAll(
      pinned.map(async (p) => {
        const top = await fetchOnce({ plugin: p.name, at: p.from?.kind === "git" ? ["from", "commit"] : ["integrity"], name: p.name, version: p.version, integrity: p.integrity, ...(p.from ? { from: p.from } : {}) });
        const closure = await Promise.all(
          Object.entries(p.dependencies).map(([key, integrity]) => fetchOnce({ plugin: p.name, at: ["dependencies", key], ...splitKey(key), integrity })),
        );
        const spec = parseInstallSpec(p.from?.kind === "git" ? top.resolved : p.from?.kind === "tarball" ? p.from.url : `${p.name}@${p.version}`, cwd);
        const resolved = packageOf(spec, top.pkg);
        return { pinned: p, resolved, integrity: top.integrity, features: Object.keys(resolved.manifest.features ?? {}), top, closure };
      }),
      fetched.values(),
    );
  } catch (error) {
    if (error instanceof Mismatch) throw mismatch(error.found);
    throw error;
  }
}

/**
 * Every result of `work`, or the first failure (in the order of `work`) once all of it and every
 * other operation `started` has ended. Work that unpacks into a caller's scratch folder must not
 * outlive a failure: `Promise.all` rejects at once, the caller disposes of its scratch, and a
 * sibling still unpacking wrote there afterwards (a refused restore left a package behind).
 */
export async function settledAll<T>(work: Promise<T>[], started: Iterable<Promise<unknown>> = []): Promise<T[]> {
  const settled = await Promise.allSettled(work);
  const failed = settled.find((s) => s.status === "rejected");
  if (!failed) return settled.map((s) => (s as PromiseFulfilledResult<T>).value);
  await Promise.allSettled(started);
  throw failed.reason;
}

// ---- the synthesised package-lock ------------------------------------------------------------

/** The folder `location` (a package-lock key) is nested in: `""` for a top-level package. */
function parentOf(location: string): string {
  const cut = location.lastIndexOf("/node_modules/");
  return cut < 0 ? "" : location.slice(0, cut);
}

function childOf(folder: string, name: string): string {
  return folder === "" ? `node_modules/${name}` : `${folder}/node_modules/${name}`;
}

/** The edges a package's manifest has npm resolve: folder name, target package, range, kind. */
function edgesOf(pkg: Record<string, unknown>): { as: string; name: string; range: string; peer: boolean; optional: boolean }[] {
  const out: { as: string; name: string; range: string; peer: boolean; optional: boolean }[] = [];
  const meta = isRecord(pkg.peerDependenciesMeta) ? pkg.peerDependenciesMeta : {};
  for (const [field, peer, optional] of [["dependencies", false, false], ["optionalDependencies", false, true], ["peerDependencies", true, false]] as const) {
    const deps = isRecord(pkg[field]) ? pkg[field] : {};
    for (const [as, value] of Object.entries(deps)) {
      // The name becomes a package-lock location (`…/node_modules/<as>`): a package's manifest must not lead it out of node_modules.
      if (typeof value !== "string" || !validateNpmPackageName(as).validForOldPackages) continue;
      // An alias (`"x": "npm:y@^1"`) installs y in the folder x.
      const alias = /^npm:((?:@[^/@]+\/)?[^@]+)(?:@(.*))?$/.exec(value);
      const isOptional = optional || (peer && isRecord(meta[as]) && meta[as].optional === true);
      out.push({ as, name: alias?.[1] ?? as, range: alias ? (alias[2] ?? "*") : value, peer, optional: isOptional });
    }
  }
  return out;
}

/** The package-lock entry of a pinned package (the fields arborist reads back, shrinkwrap.js `pkgMetaKeys`). */
function lockEntryOf(p: PinnedPackage, as: string): Record<string, unknown> {
  const entry: Record<string, unknown> = { ...(as !== p.name ? { name: p.name } : {}), version: p.version, resolved: p.resolved, ...(p.integrity ? { integrity: p.integrity } : {}) };
  for (const key of ["dependencies", "optionalDependencies", "peerDependencies", "peerDependenciesMeta", "bundleDependencies", "engines", "os", "cpu", "libc", "deprecated"]) {
    const value = p.pkg[key];
    if (value !== undefined && value !== null && value !== "" && !(isRecord(value) && Object.keys(value).length === 0)) entry[key] = value;
  }
  const license = p.pkg.license;
  if (typeof license === "string") entry.license = license;
  else if (isRecord(license) && typeof license.type === "string") entry.license = license.type;
  const bin = p.pkg.bin;
  if (typeof bin === "string") entry.bin = { [p.name.slice(p.name.lastIndexOf("/") + 1)]: bin };
  else if (isRecord(bin) && Object.keys(bin).length > 0) entry.bin = bin;
  const scripts = isRecord(p.pkg.scripts) ? p.pkg.scripts : {};
  if (["preinstall", "install", "postinstall"].some((s) => typeof scripts[s] === "string")) entry.hasInstallScript = true;
  return entry;
}

/**
 * Where each package of a pinned plugin goes (package-lock key → entry), breadth first from the
 * plugin, each dependency as high as Node's resolution from the package that needs it allows: the
 * top level when the user's tree has no package of that name there (never sharing one of theirs,
 * whose own dependencies are not the lock's), else the plugin's own subtree, else beside the
 * package that needs it. Peers resolve from the needing package's parent. A top-level package
 * another plugin of the same restore laid out (`ours`) is shared when it is the same locked bytes
 * and resolves the same locked packages below it (`sharable`), as npm would dedupe it.
 */
function layoutOf(r: ResolvedPinned, existing: Record<string, unknown>, ours: ReadonlySet<string>): Map<string, Record<string, unknown>> {
  const versions = new Map<string, PinnedPackage[]>();
  for (const p of r.closure) versions.set(p.name, [...(versions.get(p.name) ?? []), p]);
  /** The closure's package an edge resolves to: the highest locked version in its range (a non-range spec: the one locked). */
  const pick = (edge: { name: string; range: string }): PinnedPackage | undefined =>
    (versions.get(edge.name) ?? []).filter((p) => semver.satisfies(p.version, edge.range, { includePrerelease: true, loose: true })).sort((x, y) => semver.rcompare(x.version, y.version))[0] ??
    (versions.get(edge.name)?.length === 1 && !semver.validRange(edge.range) ? versions.get(edge.name)![0] : undefined);
  /**
   * Whether the entry at `location`, laid out by another plugin of this same restore (`ours`), is
   * exactly `dep` with everything it resolves from there being this plugin's locked packages too:
   * then this plugin shares it, as npm dedupes (a shared library installed once, not once per
   * plugin). Never an entry of the user's own tree, and not a package with peers (resolved from
   * whoever needs it): those keep the rule above.
   */
  const sharable = (location: string, dep: PinnedPackage, seen = new Set<string>()): boolean => {
    const entry = existing[location];
    if (!ours.has(location) || !isRecord(entry) || entry.version !== dep.version || entry.integrity !== dep.integrity || entry.resolved !== dep.resolved) return false;
    if (seen.has(location)) return true;
    seen.add(location);
    return edgesOf(dep.pkg).every((edge) => {
      const want = edge.peer ? undefined : pick(edge);
      if (!want) return false;
      for (let folder = location; ; folder = parentOf(folder)) {
        const at = childOf(folder, edge.as);
        if (existing[at] !== undefined) return sharable(at, want, seen);
        if (folder === "") return false;
      }
    });
  };
  const top = childOf("", r.pinned.name);
  const placed = new Map<string, PinnedPackage>([[top, r.top]]);
  const out = new Map<string, Record<string, unknown>>([[top, lockEntryOf(r.top, r.pinned.name)]]);
  /** `<folder>\0<name>`: an edge resolved `name` past `<folder>/node_modules`. */
  const walked = new Set<string>();
  const queue = [top];
  while (queue.length > 0) {
    const at = queue.shift()!;
    for (const edge of edgesOf(placed.get(at)!.pkg)) {
      const dep = pick(edge);
      if (!dep) continue; // not in the closure (an optional one that did not install): arborist decides, verify judges
      // Up from `from` as Node's resolution goes: the first folder holding the name decides; below
      // it, the highest folder that no edge already resolved past gets the package (a package
      // there would shadow what that edge found higher up).
      const from = edge.peer ? parentOf(at) : at;
      const chain: string[] = [];
      let found: PinnedPackage | "theirs" | undefined;
      for (let folder = from; ; folder = parentOf(folder)) {
        const location = childOf(folder, edge.as);
        found = placed.get(location) ?? (folder === "" && existing[location] !== undefined ? (sharable(location, dep) ? dep : "theirs") : undefined);
        if (found) break;
        chain.push(folder);
        if (folder === "") break;
      }
      const pass = (folders: string[]) => folders.forEach((f) => walked.add(`${f}\0${edge.as}`));
      if (found === dep) {
        pass(chain);
        continue;
      }
      const target = chain.filter((f) => !walked.has(`${f}\0${edge.as}`)).at(-1);
      if (target === undefined) continue; // no free folder (a peer whose place the user's tree holds): arborist decides, verify judges
      pass(chain.slice(0, chain.indexOf(target)));
      const location = childOf(target, edge.as);
      placed.set(location, dep);
      out.set(location, lockEntryOf(dep, edge.as));
      queue.push(location);
    }
  }
  return out;
}

async function readJsonFile(file: string): Promise<Record<string, unknown> | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const value: unknown = JSON.parse(text);
  return isRecord(value) ? value : undefined;
}

/** The dependency value package.json gets: the user's saved range when the locked version meets it, else the exact pin. */
function dependencyValue(r: ResolvedPinned, saved: unknown): string {
  const { from, version } = r.pinned;
  if (from?.kind === "git") return r.top.resolved;
  if (from?.kind === "tarball") return from.url;
  return typeof saved === "string" && semver.validRange(saved) && semver.satisfies(version, saved, { includePrerelease: true }) ? saved : version;
}

/**
 * Write the pinned plugins of `names` into the work copy at `dir`: package.json's dependency and
 * the package-lock entries of the plugin and its closure (the plugin's old subtree dropped).
 * A copy with packages but no package-lock (a tree npm's installer did not make) gets one from
 * arborist first, so the user's other plugins keep their versions.
 */
async function writePinned(client: NpmClientOptions, dir: string, resolved: readonly ResolvedPinned[], names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const pkgFile = path.join(dir, "package.json");
  const lockFile = path.join(dir, "package-lock.json");
  const pkg = (await readJsonFile(pkgFile)) ?? {};
  let lock = await readJsonFile(lockFile);
  if (!lock) {
    const installed = await readdir(path.join(dir, "node_modules")).catch(() => [] as string[]);
    if (installed.some((entry) => !entry.startsWith("."))) {
      const Arborist = await loadArborist();
      const arb = new Arborist({ ...npmOptions(client), path: dir });
      const tree = (await arb.loadActual()) as unknown as { meta: { commit(): Record<string, unknown> } };
      lock = tree.meta.commit();
    } else lock = { name: typeof pkg.name === "string" ? pkg.name : "plugins", lockfileVersion: 3, requires: true, packages: { "": {} } };
  }
  const packages = isRecord(lock.packages) ? { ...lock.packages } : {};
  const deps = isRecord(pkg.dependencies) ? { ...pkg.dependencies } : {};
  /** The locations this call laid out: a later plugin may share them (layoutOf `sharable`). */
  const ours = new Set<string>();
  for (const r of resolved.filter((x) => names.includes(x.pinned.name))) {
    const top = childOf("", r.pinned.name);
    for (const key of Object.keys(packages)) if (key === top || key.startsWith(`${top}/`)) delete packages[key];
    for (const [location, entry] of layoutOf(r, packages, ours)) {
      packages[location] = entry;
      ours.add(location);
    }
    deps[r.pinned.name] = dependencyValue(r, deps[r.pinned.name]);
  }
  const root = isRecord(packages[""]) ? packages[""] : {};
  packages[""] = { ...root, dependencies: deps };
  await writeFile(pkgFile, jsonText({ ...pkg, dependencies: deps }));
  await writeFile(lockFile, jsonText({ ...lock, lockfileVersion: 3, packages }));
}

// ---- what is installed --------------------------------------------------------------------

/** The parts of an arborist node the closure walk reads (the package ships no types for them). */
interface ClosureNode {
  packageName: string;
  version: string;
  resolved?: string | null;
  integrity?: string | null;
  inBundle?: boolean;
  edgesOut: Map<string, { to: ClosureNode | null }>;
}

/**
 * The tree of the plugins folder at `dir`, as arborist reads it from disk; `placed`, the packages
 * pinned-placement.ts placed there. Where the answer is known without arborist (a placed copy, a
 * folder with no packages: pinned-placement.ts says when), arborist is not loaded for it.
 */
async function actualTopNodes(client: NpmClientOptions, dir: string, placed?: ExactPlacement["packages"]): Promise<Map<string, ClosureNode>> {
  const known = await import("./pinned-placement.js");
  if (placed) return known.placedTopNodes(placed);
  if (await known.emptyLiveTree(dir)) return new Map();
  const Arborist = await loadArborist();
  const tree = await new Arborist({ ...npmOptions(client), path: dir }).loadActual();
  return tree.children as unknown as Map<string, ClosureNode>;
}

/** What `top` pulls in, layout-free (`name@version → integrity`, as a team lock records it); bundled packages come with their parent's bytes. */
function closureOf(top: ClosureNode): Record<string, string> {
  const closure: Record<string, string> = {};
  const seen = new Set<ClosureNode>([top]);
  const walk = (node: ClosureNode) => {
    for (const edge of node.edgesOut.values()) {
      const to = edge.to;
      if (!to || seen.has(to) || to.inBundle) continue;
      seen.add(to);
      Object.defineProperty(closure, `${to.packageName}@${to.version}`, { value: to.integrity ?? "", enumerable: true, writable: true, configurable: true });
      walk(to);
    }
  };
  walk(top);
  return closure;
}

/** Every way the installed `node` differs from the lock's `p` (empty: installed exactly as locked). */
function differences(p: PinnedNpmPlugin, node: ClosureNode | undefined): PinnedMismatch[] {
  const out: PinnedMismatch[] = [];
  const add = (at: string[], expected: string, got: string) => out.push({ plugin: p.name, at, expected, got });
  if (!node) return [{ plugin: p.name, at: ["version"], expected: p.version, got: "not installed" }];
  if (node.version !== p.version) add(["version"], p.version, node.version);
  if (p.from?.kind === "git") {
    if (!String(node.resolved ?? "").endsWith(`#${p.from.commit}`)) add(["from", "commit"], p.from.commit, String(node.resolved ?? "no commit"));
  } else if (node.integrity !== p.integrity) add(["integrity"], p.integrity, node.integrity ?? "no integrity");
  const now = closureOf(node);
  const locked = p.dependencies;
  const nameOf = (key: string) => splitKey(key).name;
  for (const [key, integrity] of Object.entries(now)) {
    if (Object.hasOwn(locked, key)) {
      if (locked[key] !== integrity) add(["dependencies", key], locked[key]!, integrity || "no integrity");
      continue;
    }
    const same = Object.keys(locked).find((k) => nameOf(k) === nameOf(key) && !Object.hasOwn(now, k));
    add(same ? ["dependencies", same] : ["dependencies"], same ?? `no ${nameOf(key)}`, key);
  }
  for (const key of Object.keys(locked)) {
    if (!Object.hasOwn(now, key) && !Object.keys(now).some((k) => nameOf(k) === nameOf(key))) add(["dependencies", key], key, "not installed");
  }
  return out;
}

// ---- the transaction ------------------------------------------------------------------------

/** Options of `applyPinned`. */
export interface ApplyPinnedOptions {
  client: NpmClientOptions;
  cwd: string;
  /** The project's root (its realpath): the key of our record's `team.projects`. */
  project: string;
  resolved: readonly ResolvedPinned[];
  /** Every npm plugin the project's set names (on or off): a team install the set no longer names loses this project. */
  declared: ReadonlySet<string>;
  /** The error for an installed tree that is not the lock's (thrown inside the transaction: nothing is committed). */
  mismatch: (found: PinnedMismatch) => Error;
  approveExecutables?: (request: ExecutableRequest) => Promise<void>;
  stageMore: (m: Mutation) => Promise<void>;
}

/** What `applyPinned` did besides the plan. */
export interface PinnedResult extends ApplyResult {
  /** Team-installed plugins no project declares any more (and the user did not install): uninstalled. */
  removed: string[];
  /** `moves <name> <v> → <w>, which <other root> locks`: one per plugin another project locks at another version. */
  versionMoves: string[];
}

/** Whether our record says the user installed `name` themselves (an entry from before team sets counts as theirs). */
function isPersonal(record: InstallRecord, name: string): boolean {
  const entry = Object.hasOwn(record.plugins, name) ? record.plugins[name] : undefined;
  return entry !== undefined && (entry.personal === true || entry.team === undefined);
}

/** The registry packages resolvePinned unpacked, by the locked integrity their bytes matched, for arborist to move into place (unpacked.ts). */
function unpackedOf(resolved: readonly ResolvedPinned[]): UnpackedFolders {
  const unpacked = new UnpackedFolders();
  for (const p of resolved.flatMap((r) => [r.top, ...r.closure])) {
    if (p.dir !== undefined && p.integrity !== undefined && /^https?:/.test(p.resolved)) unpacked.offer(p.integrity, p.dir);
  }
  return unpacked;
}

/**
 * Install the pinned plugins exactly as locked (one already installed exactly so is a NOOP;
 * features stay the user's: a team's go to the project's overrides), record them as installed
 * for `project`, and uninstall team installs that no declaring project is left for (never one
 * the user installed; as `uninstall`, nothing to consent to), in one transaction, with
 * `stageMore` staging the caller's files in it before the commit.
 */
export async function applyPinned(world: MutationWorld, label: string, options: ApplyPinnedOptions): Promise<PinnedResult> {
  const { project, resolved } = options;
  const pinnedNames = new Set(resolved.map((r) => r.pinned.name));
  const live = pinnedNames.size > 0 ? await actualTopNodes(options.client, pluginsPaths(world.roots).plugins) : new Map<string, ClosureNode>();
  const exact = new Set(resolved.filter((r) => differences(r.pinned, live.get(r.pinned.name)).length === 0).map((r) => r.pinned.name));
  const versionOf = new Map(resolved.map((r) => [r.pinned.name, r.pinned.version]));
  const removed: string[] = [];
  const versionMoves: string[] = [];
  const packages = resolved.map((r) => ({ ...r.resolved, spec: { ...r.resolved.spec, features: null } }));
  /** Team installs this project no longer declares, which no other project and not the user keeps. */
  const orphans = (record: InstallRecord) =>
    Object.entries(record.plugins)
      .filter(([name, entry]) => entry.team && Object.hasOwn(entry.team.projects, project) && !options.declared.has(name) && !pinnedNames.has(name))
      .filter(([name, entry]) => Object.keys(entry.team!.projects).length === 1 && !isPersonal(record, name))
      .map(([name]) => name);
  const replan = (inventory: Parameters<typeof planInstall>[0], state: { record: InstallRecord }): Plan => {
    const plan = planInstall(inventory, packages);
    const actions: PlanAction[] = plan.actions.map((action) => {
      const current = inventory.find((p) => p.name === action.name);
      if (exact.has(action.name) && action.apply.kind === "install") return { ...action, type: "NOOP", reason: `${action.name}@${current?.version ?? "?"} is installed as locked`, apply: { kind: "none" } };
      if (!exact.has(action.name) && current && action.apply.kind !== "install") {
        const pkg = packages.find((p) => p.name === action.name)!;
        return { ...action, type: "CHANGE", reason: `reinstall ${action.name}@${pkg.version} as the team lock pins it`, apply: { kind: "install", resolved: pkg } };
      }
      return action;
    });
    removed.splice(0, removed.length, ...orphans(state.record).filter((name) => inventory.some((p) => p.name === name)));
    for (const name of removed) {
      const current = inventory.find((p) => p.name === name)!;
      actions.push({ type: "REMOVE", name, reason: `remove ${name}@${current.version ?? "?"}: no project declares it any more`, from: { version: current.version, dependency: current.dependency, linked: current.linked }, apply: { kind: "remove" } });
    }
    return { ...plan, actions };
  };
  const patchRecord = (before: InstallRecord, after: InstallRecord, had: ReadonlySet<string>): InstallRecord => {
    let next = after;
    versionMoves.length = 0;
    for (const [name, entry] of Object.entries(before.plugins)) {
      if (!entry.team || !Object.hasOwn(entry.team.projects, project) || options.declared.has(name) || pinnedNames.has(name)) continue;
      const { [project]: _, ...projects } = entry.team.projects;
      const now = Object.hasOwn(next.plugins, name) ? next.plugins[name] : undefined;
      if (!now) continue; // uninstalled
      const { team: _team, ...rest } = now;
      next = withRecordEntry(next, name, Object.keys(projects).length > 0 ? { ...rest, team: { projects } } : rest);
    }
    for (const name of pinnedNames) {
      const was = Object.hasOwn(before.plugins, name) ? before.plugins[name] : undefined;
      const now = Object.hasOwn(next.plugins, name) ? next.plugins[name] : was;
      if (!now) continue;
      const version = versionOf.get(name)!;
      const others = Object.entries(was?.team?.projects ?? {}).filter(([root]) => root !== project);
      const installedBefore = live.get(name)?.version;
      for (const [root, locks] of others) if (locks !== version && installedBefore !== version) versionMoves.push(`moves ${name} ${locks} → ${version}, which ${root} locks`);
      const personal = was ? isPersonal(before, name) : had.has(name);
      const { personal: _p, ...rest } = now;
      next = withRecordEntry(next, name, { ...rest, team: { projects: Object.fromEntries([...others, [project, version] as const].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))) }, ...(personal ? { personal: true } : {}) });
    }
    return next;
  };
  const applied = await applyPlan(world, label, {
    client: { ...options.client, unpacked: unpackedOf(resolved) },
    cwd: options.cwd,
    replan,
    stageMore: options.stageMore,
    pinned: {
      names: pinnedNames,
      prepare: (dir, names) => writePinned(options.client, dir, resolved, names),
      verify: async (dir, placed) => {
        const tops = await actualTopNodes(options.client, dir, placed);
        for (const r of resolved) {
          const found = differences(r.pinned, tops.get(r.pinned.name))[0];
          if (found) throw options.mismatch(found);
        }
      },
    },
    patchRecord,
    ...(options.approveExecutables ? { approveExecutables: options.approveExecutables } : {}),
  });
  return { ...applied, removed: applied.plugins.some((p) => p.type === "REMOVE") ? removed : [], versionMoves };
}

/**
 * The integrity of the bytes `spec` installs: the registry's for registry packages (`known`),
 * else that of the tarball pacote packs (a git commit gives no integrity of its own; its packed
 * tarball is what a lock records, though a restore identifies a git plugin by its commit).
 */
export async function packedIntegrity(client: NpmClientOptions, cwd: string, spec: string, known: string | undefined): Promise<string | undefined> {
  if (known) return known;
  const pacote = await loadPacote();
  try {
    // pacote packs a git checkout with arborist (its prepare step); no scripts run (`ignoreScripts` unless allowed).
    const data = (await pacote.tarball(spec, { ...npmOptions(client), Arborist: await loadArborist(), where: cwd } as never)) as unknown as { integrity?: string };
    return data.integrity;
  } catch (error) {
    throw npmError(error, spec, client);
  }
}

export type { ApplyResult } from "./apply.js";
