/**
 * The marketplace engine: catalogs of plugins (xcsh's `.xcsh-plugin/marketplace.json` and Claude
 * Code's `.claude-plugin/marketplace.json`) from folders, git repositories, GitHub and catalog
 * URLs, and the plugins they list, installed in user or project scope where the host's discovery
 * finds them (`installed_plugins.json`).
 *
 * Model, in one paragraph. A marketplace is an entry of `marketplaces.json` plus a cache folder
 * `<cache>/marketplaces/<name>/` holding the checked catalog (and, for git, the repository's
 * content without `.git`). An installed plugin is an entry of `installed_plugins.json` pointing
 * at a content-keyed cache folder `<cache>/plugins/<mkt>___<plugin>___<version>-<hash12>`.
 * Every change is planned (plan.ts, pure), prepared outside live state (fetch, copy, hash,
 * validate), then staged and committed in one journaled transaction under the plugins lock
 * (the install engine's `runMutation`), so it happens whole or not at all. Its error codes are
 * listed with all the others in core/errors.ts (`EXIT_CODES`) and docs/error-codes.md.
 */
export { type MarketplaceContext, type Scope, type ExecutableRequest } from "./context.js";
export { addMarketplace } from "./marketplace-add.js";
export { removeMarketplace } from "./marketplace-remove.js";
export { updateMarketplaces, type MarketplaceUpdateReport } from "./marketplace-update.js";
export { type MarketplaceChangeReport, type CatalogChanges } from "./marketplace-cache.js";
export { listMarketplaces, discoverPlugins, searchPlugins, type MarketplaceRow, type OfferedPlugin } from "./browse.js";
export { listClaudeMarketplaces, importClaudeMarketplaces, type ClaudeMarketplaceRow, type ClaudeImportRow } from "./claude-marketplaces.js";
export {
  isMarketplaceTarget,
  loadMarketplaceTargets,
  installFromMarketplace,
  uninstallMarketplacePlugin,
  setMarketplacePluginEnabled,
  updateMarketplacePlugins,
  outdatedMarketplacePlugins,
  type MarketplaceTargets,
  type PluginChangeReport,
  type OutdatedRow,
} from "./plugins.js";
export { listMarketplacePlugins, type InstalledRow } from "./installed-list.js";
export { parseCatalogSource } from "./sources/index.js";
export { projectFilesNotLoaded } from "./state.js";
export type { PlanItem } from "./plan.js";
export { catalogNameOf, fetchDeclaredMarketplace, prepareDeclaredPlugin, stagePreparedPlugins, executableChangesOf, type FetchedDeclaredMarketplace, type PreparedPlugin, type CatalogSourceSpec } from "./team.js";
export { hashTree, makeScratch } from "./tree.js";
