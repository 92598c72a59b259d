/**
 * The "team set" area of `doctor` (docs/design/team-sets.md (a), (c), (e)): whether this machine
 * loads the project's declared set, and what the host cannot express about it. Everything is
 * computed from the files as they are (declaration, lock, personal file, the generated host files,
 * the user's npm tree), never from a record of the last restore, so a restore that was interrupted
 * or a file the host rewrote is seen as it is.
 *
 * Warnings (`WTEAM_*`, manifest/team-set.ts): the set is not restored here, the host rewrote the
 * generated registry, the registry holds ids the set does not mention, `.xcsh/.gitignore` lacks
 * lines (`--fix` appends them), xcsh started below the root (npm overrides are read at the start
 * folder), a nested config folder hides the parent's set, a secret is not set, another project
 * moved an npm plugin to its own version. A set that cannot be read is an error with its reader's
 * code. Project files are read only in a trusted project; the stat-only checks run in any.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { isDeepStrictEqual } from "node:util";
import { readTextBounded } from "../core/bounded-read.js";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { isXcshToolsError } from "../core/errors.js";
import { projectRootOf, statOrUndefined, teamPaths, xcshPaths, type TeamPaths, type XcshRoots } from "../core/paths.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord, pointer } from "../manifest/result.js";
import { readTeamLock, type TeamLock } from "../manifest/team-lock.js";
import type { EffectiveSet, TeamWarning } from "../manifest/team-set.js";
import { splitPluginId } from "../manifest/installed-plugins.js";
import { cacheDirOf } from "../marketplace/prepare.js";
import type { InstalledPlugin } from "../plugins/inventory.js";
import { resolveSetting, storedSchema } from "../plugins/plugin-settings.js";
import { pluginSecretKeys, pluginSettings, type PluginsState } from "../plugins/state.js";
import { declaresSet, npmVersionNote, overridesCwdNote, teamProjectsOf } from "../teamset/notes.js";
import { GITIGNORE_TEXT, loadTeamSet, missingGitignoreLines, renderHostFiles, satisfies, type MarketplaceInstall } from "../teamset/index.js";
import type { Finding, Repair } from "./types.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

/** What the plugins area read of the user's npm tree (undefined: it could not be read). */
export interface NpmView {
  inventory: readonly InstalledPlugin[];
  state: PluginsState | undefined;
}

const RESTORE = "xcsh-tools install";

/**
 * `WTEAM_NESTED_ROOT`: `root` holds a config folder but declares nothing, and a folder above it
 * declares a set. The host takes the nearest config folder as the project root, so the parent's
 * set does not load below `root`. Stat only.
 */
function nestedRootOf(root: string, roots: XcshRoots): string | undefined {
  const paths = teamPaths(root, roots.configDirName);
  if (declaresSet(paths) || statOrUndefined(paths.configDir)?.isDirectory() !== true) return undefined;
  const home = path.resolve(roots.home);
  for (let dir = path.dirname(root); dir !== home && dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if (statOrUndefined(teamPaths(dir).declaration) !== undefined) return dir;
  }
  return undefined;
}

/** The team-set findings. */
export async function checkTeamSet(world: DoctorWorld, npm: NpmView | undefined): Promise<AreaFindings> {
  const area = new AreaFindings("team set");
  const warn: Warn = (code, key, message, fix) =>
    area.problem(`team:${code}:${key}`, "warn", `${code}: ${message}`, { manual: `run \`${RESTORE}\` or change the files by hand`, ...fix });
  const root = projectRootOf(world.cwd, world.roots);
  if (root === undefined) return area;
  const parent = nestedRootOf(root, world.roots);
  if (parent !== undefined) {
    const configDir = teamPaths(root, world.roots.configDirName).configDir;
    warn("WTEAM_NESTED_ROOT", root, `${configDir} makes ${root} the project root and it declares no set: the set of ${parent} (${teamPaths(parent).declaration}) does not load here`, {
      hint: `Start xcsh in ${parent}, or remove ${configDir} if nothing in it is needed, or declare this folder's own set (xcsh-tools install <spec> --scope project).`,
    });
    return area;
  }
  const paths = teamPaths(root, world.roots.configDirName);
  if (!declaresSet(paths)) return area;
  const cwdWarning = overridesCwdNote(world.cwd, world.roots);
  if (cwdWarning) warn(cwdWarning.code, root, `${cwdWarning.message}`, { hint: cwdWarning.hint, manual: "the host decides where it reads overrides" });
  if (world.projectTrusted !== true) {
    area.problem("team:untrusted", "warn", `${root} declares a plugin set; it was not read: the project is not trusted`, { hint: `Review xcsh-team.json, then \`xcsh-tools trust ${root}\` and \`${RESTORE}\`.`, manual: "trust is yours to give" });
    return area;
  }
  let set: EffectiveSet | undefined;
  let lock: TeamLock | undefined;
  try {
    set = loadTeamSet(root, world.roots.configDirName ? { configDirName: world.roots.configDirName } : {});
    lock = readTeamLock(paths.lock);
  } catch (error) {
    if (!isXcshToolsError(error)) throw error;
    area.problem(`team:${error.code}`, "error", `${error.code}: ${error.message}`, { hint: error.hint ?? `Fix ${error.file ?? "the file"}.`, manual: "doctor does not edit the project's committed files" });
    return area;
  }
  if (!set) return area;
  const notRestored: string[] = [];
  if (!lock) notRestored.push(`there is no ${paths.lock}`);
  else for (const e of satisfies(set, lock)) if (e.state !== "ok") notRestored.push(`${paths.lock} ${pointer("", e.section, e.key)} is ${e.state}${e.why ? ` (${e.why})` : ""}`);
  checkNpmPlugins(world, set, lock, npm, notRestored, warn);
  checkHostFiles(world.roots, set, lock, paths, npm, notRestored, warn);
  checkGitignore(paths, warn);
  if (notRestored.length > 0) {
    warn("WTEAM_NOT_RESTORED", root, `this machine does not load the set of ${root} as declared: ${notRestored.join("; ")}`, { hint: `Run \`${RESTORE}\` in ${root}.` });
  }
  if (area.healthy) area.ok("team:set", `the set of ${root} is restored: ${set.plugins.size} plugin${set.plugins.size === 1 ? "" : "s"} (${paths.lock})`);
  return area;
}

