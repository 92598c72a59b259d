/**
 * Workspace trust: which project folders may bring code and settings.
 *
 * A project folder is untrusted input: whoever controls a repository the user cloned controls
 * its `.xcsh/`, `.claude/` and `.codex/` folders. Project-scope code and settings (tools in
 * `<project>/.xcsh/tools` and the other agents' tool folders, the project's marketplace installs
 * and marketplaces, `plugin-overrides.json`, project settings files) are used only in a project
 * the user trusts, as Claude Code and VS Code do it.
 *
 * The record lives in the user's own state, never in the project: `trusted-projects.json` in our
 * folder under the xcsh root, keyed by each project's real path. Trusting a folder trusts the
 * folders below it. The user's home folder itself is always trusted: its files are the user's.
 * A record that cannot be read trusts nothing (fail closed); `xcsh-tools doctor` reports it.
 *
 * Reads are synchronous on purpose: a host asks at every start, and the record is one small file.
 */
import path from "node:path";
import { readTextBounded } from "./bounded-read.js";
import { realPathOrNearest } from "./contain.js";
import { xcshPaths, type XcshRoots } from "./paths.js";
import { XcshToolsError, errorMessage, nodeErrorCode } from "./errors.js";

export interface TrustedProject {
  /** The project's real path. */
  path: string;
  /** When it was trusted (ISO 8601). */
  trustedAt: string;
}

export interface TrustRecord {
  version: 1;
  projects: TrustedProject[];
}

/** What a host may pass as `projectTrust`: a decision, or a question it answers (its own dialog). */
export type ProjectTrustOption = boolean | ((project: { path: string }) => boolean | Promise<boolean>);

/** The record as read: its projects, and the problem when the file could not be used. */
export interface ReadTrustRecord {
  record: TrustRecord;
  /** Set when the file exists but is not a valid record: then nothing is trusted. */
  problem?: string;
}

/** Read the trust record at `file`; a missing file trusts nothing, a broken one too (with `problem`). */
export function readTrustRecord(file: string): ReadTrustRecord {
  const nothing = (problem?: string): ReadTrustRecord => ({ record: { version: 1, projects: [] }, ...(problem ? { problem } : {}) });
  let doc: unknown;
  try {
    const text = readTextBounded(file);
    if (text === undefined) return nothing();
    doc = JSON.parse(text);
  } catch (error) {
    if (error instanceof XcshToolsError) return nothing(error.message);
    return nothing(error instanceof SyntaxError ? `${file} is not valid JSON: ${errorMessage(error)}` : `cannot read ${file}: ${errorMessage(error)}`);
  }
  const projects = (doc as { projects?: unknown } | null)?.projects;
  if (typeof doc !== "object" || doc === null || (doc as { version?: unknown }).version !== 1 || !Array.isArray(projects)) {
    return nothing(`${file} is not a trust record ({"version": 1, "projects": [...]})`);
  }
  const valid = projects.filter(
    (p): p is TrustedProject =>
      typeof p === "object" && p !== null && typeof (p as TrustedProject).path === "string" && path.isAbsolute((p as TrustedProject).path),
  );
  const problem = valid.length === projects.length ? undefined : `${file}: ${projects.length - valid.length} entries are not {"path": "<absolute path>"} and were ignored`;
  return { record: { version: 1, projects: valid.map((p) => ({ path: p.path, trustedAt: typeof p.trustedAt === "string" ? p.trustedAt : "" })) }, ...(problem ? { problem } : {}) };
}

/**
 * The trusted project that covers `projectReal` (itself or a folder above it), if any. The record
 * holds real paths (`xcsh-tools trust` writes them) and `projectReal` is one, so they are compared
 * as strings: this runs at every host start, where a `path` call per entry cost more than the rest
 * of the decision. An entry that is not a real path (a hand edit with `.` or `..` segments, or
 * through a symlink) covers nothing: it fails closed.
 */
export function trustingEntry(record: TrustRecord, projectReal: string): TrustedProject | undefined {
  return record.projects.find(
    (p) => projectReal === p.path || (projectReal.startsWith(p.path) && (projectReal[p.path.length] === path.sep || p.path.endsWith(path.sep))),
  );
}

/** Where a trust question is asked from: the user's home, the record's file. */
export interface TrustWorld {
  home: string;
  /** The trust record file (`xcshPaths(...).trustedProjects`). */
  trustFile: string;
}

/** True when the user's record (or the home rule) trusts the project at `projectDir`. */
export function isProjectTrustedByUser(projectDir: string, world: TrustWorld): boolean {
  const real = realPathOrNearest(projectDir);
  if (real === realPathOrNearest(world.home)) return true;
  return trustingEntry(readTrustRecord(world.trustFile).record, real) !== undefined;
}

