/** `{source: "url", url, ref?, sha?}`: a plugin that is a whole git repository. */
import type { UrlSourceSchema } from "../../manifest/marketplace-catalog.js";
import type { Static } from "../../manifest/typebox.js";
import { cloneSource, probeGit } from "./git-common.js";
import type { PluginSourceKind } from "./types.js";

type UrlSource = Static<typeof UrlSourceSchema>;

export const urlPluginSource: PluginSourceKind = {
  kind: "url",
  fetch({ entry }, scratch, world) {
    const s = entry.source as UrlSource;
    return cloneSource(s.url, s, scratch, world);
  },
  probe({ entry }, world) {
    const s = entry.source as UrlSource;
    return probeGit(s.url, s, world);
  },
};
