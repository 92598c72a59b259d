/**
 * Reading a project's set files into the effective set (the files are validated by their readers
 * in manifest/; the merge is set.ts).
 */
import { teamPaths } from "../core/paths.js";
import { readClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { readTeamDeclaration, type TeamDeclaration } from "../manifest/team-declaration.js";
import { readTeamLocal, type TeamLocal } from "../manifest/team-local.js";
import type { EffectiveSet } from "../manifest/team-set.js";
import { buildEffectiveSet } from "./set.js";

/** Options of `loadTeamSet`. */
export interface LoadTeamSetOptions {
  /** The host's config folder name (`PI_CONFIG_DIR`), `.xcsh` by default. */
  configDirName?: string;
  /** npm plugins the user switched off for themselves: name → their runtime lock file. */
  userDisabled?: ReadonlyMap<string, string>;
  /** The declaration as a `--scope project` change is about to write it (read from the file otherwise). */
  declaration?: TeamDeclaration;
  /** The personal file as a `--scope local` change is about to write it. */
  local?: TeamLocal;
}

/**
 * Read a project's set files and merge them: Claude's project settings first (their marketplaces
 * count as declared), then xcsh-team.json, the personal file and Claude's local settings.
 * `undefined` when the project declares nothing (neither xcsh-team.json nor Claude's settings).
 * Only for a trusted project: the caller checks trust before (`EUNTRUSTED_PROJECT`).
 */
export function loadTeamSet(root: string, options: LoadTeamSetOptions = {}): EffectiveSet | undefined {
  const paths = teamPaths(root, options.configDirName);
  const claude = readClaudeTeamSettings(paths.claudeSettings, root);
  const doc = options.declaration ?? readTeamDeclaration(paths.declaration, { otherMarketplaces: claude?.marketplaces.keys() ?? [] });
  if (!doc && !claude) return undefined;
  const local = options.local ?? readTeamLocal(paths.local);
  const claudeLocal = readClaudeTeamSettings(paths.claudeLocalSettings, root);
  return buildEffectiveSet({
    root,
    ...(doc ? { declaration: { file: paths.declaration, doc } } : {}),
    ...(claude ? { claude } : {}),
    ...(claudeLocal ? { claudeLocal } : {}),
    ...(local ? { local: { file: paths.local, doc: local } } : {}),
    ...(options.userDisabled ? { userDisabled: options.userDisabled } : {}),
  });
}
