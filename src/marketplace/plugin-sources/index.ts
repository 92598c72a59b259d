/**
 * Plugin source kinds of catalog entries, a registry keyed by the entry's parsed `source`
 * (`sourceKind` of the catalog schema): relative paths, `url`, `github`, `git-subdir`, `npm`.
 */
import { XcshToolsError } from "../../core/errors.js";
import { sourceKind } from "../../manifest/marketplace-catalog.js";
import { gitSubdirPluginSource } from "./git-subdir.js";
import { githubPluginSource } from "./github.js";
import { npmPluginSource } from "./npm.js";
import { relativeSource } from "./relative.js";
import type { PluginSourceKind } from "./types.js";
import { urlPluginSource } from "./url.js";

export type { FetchedPlugin, PluginSourceInput, PluginSourceKind, PluginWorld, Revision } from "./types.js";

const KINDS: Record<string, PluginSourceKind> = {
  relative: relativeSource,
  url: urlPluginSource,
  github: githubPluginSource,
  "git-subdir": gitSubdirPluginSource,
  npm: npmPluginSource,
};

/** The kind that fetches `source`; `ESOURCE_KIND` for one we do not know. */
export function pluginSourceOf(source: unknown, pluginName: string): PluginSourceKind {
  const kind = sourceKind(source);
  const found = kind ? KINDS[kind] : undefined;
  if (!found) {
    throw new XcshToolsError("ESOURCE_KIND", `Plugin "${pluginName}" has a source of unknown kind`, {
      hint: 'Sources are "./path", {"source": "github"|"url"|"git-subdir"|"npm", …}.',
    });
  }
  return found;
}
