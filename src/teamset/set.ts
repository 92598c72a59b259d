/**
 * The effective set of a project: xcsh-team.json over Claude Code's `.claude/settings.json`, then
 * the personal choices (`.xcsh/team.local.json`, `.claude/settings.local.json`) and the user's own
 * switch-offs, each decision kept with who made it (docs/design/team-sets.md (b), (a) 7.). Pure:
 * the files are read by the caller (index.ts `loadTeamSet`).
 */
import { XcshToolsError } from "../core/errors.js";
import type { ClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { mayNameMarketplacePlugin, splitPluginId } from "../manifest/installed-plugins.js";
import { pluginIdProblem } from "../manifest/names.js";
import { pointer } from "../manifest/result.js";
import { sameSource, type DeclaredPlugin, type TeamDeclaration } from "../manifest/team-declaration.js";
import type { TeamLocal } from "../manifest/team-local.js";
import type { EffectiveSet, SetPlugin, Who } from "../manifest/team-set.js";

/** What the set is made of, each already read and validated. */
export interface SetInputs {
  root: string;
  declaration?: { file: string; doc: TeamDeclaration };
  /** `.claude/settings.json` of the project. */
  claude?: ClaudeTeamSettings;
  /** `.claude/settings.local.json`: only `false` counts (a personal opt-out; it cannot add plugins). */
  claudeLocal?: ClaudeTeamSettings;
  local?: { file: string; doc: TeamLocal };
  /** npm plugins the user switched off for themselves (runtime lock `enabled: false`): name → that file. */
  userDisabled?: ReadonlyMap<string, string>;
}

function conflict(name: string, team: string, claude: string): XcshToolsError {
  const at = pointer("", "marketplaces", name, "source");
  return new XcshToolsError("ETEAM_DECLARATION_CONFLICT", `Marketplace "${name}" is declared with different sources in ${team} (${at}) and ${claude} (${pointer("", "extraKnownMarketplaces", name, "source")}): expected one source per marketplace`, {
    file: team,
    path: at,
    hint: `Make both sources the same, or remove "${name}" from one of the files (xcsh-team.json wins only when they agree).`,
  });
}

/** Merge the inputs into the set; `ETEAM_DECLARATION_CONFLICT` or `ETEAM_UNKNOWN_MARKETPLACE` when they cannot be one set. */
export function buildEffectiveSet(inputs: SetInputs): EffectiveSet {
  const set: EffectiveSet = { root: inputs.root, marketplaces: new Map(), plugins: new Map(), ignored: [] };
  const { declaration, claude } = inputs;
  const claudeWho: Who | undefined = claude && { by: "claude", file: claude.file };
  const teamWho: Who | undefined = declaration && { by: "team", file: declaration.file };

  for (const [name, source] of claude?.marketplaces ?? []) set.marketplaces.set(name, { source, from: claudeWho! });
  for (const [name, entry] of Object.entries(declaration?.doc.marketplaces ?? {})) {
    const theirs = set.marketplaces.get(name);
    if (theirs && !sameSource(theirs.source, entry.source)) throw conflict(name, declaration!.file, theirs.from.file);
    set.marketplaces.set(name, { source: entry.source, from: teamWho! });
  }

  for (const [key, on] of claude?.enabledPlugins ?? []) {
    const id = splitPluginId(key);
    const why = pluginIdProblem(key) ?? (id && !set.marketplaces.has(id.marketplace) ? `its marketplace "${id.marketplace}" is not declared in the project` : undefined);
    if (why !== undefined || !id) {
      set.ignored.push({ key, file: claude!.file, path: `${pointer("", "enabledPlugins", key)} (${why ?? "not a name@marketplace id"})` });
      continue;
    }
    set.plugins.set(key, { key, kind: "marketplace", enabled: on, teamEnabled: on, decided: [claudeWho!], enabledBy: claudeWho! });
  }
  for (const [key, declared] of Object.entries(declaration?.doc.plugins ?? {})) {
    const id = mayNameMarketplacePlugin(key) ? splitPluginId(key) : undefined;
    if (id && !set.marketplaces.has(id.marketplace)) {
      throw new XcshToolsError("ETEAM_UNKNOWN_MARKETPLACE", `${declaration!.file}: ${pointer("", "plugins", key)}: the marketplace "${id.marketplace}" of ${key} is not declared (expected it under /marketplaces or in .claude/settings.json)`, {
        file: declaration!.file,
        path: pointer("", "plugins", key),
        hint: `Declare it: xcsh-tools marketplace add <source> --scope project.`,
      });
    }
    set.plugins.set(key, withTeamEntry(set.plugins.get(key), key, id ? "marketplace" : "npm", declared, teamWho!));
  }

  for (const [key, on] of inputs.claudeLocal?.enabledPlugins ?? []) {
    if (on) continue;
    const who: Who = { by: "claude-local", file: inputs.claudeLocal!.file };
    personal(set, key, who, pointer("", "enabledPlugins", key), (p) => ({ ...p, enabled: false, enabledBy: who }));
  }
  for (const [key, choice] of Object.entries(inputs.local?.doc.plugins ?? {})) {
    const who: Who = { by: "local", file: inputs.local!.file };
    personal(set, key, who, pointer("", "plugins", key), (p) => ({
      ...p,
      ...(choice.enabled !== undefined ? { enabled: choice.enabled, enabledBy: who } : {}),
      ...(choice.features !== undefined ? { features: choice.features } : {}),
      ...(choice.settings !== undefined ? { settings: { ...p.settings, ...choice.settings } } : {}),
    }));
  }
  for (const [name, file] of inputs.userDisabled ?? []) {
    const plugin = set.plugins.get(name);
    if (plugin?.kind !== "npm" || !plugin.enabled) continue;
    const who: Who = { by: "user", file };
    set.plugins.set(name, { ...plugin, enabled: false, enabledBy: who, decided: [...plugin.decided, who] });
  }
  return set;
}

/** The plugin as xcsh-team.json says, over what Claude's file said: per field, the declaration wins where it speaks. */
function withTeamEntry(before: SetPlugin | undefined, key: string, kind: SetPlugin["kind"], declared: DeclaredPlugin, who: Who): SetPlugin {
  const enabled = declared.enabled ?? before?.teamEnabled ?? true;
  return {
    key,
    kind,
    ...(declared.spec !== undefined ? { spec: declared.spec } : {}),
    ...(declared.version !== undefined ? { version: declared.version } : {}),
    enabled,
    teamEnabled: enabled,
    ...(declared.features !== undefined ? { features: declared.features } : {}),
    ...(declared.settings !== undefined ? { settings: { ...declared.settings } } : {}),
    decided: [...(before?.decided ?? []), who],
    enabledBy: declared.enabled !== undefined || !before ? who : before.enabledBy,
  };
}

/** Apply one personal choice to a declared plugin; a choice about an undeclared one is ignored (it cannot add plugins). */
function personal(set: EffectiveSet, key: string, who: Who, path: string, apply: (p: SetPlugin) => SetPlugin): void {
  const plugin = set.plugins.get(key);
  if (!plugin) {
    set.ignored.push({ key, file: who.file, path: `${path} (not declared by the project)` });
    return;
  }
  const next = apply(plugin);
  set.plugins.set(key, { ...next, decided: [...plugin.decided, who] });
}
