/**
 * The catalog source kinds, a registry keyed by the parsed spec: adding a kind
 * is adding a file and a line here. Classification is first match wins, in this order:
 *
 * | # | input | kind |
 * |---|---|---|
 * | 1 | `http(s)://…` whose path ends in `.json` | url |
 * | 2 | `http(s)://…`, `ssh://…`, `git://…`, `file://…`, `user@host:path` (+ `#ref`) | git |
 * | 3 | `./x`, `../x`, `~/x`, `.`, an absolute path | local |
 * | 4 | `owner/repo`, `github:owner/repo` (+ `#ref`) | github (ambiguous with a folder: refused) |
 *
 * The host rejected `git://` and `../` and took any `a/b` folder for GitHub.
 */
import { XcshToolsError } from "../../core/errors.js";
import { sourceArgError } from "../../core/source-args.js";
import type { MarketplaceSourceType } from "../../manifest/marketplaces-registry.js";
import { gitSource } from "./git.js";
import { githubSource } from "./github.js";
import { localSource } from "./local.js";
import type { CatalogSource, CatalogSourceSpec, SourceWorld } from "./types.js";
import { urlSource } from "./url.js";

export type { CatalogSource, CatalogSourceSpec, FetchedCatalog, SourceWorld } from "./types.js";

/** Every kind, in classification order. */
export const CATALOG_SOURCES: readonly CatalogSource[] = [urlSource, gitSource, localSource, githubSource];

const BY_KIND: Record<MarketplaceSourceType, CatalogSource> = { url: urlSource, git: gitSource, local: localSource, github: githubSource };

/** Classify what the user typed; `ESOURCE_UNKNOWN` (exit 2) when it is no kind. */
export function parseCatalogSource(input: string, world: SourceWorld): CatalogSourceSpec {
  const trimmed = input.trim();
  // Whatever kind it would be, a source that git or a folder lookup could read as an option or a
  // remote helper (`--upload-pack=…`, `ext::sh -c …`, `fd::3`) or that holds control characters is refused.
  // eslint-disable-next-line no-control-regex
  if (trimmed.startsWith("-") || /^[A-Za-z][A-Za-z0-9+.-]*::/.test(trimmed) || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw sourceArgError({ code: "EGIT_URL", problem: `${JSON.stringify(input.slice(0, 200))} is option-shaped, a "<transport>::" remote helper, or holds control characters` }, "Marketplace source");
  }
  for (const source of CATALOG_SOURCES) {
    const spec = source.parse(trimmed, world);
    if (spec) return spec;
  }
  throw new XcshToolsError("ESOURCE_UNKNOWN", `"${input}" is not a marketplace source`, {
    hint: "Use a folder (./path, ~/path, /abs/path), a git URL (https://…, ssh://…, git@host:repo, file://…), owner/repo for GitHub, or an https://…/marketplace.json URL.",
    exitCode: 2,
  });
}

/** The source implementation of a recorded kind. */
export function catalogSourceOf(kind: MarketplaceSourceType): CatalogSource {
  return BY_KIND[kind];
}
