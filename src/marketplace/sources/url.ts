/**
 * Direct catalog URLs: `http(s)://…/x.json`. Only the JSON is downloaded (with the
 * `timeouts.fetchMs` deadline), so such a catalog can only use remote plugin sources (github,
 * url, git-subdir, npm); a relative source is refused at install with that explanation.
 */
import { XcshToolsError, errorMessage } from "../../core/errors.js";
import { redactUrl } from "../../core/git.js";
import { parseCatalog } from "../catalog.js";
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
    const shown = redactUrl(spec.uri);
    const timeout = AbortSignal.timeout(world.fetchTimeoutMs);
    const signal = world.signal ? AbortSignal.any([timeout, world.signal]) : timeout;
    let response: Response;
    try {
      response = await fetch(spec.uri, { signal, redirect: "follow", headers: { accept: "application/json" } });
    } catch (error) {
      if (timeout.aborted) {
        throw new XcshToolsError("EFETCH_TIMEOUT", `Fetching ${shown} did not finish within ${world.fetchTimeoutMs} ms`, { hint: "Raise timeouts.fetchMs (or XCSH_TOOLS_FETCH_TIMEOUT_MS), or check the network.", cause: error });
      }
      throw new XcshToolsError("EFETCH", `Cannot fetch ${shown}: ${errorMessage((error as Error).cause ?? error)}`, { hint: "Check the URL and the network.", cause: error });
    }
    if (!response.ok) {
      throw new XcshToolsError(response.status === 404 || response.status === 410 ? "ESOURCE_NOT_FOUND" : "EFETCH", `Cannot fetch ${shown}: HTTP ${response.status} ${response.statusText}`, {
        hint: response.status === 404 || response.status === 410 ? "The catalog is gone from that address: check the URL, or remove the marketplace." : "Retry later, or check the URL.",
      });
    }
    const text = await response.text();
    // A catalog from the network: its entries may not name local git URLs.
    return { loaded: parseCatalog(text, shown, "xcsh", { allowLocal: false }) };
  },
};
