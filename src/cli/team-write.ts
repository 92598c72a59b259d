/**
 * Write-through of the project's plugin set (docs/design/team-sets.md (d) "--scope project
 * changes"): a `--scope project` change edits `xcsh-team.json` (teamset/edit.ts: canonical order,
 * unknown keys kept), a `--scope local` change edits `.xcsh/team.local.json`, and then the project
 * is restored from the edited file (cli/team-restore.ts `restoreProject`): only the touched entries
 * are resolved into the lock (the resolver keeps `ok` entries byte for byte), and the edited file is
 * written by the restore's own transaction, so a restore that fails (`EINTEGRITY`, `EUNCONFIRMED`,
 * `EUNKNOWN_FEATURE`…) leaves it as it was.
 *
 * Where it applies: a project that declares a set (xcsh-team.json or .claude/settings.json at its
 * root) or whose root is in a git work tree. Elsewhere there is nothing to commit, and `--scope
 * project` keeps writing the host's per-machine project files as before.
 */
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, rmdir } from "node:fs/promises";
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { projectRootOf, statOrUndefined, teamPaths, type TeamPaths } from "../core/paths.js";
import { readClaudeTeamSettings, type ClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { mayNameMarketplacePlugin, splitPluginId } from "../manifest/installed-plugins.js";
import { pointer } from "../manifest/result.js";
import { readTeamDeclaration, type DeclaredPlugin, type TeamDeclaration } from "../manifest/team-declaration.js";
import { readTeamLocal } from "../manifest/team-local.js";
import type { EffectiveSet } from "../manifest/team-set.js";
import type { DeclarationEdit, PluginEdit, RestoreReport } from "../teamset/index.js";
import type { CommandContext } from "./context.js";
import { assertScopeAllowed } from "./project-scope.js";
import { restoreLines, restoreProject, type RestoreFlags } from "./team-restore.js";

/** The flags a write-through change takes. */
export interface WriteFlags extends RestoreFlags {
  dryRun?: boolean;
}

/** The git work tree `dir` is in (a `.git` entry in it or above). */
function inGitWorkTree(dir: string): boolean {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    if (existsSync(path.join(current, ".git"))) return true;
    if (path.dirname(current) === current) return false;
  }
}

/**
 * The project root whose declaration a `--scope project` change writes, or `undefined` when the
 * change keeps the host's per-machine project files (no set declared and no git work tree: nothing
 * to commit). Only `stat`: nothing of an untrusted project is read.
 */
export function teamWriteRoot(ctx: CommandContext): string | undefined {
  const root = projectRootOf(ctx.cwd, ctx.roots);
  if (root === undefined) return undefined;
  const paths = teamPaths(root, ctx.roots.configDirName);
  if (statOrUndefined(paths.declaration) !== undefined || statOrUndefined(paths.claudeSettings) !== undefined) return root;
  return inGitWorkTree(root) ? root : undefined;
}

/** What an edit of the declaration is computed from. */
export interface DeclarationState {
  root: string;
  paths: TeamPaths;
  doc: TeamDeclaration | undefined;
  claude: ClaudeTeamSettings | undefined;
}

/** `--scope local` needs a project with a set. */
function localRootOf(ctx: CommandContext): string {
  const root = projectRootOf(ctx.cwd, ctx.roots);
  const paths = root === undefined ? undefined : teamPaths(root, ctx.roots.configDirName);
  if (paths === undefined || (statOrUndefined(paths.declaration) === undefined && statOrUndefined(paths.claudeSettings) === undefined)) {
    const file = paths?.local ?? path.join(ctx.cwd, ".xcsh", "team.local.json");
    throw new XcshToolsError("ETEAM_NOT_DECLARED", `${file}: --scope local is about the project's declared plugins, and ${root ?? ctx.cwd} declares no set (no xcsh-team.json, no .claude/settings.json)`, {
      file,
      hint: "Choose for all your projects with --scope user, or declare the project's set first (xcsh-tools install <spec> --scope project).",
      exitCode: 2,
    });
  }
  return root!;
}

/** Create the project's config folder for the restore's journal (which confines team files to beside it); returns whether it was created. */
async function ensureConfigDir(paths: TeamPaths): Promise<boolean> {
  if (existsSync(paths.configDir)) return false;
  await mkdir(paths.configDir, { recursive: true });
  return true;
}

/** Undo `ensureConfigDir` after a failed change: the folder goes if it is still empty. */
async function dropIfEmpty(dir: string): Promise<void> {
  const entries = await readdir(dir).catch(() => undefined);
  if (entries?.length === 0) await rmdir(dir).catch(() => undefined);
}

/** Restore with the edited file, undoing the config folder this change created when it fails. */
async function restoreEdited(ctx: CommandContext, paths: TeamPaths, flags: WriteFlags, edit: Parameters<typeof restoreProject>[3]): Promise<RestoreReport> {
  const created = await ensureConfigDir(paths);
  try {
    return await restoreProject(ctx, flags, undefined, edit);
  } catch (error) {
    if (created) await dropIfEmpty(paths.configDir);
    throw error;
  }
}

