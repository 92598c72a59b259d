/**
 * `validate` of a team set's files (docs/design/team-sets.md (b)): `xcsh-team.json`,
 * `xcsh-team.lock.json` and `.xcsh/team.local.json`, recognised by name and checked by the readers'
 * own validators, so `validate` reports the code `install` would stop with (`ETEAM_*`), the file and
 * the JSON path. All findings are listed, not only the first. Reads the file (and, for the
 * declaration, Claude Code's settings beside it, whose marketplaces plugins may use); no network.
 */
import path from "node:path";
import { EXIT_CODES, XcshToolsError } from "../core/errors.js";
import { readClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { readJsonText } from "../manifest/json-file.js";
import type { ValidationIssue, ValidationResult } from "../manifest/result.js";
import { TEAM_DECLARATION_FILE, validateTeamDeclaration } from "../manifest/team-declaration.js";
import { parseTeamText } from "../manifest/team-file.js";
import { TEAM_LOCAL_FILE, validateTeamLocal } from "../manifest/team-local.js";
import { TEAM_LOCK_FILE, validateTeamLock } from "../manifest/team-lock.js";
import type { ValidateRun } from "./run.js";

interface TeamFileKind {
  /** The code of a schema issue and of text that is not JSON, as the reader throws it. */
  invalidCode: string;
  hint: string;
  validate(value: unknown, file: string, run: ValidateRun): ValidationResult<unknown>;
}

/** Marketplaces `.claude/settings.json` beside the declaration declares (plugins may name them); its own problems are reported on it. */
function claudeMarketplaces(declaration: string, run: ValidateRun): string[] {
  const root = path.dirname(declaration);
  const file = path.join(root, ".claude", "settings.json");
  try {
    return [...(readClaudeTeamSettings(file, root)?.marketplaces.keys() ?? [])];
  } catch (error) {
    if (!(error instanceof XcshToolsError)) throw error;
    run.error(file, { path: error.path ?? "", code: error.code, message: error.message, hint: error.hint ?? `Fix ${file}.` });
    return [];
  }
}

/** The team files by name. */
export const TEAM_FILES: Record<string, TeamFileKind> = {
  [TEAM_DECLARATION_FILE]: {
    invalidCode: "ETEAM_DECLARATION_INVALID",
    hint: `Fix ${TEAM_DECLARATION_FILE} (docs/file-formats.md, "Team sets").`,
    validate: (value, file, run) => validateTeamDeclaration(value, { otherMarketplaces: claudeMarketplaces(file, run) }),
  },
  [TEAM_LOCK_FILE]: {
    invalidCode: "ETEAM_LOCK_INVALID",
    hint: "The lock is written by xcsh-tools: restore it from git, or run `xcsh-tools install` to write it again.",
    validate: (value) => validateTeamLock(value),
  },
  [TEAM_LOCAL_FILE]: {
    invalidCode: "ETEAM_DECLARATION_INVALID",
    hint: "Fix it or delete it (it holds only your own choices; `xcsh-tools enable|disable --scope local` writes it again).",
    validate: (value) => validateTeamLocal(value),
  },
};

/** An issue under the code the reader would throw: a schema issue (`ETYPE`, ...) takes the file's invalid code, as teamIssueError does. */
function asTeamIssue(issue: ValidationIssue, invalidCode: string): ValidationIssue {
  return Object.hasOwn(EXIT_CODES, issue.code) ? issue : { ...issue, code: invalidCode };
}

/** Check one team file: conflict markers, JSON, then its schema and rules. */
export function checkTeamFile(run: ValidateRun, file: string): void {
  const kind = TEAM_FILES[path.basename(file)];
  if (!kind) return;
  let value: unknown;
  try {
    const text = readJsonText(file);
    if (text === undefined) {
      run.error(file, { path: "", code: "EENTRY_NOT_FOUND", message: `${file} does not exist`, hint: "Create the file or fix the path." });
      return;
    }
    value = parseTeamText(text, file, kind.invalidCode, kind.hint);
  } catch (error) {
    if (!(error instanceof XcshToolsError)) throw error;
    run.error(file, { path: error.path ?? "", code: error.code, message: error.message, hint: error.hint ?? kind.hint });
    return;
  }
  const result = kind.validate(value, file, run);
  run.absorb(file, { issues: result.ok ? [] : result.issues.map((issue) => asTeamIssue(issue, kind.invalidCode)), warnings: result.warnings });
}
