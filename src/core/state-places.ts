/**
 * Where each kind of path read back from a state file may live: one answer per kind.
 *
 * A state file records paths (an install's folder, a marketplace's cache folder, a journaled
 * path) and later commands read, import, replace or delete what those paths name. Any of those
 * files may have been edited by hand or by another program (a project's files come from whoever
 * published the repository), so a recorded path is untrusted input: before it is used it is
 * checked, after resolving symlinks on both sides (core/contain.ts), to stay in the one folder
 * its kind belongs to. A path outside is `EPATH_OUTSIDE` naming the file and field; discovery
 * turns it into an error record, commands fail with nothing changed.
 *
 * The places (docs/security.md lists the same table):
 *
 * | kind                  | recorded in                                           | place                                       |
 * |-----------------------|-------------------------------------------------------|---------------------------------------------|
 * | xcsh-install          | `installPath`, user and project `installed_plugins.json` | `<xcshHome>/plugins/cache/plugins/`      |
 * | claude-install        | `installPath`, `~/.claude/plugins/installed_plugins.json` | `~/.claude/plugins/`                     |
 * | claude-marketplace    | `installLocation`, `~/.claude/plugins/known_marketplaces.json` | `~/.claude/plugins/`                |
 * | user-catalog          | `catalogPath`, `<xcshHome>/marketplaces.json`         | `<xcshHome>/plugins/cache/marketplaces/`    |
 * | project-catalog       | `catalogPath`, `<project>/.xcsh/marketplaces.json`    | `<project>/.xcsh/cache/marketplaces/`       |
 * | npm-plugin            | `dependencies` of `<xcshHome>/plugins/package.json`   | `<xcshHome>/plugins/node_modules/` (a linked plugin: the folder its lock record names) |
 * | journal-entry         | `entries[].path` of a journal's `intent.json`         | `<xcshHome>/`, or below a folder named `.xcsh` (the one the path names, real path inside it) |
 *
 * Everything that is deleted must be strictly below its place (never the place itself).
 * Marketplace and plugin names that become folder names are checked by `nameSegmentProblem`
 * (manifest/names.ts) when the registry is read, so they never hold a separator or `..`.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { pointerSegment } from "../manifest/result.js";
import { confinePath, describeOrigin, isPathBelow, realPathOrNearest, type PathOrigin } from "./contain.js";
import { XcshToolsError } from "./errors.js";
import { projectPaths, xcshPaths, type XcshRoots } from "./paths.js";

/** The kinds of recorded path, each with one place. */
export type StatePathKind =
  | "xcsh-install"
  | "claude-install"
  | "claude-marketplace"
  | "user-catalog"
  | "project-catalog"
  | "npm-plugin";

/** What a place is computed from: the roots, and the project folder for project kinds. */
export interface PlaceWorld {
  roots: XcshRoots;
  cwd?: string;
}

const WHAT: Record<StatePathKind, string> = {
  "xcsh-install": "install path",
  "claude-install": "Claude Code install path",
  "claude-marketplace": "Claude Code marketplace install location",
  "user-catalog": "marketplace cache folder",
  "project-catalog": "project marketplace cache folder",
  "npm-plugin": "plugin package folder",
};

/** The one folder a recorded path of `kind` may live in. */
export function placeOf(kind: StatePathKind, world: PlaceWorld): string {
  const p = xcshPaths(world.roots);
  switch (kind) {
    case "xcsh-install":
      // Project installs are cached in the user's cache too (the host's layout).
      return p.pluginCache;
    case "claude-install":
    case "claude-marketplace":
      return path.join(p.claudeRoot, "plugins");
    case "user-catalog":
      return p.marketplaceCache;
    case "project-catalog":
      if (world.cwd === undefined) throw new Error("project-catalog needs the project folder");
      return path.join(projectPaths(world.cwd).xcshDir, "cache", "marketplaces");
    case "npm-plugin":
      return p.pluginsNodeModules;
  }
}

/**
 * The real path of `p`, a recorded path of `kind`, checked to be strictly below its place:
 * `EPATH_OUTSIDE` naming `origin.file` and `origin.field` otherwise.
 */