/** Print what a change did: the file it edited, then the restore's lines (`--json`: one document). */
function report(ctx: CommandContext, root: string, file: string, changed: boolean, restored: RestoreReport, extra: Record<string, unknown>): void {
  if (ctx.output.json) return ctx.output.result({ ok: true, file, changed, ...extra, ...restored });
  ctx.output.line(changed ? `Wrote ${path.relative(root, file)}` : `${path.relative(root, file)} already says so`);
  for (const line of restoreLines(root, restored)) ctx.output.line(line);
}

/** A dry run: the bytes the file would get, then what the restore would do (`restored`, when the change restores); nothing is written or run. */
function reportDryRun(ctx: CommandContext, root: string, file: string, text: string, changed: boolean, extra: Record<string, unknown>, restored?: RestoreReport): void {
  if (ctx.output.json) return ctx.output.result({ ok: true, file, changed, text, ...extra, ...restored, dryRun: true });
  ctx.output.line(changed ? `Would write ${path.relative(root, file)} (dry run: nothing was written):` : `${path.relative(root, file)} already says so (dry run: nothing was written)`);
  if (changed) for (const line of text.trimEnd().split("\n")) ctx.output.line(`  ${line}`);
  if (restored) for (const line of restoreLines(root, restored)) ctx.output.line(line);
}

/**
 * A `--scope project` change: trust first (`EUNTRUSTED_PROJECT` before anything is read), then
 * `edits` computed from the declaration as it is, applied in order, and the project restored from
 * the result. `removed`: ids this change takes out of the set (dropped from the generated registry).
 */
export async function changeDeclaration(
  ctx: CommandContext,
  root: string,
  doing: string,
  flags: WriteFlags,
  editsOf: (state: DeclarationState) => DeclarationEdit[] | Promise<DeclarationEdit[]>,
  options: { removed?: readonly string[]; secretKeysOf?: (plugin: string) => readonly string[] | undefined } = {},
): Promise<void> {
  await assertScopeAllowed(ctx, "project", doing);
  const { editDeclaration, formatDeclaration } = await import("../teamset/index.js");
  const paths = teamPaths(root, ctx.roots.configDirName);
  const claude = readClaudeTeamSettings(paths.claudeSettings, root);
  const doc = readTeamDeclaration(paths.declaration, { otherMarketplaces: claude?.marketplaces.keys() ?? [] });
  const { migrated, imported } = doc ? { migrated: undefined, imported: undefined } : await (await import("./team-migrate.js")).importLegacyState(ctx, root, paths, claude);
  const state: DeclarationState = { root, paths, doc: doc ?? migrated, claude };
  let next = state.doc;
  for (const edit of await editsOf(state)) {
    next = editDeclaration(next, edit, { file: paths.declaration, ...(claude ? { claude } : {}), ...(options.secretKeysOf ? { secretKeysOf: options.secretKeysOf } : {}) });
  }
  const text = formatDeclaration(next ?? { version: 1 });
  const before = await readFile(paths.declaration, "utf8").catch(() => undefined);
  const extra = imported ? { imported: imported.lines, untrack: imported.untrack } : {};
  if (imported && !ctx.output.json) for (const line of imported.human) ctx.output.line(line);
  const change = { root, edit: { declaration: next ?? { version: 1 }, ...(options.removed ? { removed: options.removed } : {}) }, ...(imported ? { migrating: true } : {}) };
  // A dry run restores the edited set as a dry run too (what would be installed, locked and run);
  // it creates no folder, writes, asks and runs nothing.
  if (flags.dryRun) return reportDryRun(ctx, root, paths.declaration, text, text !== before, extra, await restoreProject(ctx, flags, undefined, change));
  const restored = await restoreEdited(ctx, paths, flags, change);
  report(ctx, root, paths.declaration, text !== before, restored, extra);
}

/**
 * A `--scope local` change: a personal choice about a plugin the project declares
 * (`ETEAM_NOT_DECLARED` otherwise, "use --scope user"), written to `.xcsh/team.local.json` by
 * the restore that applies it; nothing committed changes.
 */
