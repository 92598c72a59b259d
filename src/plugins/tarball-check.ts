/**
 * Refusing hostile package tarballs before anything is extracted. npm's extractor (node-tar via
 * pacote) already keeps every entry inside the target folder: it drops `..` entries, strips a
 * leading `/` and skips symlinks and hard links. But it does so silently, so a tarball built to
 * write `../../.bashrc` installs "successfully" and nobody learns that the package is hostile.
 * We read the archive's headers ourselves first and refuse the whole package with
 * `ETARBALL_UNSAFE` (exit 2), naming the entry: a path that is absolute or climbs with `..`,
 * a symlink or hard link whose target leaves the package, or a device/FIFO entry.
 *
 * The reader understands ustar, pax (`path`, `linkpath`) and GNU long names, which is what
 * npm, yarn, pnpm and GNU/BSD tar write. It reads headers only (file data is skipped) and
 * never writes.
 */
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { XcshToolsError, errorMessage } from "../core/errors.js";

/** A decompressed package larger than this is refused (npm packages are far smaller). */
export const MAX_UNPACKED_TARBALL_BYTES = 1024 * 1024 * 1024;

function cstr(block: Buffer, offset: number, length: number): string {
  const slice = block.subarray(offset, offset + length);
  const end = slice.indexOf(0);
  return slice.subarray(0, end < 0 ? slice.length : end).toString("utf8");
}

function size(block: Buffer): number {
  const field = block.subarray(124, 136);
  // Base-256 (GNU) for big sizes: the high bit of the first byte is set.
  if ((field[0]! & 0x80) !== 0) {
    let value = 0;
    for (let i = 1; i < field.length; i++) value = value * 256 + field[i]!;
    return value;
  }
  const text = cstr(block, 124, 12).trim();
  return text === "" ? 0 : parseInt(text, 8);
}

function paxRecords(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    if (space < 0) break;
    const length = parseInt(data.subarray(offset, space).toString("utf8"), 10);
    if (!Number.isFinite(length) || length <= 0) break;
    const record = data.subarray(space + 1, offset + length - 1).toString("utf8");
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    offset += length;
  }
  return out;
}

/** One header of the archive, names resolved through pax and GNU long-name records. */
export interface TarHeaderEntry {
  path: string;
  /** ustar type flag: "0" file, "1" hard link, "2" symlink, "5" folder, ... */
  type: string;
  linkpath: string;
}

/** Every entry header of a raw tar archive. Throws (plain Error) when the bytes are not tar. */
export function listTarEntries(tar: Buffer): TarHeaderEntry[] {
  const entries: TarHeaderEntry[] = [];
  let offset = 0;
  let pending: { path?: string; linkpath?: string } = {};
  let sawEnd = false;
  while (offset + 512 <= tar.length) {
    const block = tar.subarray(offset, offset + 512);
    if (block.every((b) => b === 0)) {
      sawEnd = true;
      break;
    }
    const magic = cstr(block, 257, 6);
    if (!magic.startsWith("ustar") && entries.length === 0 && Object.keys(pending).length === 0) {
      // Old v7 archives have no magic; still require a checksum that adds up.
      let sum = 0;
      for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
      if (parseInt(cstr(block, 148, 8).trim(), 8) !== sum) throw new Error("not a tar archive (bad header checksum)");
    }
    const type = String.fromCharCode(block[156] || 0x30);
    const dataSize = size(block);
    if (!Number.isFinite(dataSize) || dataSize < 0) throw new Error("not a tar archive (bad entry size)");
    const dataStart = offset + 512;
    const data = tar.subarray(dataStart, dataStart + dataSize);
    offset = dataStart + Math.ceil(dataSize / 512) * 512;
    if (type === "x") {
      const records = paxRecords(data);
      if (records.path !== undefined) pending.path = records.path;
      if (records.linkpath !== undefined) pending.linkpath = records.linkpath;
      continue;
    }
    if (type === "g") continue;
    if (type === "L") {
      pending.path = cstr(data, 0, data.length);
      continue;
    }
    if (type === "K") {
      pending.linkpath = cstr(data, 0, data.length);
      continue;
    }
    const prefix = magic.startsWith("ustar") ? cstr(block, 345, 155) : "";
    const name = cstr(block, 0, 100);
    entries.push({
      path: pending.path ?? (prefix ? `${prefix}/${name}` : name),
      type,
      linkpath: pending.linkpath ?? cstr(block, 157, 100),
    });
    pending = {};
  }
  if (!sawEnd && entries.length === 0) throw new Error("not a tar archive (no entries)");
  return entries;
}

