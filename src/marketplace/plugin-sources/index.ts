/**
 * Plugin source kinds of catalog entries, a registry keyed by the entry's parsed `source`
 * (`sourceKind` of the catalog schema): relative paths, `url`, `github`, `git-subdir`, `npm`,
 * `archive`. Kinds that would run a command are refused (`ESOURCE_COMMAND`).
 */
import { XcshToolsError } from "../../core/errors.js";
import { isRecord } from "../../manifest/result.js";
import { COMMAND_SOURCE_KINDS, sourceKind } from "../../manifest/marketplace-catalog.js";
import { archivePluginSource } from "./archive.js";
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
  archive: archivePluginSource,
};

/** The kind that fetches `source`; `ESOURCE_KIND` for one we do not know. */
export function pluginSourceOf(source: unknown, pluginName: string): PluginSourceKind {
  const kind = sourceKind(source);
  const found = kind ? KINDS[kind] : undefined;
  if (!found) {
    const named = isRecord(source) && typeof source.source === "string" ? source.source : undefined;
    if (named !== undefined && COMMAND_SOURCE_KINDS.includes(named)) {
      throw new XcshToolsError("ESOURCE_COMMAND", `Plugin "${pluginName}" has a "${named}" source, which would run a command to produce the plugin; xcsh-tools never runs what a catalog writes`, {
        hint: "Ask the marketplace owner to publish the built plugin (a git repository, an npm package or a .tar.gz archive).",
        exitCode: 2,
      });
    }
    throw new XcshToolsError("ESOURCE_KIND", `Plugin "${pluginName}" has a source of unknown kind`, {
      hint: 'Sources are "./path", {"source": "github"|"url"|"git-subdir"|"npm"|"archive", …}.',
    });
  }
  return found;
}
