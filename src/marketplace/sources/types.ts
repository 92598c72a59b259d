/**
 * The contract of a catalog source kind (one file per kind, registered in `index.ts`): parse what
 * the user typed into a spec, and fetch the catalog (and, for repositories, the folder that
 * relative plugin sources resolve against) into a scratch folder outside live state.
 */
import type { MarketplaceSourceType } from "../../manifest/marketplaces-registry.js";
import type { LoadedCatalog } from "../catalog.js";
import type { MarketplaceContext } from "../context.js";

/** A parsed marketplace source. `uri` is what `marketplaces.json` records as `sourceUri`. */
export interface CatalogSourceSpec {
  kind: MarketplaceSourceType;
  uri: string;
  /**
   * git kinds: the marketplace is this folder of the repository, not its root (a team set's
   * declared `path`, team.ts `catalogFolderOf`); relative to the clone, checked to stay in it.
   */
  folder?: string;
}

/** What a fetch produced. */
export interface FetchedCatalog {
  loaded: LoadedCatalog;
  /**
   * A folder to keep as the marketplace's cache (a clone's content): relative plugin sources
   * resolve inside it. `undefined` for kinds that only fetch the catalog (local, url).
   */
  contentDir?: string;
  /** The commit the catalog came from (git kinds). */
  commitSha?: string;
  /** url catalogs: sha256 (hex) of the bytes read, which a team lock pins. */
  sha256?: string;
}

export type SourceWorld = Pick<MarketplaceContext, "cwd" | "typedFrom" | "roots" | "env" | "gitTimeoutMs" | "fetchTimeoutMs" | "signal">;

/** One catalog source kind. */
export interface CatalogSource {
  kind: MarketplaceSourceType;
  /** The spec when `input` is of this kind, else `undefined`. */
  parse(input: string, world: SourceWorld): CatalogSourceSpec | undefined;
  /** Fetch into `scratch` (an empty folder of ours); never touches live state. */
  fetch(spec: CatalogSourceSpec, scratch: string, world: SourceWorld): Promise<FetchedCatalog>;
}

/** Split `url#ref`. */
export function splitRef(uri: string): { url: string; ref?: string } {
  const hash = uri.lastIndexOf("#");
  if (hash <= 0) return { url: uri };
  const ref = uri.slice(hash + 1);
  return ref ? { url: uri.slice(0, hash), ref } : { url: uri.slice(0, hash) };
}