function isAbsoluteLike(p: string): boolean {
  return p.startsWith("/") || p.startsWith("\\") || /^[a-zA-Z]:/.test(p);
}

/** Why `entry` is unsafe inside a package whose root folder is `root`, or `undefined`. */
function entryProblem(entry: TarHeaderEntry): string | undefined {
  const p = entry.path.replace(/\\/g, "/");
  if (isAbsoluteLike(entry.path)) return `"${entry.path}" is an absolute path`;
  const segments = p.split("/");
  if (segments.includes("..")) return `"${entry.path}" climbs out of the package with ".."`;
  // pacote strips the first path component (npm's "package/"): paths are relative to it.
  const inside = segments.slice(1).join("/");
  if (entry.type === "2") {
    const target = entry.linkpath.replace(/\\/g, "/");
    if (isAbsoluteLike(entry.linkpath)) return `the symlink "${entry.path}" points at the absolute path "${entry.linkpath}"`;
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(inside || "."), target));
    if (resolved === ".." || resolved.startsWith("../")) return `the symlink "${entry.path}" points out of the package ("${entry.linkpath}")`;
  }
  if (entry.type === "1") {
    const target = entry.linkpath.replace(/\\/g, "/");
    if (isAbsoluteLike(entry.linkpath)) return `the hard link "${entry.path}" points at the absolute path "${entry.linkpath}"`;
    if (target.split("/").includes("..")) return `the hard link "${entry.path}" points out of the package ("${entry.linkpath}")`;
  }
  if (entry.type === "3" || entry.type === "4" || entry.type === "6") return `"${entry.path}" is a device or FIFO, not a file`;
  return undefined;
}

/**
 * Check a package tarball (gzipped, as npm makes them) before it is installed: `ETARBALL` when
 * it is not a gzipped tar with a package.json, `ETARBALL_UNSAFE` when an entry would leave the
 * package. `what` names the tarball in messages.
 */
export function checkPackageTarball(bytes: Buffer, what: string): void {
  let tar: Buffer;
  try {
    tar = gunzipSync(bytes, { maxOutputLength: MAX_UNPACKED_TARBALL_BYTES });
  } catch (error) {
    throw new XcshToolsError("ETARBALL", `${what}: not a valid package tarball (not gzip data: ${errorMessage(error)})`, { hint: "Rebuild it with `npm pack`.", cause: error });
  }
  let entries: TarHeaderEntry[];
  try {
    entries = listTarEntries(tar);
  } catch (error) {
    throw new XcshToolsError("ETARBALL", `${what}: not a valid package tarball (${errorMessage(error)})`, { hint: "Rebuild it with `npm pack`.", cause: error });
  }
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem) {
      throw new XcshToolsError("ETARBALL_UNSAFE", `${what}: refused, ${problem}`, {
        hint: "Nothing was installed. A package tarball may only hold files inside its own folder; do not install this one (rebuild it with `npm pack` if it is yours).",
        exitCode: 2,
      });
    }
  }
  if (!entries.some((e) => /^[^/]+\/package\.json$/.test(e.path.replace(/\\/g, "/")) && (e.type === "0" || e.type === "\0"))) {
    throw new XcshToolsError("ETARBALL", `${what}: not a valid package tarball (no package.json at its root)`, { hint: "Rebuild it with `npm pack` from the plugin's folder." });
  }
}
