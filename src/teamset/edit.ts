/**
 * Edits of the declaration (`--scope project`) and of the personal file (`--scope local`) as pure
 * functions: document in, document out, checked by the same validators as the readers, so an edit
 * can never write a file a teammate's xcsh-tools would refuse. Unknown keys are kept; the bytes are
 * canonical (schema field order, marketplaces and plugins sorted), so a re-run writes nothing new.
 */
import path from "node:path";
import { mayNameMarketplacePlugin, splitPluginId } from "../manifest/installed-plugins.js";
import { XcshToolsError } from "../core/errors.js";
import type { ClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { pointer } from "../manifest/result.js";
import {
  DECLARATION_FIELD_ORDER,
  PLUGIN_FIELD_ORDER,
  SOURCE_FIELD_ORDER,
  TEAM_DECLARATION_FILE,
  sameSource,
  secretSettingIssues,
  validateTeamDeclaration,
  type DeclaredFeatures,
  type DeclaredPlugin,
  type DeclaredSource,
  type TeamDeclaration,
} from "../manifest/team-declaration.js";
import { teamIssueError, valueOrThrow } from "../manifest/team-file.js";
import { LOCAL_PLUGIN_FIELD_ORDER, validateTeamLocal, type LocalPlugin, type TeamLocal } from "../manifest/team-local.js";
import type { EffectiveSet } from "../manifest/team-set.js";
import { knownFirst, orderedJson, sortedKeys } from "./canonical-json.js";

/** One change of a plugin's entry, shared by both files. */
export type PluginEdit =
  | { op: "enable"; key: string; enabled: boolean }
  | { op: "features"; key: string; features: DeclaredFeatures | undefined }
  | { op: "setting-set"; key: string; setting: string; value: unknown }
  | { op: "setting-delete"; key: string; setting: string };

/** A change of xcsh-team.json. */
export type DeclarationEdit =
  | PluginEdit
  | { op: "add-plugin"; key: string; entry: DeclaredPlugin }
  | { op: "remove-plugin"; key: string }
  | { op: "marketplace-add"; name: string; source: DeclaredSource }
  | { op: "marketplace-remove"; name: string };

/** What an edit is checked against. */
export interface EditContext {
  /** The file being edited (named in every error). */
  file: string;
  /** `.claude/settings.json` of the project: its marketplaces count as declared, its on/off is overridden explicitly. */
  claude?: ClaudeTeamSettings;
  /** The settings a plugin's schema marks `secret` (`undefined`: not known, nothing refused). */
  secretKeysOf?: (plugin: string) => readonly string[] | undefined;
}

/** A plain object with `key` set as an own data property (never a `__proto__` setter). */
function withKey<T>(object: Record<string, T>, key: string, value: T): Record<string, T> {
  const copy = { ...object };
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

function withoutKey<T>(object: Record<string, T>, key: string): Record<string, T> {
  const copy = { ...object };
  delete copy[key];
  return copy;
}

function secretRefusal(ctx: EditContext, key: string, setting: string, base: string): void {
  const issues = secretSettingIssues(withKey({}, key, { settings: withKey({}, setting, null) }), (plugin) => ctx.secretKeysOf?.(plugin), base);
  if (issues.length > 0) throw teamIssueError(ctx.file, issues, "ESECRET_SCOPE");
}

function notDeclared(file: string, key: string, hint: string): XcshToolsError {
  return new XcshToolsError("ETEAM_NOT_DECLARED", `${file}: ${pointer("", "plugins", key)}: ${key} is not declared there (expected a plugin of the project's set)`, { file, path: pointer("", "plugins", key), hint });
}

/** Whether `{}` under `key` declares an installable plugin: one of a marketplace the set (or Claude's file) declares. */
function isDeclarable(key: string, marketplaces: Record<string, unknown>, ctx: EditContext): boolean {
  const id = mayNameMarketplacePlugin(key) ? splitPluginId(key) : undefined;
  return id !== undefined && (Object.hasOwn(marketplaces, id.marketplace) || (ctx.claude?.marketplaces.has(id.marketplace) ?? false));
}

/** A plugin entry changed by one `PluginEdit`; `undefined` fields are dropped. */
function applyPluginEdit<P extends LocalPlugin>(entry: P, edit: PluginEdit, explicitOn: boolean): P {
  switch (edit.op) {
    case "enable": {
      const { enabled: _, ...rest } = entry;
      // On is the default; it is written only to override a `false` elsewhere (Claude's file).
      return (edit.enabled && !explicitOn ? rest : { ...rest, enabled: edit.enabled }) as P;
    }
    case "features": {
      const { features: _, ...rest } = entry;
      return (edit.features === undefined ? rest : { ...rest, features: edit.features }) as P;
    }
    case "setting-set":
      return { ...entry, settings: withKey(entry.settings ?? {}, edit.setting, edit.value) };
    case "setting-delete": {
      const settings = withoutKey(entry.settings ?? {}, edit.setting);
      const { settings: _, ...rest } = entry;
      return (Object.keys(settings).length > 0 ? { ...rest, settings } : rest) as P;
    }
  }
}

/**
 * Apply `edit` to the declaration (`undefined`: none yet, a new one is started). The result is
 * validated as the reader would (`ETEAM_*`, source-args codes); a secret setting is
 * `ESECRET_SCOPE` naming the file and `/plugins/<name>/settings/<key>`.
 */
export function editDeclaration(doc: TeamDeclaration | undefined, edit: DeclarationEdit, ctx: EditContext): TeamDeclaration {
  const base: TeamDeclaration = doc ? { ...doc } : { version: 1 };
  const plugins = { ...(base.plugins ?? {}) } as Record<string, DeclaredPlugin>;
  const marketplaces = { ...(base.marketplaces ?? {}) } as Record<string, { source: DeclaredSource }>;
  let nextPlugins = plugins;
  let nextMarketplaces = marketplaces;
  switch (edit.op) {
    case "add-plugin":
      for (const [setting] of Object.entries(edit.entry.settings ?? {})) secretRefusal(ctx, edit.key, setting, "/plugins");
      nextPlugins = withKey(plugins, edit.key, { ...(Object.hasOwn(plugins, edit.key) ? plugins[edit.key] : {}), ...edit.entry });
      break;
    case "remove-plugin":
      if (!Object.hasOwn(plugins, edit.key)) {
        throw notDeclared(ctx.file, edit.key, ctx.claude?.enabledPlugins.has(edit.key) ? `${edit.key} comes from ${ctx.claude.file}: switch it off with \`xcsh-tools disable ${edit.key} --scope project\` (xcsh-tools never edits .claude/).` : "Nothing to remove; `xcsh-tools list` shows the project's set.");
      }
      nextPlugins = withoutKey(plugins, edit.key);
      break;
    case "marketplace-add": {
      const existing = Object.hasOwn(marketplaces, edit.name) ? marketplaces[edit.name] : undefined;
      if (existing && !sameSource(existing.source, edit.source)) {
        throw new XcshToolsError("EMARKETPLACE_EXISTS", `${ctx.file}: ${pointer("", "marketplaces", edit.name)}: marketplace "${edit.name}" is already declared with another source (expected a new name)`, { file: ctx.file, path: pointer("", "marketplaces", edit.name), hint: `Remove it first (xcsh-tools marketplace remove ${edit.name} --scope project) or edit its source in ${TEAM_DECLARATION_FILE}.` });
      }
      nextMarketplaces = withKey(marketplaces, edit.name, { ...existing, source: edit.source });
      break;
    }
    case "marketplace-remove": {
      const users = Object.keys(plugins).filter((key) => key.endsWith(`@${edit.name}`));
      if (users.length > 0) {
        throw new XcshToolsError("ETEAM_UNKNOWN_MARKETPLACE", `${ctx.file}: removing marketplace "${edit.name}" would leave ${users.map((k) => pointer("", "plugins", k)).join(", ")} naming an undeclared marketplace`, { file: ctx.file, path: pointer("", "plugins", users[0]!), hint: `Remove its plugins first (xcsh-tools uninstall ${users.join(" ")} --scope project).` });
      }
      if (!Object.hasOwn(marketplaces, edit.name)) throw new XcshToolsError("EMARKETPLACE_NOT_FOUND", `${ctx.file}: marketplace "${edit.name}" is not declared (expected one under /marketplaces)`, { file: ctx.file, path: pointer("", "marketplaces", edit.name), hint: "`xcsh-tools marketplace list` shows the project's marketplaces." });
      nextMarketplaces = withoutKey(marketplaces, edit.name);
      break;
    }
    default: {
      if (edit.op === "setting-set") secretRefusal(ctx, edit.key, edit.setting, "/plugins");
      const current = Object.hasOwn(plugins, edit.key) ? plugins[edit.key]! : {};
      const explicitOn = ctx.claude?.enabledPlugins.get(edit.key) === false;
      const next = applyPluginEdit(current, edit, explicitOn);
      // An entry that was only the team's "off" switch, switched on again, says nothing any more: it goes. Kept as `{}`
      // it would declare the plugin anew (an npm one without a spec would mean its registry's latest; a plugin of a
      // marketplace the set does not declare, an unknown marketplace), where the user wanted their own copy back.
      const onlySwitch = edit.op === "enable" && edit.enabled && Object.keys(next).length === 0 && !isDeclarable(edit.key, marketplaces, ctx);
      nextPlugins = onlySwitch ? withoutKey(plugins, edit.key) : withKey(plugins, edit.key, next);
    }
  }
  const next: TeamDeclaration = { ...base, marketplaces: nextMarketplaces, plugins: nextPlugins };
  if (Object.keys(nextMarketplaces).length === 0 && !doc?.marketplaces) delete next.marketplaces;
  if (Object.keys(nextPlugins).length === 0 && !doc?.plugins) delete next.plugins;
  return valueOrThrow(validateTeamDeclaration(next, { otherMarketplaces: ctx.claude?.marketplaces.keys() ?? [] }), ctx.file, "ETEAM_DECLARATION_INVALID");
}

/** The canonical bytes of a declaration: schema fields first, then unknown keys in their order; marketplaces and plugins sorted. */
export function formatDeclaration(doc: TeamDeclaration): string {
  return orderedJson(doc, (object, at) => {
    if (at.length === 0) return knownFirst(object, DECLARATION_FIELD_ORDER);
    if (at.length === 1 && (at[0] === "marketplaces" || at[0] === "plugins")) return sortedKeys(object);
    if (at.length === 2 && at[0] === "plugins") return knownFirst(object, PLUGIN_FIELD_ORDER);
    if (at.length === 2 && at[0] === "marketplaces") return knownFirst(object, ["source"]);
    if (at.length === 3 && at[0] === "marketplaces" && at[2] === "source") return knownFirst(object, SOURCE_FIELD_ORDER[object.source as DeclaredSource["source"]] ?? []);
    return Object.keys(object);
  });
}

/**
 * Apply a personal choice (`--scope local`) to `.xcsh/team.local.json`: only about plugins the
 * project's set declares (`ETEAM_NOT_DECLARED`, "use --scope user"), never a secret setting.
 */
export function editLocal(doc: TeamLocal | undefined, set: EffectiveSet, edit: PluginEdit, ctx: EditContext): TeamLocal {
  if (!set.plugins.has(edit.key)) throw notDeclared(ctx.file, edit.key, `The project does not declare ${edit.key}; choose for all your projects with --scope user.`);
  if (edit.op === "setting-set") secretRefusal(ctx, edit.key, edit.setting, "/plugins");
  const base: TeamLocal = doc ? { ...doc } : { version: 1 };
  const plugins = { ...(base.plugins ?? {}) } as Record<string, LocalPlugin>;
  // A personal `enabled: true` is written only to undo a personal opt-out; else it is dropped (the set decides).
  const entry = applyPluginEdit(Object.hasOwn(plugins, edit.key) ? plugins[edit.key]! : {}, edit, edit.op === "enable" && edit.enabled && !set.plugins.get(edit.key)!.teamEnabled);
  const nextPlugins = Object.keys(entry).length > 0 ? withKey(plugins, edit.key, entry) : withoutKey(plugins, edit.key);
  return valueOrThrow(validateTeamLocal({ ...base, plugins: nextPlugins }), ctx.file, "ETEAM_DECLARATION_INVALID");
}

/** The canonical bytes of the personal file. */
export function formatLocal(doc: TeamLocal): string {
  return orderedJson(doc, (object, at) => {
    if (at.length === 0) return knownFirst(object, ["version", "plugins"]);
    if (at.length === 1 && at[0] === "plugins") return sortedKeys(object);
    if (at.length === 2) return knownFirst(object, LOCAL_PLUGIN_FIELD_ORDER);
    return Object.keys(object);
  });
}

/** The declared source of what `marketplace add` was given, relative to the root for a folder inside it. */
export function declaredSourceOf(spec: { kind: string; uri: string }, root: string, file: string): DeclaredSource {
  const hash = spec.uri.lastIndexOf("#");
  const [base, ref] = hash > 0 ? [spec.uri.slice(0, hash), spec.uri.slice(hash + 1)] : [spec.uri, undefined];
  switch (spec.kind) {
    case "local": {
      const rel = path.relative(root, spec.uri);
      if (rel === ".." || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
        throw new XcshToolsError("ETEAM_MACHINE_PATH", `${file}: /marketplaces: the folder ${spec.uri} is outside the project ${root} (expected a folder of the repository, which every teammate has)`, {
          file,
          path: "/marketplaces",
          hint: "Move the marketplace into the repository (a `directory` marketplace), push it to a git host and add its URL, or add it for yourself only (--scope user).",
          exitCode: 2,
        });
      }
      // The repository itself may be the marketplace (its catalog at the root): "./".
      return { source: "directory", path: `./${rel.split(path.sep).join("/")}` };
    }
    case "github":
      return { source: "github", repo: base, ...(ref ? { ref } : {}) };
    case "git":
      return { source: "git", url: base, ...(ref ? { ref } : {}) };
    default:
      return { source: "url", url: spec.uri };
  }
}
