/**
 * The stream check itself (plugins/tarball-check.ts), on archives made in memory: what the
 * headers declare and what the gzip stream really expands to are both counted, so bytes that no
 * entry declares (zeros after the end blocks) still hit the limit; chunks of one byte are read
 * like any others.
 */
import { Readable } from "node:stream";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadTar } from "../../src/plugins/npm-client.js";
import { inspectTarball } from "../../src/plugins/tarball-check.js";
import { pluginEntries, tarBytes } from "../reliability/helpers-tar.js";

const MIB = 1024 * 1024;

async function check(bytes: Buffer, limits: Record<string, number> = {}, chunk = 64 * 1024): Promise<unknown> {
  const tar = await loadTar();
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
  try {
    return await inspectTarball(tar, Readable.from(chunks), { what: "fixture.tgz", limits, requirePackageJson: true });
  } catch (error) {
    return error;
  }
}

describe("inspectTarball counts what the gzip stream expands to", () => {
  it("passes a valid plugin, also read one byte at a time", async () => {
    const tgz = gzipSync(tarBytes(pluginEntries("ok", "ok_tool")));
    expect(await check(tgz)).toMatchObject({ entries: 2 });
    expect(await check(tgz, {}, 1)).toMatchObject({ entries: 2 });
  });

  it("zeros after the end of the archive, declared by no entry, still count against the limit", async () => {
    const tgz = gzipSync(Buffer.concat([tarBytes(pluginEntries("ok", "ok_tool")), Buffer.alloc(4 * MIB)]));
    expect(await check(tgz, { unpackedBytes: MIB })).toMatchObject({ code: "ETARBALL_TOO_LARGE", message: expect.stringContaining("limits.tarballUnpackedBytes") });
    expect(await check(tgz, { unpackedBytes: 8 * MIB })).toMatchObject({ entries: 2 });
  });

  it("an entry whose header declares more than the limit is refused at its header", async () => {
    const tgz = gzipSync(tarBytes([...pluginEntries("ok", "ok_tool"), { name: "package/big.txt", content: "x".repeat(4096) }]));
    expect(await check(tgz, { unpackedBytes: 4096 })).toMatchObject({ code: "ETARBALL_TOO_LARGE" });
  });

  it("not gzip, empty, and gzip of something that is not tar are ETARBALL", async () => {
    expect(await check(Buffer.from("plain text, not gzip"))).toMatchObject({ code: "ETARBALL" });
    expect(await check(Buffer.alloc(0))).toMatchObject({ code: "ETARBALL" });
    expect(await check(gzipSync("not a tar archive at all"))).toMatchObject({ code: "ETARBALL" });
  });
});
