/**
 * Which files and folders an inventory of installed plugins' components depends on. As for tool
 * views (inputs.ts), the component scan (components/scan.ts) is not instrumented; this module
 * lists a superset of what it reads, so the inventory goes stale rather than lies:
 *
 * - the state files that say which plugins are installed, hashed: the user's
 *   `installed_plugins.json`, the project's (in a trusted project only: an untrusted one is
 *   never read), Claude Code's `installed_plugins.json` and the plugins folder's `package.json`;
 * - every plugin root (stat and lstat: a link re-pointed, a folder replaced or removed);
 * - the whole tree under each root (`walkPluginRoots`): every folder (its mtime moves when an
 *   entry is added, removed or renamed: a new SKILL.md, a deleted agent) and every file (its
 *   signature; `.md` and `.json` files, whose bytes the scan parses, also hashed). The scan reads
 *   only inside the root — manifest paths and `${CLAUDE_PLUGIN_ROOT}` references are confined to
 *   it — so the walk covers what it can read, except folders named `node_modules` and `.git`,
 *   which are not walked (an npm plugin's dependencies, a clone's history: large, and read by no
 *   default rule). Links are followed to folders inside the root, once each;
 * - what the answer names that the walk did not cover (`extraInputs`): component and problem
 *   files, and the files commands name under the plugin root (the scan checks they exist).
 *
 * A tree larger than `MAX_WALK_ENTRIES` is not indexed: checking it would cost what a scan does.
 */
import { readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { isPathInside } from "../core/contain.js";
import { projectPaths, type XcshPaths } from "../core/paths.js";
import type { InstalledPluginComponents } from "../components/installed.js";
import { pathTailAt } from "../components/root-refs.js";
import type { InputRequest } from "./fingerprint.js";

/** Entries (files and folders) walked per plugin root before giving up on indexing it. */
export const MAX_WALK_ENTRIES = 5000;

/** Folders the walk does not enter (see the header). */
const NOT_WALKED = new Set(["node_modules", ".git"]);

/** Files whose bytes the scan parses: hashed, so a rewrite with the same content stays fresh. */
const HASHED = /\.(md|json)$/i;

/** The state files that decide which plugins an inventory holds. */
export function stateInputs(paths: XcshPaths, cwd: string, trusted: boolean): InputRequest[] {
  const files = [paths.installedPlugins, paths.claudeInstalledPlugins, paths.pluginsPackageJson];
  if (trusted) files.push(projectPaths(cwd).installedPlugins);
  return files.map((file) => ({ path: file, hash: true }));
}

/** What walking some plugin roots found: the inputs, every path they cover, and whether it finished. */
export interface RootWalk {
  requests: InputRequest[];
  covered: Set<string>;
  /** Why a root was not walked to the end, when one was not. */
  incomplete?: string;
}

function realOrUndefined(p: string): string | undefined {
  try {
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/**
 * Every folder and file under `roots` (see the header). Only roots for which `walkable` holds
 * are walked (the caller passes "inside the folder installs of its kind live in": a registry
 * entry naming any other folder is a plugin with a problem, and its folder is not read); the
 * others are only stat'ed.
 */
export function walkPluginRoots(roots: readonly string[], walkable: (root: string) => boolean): RootWalk {
  const walk: RootWalk = { requests: [], covered: new Set() };
  for (const given of new Set(roots.map((r) => path.resolve(r)))) {
    walk.requests.push({ path: given }, { path: given, kind: "lstat" });
    walk.covered.add(given);
    if (!walkable(given)) continue;
    const realRoot = realOrUndefined(given);
    if (!realRoot || !statSync(given, { throwIfNoEntry: false })?.isDirectory()) continue;
    const visited = new Set<string>([realRoot]);
    let entries = 0;
    const pending = [given];
    while (pending.length > 0) {
      const dir = pending.pop()!;
      let list;
      try {
        list = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of list) {
        if (++entries > MAX_WALK_ENTRIES) {
          walk.incomplete = `${given} holds more than ${MAX_WALK_ENTRIES} files and folders`;
          return walk;
        }
        const p = path.join(dir, entry.name);
        walk.covered.add(p);
        if (entry.isDirectory()) {
          walk.requests.push({ path: p });
          if (!NOT_WALKED.has(entry.name)) pending.push(p);
          continue;
        }
        if (entry.isSymbolicLink()) {
          // Followed by the scan: record what it points at (stat follows), and walk a folder
          // inside the root once; one outside is only reported by the scan, never read.
          walk.requests.push({ path: p }, { path: p, kind: "lstat" });
          const real = realOrUndefined(p);
          if (real && statSync(real, { throwIfNoEntry: false })?.isDirectory() && isPathInside(real, realRoot) && !visited.has(real) && !NOT_WALKED.has(entry.name)) {
            visited.add(real);
            pending.push(p);
          }
          continue;
        }
        walk.requests.push({ path: p, ...(HASHED.test(entry.name) ? { hash: true } : {}) });
      }
    }
  }
  return walk;
}

/** `${CLAUDE_PLUGIN_ROOT}/x/y` as the scan resolved it: the files a command names under `root`. */
function namedUnder(root: string, text: string): string[] {
  const prefix = root.endsWith(path.sep) ? root : `${root}${path.sep}`;
  const out: string[] = [];
  for (let at = text.indexOf(prefix); at !== -1; at = text.indexOf(prefix, at + prefix.length)) {
    const tail = pathTailAt(text, at + prefix.length);
    // Only files inside the plugin are inputs: a command naming `../x` is an EENTRY_ESCAPE error
    // of the scan, and the index never stats or hashes a file outside the folder it belongs to.
    const named = tail ? path.resolve(root, tail) : undefined;
    if (named !== undefined && isPathInside(named, root)) out.push(named);
  }
  return out;
}

/**
 * Paths the answer names (component and problem files, files commands name under the root),
 * with whether each is covered by the walk: itself walked, or missing with its nearest
 * existing folder walked (whose mtime moves when it appears).
 */
export function extraInputs(plugins: readonly InstalledPluginComponents[], covered: ReadonlySet<string>): { requests: InputRequest[]; uncovered: string[] } {
  const requests: InputRequest[] = [];
  const uncovered: string[] = [];
  const isCovered = (p: string, root: string): boolean => {
    for (let current = p; isPathInside(current, root); current = path.dirname(current)) {
      if (covered.has(current)) return current === p || !statSync(p, { throwIfNoEntry: false });
      if (statSync(current, { throwIfNoEntry: false })) return false;
      if (current === root) break;
    }
    return false;
  };
  for (const plugin of plugins) {
    const root = path.resolve(plugin.root);
    const named = new Set<string>();
    for (const c of plugin.components) {
      named.add(path.resolve(c.file));
      if (c.exec) for (const text of [c.exec.command, ...c.exec.args, ...(c.exec.cwd ? [c.exec.cwd] : [])]) for (const p of namedUnder(root, text)) named.add(p);
    }
    for (const i of [...plugin.errors, ...plugin.warnings]) named.add(path.resolve(i.file));
    for (const p of named) {
      if (isCovered(p, root)) continue;
      requests.push({ path: p, ...(HASHED.test(p) ? { hash: true } : {}) });
      uncovered.push(p);
    }
  }
  return { requests, uncovered };
}
