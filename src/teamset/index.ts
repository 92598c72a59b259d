/**
 * The team-set engine (docs/design/team-sets.md): a project's declared plugin set, its lock and the
 * host files generated from them. Between marketplace and scaffold in the engine order; WP3 adds
 * resolving, fetching and restoring here, WP4 the commands. The formats themselves are in
 * manifest/team-*.ts, the paths in core/paths.ts `teamPaths`.
 */

export type { EffectiveSet, Satisfaction, SatisfactionState, SetPlugin, TeamWarning, Who } from "../manifest/team-set.js";
export { buildEffectiveSet, type SetInputs } from "./set.js";
export { isSatisfied, marketplacePluginVerdict, marketplaceVerdict, npmGitUrlOf, npmVerdict, satisfies, type SatisfyFacts } from "./satisfy.js";
export { formatLock, isCanonicalLock, mergeLockSides, parseConflictedLock, parseLock, splitConflictSides, type LockMergeChoice, type LockMergeOptions } from "./lock-format.js";
export { GITIGNORE_LINES, GITIGNORE_TEXT, missingGitignoreLines, renderHostFiles, type HostFileInputs, type HostFiles, type MarketplaceInstall } from "./host-files.js";
export { declaredSourceOf, editDeclaration, editLocal, formatDeclaration, formatLocal, type DeclarationEdit, type EditContext, type PluginEdit } from "./edit.js";
export { loadTeamSet, type LoadTeamSetOptions } from "./load.js";
export { catalogSpecOf, lockTextIfChanged, resolveNpmPlugin, resolveTeamLock, type ResolvedLock, type TeamWorld } from "./resolve.js";
export { restoreTeamSet, type OptOut, type RestoreOptions, type RestoreReport, type SecretNeeded, type TeamEdit, type WouldRun } from "./restore.js";
export { registryVersions, teamOutdated, type TeamOutdatedRow } from "./outdated.js";
export { planTeamUpdate, type TeamUpdateEntry, type TeamUpdateOptions, type TeamUpdatePlan } from "./update.js";
