/**
 * What the host cannot express about a team set, said the same way by `tools` and `doctor`
 * (docs/design/team-sets.md (a) 2., 3., (c)): npm plugins are per user, so a team's npm plugin
 * loads in the user's other projects too (`declaredBy`), and the host reads plugin-overrides.json
 * at its start folder only (`WTEAM_OVERRIDES_CWD`).
 *
 * On `tools`'s query path: `node:` modules and core paths only, `stat` of the project's files
 * (nothing of an untrusted project is read) and one small read of our own install record, only
 * when npm tools are listed.
 */
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { projectRootOf, statOrUndefined, teamPaths, xcshPaths, type TeamPaths, type XcshRoots } from "../core/paths.js";
import { isRecord, pointer } from "../manifest/result.js";
import type { TeamWarning } from "../manifest/team-set.js";

/** A team warning as `tools` and `doctor` report it. */
export interface TeamNote {
  code: TeamWarning;
  file: string;
  message: string;
  hint: string;
}

/** Whether a project root declares a set: stat only. */
export function declaresSet(paths: Pick<TeamPaths, "declaration" | "claudeSettings">): boolean {
  return statOrUndefined(paths.declaration) !== undefined || statOrUndefined(paths.claudeSettings) !== undefined;
}

/**
 * `WTEAM_OVERRIDES_CWD` when xcsh would start in `cwd` below the root of a set whose generated
 * overrides exist: the host reads `plugin-overrides.json` at its start folder (extensibility/
 * plugins/loader.ts `loadProjectOverrides`, no walk-up), so the set's npm choices do not apply there.
 */
export function overridesCwdNote(cwd: string, roots: XcshRoots): TeamNote | undefined {
  const root = projectRootOf(cwd, roots);
  if (root === undefined || path.resolve(cwd) === path.resolve(root)) return undefined;
  const paths = teamPaths(root, roots.configDirName);
  if (!declaresSet(paths) || statOrUndefined(paths.pluginOverrides) === undefined) return undefined;
  return {
    code: "WTEAM_OVERRIDES_CWD",
    file: paths.pluginOverrides,
    message: `npm overrides of ${root} (${paths.pluginOverrides}: switched-off plugins, features, settings) do not apply when xcsh starts in ${path.resolve(cwd)}: the host reads plugin-overrides.json at its start folder only`,
    hint: `Start xcsh in ${root}: the set's marketplace plugins load from any subfolder, its npm choices only there.`,
  };
}

/**
 * The projects whose set installed an npm plugin, from its record in installs.json
 * (`team.projects`: root → locked version; a list of roots is read too). Read defensively: only
 * absolute roots, a version only when it is a string.
 */
export function teamProjectsOf(record: unknown): Map<string, string | undefined> {
  const out = new Map<string, string | undefined>();
  const team = isRecord(record) ? record.team : undefined;
  const projects = isRecord(team) ? team.projects : undefined;
  if (Array.isArray(projects)) for (const p of projects) if (typeof p === "string" && path.isAbsolute(p)) out.set(p, undefined);
  if (isRecord(projects)) for (const [p, v] of Object.entries(projects)) if (path.isAbsolute(p)) out.set(p, typeof v === "string" ? v : undefined);
  return out;
}

/**
 * npm plugin → the project roots whose set declares it, from our install record; empty when the
 * record is missing or unreadable (the plugins area of `doctor` reports a bad record).
 */
export function teamDeclaredNpm(roots: XcshRoots): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path.join(xcshPaths(roots).ours, "installs.json"), "utf8"));
  } catch {
    return out;
  }
  const plugins = isRecord(doc) && isRecord(doc.plugins) ? doc.plugins : {};
  for (const [name, record] of Object.entries(plugins)) {
    const projects = [...teamProjectsOf(record).keys()].sort();
    if (projects.length > 0) out.set(name, projects);
  }
  return out;
}

/**
 * The root a plugin's `declaredBy` names from `cwd`: this project's when it is one of them (the
 * set of the project you are in), else the first of the others (the leak: it loads here too).
 */
export function declaredByFrom(projects: readonly string[], cwd: string, roots: XcshRoots): { root: string; here: boolean } | undefined {
  if (projects.length === 0) return undefined;
  const root = projectRootOf(cwd, roots);
  let real = root;
  try {
    if (root !== undefined) real = realpathSync(root);
  } catch {
    // a root that vanished: compare as given
  }
  const mine = projects.find((p) => p === root || p === real);
  return { root: mine ?? projects[0]!, here: mine !== undefined };
}

/**
 * `WTEAM_NPM_VERSION`, worded once for `tools` and `doctor`: the npm plugin `key` is installed at
 * `installed` while the set of `root` locks `locked`; `others` are the projects whose lock holds
 * the installed version (the restore that moved it).
 */
export function npmVersionNote(root: string, key: string, installed: string, locked: string, others: readonly string[], configDirName?: string): TeamNote {
  const lockFile = teamPaths(root, configDirName).lock;
  const who = others.length > 0 ? ` (${others.join(", ")} lock${others.length === 1 ? "s" : ""} it at ${installed})` : "";
  return {
    code: "WTEAM_NPM_VERSION",
    file: lockFile,
    message: `${key} ${installed} is installed, ${lockFile} ${pointer("", "npm", key, "version")} locks ${locked}${who}: npm plugins are per user, one version for every project`,
    hint: `Run \`xcsh-tools install\` in ${root} to load ${locked} here (the other project's restore will then move it back).`,
  };
}

/**
 * For `tools`: `WTEAM_NPM_VERSION` for each npm plugin that this project's set declares (`here`)
 * and whose installed version (the host's runtime lock, ours to read) is not the one this
 * project's last restore locked (our install record). The committed lock itself is not read on
 * the query path; `doctor` compares with it.
 */
export function npmVersionNotes(roots: XcshRoots, root: string, here: readonly string[]): TeamNote[] {
  if (here.length === 0) return [];
  let installs: unknown;
  let runtime: unknown;
  try {
    installs = JSON.parse(readFileSync(path.join(xcshPaths(roots).ours, "installs.json"), "utf8"));
    runtime = JSON.parse(readFileSync(xcshPaths(roots).runtimeLock, "utf8"));
  } catch {
    return [];
  }
  const records = isRecord(installs) && isRecord(installs.plugins) ? installs.plugins : {};
  const loaded = isRecord(runtime) && isRecord(runtime.plugins) ? runtime.plugins : {};
  const notes: TeamNote[] = [];
  for (const key of here) {
    const entry = Object.hasOwn(loaded, key) ? loaded[key] : undefined;
    const installed = isRecord(entry) && typeof entry.version === "string" ? entry.version : undefined;
    const projects = teamProjectsOf(Object.hasOwn(records, key) ? records[key] : undefined);
    const locked = projects.get(root);
    if (installed === undefined || locked === undefined || locked === installed) continue;
    const others = [...projects].filter(([p, v]) => p !== root && v === installed).map(([p]) => p);
    notes.push(npmVersionNote(root, key, installed, locked, others, roots.configDirName));
  }
  return notes;
}