export async function changeLocal(ctx: CommandContext, doing: string, flags: WriteFlags, editsOf: (set: EffectiveSet) => PluginEdit[] | Promise<PluginEdit[]>, options: { secretKeysOf?: (plugin: string) => readonly string[] | undefined } = {}): Promise<void> {
  await assertScopeAllowed(ctx, "project", doing);
  const root = localRootOf(ctx);
  const { editLocal, formatLocal, loadTeamSet } = await import("../teamset/index.js");
  const paths = teamPaths(root, ctx.roots.configDirName);
  const set = loadTeamSet(root, ctx.roots.configDirName ? { configDirName: ctx.roots.configDirName } : {})!;
  let next = readTeamLocal(paths.local);
  for (const edit of await editsOf(set)) next = editLocal(next, set, edit, { file: paths.local, ...(options.secretKeysOf ? { secretKeysOf: options.secretKeysOf } : {}) });
  const text = formatLocal(next ?? { version: 1 });
  const before = await readFile(paths.local, "utf8").catch(() => undefined);
  if (flags.dryRun) return reportDryRun(ctx, root, paths.local, text, text !== before, {});
  const restored = await restoreEdited(ctx, paths, flags, { root, edit: { local: next ?? { version: 1 } } });
  report(ctx, root, paths.local, text !== before, restored, {});
}

/**
 * The key a name has in the set: `name@marketplace` when its marketplace is declared (here or in
 * Claude's file), else the npm name. An `@x` that is no declared marketplace and no npm version
 * is `ETEAM_UNKNOWN_MARKETPLACE` (the validator says it for keys; said here for typed names).
 */
export function isDeclaredMarketplaceId(name: string, state: Pick<DeclarationState, "doc" | "claude">): boolean {
  if (!mayNameMarketplacePlugin(name)) return false;
  const market = splitPluginId(name)?.marketplace;
  return market !== undefined && (Object.hasOwn(state.doc?.marketplaces ?? {}, market) || state.claude?.marketplaces.has(market) === true);
}

/** `ETEAM_NOT_DECLARED` for a plugin the declaration does not list (uninstall, config delete). */
export function notInDeclaration(file: string, key: string, hint: string): XcshToolsError {
  return new XcshToolsError("ETEAM_NOT_DECLARED", `${file}: ${pointer("", "plugins", key)}: ${key} is not declared there (expected a plugin of the project's set)`, { file, path: pointer("", "plugins", key), hint, exitCode: 2 });
}


/** The key a typed name has in the set files: `name@marketplace` as typed, an npm name normalised. */
export async function setKeyOf(name: string): Promise<string> {
  if (mayNameMarketplacePlugin(name) && !name.startsWith("npm:")) return name;
  const { parsePackageName } = await import("../plugins/spec.js");
  return parsePackageName(name);
}

/** What a plugin change is computed from: the plugin's key and its current features in the set (absent: its defaults). */
export interface PluginTarget {
  key: string;
  features: DeclaredPlugin["features"];
}

/**
 * Where a `--scope` of enable/disable/features/config goes: the declaration (`project`, where
 * write-through applies), the personal file (`local`), or `undefined` (the host's files, as before).
 */
export function setScopeOf(ctx: CommandContext, scope: string | undefined): { kind: "project"; root: string } | { kind: "local" } | undefined {
  if (scope === "local") return { kind: "local" };
  if (scope !== "project") return undefined;
  const root = teamWriteRoot(ctx);
  return root === undefined ? undefined : { kind: "project", root };
}

/**
 * enable/disable/features/config at `--scope project|local`: one `PluginEdit` per name, applied to
 * the declaration or to the personal file, then restored. At project scope a plugin the project
 * does not declare can only be switched off (a team "off" entry, which also shadows a user's copy);
 * anything else about it is `ETEAM_NOT_DECLARED` ("install it with --scope project"). A plugin only
 * Claude's file declares gets an override entry in xcsh-team.json (`.claude/` is never written).
 */
export async function changePlugins(
  ctx: CommandContext,
  where: { kind: "project"; root: string } | { kind: "local" },
  doing: string,
  flags: WriteFlags,
  names: readonly string[],
  editOf: (target: PluginTarget) => PluginEdit | Promise<PluginEdit>,
  options: { secretKeysOf?: (plugin: string) => readonly string[] | undefined; switchOff?: boolean } = {},
): Promise<void> {
  const keys = await Promise.all(names.map(setKeyOf));
  if (where.kind === "local") {
    // The personal file: what the set says now is the starting point of a relative change.
    await changeLocal(ctx, doing, flags, async (set) => {
      const edits: PluginEdit[] = [];
      for (const key of keys) edits.push(await editOf({ key, features: set.plugins.get(key)?.features }));
      return edits;
    }, options);
    return;
  }
  await changeDeclaration(ctx, where.root, doing, flags, async (state) => {
    const edits: DeclarationEdit[] = [];
    for (const key of keys) {
      const declared = state.doc?.plugins && Object.hasOwn(state.doc.plugins, key) ? state.doc.plugins[key] : undefined;
      if (!declared && !state.claude?.enabledPlugins.has(key) && !options.switchOff) {
        throw notInDeclaration(state.paths.declaration, key, `Declare it first: xcsh-tools install ${key} --scope project (or choose for yourself with --scope user).`);
      }
      edits.push(await editOf({ key, features: declared?.features }));
    }
    return edits;
  }, options);
}
