/**
 * A project's Claude Code settings read as part of its team set (docs/design/team-sets.md (b)):
 * `.claude/settings.json` `extraKnownMarketplaces` and `enabledPlugins`, and
 * `.claude/settings.local.json` (a personal opt-out). Read only, in a trusted project.
 */
import path from "node:path";
import { ClaudeTeamSettingsSchema } from "./claude-settings.js";
import { IssueCollector, describeValue, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { DeclaredSourceSchema, SOURCE_FIELD_ORDER, declaredSourceIssue, type DeclaredSource } from "./team-declaration.js";
import { readTeamFile } from "./team-file.js";

/** What a Claude settings file contributes to a set. */
export interface ClaudeTeamSettings {
  file: string;
  /** `extraKnownMarketplaces`, as sources a committed declaration could hold (relative `directory` paths). */
  marketplaces: Map<string, DeclaredSource>;
  /** `enabledPlugins`: a list of versions means on. */
  enabledPlugins: Map<string, boolean>;
}

const CLAUDE_SOURCE_KINDS = new Set(["github", "git", "url", "directory"]);

/**
 * Check a project's Claude settings for a set. A source a committed set cannot use (`npm`,
 * `settings`, `hostPattern`, `file`, a folder outside `root`) is `ETEAM_SOURCE`; a `directory` given
 * as an absolute path inside `root` becomes relative to it (Claude Code writes absolute ones).
 */
export function validateClaudeTeamSettings(value: unknown, root: string, file: string): ValidationResult<ClaudeTeamSettings> {
  const out = new IssueCollector();
  const shape = checkSchema(ClaudeTeamSettingsSchema, value);
  out.absorb(shape);
  const result: ClaudeTeamSettings = { file, marketplaces: new Map(), enabledPlugins: new Map() };
  if (!shape.ok) return out.result(result);
  const refuse = (at: string, why: string, name: string, found: unknown) =>
    out.error({ path: at, code: "ETEAM_SOURCE", message: `${at}: ${why}`, expected: "a github, git, url or directory (inside the project) source", found: describeValue(found), hint: `Declare "${name}" in xcsh-team.json (it wins over .claude/settings.json), or switch its plugins off there.` });
  for (const [name, entry] of Object.entries(shape.value.extraKnownMarketplaces ?? {})) {
    const at = pointer("", "extraKnownMarketplaces", name, "source");
    const raw = entry.source as Record<string, unknown>;
    const kind = String(raw.source);
    if (!CLAUDE_SOURCE_KINDS.has(kind)) {
      refuse(at, `the "${kind}" marketplace source is not supported in a team set`, name, kind);
      continue;
    }
    const picked = Object.fromEntries(SOURCE_FIELD_ORDER[kind as DeclaredSource["source"]].filter((f) => raw[f] !== undefined).map((f) => [f, raw[f]]));
    if (kind === "directory" && typeof raw.path === "string" && path.isAbsolute(raw.path)) {
      const relative = path.relative(root, raw.path);
      if (relative.startsWith("..") || path.isAbsolute(relative)) {
        refuse(pointer(at, "path"), `the directory ${JSON.stringify(raw.path)} is outside the project ${root}`, name, raw.path);
        continue;
      }
      picked.path = `./${relative.split(path.sep).join("/")}`.replace(/\/$/, "");
    }
    const checked = checkSchema(DeclaredSourceSchema, picked, at);
    if (!checked.ok) {
      out.absorb(checked);
      continue;
    }
    const issue = declaredSourceIssue(checked.value, at);
    if (issue) out.error(issue);
    else result.marketplaces.set(name, checked.value);
  }
  for (const [id, on] of Object.entries(shape.value.enabledPlugins ?? {})) result.enabledPlugins.set(id, Array.isArray(on) ? true : on);
  return out.result(result);
}

/** Read a project's `.claude/settings.json` or `.claude/settings.local.json` for its set; `undefined` when absent. Never written. */
export function readClaudeTeamSettings(file: string, root: string): ClaudeTeamSettings | undefined {
  return readTeamFile(file, (value) => validateClaudeTeamSettings(value, root, file), "ETEAM_DECLARATION_INVALID", `Fix ${file} (Claude Code's settings; xcsh-tools only reads it).`);
}
