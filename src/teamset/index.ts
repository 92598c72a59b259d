/**
 * The team-set engine (docs/design/team-sets.md): a project's declared plugin set, its lock and the
 * host files generated from them. Between marketplace and scaffold in the engine order; WP3 adds
 * resolving, fetching and restoring here, WP4 the commands. The formats themselves are in
 * manifest/team-*.ts, the paths in core/paths.ts `teamPaths`.
 */
import { teamPaths } from "../core/paths.js";
import { readClaudeTeamSettings } from "../manifest/claude-team-settings.js";
import { readTeamDeclaration } from "../manifest/team-declaration.js";
import { readTeamLocal } from "../manifest/team-local.js";
import type { EffectiveSet } from "../manifest/team-set.js";
import { buildEffectiveSet } from "./set.js";

export type { EffectiveSet, Satisfaction, SatisfactionState, SetPlugin, TeamWarning, Who } from "../manifest/team-set.js";
export { buildEffectiveSet, type SetInputs } from "./set.js";
export { isSatisfied, marketplacePluginVerdict, marketplaceVerdict, npmGitUrlOf, npmVerdict, satisfies, type SatisfyFacts } from "./satisfy.js";
export { formatLock, isCanonicalLock, mergeLockSides, parseConflictedLock, parseLock, splitConflictSides, type LockMergeChoice, type LockMergeOptions } from "./lock-format.js";
export { GITIGNORE_LINES, GITIGNORE_TEXT, missingGitignoreLines, renderHostFiles, type HostFileInputs, type HostFiles, type MarketplaceInstall } from "./host-files.js";
export { editDeclaration, editLocal, formatDeclaration, formatLocal, type DeclarationEdit, type EditContext, type PluginEdit } from "./edit.js";

/** Options of `loadTeamSet`. */
export interface LoadTeamSetOptions {
  /** The host's config folder name (`PI_CONFIG_DIR`), `.xcsh` by default. */
  configDirName?: string;
  /** npm plugins the user switched off for themselves: name → their runtime lock file. */
  userDisabled?: ReadonlyMap<string, string>;
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
  const doc = readTeamDeclaration(paths.declaration, { otherMarketplaces: claude?.marketplaces.keys() ?? [] });
  if (!doc && !claude) return undefined;
  const local = readTeamLocal(paths.local);
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