type Warn = (code: TeamWarning, key: string, message: string, fix: Pick<Finding, "hint" | "repair" | "repairText" | "manual">) => void;

/** npm plugins switched on here: installed at the locked version, secrets set. */
function checkNpmPlugins(world: DoctorWorld, set: EffectiveSet, lock: TeamLock | undefined, npm: NpmView | undefined, notRestored: string[], warn: Warn): void {
  const runtimeLock = npm?.state?.runtimeLock;
  const runtimeFile = xcshPaths(world.roots).runtimeLock;
  for (const plugin of set.plugins.values()) {
    if (plugin.kind !== "npm" || !plugin.enabled) continue;
    const installed = npm?.inventory.find((p) => p.name === plugin.key);
    const locked = lock?.npm[plugin.key];
    if (!installed || installed.version === undefined) {
      notRestored.push(`${plugin.key} is not installed`);
      continue;
    }
    if (locked && installed.version !== locked.version) {
      const others = [...teamProjectsOf(installed.record)].filter(([p, v]) => p !== set.root && (v === undefined || v === installed.version)).map(([p]) => p);
      const note = npmVersionNote(set.root, plugin.key, installed.version, locked.version, others, world.roots.configDirName);
      warn(note.code, plugin.key, note.message, { hint: note.hint });
    }
    for (const [key, declared] of Object.entries(installed.manifest?.settings ?? {})) {
      const schema = storedSchema(key, declared, { secretKeys: pluginSecretKeys(runtimeLock, plugin.key) });
      if (schema.secret !== true) continue;
      if (resolveSetting(key, schema, { user: pluginSettings(runtimeLock, plugin.key) }, world.env).origin !== "unset") continue;
      warn("WTEAM_SECRET_MISSING", `${plugin.key}:${key}`, `${plugin.key} needs the secret setting "${key}", which has no value on this machine (${runtimeFile} ${pointer("", "settings", plugin.key, key)}${schema.env ? `, or $${schema.env}` : ""})`, {
        hint: `xcsh-tools config set ${plugin.key} ${key} <value>${schema.env ? `  (or set ${schema.env})` : ""}`,
        manual: "a secret is yours to give",
      });
    }
  }
}

