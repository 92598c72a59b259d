/**
 * The contract of a plugin source kind of a catalog entry (one file per kind, registered in
 * `index.ts`): fetch the plugin's folder into a scratch folder, and probe its current revision
 * cheaply for `outdated` (a sha pin, the remote ref's tip, the npm version, or a content hash).
 */
import type { MarketplaceCatalog, MarketplacePluginEntry } from "../../manifest/marketplace-catalog.js";
import type { MarketplaceEntry } from "../../manifest/marketplaces-registry.js";
import type { MarketplaceContext } from "../context.js";

/** Which entry of which marketplace, and where its relative sources resolve. */
export interface PluginSourceInput {
  entry: MarketplacePluginEntry;
  catalog: MarketplaceCatalog;
  marketplace: MarketplaceEntry;
  /** The folder relative sources resolve in: the clone cache (git), the live folder (local); none for url. */
  root: string | undefined;
  /** Whether an in-repo plugin of a local folder records the commit checked out there (default true, as Claude Code does). */
  folderCommit?: boolean;
}

/** A fetched plugin folder (inside the scratch folder, or the live source for relative ones). */
export interface FetchedPlugin {
  dir: string;
  /** Symlinks inside `dir` may point anywhere inside this folder. */
  within: string;
  gitCommitSha?: string;
  /** The version the source itself resolved (npm). */
  version?: string;
  /** npm: the integrity of the package extracted. */
  integrity?: string;
  /** The sha256 of a downloaded archive (the version of an archive plugin that names none). */
  archiveSha256?: string;
}

/** What a plugin's source currently offers, for update checks. */
export interface Revision {
  gitCommitSha?: string;
  version?: string;
  /** Content hash of the folder, when the probe had to look at the content. */
  contentHash?: string;
}

export type PluginWorld = Pick<MarketplaceContext, "cwd" | "roots" | "env" | "gitTimeoutMs" | "fetchTimeoutMs" | "signal" | "npmOptions">;

/** One plugin source kind. */
export interface PluginSourceKind {
  kind: string;
  fetch(input: PluginSourceInput, scratch: string, world: PluginWorld): Promise<FetchedPlugin>;
  /** The current revision without a full fetch; `undefined`: fetch and hash instead. */
  probe?(input: PluginSourceInput, world: PluginWorld): Promise<Revision | undefined>;
}
