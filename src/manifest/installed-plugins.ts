/**
 * `installed_plugins.json` version 2: the marketplace install registry. xcsh writes
 * `~/.xcsh/plugins/installed_plugins.json` and `<project>/.xcsh/plugins/installed_plugins.json`;
 * Claude Code writes `~/.claude/plugins/installed_plugins.json` in the same shape
 * (xcsh-host-formats §4.7, §7.7). Unknown keys are kept.
 */
import { Type, type Static } from "@sinclair/typebox";

export const InstalledPluginEntrySchema = Type.Object({
  scope: Type.Optional(Type.Union([Type.Literal("user"), Type.Literal("project"), Type.Literal("local")])),
  installPath: Type.String({ minLength: 1 }),
  version: Type.Optional(Type.String()),
  installedAt: Type.Optional(Type.String()),
  lastUpdated: Type.Optional(Type.String()),
  gitCommitSha: Type.Optional(Type.String()),
  enabled: Type.Optional(Type.Boolean()),
  projectPath: Type.Optional(Type.String()),
});
export type InstalledPluginEntry = Static<typeof InstalledPluginEntrySchema>;

export const InstalledPluginsRegistrySchema = Type.Object({
  version: Type.Number(),
  plugins: Type.Record(Type.String(), Type.Array(Type.Unknown())),
});
/** The registry as read: entries are checked one by one so one bad entry spoils nothing else. */
export type InstalledPluginsRegistry = Static<typeof InstalledPluginsRegistrySchema>;

/** Split `name@marketplace` at the last `@`; `undefined` when either side is empty. */
export function splitPluginId(id: string): { plugin: string; marketplace: string } | undefined {
  const at = id.lastIndexOf("@");
  if (at <= 0 || at === id.length - 1) return undefined;
  return { plugin: id.slice(0, at), marketplace: id.slice(at + 1) };
}