export function confineStatePath(kind: StatePathKind, p: string, world: PlaceWorld, origin: Omit<PathOrigin, "what"> & { what?: string }): string {
  if (typeof p !== "string" || !path.isAbsolute(p)) {
    throw outside(`The ${origin.what ?? WHAT[kind]} ${JSON.stringify(p)}${describeOrigin(origin)} is not an absolute path inside ${placeOf(kind, world)}`, origin);
  }
  return confinePath(p, placeOf(kind, world), { what: WHAT[kind], ...origin }, { strictlyBelow: true });
}

/**
 * The checked real path of a marketplace's `catalogPath` (user or project `marketplaces.json`):
 * it must be `<cache>/<name>/marketplace.json`, the layout both we and the host write, once
 * symlinks are resolved. Its folder is what `marketplace update` replaces and `marketplace remove`
 * deletes, so an entry naming any other folder (another marketplace's, `~/.ssh`) is refused.
 */
export function confineCatalogPath(catalogPath: string, name: string, kind: "user-catalog" | "project-catalog", cache: string, origin: Omit<PathOrigin, "what">): string {
  const what = WHAT[kind];
  if (typeof catalogPath !== "string" || !path.isAbsolute(catalogPath)) {
    throw outside(`The ${what} of marketplace "${name}" ${JSON.stringify(catalogPath)}${describeOrigin(origin)} is not an absolute path`, origin);
  }
  const dir = confinePath(path.dirname(catalogPath), cache, { what, ...origin }, { strictlyBelow: true });
  const expected = realPathOrNearest(path.join(cache, name));
  if (dir !== expected || path.basename(catalogPath) !== "marketplace.json") {
    throw outside(`The catalog path of marketplace "${name}" ${catalogPath}${describeOrigin(origin)} is not ${path.join(cache, name, "marketplace.json")}, where its catalog must live`, origin);
  }
  return path.join(dir, "marketplace.json");
}

function outside(message: string, origin: Omit<PathOrigin, "what">): XcshToolsError {
  return new XcshToolsError("EPATH_OUTSIDE", message, {
    ...(origin.file ? { file: origin.file } : {}),
    ...(origin.field ? { path: origin.field } : {}),
    hint: origin.hint ?? "Nothing was read, replaced or deleted. Restore the file (or remove the entry by hand and add the marketplace again).",
  });
}

/** True when `p` is strictly below the place of `kind` (real paths): for filters that skip quietly. */
export function isInPlace(kind: StatePathKind, p: string, world: PlaceWorld): boolean {
  try {
    confineStatePath(kind, p, world, {});
    return true;
  } catch {
    return false;
  }
}

/**
 * A path a journal recorded, checked before recovery moves or deletes anything: it must be
 * strictly below the xcsh root, or strictly below a folder named `.xcsh` (a project's state:
 * its registries, overrides and marketplace caches). The journal lives in our own folder, but
 * its `intent.json` is a file like any other: a hand-edited one must not steer a swap or a
 * removal onto `~/.ssh`.
 *
 * `own`: the entry acts on the path itself (a removal, or a folder or link renamed over it), so a
 * link there is checked as the link, not as what it leads to: removing a linked plugin's link
 * inside the plugins folder is allowed, and its target (outside the root) is never touched.
 */
