/** `{source: "url", url, ref?, sha?}`: a plugin that is a whole git repository. */
import type { UrlSourceSchema } from "../../manifest/marketplace-catalog.js";
import type { Static } from "../../manifest/typebox.js";
import { cloneSource, gitTargetOf, probeGit } from "./git-common.js";
import type { PluginSourceKind } from "./types.js";

type UrlSource = Static<typeof UrlSourceSchema>;

export const urlPluginSource: PluginSourceKind = {
  kind: "url",
  async fetch(input, scratch, world) {
    const s = input.entry.source as UrlSource;
    return cloneSource(gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }), scratch, world);
  },
  async probe(input, world) {
    const s = input.entry.source as UrlSource;
    return probeGit(gitTargetOf(input, { url: s.url, ref: s.ref, sha: s.sha }), world);
  },
};
