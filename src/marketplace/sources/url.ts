/**
 * Direct catalog URLs: `http(s)://…/x.json`. Only the JSON is downloaded (with the
 * `timeouts.fetchMs` deadline), so such a catalog can only use remote plugin sources (github,
 * url, git-subdir, npm); a relative source is refused at install with that explanation.
 */
import { createHash } from "node:crypto";
import { XcshToolsError } from "../../core/errors.js";
import { redactSecrets } from "../../core/redact.js";
import { checkJsonSize } from "../../manifest/json-file.js";
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
    const shown = redactSecrets(spec.uri);
    const { chunks, bodyFailed } = await fetchWithDeadline(spec.uri, world, {
      headers: { accept: "application/json" },
      goneHint: "The catalog is gone from that address: check the URL, or remove the marketplace.",
      // The user asked for https: a redirect may not hand the catalog over in clear text.
      checkLanded(landed) {
        if (/^https:/i.test(spec.uri) && !/^https:/i.test(landed)) {
          throw new XcshToolsError("ESOURCE_URL", `${shown} redirected to ${redactSecrets(landed)}, which is not https: the catalog is not read`, { hint: "Ask the catalog's owner to serve it over https only, or add the https address it should have." });
        }
      },
      // The size of a JSON file we read (`EJSON_TOO_LARGE`): the server is not ours, its answer is not held past that.
      checkSize: (bytes) => checkJsonSize(bytes, shown),
    });
    const bytes = await readAll(chunks).catch((error: unknown) => {
      throw bodyFailed(error);
    });
    // A catalog from the network: its entries may not name local git URLs.
    return { loaded: parseCatalog(bytes.toString("utf8"), shown, "xcsh", { allowLocal: false }), sha256: createHash("sha256").update(bytes).digest("hex") };
  },
};

async function readAll(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}