/** The generated registry and overrides against what a restore renders from the set, the lock and this machine. */
function checkHostFiles(roots: XcshRoots, set: EffectiveSet, lock: TeamLock | undefined, paths: TeamPaths, npm: NpmView | undefined, notRestored: string[], warn: Warn): void {
  const registryDoc = readJsonOrUndefined(paths.installedPlugins);
  const registry = isRecord(registryDoc) && isRecord(registryDoc.plugins) ? (registryDoc as { plugins: Record<string, unknown[]> } & Record<string, unknown>) : undefined;
  const installs = new Map<string, MarketplaceInstall>();
  for (const [id, locked] of Object.entries(lock?.marketplacePlugins ?? {})) {
    const split = splitPluginId(id);
    if (!split) continue;
    const installPath = cacheDirOf({ roots }, split.marketplace, split.plugin, locked.version, locked.hash.slice("tree1-sha256:".length));
    const now = registry?.plugins[id]?.[0];
    const sha = isRecord(now) && now.installPath === installPath && typeof now.gitCommitSha === "string" ? now.gitCommitSha : undefined;
    installs.set(id, { installPath, version: locked.version, ...(sha ? { gitCommitSha: sha } : {}) });
  }
  const npmFeatures = new Map(npm?.inventory.filter((p) => p.manifest).map((p) => [p.name, Object.keys(p.manifest!.features ?? {})]) ?? []);
  let rendered: ReturnType<typeof renderHostFiles>;
  try {
    rendered = renderHostFiles({ set, pluginCache: xcshPaths(roots).pluginCache, installs, npmFeatures, ...(registry ? { existingRegistry: registry } : {}) });
  } catch (error) {
    // A plugin switched on without a lock entry or an installed version: reported above.
    if (isXcshToolsError(error, "EINSTALL")) return;
    throw error;
  }
  if (!registry && Object.keys(rendered.registry.plugins).length > 0) notRestored.push(`${paths.installedPlugins} is missing`);
  for (const [id, want] of Object.entries(rendered.registry.plugins)) {
    if (!registry) break;
    if (!set.plugins.has(id)) continue;
    const have = registry.plugins[id];
    const at = `${paths.installedPlugins} ${pointer("", "plugins", id, 0)}`;
    if (!Array.isArray(have) || have.length === 0) {
      notRestored.push(`${at} is missing`);
      continue;
    }
    const plugin = set.plugins.get(id)!;
    if (!isDeepStrictEqual(have, want)) {
      const first = have[0];
      const locked = lock?.marketplacePlugins[id];
      if (plugin.enabled && locked && isRecord(first) && first.enabled !== false) {
        warn("WTEAM_HOST_DRIFT", id, `${at} points at ${String(first.installPath)} (version ${String(first.version ?? "none")}), the lock at ${want[0]!.installPath} (version ${locked.version}): the registry was rewritten after the restore (the host's autoUpdate, or an install by hand)`, {
          hint: `Run \`${RESTORE}\` in ${set.root}: it writes the locked entry back.`,
        });
      } else notRestored.push(`${at} does not say what the set says (${plugin.enabled ? "on" : "off"}, decided by ${plugin.enabledBy.file})`);
      continue;
    }
    if (plugin.enabled && statOrUndefined(want[0]!.installPath) === undefined) notRestored.push(`${want[0]!.installPath} (${id}) is missing`);
  }
  for (const id of rendered.undeclared) {
    warn("WTEAM_UNDECLARED", id, `${paths.installedPlugins} ${pointer("", "plugins", id)} lists ${id}, which the set of ${set.root} does not mention: it loads in this project for you only`, {
      hint: `Declare it for everyone (xcsh-tools install ${id} --scope project), or remove the entry (xcsh-tools uninstall ${id} --scope project).`,
      manual: "doctor does not decide whether the team wants it",
    });
  }
  const overrides = readJsonOrUndefined(paths.pluginOverrides) ?? {};
  if (!isDeepStrictEqual(overrides, rendered.overrides)) notRestored.push(`${paths.pluginOverrides} does not hold the set's npm choices`);
}

/** `WTEAM_GITIGNORE`: the lines `.xcsh/.gitignore` lacks, appended by `--fix`. */
function checkGitignore(paths: TeamPaths, warn: Warn): void {
  const text = readTextBounded(paths.gitignore) ?? "";
  const missing = missingGitignoreLines(text);
  if (missing.length === 0) return;
  warn("WTEAM_GITIGNORE", paths.gitignore, `${paths.gitignore} lacks ${missing.join(", ")}: per-machine files (absolute paths of your home, personal choices) could be committed`, {
    hint: `Run \`xcsh-tools doctor --fix\` (it appends the lines, the others stay as they are), or add them by hand.`,
    repair: { kind: "gitignore-append", file: paths.gitignore },
    repairText: `append ${missing.join(", ")} to ${paths.gitignore}`,
  });
}

/**
 * `--fix` of `WTEAM_GITIGNORE`: append the missing lines (computed again from the file as it is
 * now), never rewriting the lines already there.
 */
export async function repairGitignores(findings: readonly Finding[], failures: Map<Repair["kind"], string>): Promise<void> {
  for (const finding of findings) {
    if (finding.repair?.kind !== "gitignore-append") continue;
    const file = finding.repair.file;
    try {
      const text = readTextBounded(file) ?? "";
      const missing = missingGitignoreLines(text);
      if (missing.length === 0) continue;
      if (text === "" && statOrUndefined(file) === undefined) {
        // A committed file: readable by everyone, as git checks it out (writeFileAtomic would make a new file private).
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, GITIGNORE_TEXT, { flag: "wx", mode: 0o644 });
        continue;
      }
      const sep = text === "" || text.endsWith("\n") ? "" : "\n";
      await writeFileAtomic(file, `${text}${sep}${missing.join("\n")}\n`);
    } catch (error) {
      failures.set("gitignore-append", `${file} could not be written: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
