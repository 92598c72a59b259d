/**
 * Archive bombs for the archive cases, written as streams: a tar whose one big entry is zeros,
 * gzipped on the way to disk, never held in memory (1 GiB of zeros gzips to about 1 MiB).
 */
import { createWriteStream } from "node:fs";
import { once } from "node:events";
import { createGzip } from "node:zlib";
import { tarHeader, tarBytes, type TarEntry } from "../reliability/helpers-tar.js";

/**
 * Write `<file>`: a gzipped tar holding `entries` (a valid plugin's files, say), then one file
 * `bigName` of `bigBytes` zeros. Streams; memory stays a few MiB.
 */
export async function writeZeroBomb(file: string, entries: TarEntry[], bigName: string, bigBytes: number): Promise<void> {
  const gzip = createGzip({ level: 9 });
  const out = createWriteStream(file);
  gzip.pipe(out);
  const write = async (chunk: Buffer) => {
    if (!gzip.write(chunk)) await once(gzip, "drain");
  };
  // The small entries, without tarBytes' two zero blocks at the end.
  const head = tarBytes(entries);
  await write(head.subarray(0, head.length - 1024));
  await write(tarHeader({ name: bigName }, bigBytes));
  const zeros = Buffer.alloc(1024 * 1024, 0);
  let left = bigBytes;
  while (left > 0) {
    const n = Math.min(left, zeros.length);
    await write(n === zeros.length ? zeros : zeros.subarray(0, n));
    left -= n;
  }
  const pad = (512 - (bigBytes % 512)) % 512;
  await write(Buffer.alloc(pad + 1024, 0));
  gzip.end();
  await once(out, "close");
}
