/**
 * `.xcsh/team.local.json`: one teammate's choices about the project's set (docs/design/team-sets.md
 * (b)): switch a declared plugin off or on, its features, non-secret settings. Never committed
 * (`.xcsh/.gitignore`); written by `enable|disable|features|config --scope local`. Unknown keys kept.
 */
import { IssueCollector, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { PluginChoiceFields, pluginKeyIssue } from "./team-declaration.js";
import { readTeamFile } from "./team-file.js";
import { Type, type Static } from "./typebox.js";

export const TEAM_LOCAL_FILE = "team.local.json";

export const LocalPluginSchema = Type.Object(PluginChoiceFields);
export type LocalPlugin = Static<typeof LocalPluginSchema>;

export const TeamLocalSchema = Type.Object({
  version: Type.Literal(1),
  plugins: Type.Optional(Type.Record(Type.String(), LocalPluginSchema)),
});
export type TeamLocal = Static<typeof TeamLocalSchema> & Record<string, unknown>;

/** Field order of a personal entry, for its writer (teamset/edit.ts). */
export const LOCAL_PLUGIN_FIELD_ORDER = Object.keys(PluginChoiceFields);

/** Strict check of the personal file: shape and plugin keys. */
export function validateTeamLocal(value: unknown): ValidationResult<TeamLocal> {
  const out = new IssueCollector();
  const shape = checkSchema(TeamLocalSchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as TeamLocal);
  for (const key of Object.keys(shape.value.plugins ?? {})) {
    const issue = pluginKeyIssue(key, pointer("", "plugins", key));
    if (issue) out.error(issue);
  }
  return out.result(shape.value as TeamLocal);
}

/** Read `<root>/.xcsh/team.local.json`; `undefined` when there is none. */
export function readTeamLocal(file: string): TeamLocal | undefined {
  return readTeamFile(file, validateTeamLocal, "ETEAM_DECLARATION_INVALID", `Fix ${file} or delete it (it holds only your own choices; \`xcsh-tools enable|disable --scope local\` writes it again).`);
}
