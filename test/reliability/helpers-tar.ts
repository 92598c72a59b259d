/**
 * Hand-written tar archives for the hostile-tarball cases. node-tar (and so pacote) refuses to
 * *create* the entries we need (`../` names, absolute names, links out of the package), so the
 * ustar headers are written here byte by byte: 512-byte header, data padded to 512, two zero
 * blocks at the end, then gzip.
 */
import { gzipSync } from "node:zlib";

/** One archive entry: a file (default), a symlink or a hard link. */
export interface TarEntry {
  name: string;
  type?: "file" | "symlink" | "hardlink" | "dir" | "chardev" | "fifo";
  content?: string;
  /** Target of a link. */
  linkname?: string;
  mode?: number;
}

function field(buf: Buffer, offset: number, length: number, value: string): void {
  buf.write(value.slice(0, length), offset, length, "latin1");
}

function octal(buf: Buffer, offset: number, length: number, value: number): void {
  field(buf, offset, length, `${value.toString(8).padStart(length - 1, "0")}\0`);
}

/** The 512-byte ustar header of `entry` whose data is `size` bytes. */
export function tarHeader(entry: TarEntry, size: number): Buffer {
  return header(entry, size);
}

function header(entry: TarEntry, size: number): Buffer {
  const buf = Buffer.alloc(512, 0);
  if (Buffer.byteLength(entry.name) > 100) throw new Error(`tar fixture name too long: ${entry.name}`);
  field(buf, 0, 100, entry.name);
  octal(buf, 100, 8, entry.mode ?? (entry.type === "dir" ? 0o755 : 0o644));
  octal(buf, 108, 8, 0);
  octal(buf, 116, 8, 0);
  octal(buf, 124, 12, size);
  octal(buf, 136, 12, 1_700_000_000);
  const flag = { file: "0", hardlink: "1", symlink: "2", chardev: "3", dir: "5", fifo: "6" }[entry.type ?? "file"];
  field(buf, 156, 1, flag);
  field(buf, 157, 100, entry.linkname ?? "");
  field(buf, 257, 6, "ustar\0");
  field(buf, 263, 2, "00");
  // Checksum: the sum of all bytes with the checksum field taken as eight spaces.
  buf.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of buf) sum += byte;
  field(buf, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return buf;
}

/** The raw (uncompressed) tar bytes of `entries`. */
export function tarBytes(entries: TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.type === undefined || entry.type === "file" ? Buffer.from(entry.content ?? "", "utf8") : Buffer.alloc(0);
    parts.push(header(entry, data.length), data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) parts.push(Buffer.alloc(pad, 0));
  }
  parts.push(Buffer.alloc(1024, 0));
  return Buffer.concat(parts);
}

/** A gzipped tarball of `entries` (what `npm pack` makes). */
export function tgzBytes(entries: TarEntry[]): Buffer {
  return gzipSync(tarBytes(entries));
}

/** The two files of a minimal valid plugin package, under `package/`. */
export function pluginEntries(name: string, toolName: string): TarEntry[] {
  return [
    { name: "package/package.json", content: JSON.stringify({ name, version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } }) },
    {
      name: "package/t.js",
      content: `export default (api) => ({ name: ${JSON.stringify(toolName)}, label: "t", description: "fixture", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } });\n`,
    },
  ];
}
