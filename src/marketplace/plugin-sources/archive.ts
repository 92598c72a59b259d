/**
 * `{source: "archive", url, sha256?, integrity?}`: a plugin published as a `.tar.gz` (Claude Code
 * added the kind in 2026). The same rules as every package tarball we install
 * (plugins/tarball-check.ts): the bytes are downloaded into scratch (at most the unpacked-size
 * limit, within `timeouts.fetchMs`), checked against the entry's `sha256` or `integrity` when it
 * has one (`EINTEGRITY`), then read to the end through the streaming check (size, entry count,
 * path length, no absolute path, no `..`, no link out, no device: `ETARBALL_TOO_LARGE`,
 * `ETARBALL_UNSAFE`, `ETARBALL`) before anything is extracted. Only gzip-compressed tar is
 * accepted; a zip is refused with `ETARBALL` saying so. An archive whose only top entry is a
 * folder (GitHub's release archives, `npm pack`) is that folder's plugin.
 */
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, rm } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import type { Static } from "../../manifest/typebox.js";
import { XcshToolsError } from "../../core/errors.js";
import { redactSecrets } from "../../core/redact.js";
import { archiveUrlProblem, type ArchiveSourceSchema } from "../../manifest/marketplace-catalog.js";
import { loadTar } from "../../plugins/npm-client.js";
import { TARBALL_CHECK_OPTION, inspectTarball, tarballLimitsOf, type TarballLimits } from "../../plugins/tarball-check.js";
import { catalogOriginOf } from "../catalog.js";
import { fetchWithDeadline } from "../fetch-deadline.js";
import { assertEntryArg } from "./git-common.js";
import type { PluginSourceInput, PluginSourceKind, PluginWorld } from "./types.js";

type ArchiveSource = Static<typeof ArchiveSourceSchema>;

function limitsOf(world: PluginWorld): TarballLimits {
  return tarballLimitsOf((world.npmOptions?.[TARBALL_CHECK_OPTION] as { limits?: Partial<TarballLimits> } | undefined)?.limits);
}

function checked(input: PluginSourceInput): ArchiveSource {
  const s = input.entry.source as ArchiveSource;
  assertEntryArg(input, "url", archiveUrlProblem(s.url, catalogOriginOf(input.marketplace)));
  return s;
}

/** Download `url` into `file`, refusing more than `maxBytes`; returns the hashes of the bytes. */
async function download(url: string, file: string, maxBytes: number, world: PluginWorld, what: string, allowLocal: boolean): Promise<Record<"sha256" | "sha384" | "sha512", Buffer>> {
  const { chunks, bodyFailed } = await fetchWithDeadline(url, world, {
    what,
    goneHint: "The archive is gone from that address: ask the marketplace owner to fix the entry.",
    // A redirect may not downgrade to a transport the entry itself could not name.
    checkLanded(landedUrl) {
      const landed = archiveUrlProblem(landedUrl, { allowLocal });
      if (landed) throw new XcshToolsError("ESOURCE_URL", `${what}: ${redactSecrets(url)} redirected to a refused address: ${landed.problem}`, { hint: "Ask the marketplace owner for an https:// archive URL." });
    },
    checkSize(bytes, declared) {
      if (bytes <= maxBytes) return;
      const size = declared ? `is ${bytes} bytes, more than the limit of ${maxBytes}` : `is more than the limit of ${maxBytes} bytes`;
      throw new XcshToolsError("ETARBALL_TOO_LARGE", `${what}: refused, the archive ${size} (setting limits.tarballUnpackedBytes)`, { hint: "Nothing was installed. If you trust it, raise limits.tarballUnpackedBytes.", exitCode: 2 });
    },
  });
  const hashes = { sha256: createHash("sha256"), sha384: createHash("sha384"), sha512: createHash("sha512") };
  const hashed = async function* (source: AsyncIterable<Uint8Array>) {
    for await (const chunk of source) {
      for (const h of Object.values(hashes)) h.update(chunk);
      yield chunk;
    }
  };
  try {
    await pipeline(chunks, hashed, createWriteStream(file));
  } catch (error) {
    throw bodyFailed(error, path.dirname(file));
  }
  return { sha256: hashes.sha256.digest(), sha384: hashes.sha384.digest(), sha512: hashes.sha512.digest() };
}

/** The entry's pin against the downloaded bytes: `EINTEGRITY` when they differ. */
function verify(s: ArchiveSource, hashes: Record<"sha256" | "sha384" | "sha512", Buffer>, what: string): void {
  const refuse = (expected: string, got: string) =>
    new XcshToolsError("EINTEGRITY", `${what}: the downloaded archive does not match the catalog's ${expected.split("-")[0]} (expected ${expected}, got ${got})`, { hint: "Nothing was installed. The server sent other bytes than the marketplace pinned: tell the marketplace owner." });
  if (s.sha256 !== undefined && s.sha256.toLowerCase() !== hashes.sha256.toString("hex")) throw refuse(s.sha256.toLowerCase(), hashes.sha256.toString("hex"));
  if (s.integrity !== undefined) {
    const [algo, digest] = s.integrity.split("-", 2) as ["sha256" | "sha384" | "sha512", string];
    const got = hashes[algo].toString("base64");
    if (got !== digest) throw refuse(s.integrity, `${algo}-${got}`);
  }
}

async function isZip(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(4);
    await handle.read(head, 0, 4, 0);
    return head[0] === 0x50 && head[1] === 0x4b;
  } finally {
    await handle.close();
  }
}

export const archivePluginSource: PluginSourceKind = {
  kind: "archive",
  async fetch(input, scratch, world) {
    const s = checked(input);
    const what = `Plugin "${input.entry.name}" of marketplace "${input.marketplace.name}" (archive ${redactSecrets(s.url)})`;
    const limits = limitsOf(world);
    const file = path.join(scratch, "archive.tar.gz");
    const hashes = await download(s.url, file, limits.unpackedBytes, world, what, catalogOriginOf(input.marketplace).allowLocal);
    verify(s, hashes, what);
    if (await isZip(file)) throw new XcshToolsError("ETARBALL", `${what}: a zip archive; only .tar.gz archives are supported`, { hint: "Ask the marketplace owner to publish the plugin as a .tar.gz (or a git repository)." });
    const tar = await loadTar();
    await inspectTarball(tar, createReadStream(file), { what, limits });
    const root = path.join(scratch, "archive");
    await mkdir(root);
    // Checked above; node-tar's own refusals (absolute paths, `..`) stay on as a second guard.
    await tar.x({ file, cwd: root, strict: true, preservePaths: false, preserveOwner: false, noMtime: true } as never);
    await rm(file, { force: true });
    const top = await readdir(root, { withFileTypes: true });
    const dir = top.length === 1 && top[0]!.isDirectory() ? path.join(root, top[0]!.name) : root;
    return { dir, within: root, archiveSha256: hashes.sha256.toString("hex") };
  },
};
