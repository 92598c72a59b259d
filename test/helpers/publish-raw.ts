/**
 * Publish a tarball exactly as given (`name@1.0.0`) by npm's publish protocol, by hand: npm pack
 * would never produce the hostile tarballs the security and bad-input suites need.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";

/** Options of `publishRaw`: the package document's fields, and the integrity the registry records. */
export interface PublishRawOptions {
  /** Fields of the version document besides name and version (`type`, `xcsh`, `dependencies`). */
  manifest?: Record<string, unknown>;
  /** The integrity the registry records; the tarball's true one unless a test says otherwise. */
  declaredIntegrity?: string;
}

/** Publish `tgz` as `name@1.0.0` to `reg` (its URL ends with `/`). */
export async function publishRaw(reg: { url: string; token: string }, name: string, tgz: Buffer, options: PublishRawOptions = {}): Promise<void> {
  const file = `${name}-1.0.0.tgz`;
  const response = await fetch(`${reg.url}${encodeURIComponent(name)}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${reg.token}` },
    body: JSON.stringify({
      _id: name,
      name,
      "dist-tags": { latest: "1.0.0" },
      versions: {
        "1.0.0": {
          name,
          version: "1.0.0",
          ...options.manifest,
          _id: `${name}@1.0.0`,
          dist: {
            tarball: `${reg.url}${name}/-/${file}`,
            shasum: createHash("sha1").update(tgz).digest("hex"),
            integrity: options.declaredIntegrity ?? `sha512-${createHash("sha512").update(tgz).digest("base64")}`,
          },
        },
      },
      _attachments: { [file]: { content_type: "application/octet-stream", data: tgz.toString("base64"), length: tgz.length } },
    }),
  });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
}
