/**
 * `installed_plugins.json` version 2: the marketplace install registry. xcsh writes
 * `~/.xcsh/plugins/installed_plugins.json` and `<project>/.xcsh/plugins/installed_plugins.json`;
 * Claude Code writes `~/.claude/plugins/installed_plugins.json` in the same shape. Unknown keys are kept.
 *
 * Claude's file is read, never written, and tolerated as it is (`version: "unknown"`, `isLocal`,
 * `projectPath`); `validateInstalledPlugins(v, {flavour: "claude"})` therefore reports fewer
 * rules as errors than the xcsh flavour, which we write ourselves.
 */
import path from "node:path";
import { Type, type Static } from "./typebox.js";
import { pluginIdProblem } from "./names.js";
import { IssueCollector, describeValue, isRecord, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

export const InstalledPluginEntrySchema = Type.Object({
  scope: Type.Optional(Type.Union([Type.Literal("user"), Type.Literal("project"), Type.Literal("local")])),
  installPath: Type.String({ minLength: 1 }),
  version: Type.Optional(Type.String()),
  installedAt: Type.Optional(Type.String()),
  lastUpdated: Type.Optional(Type.String()),
  gitCommitSha: Type.Optional(Type.String()),
  enabled: Type.Optional(Type.Boolean()),
  projectPath: Type.Optional(Type.String()),
  /** Claude Code: the plugin is used in place (a local marketplace). */
  isLocal: Type.Optional(Type.Boolean()),
  /** Installed as a dependency of another plugin, not asked for by name (Claude Code's field). */
  auto: Type.Optional(Type.Boolean()),
});
export type InstalledPluginEntry = Static<typeof InstalledPluginEntrySchema>;

export const InstalledPluginsRegistrySchema = Type.Object({
  version: Type.Number(),
  plugins: Type.Record(Type.String(), Type.Array(Type.Unknown())),
});
/** The registry as read: entries are checked one by one so one bad entry spoils nothing else. */
export type InstalledPluginsRegistry = Static<typeof InstalledPluginsRegistrySchema>;

/**
 * Whether `spec` has the shape of a marketplace plugin id at all (`plugin@marketplace`: an `@`
 * after the first character, not a scoped npm name). Cheap, so a command can skip the marketplace
 * modules and their state for specs that can only be npm specs.
 */
export function mayNameMarketplacePlugin(spec: string): boolean {
  return !spec.startsWith("@") && spec.lastIndexOf("@") > 0;
}

/** Split `name@marketplace` at the last `@`; `undefined` when either side is empty. */
export function splitPluginId(id: string): { plugin: string; marketplace: string } | undefined {
  const at = id.lastIndexOf("@");
  if (at <= 0 || at === id.length - 1) return undefined;
  return { plugin: id.slice(0, at), marketplace: id.slice(at + 1) };
}

const ENTRY_KEYS = Object.keys(InstalledPluginEntrySchema.properties);
const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Strict check of a registry; `flavour` says who writes it (xcsh, or Claude Code: read only). */
export function validateInstalledPlugins(
  value: unknown,
  options: { flavour?: "xcsh" | "claude" } = {},
): ValidationResult<InstalledPluginsRegistry> {
  const flavour = options.flavour ?? "xcsh";
  const out = new IssueCollector();
  const shape = checkSchema(InstalledPluginsRegistrySchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as InstalledPluginsRegistry);
  const registry = shape.value;
  if (registry.version !== 2) {
    out.error({ path: "/version", code: "EFORMAT_VERSION", message: `/version: expected 2, found ${registry.version}`, expected: "2", found: String(registry.version), hint: "This file was written by an incompatible tool version; move it away and reinstall the plugins." });
  }
  if (isRecord(value)) out.warnings.push(...unknownKeyWarnings(value, ["version", "plugins"], "", { onlyTypos: true, what: "installed_plugins.json" }));
  for (const [id, entries] of Object.entries(registry.plugins)) {
    const idAt = pointer("", "plugins", id);
    const problem = pluginIdProblem(id);
    if (problem) {
      const issue = { path: idAt, code: "EPLUGIN_ID", message: `${idAt}: plugin id "${id}" is invalid: ${problem}`, expected: '"name@marketplace"', found: JSON.stringify(id), hint: "Uninstall the plugin and install it again by name@marketplace." };
      // Claude Code allows names we would reject (capitals, underscores); only a missing @ breaks reading.
      if (flavour === "claude" && splitPluginId(id)) out.warn(issue);
      else out.error(issue);
    }
    if (entries.length === 0) out.warn({ path: idAt, code: "EEMPTY_ENTRY_LIST", message: `${idAt}: no entries; the id is installed nowhere`, hint: "Remove the id." });
    const seen = new Set<string>();
    entries.forEach((entry, i) => {
      const at = pointer(idAt, i);
      const checked = checkSchema(InstalledPluginEntrySchema, entry, at);
      out.absorb(checked);
      if (!checked.ok) return;
      const e = checked.value;
      if (isRecord(entry)) out.warnings.push(...unknownKeyWarnings(entry, ENTRY_KEYS, at, { onlyTypos: true, what: "an install entry" }));
      if (!path.isAbsolute(e.installPath)) {
        out.error({ path: pointer(at, "installPath"), code: "EINSTALL_PATH", message: `${pointer(at, "installPath")}: must be an absolute path, found ${describeValue(e.installPath)}`, expected: "an absolute path", found: describeValue(e.installPath), hint: "Reinstall the plugin so the path is recorded in full." });
      }
      if (seen.has(e.installPath)) out.warn({ path: at, code: "EDUPLICATE_ENTRY", message: `${at}: installPath ${e.installPath} is listed twice for ${id}`, hint: "Remove the repeated entry." });
      seen.add(e.installPath);
      for (const field of ["installedAt", "lastUpdated"] as const) {
        const date = e[field];
        if (date !== undefined && !ISO_DATE_RE.test(date)) out.warn({ path: pointer(at, field), code: "EDATE", message: `${pointer(at, field)}: "${date}" is not an ISO 8601 date-time`, expected: "e.g. 2026-01-31T12:00:00.000Z", found: JSON.stringify(date), hint: "Write dates with new Date().toISOString()." });
      }
      if (e.gitCommitSha !== undefined && !/^[0-9a-f]{7,40}$/.test(e.gitCommitSha)) {
        out.warn({ path: pointer(at, "gitCommitSha"), code: "ESHA", message: `${pointer(at, "gitCommitSha")}: "${e.gitCommitSha}" is not a git commit sha`, found: JSON.stringify(e.gitCommitSha), hint: "Record the full sha (git rev-parse HEAD) or drop the field." });
      }
      if (flavour === "xcsh" && (e.scope === "project" || e.scope === "local") && e.projectPath !== undefined && !path.isAbsolute(e.projectPath)) {
        out.error({ path: pointer(at, "projectPath"), code: "EINSTALL_PATH", message: `${pointer(at, "projectPath")}: must be an absolute path`, found: describeValue(e.projectPath), hint: "Reinstall the plugin from inside the project." });
      }
    });
  }
  return out.result(registry);
}
