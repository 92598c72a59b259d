/**
 * Direct catalog URLs: `http(s)://…/x.json`. Only the JSON is downloaded (with the
 * `timeouts.fetchMs` deadline), so such a catalog can only use remote plugin sources (github,
 * url, git-subdir, npm); a relative source is refused at install with that explanation.
 */
import { redactUrl } from "../../core/git.js";
import { parseCatalog } from "../catalog.js";
import { fetchWithDeadline } from "../fetch-deadline.js";
import type { CatalogSource } from "./types.js";

export const urlSource: CatalogSource = {
  kind: "url",
  parse(input) {
    if (!/^https?:\/\//i.test(input)) return undefined;
    try {
      return new URL(input).pathname.toLowerCase().endsWith(".json") ? { kind: "url", uri: input } : undefined;
    } catch {
      return undefined;
    }
  },
  async fetch(spec, _scratch, world) {
    const { response, bodyFailed } = await fetchWithDeadline(spec.uri, world, { headers: { accept: "application/json" }, goneHint: "The catalog is gone from that address: check the URL, or remove the marketplace." });
    const text = await response.text().catch((error: unknown) => {
      throw bodyFailed(error);
    });
    // A catalog from the network: its entries may not name local git URLs.
    return { loaded: parseCatalog(text, redactUrl(spec.uri), "xcsh", { allowLocal: false }) };
  },
};
