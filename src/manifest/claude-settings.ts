/**
 * Claude Code's enable/disable of its plugins: `enabledPlugins` in its settings files,
 * `{"name@marketplace": true | false}` (a list of versions also means on). Claude Code keeps
 * enablement there, not in `installed_plugins.json`, and layers three files, the nearest winning:
 * the project's `.claude/settings.local.json` over its `.claude/settings.json` over the user's
 * `~/.claude/settings.json`. Read only; the rest of each file is none of our business, so only
 * `enabledPlugins` is checked. An id no layer names keeps its default (loaded).
 */
import path from "node:path";
import { Type, type Static } from "./typebox.js";

/** The part of a Claude Code settings file we read. Every other key is left alone. */
export const ClaudeSettingsSchema = Type.Object({
  enabledPlugins: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Boolean(), Type.Array(Type.String())]))),
});
export type ClaudeSettings = Static<typeof ClaudeSettingsSchema>;

/** A settings layer, nearest last in `claudeSettingsFiles`. */
export type ClaudeSettingsLevel = "user" | "project" | "local";

/** Claude Code's settings files, farthest first (user, project, local). */
export function claudeSettingsFiles(home: string, cwd: string): { level: ClaudeSettingsLevel; file: string }[] {
  return [
    { level: "user", file: path.join(home, ".claude", "settings.json") },
    { level: "project", file: path.join(cwd, ".claude", "settings.json") },
    { level: "local", file: path.join(cwd, ".claude", "settings.local.json") },
  ];
}

/** Where an id's enablement was decided. */
export interface ClaudeEnablement {
  enabled: boolean;
  level: ClaudeSettingsLevel;
  file: string;
}

/** Merge the layers (farthest first): per id, the nearest layer that names it decides. */
export function mergeEnabledPlugins(layers: readonly { level: ClaudeSettingsLevel; file: string; settings: ClaudeSettings }[]): Map<string, ClaudeEnablement> {
  const merged = new Map<string, ClaudeEnablement>();
  for (const { level, file, settings } of layers) {
    for (const [id, value] of Object.entries(settings.enabledPlugins ?? {})) {
      merged.set(id, { enabled: Array.isArray(value) ? true : value, level, file });
    }
  }
  return merged;
}

/**
 * The part of a project's `.claude/settings.json` (and `.claude/settings.local.json`) that makes a
 * team set (docs/design/team-sets.md (b)): the marketplaces Claude Code is told about and the
 * plugins it switches on or off. `autoUpdate` is ignored: the lock decides versions. Checked and
 * read by claude-team-settings.ts, apart so the boot path that reads `enabledPlugins` does not
 * load the declaration's checks (npm-package-arg, semver).
 */
export const ClaudeTeamSettingsSchema = Type.Object({
  extraKnownMarketplaces: Type.Optional(Type.Record(Type.String(), Type.Object({ source: Type.Object({ source: Type.String() }) }))),
  enabledPlugins: ClaudeSettingsSchema.properties.enabledPlugins,
});