/** The trust world of an xcsh root: the user's home and the record in our folder. */
export function trustWorldOf(roots: XcshRoots): TrustWorld {
  return { home: roots.home, trustFile: xcshPaths(roots).trustedProjects };
}

/**
 * The trust decision for `projectDir`: the host's own decision or answer when it gives one, else
 * the user's record. Anything that fails (a callback that throws, a record that cannot be read)
 * trusts nothing. Only a host's callback is awaited: a decision or the record is answered in the
 * same turn, so a fresh boot's index read follows at once.
 */
export function decideProjectTrust(projectDir: string, option: ProjectTrustOption | undefined, world: TrustWorld): boolean | Promise<boolean> {
  if (typeof option === "boolean") return option;
  try {
    if (typeof option !== "function") return isProjectTrustedByUser(projectDir, world);
    const project = { path: realPathOrNearest(projectDir) };
    return Promise.resolve()
      .then(() => option(project))
      .then((answer) => answer === true, () => false);
  } catch {
    return false;
  }
}

/**
 * The trust decision for the sources of `cwd` when the project root found above it is `projectDir`
 * (core/paths.ts `projectFolder`): the decision is about the project root. When `cwd`'s real
 * path is not below the root's (a symlinked subfolder leading elsewhere), `cwd` must be trusted
 * as well, so trusting one folder never lets another one's files in.
 */
export function decideProjectTrustOf(cwd: string, projectDir: string, option: ProjectTrustOption | undefined, world: TrustWorld): boolean | Promise<boolean> {
  const root = decideProjectTrust(projectDir, option, world);
  if (path.resolve(cwd) === path.resolve(projectDir)) return root;
  const realCwd = realPathOrNearest(cwd);
  const realRoot = realPathOrNearest(projectDir);
  if (realCwd === realRoot || realCwd.startsWith(realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep)) return root;
  if (root === false) return false;
  const both = (a: boolean, b: boolean | Promise<boolean>) => (a ? b : false);
  return root instanceof Promise ? root.then((a) => both(a, decideProjectTrust(cwd, option, world))) : both(root, decideProjectTrust(cwd, option, world));
}

/** The command line that trusts `dir`, for messages; quoted for a POSIX shell when it needs it. */
export function trustCommand(dir: string): string {
  return `xcsh-tools trust ${/^[\w@%+=:,./-]+$/.test(dir) ? dir : `'${dir.replaceAll("'", "'\\''")}'`}`;
}

/** `EUNTRUSTED_PROJECT`: a command would use or change project-scope state of an untrusted project. */
export function untrustedProjectError(projectDir: string, doing: string): XcshToolsError {
  return new XcshToolsError("EUNTRUSTED_PROJECT", `Cannot ${doing}: the project ${projectDir} is not trusted`, {
    hint: `Project files can run code and change settings; trust only projects you know: \`${trustCommand(projectDir)}\`.`,
  });
}

/**
 * Add (`trust: true`) or remove the project at `projectDir` in the record, under the lock of our
 * folder, written atomically; the project's real path and whether anything changed. A broken
 * record is replaced only by `trust`, never silently by `untrust` (which leaves it as it is and
 * says nothing changed).
 */
export async function changeTrust(projectDir: string, trust: boolean, world: TrustWorld & { lockDir: string; now?: () => Date }): Promise<{ path: string; changed: boolean }> {
  const [{ withLock }, { writeJsonAtomic, mkdirDurable }] = await Promise.all([import("./lock.js"), import("./atomic-fs.js")]);
  const real = realPathOrNearest(projectDir);
  await mkdirDurable(world.lockDir);
  return withLock(world.lockDir, async () => {
    const { record, problem } = readTrustRecord(world.trustFile);
    const present = record.projects.some((p) => p.path === real);
    if (trust ? present && !problem : !present) return { path: real, changed: false };
    const projects = trust
      ? [...record.projects.filter((p) => p.path !== real), { path: real, trustedAt: (world.now?.() ?? new Date()).toISOString() }]
      : record.projects.filter((p) => p.path !== real);
    // The record is `<xcsh root>/plugins/.xcsh-tools/trusted-projects.json`: a link there may lead
    // anywhere in the xcsh root, never out of it (writeFileAtomic).
    await writeJsonAtomic(world.trustFile, { version: 1, projects } satisfies TrustRecord, path.dirname(path.dirname(path.dirname(world.trustFile))));
    return { path: real, changed: true };
  }, { label: trust ? `trust ${real}` : `untrust ${real}` });
}