export function confineJournalPath(p: string, xcshHome: string, origin: Omit<PathOrigin, "what">, how: { own?: boolean } = {}): string {
  const own = how.own === true ? { own: true } : {};
  const what = "journaled path";
  const hint = origin.hint ?? "Nothing was restored or deleted. Inspect the journal folder by hand and remove it.";
  if (typeof p !== "string" || !path.isAbsolute(p)) {
    throw outside(`The ${what} ${JSON.stringify(p)}${describeOrigin(origin)} is not an absolute path`, { ...origin, hint });
  }
  // The place is chosen by the path as written, and its real path must stay in that place: a
  // project's state may not lead (by a link) into the user's state or out of its own `.xcsh`,
  // nor user state out of the xcsh root (confinePath says why).
  const lexical = path.resolve(p);
  if (isPathBelow(lexical, xcshHome)) return confinePath(lexical, xcshHome, { what, ...origin }, { strictlyBelow: true, scope: "user", ...own });
  const project = xcshFolderAbove(lexical);
  if (project !== undefined && PROJECT_STATE.has(path.relative(project, lexical).split(path.sep)[0]!)) {
    // The `.xcsh` folder itself may be a link only within its project (else it is someone else's state).
    confinePath(project, path.dirname(project), { what: "project state folder", ...origin }, { scope: "project" });
    return confinePath(lexical, project, { what, ...origin }, { strictlyBelow: true, scope: "project", ...own });
  }
  // A team set's lock (docs/design/team-sets.md), written by the restore in the same transaction as
  // the state it describes: only that file name, beside a `.xcsh` folder or a declaration (a first
  // restore of a repository that has only xcsh-team.json creates `.xcsh` in the same transaction),
  // and not through a link out.
  const beside = (name: string) => existsSync(path.join(path.dirname(lexical), name));
  // The declaration too, beside a `.xcsh` folder: a `--scope project` change writes it in the restore's transaction.
  if ((path.basename(lexical) === "xcsh-team.lock.json" && (beside(".xcsh") || beside("xcsh-team.json") || beside(path.join(".claude", "settings.json")))) || (path.basename(lexical) === "xcsh-team.json" && beside(".xcsh"))) {
    return confinePath(lexical, path.dirname(lexical), { what, ...origin }, { strictlyBelow: true, scope: "project", ...own });
  }
  return confinePath(p, xcshHome, { what, ...origin, hint }, { strictlyBelow: true, ...own });
}

/**
 * The xcsh root a journal belongs to: our own folder is `<xcshHome>/plugins/.xcsh-tools`
 * (core/paths.ts), so the root is two levels above it.
 */
export function xcshHomeOfOurs(oursDir: string): string {
  return path.dirname(path.dirname(path.resolve(oursDir)));
}

/** What a command journals inside a project's `.xcsh` folder (core/paths.ts `projectPaths`). */
const PROJECT_STATE = new Set(["plugins", "cache", "marketplaces.json", "plugin-overrides.json", ".gitignore", "team.local.json"]);

/**
 * The nearest folder named `.xcsh` strictly above `p` (lexically: the folder the path names, whose
 * real path is checked by the caller), if any. It need not exist yet: a first project install
 * creates it, and nothing that does not exist can be deleted or replaced.
 */
function xcshFolderAbove(p: string): string | undefined {
  for (let current = path.dirname(p); ; current = path.dirname(current)) {
    if (path.basename(current) === ".xcsh") return current;
    if (path.dirname(current) === current) return undefined;
  }
}

/**
 * Why the folder of npm plugin `name` may not be read, or `undefined`: its real path must be
 * strictly below node_modules, except for a linked plugin, whose folder is the one its package.json
 * dependency `file:<absolute path>` names (what `xcsh-tools link` records). A symlink planted in
 * node_modules that the dependency does not name is refused (the `npm-plugin` place above).
 * Discovery and the components listing both ask it before reading the folder.
 */
export function npmPluginOutside(dir: string, name: string, dependency: unknown, paths: { pluginsNodeModules: string; pluginsPackageJson: string }): string | undefined {
  let real: string;
  try {
    real = realpathSync.native(dir);
  } catch {
    return undefined; // missing: the reader reports it as missing
  }
  if (isPathBelow(real, realPathOrNearest(paths.pluginsNodeModules))) return undefined;
  if (typeof dependency === "string" && dependency.startsWith("file:")) {
    const target = dependency.slice(5);
    if (path.isAbsolute(target) && realPathOrNearest(target) === real) return undefined;
  }
  return `${dir} resolves to ${real}, outside ${paths.pluginsNodeModules}, and ${paths.pluginsPackageJson} /dependencies/${pointerSegment(name)} does not link it there (file:<that folder>)`;
}
