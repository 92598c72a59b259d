/**
 * The one way to read a file we did not write, or that someone may have replaced since: a state
 * file under a project's `.xcsh/`, a registry, a manifest, a settings file, the boot index, the
 * journal. A project once trusted can swap its `installed_plugins.json` for a FIFO (a read that
 * never returns, and the host's boot must never hang) or a link to `/dev/zero` (a read that
 * never ends and takes gigabytes). So:
 *
 * - only a regular file is read: a FIFO, a device, a socket or a folder is `ENOT_A_FILE` naming it;
 * - the type is checked twice: by `stat` before opening (a device is never even opened: opening
 *   some has effects), and by `fstat` on the opened descriptor, which is opened with `O_NONBLOCK`
 *   so that a FIFO swapped in between the two does not block the `open` itself;
 * - the size is checked before reading and enforced while reading (a file that grows past the
 *   limit while it is read is refused too): `EFILE_TOO_LARGE`, or the caller's own code.
 *
 * Synchronous on purpose, like the readers it replaces (manifest/json-file.ts, boot/format.ts):
 * the files are small, read one after another, and the boot path avoids node:fs/promises.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";
import { XcshToolsError, errorMessage, nodeErrorCode } from "./errors.js";

/** The default limit: the largest real state file is a lockfile of a few MB. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

export interface BoundedReadOptions {
  /** Refuse a file longer than this many bytes (default `MAX_READ_BYTES`). */
  maxBytes?: number;
  /** The error for a file over the limit (default `EFILE_TOO_LARGE`); `size` is what was seen. */
  tooLarge?: (file: string, size: number) => XcshToolsError;
}

/** What a non-regular file is, for the message. */
function kindOf(info: Stats): string {
  if (info.isFIFO()) return "a named pipe (FIFO)";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  if (info.isSocket()) return "a socket";
  if (info.isDirectory()) return "a folder";
  return "not a regular file";
}

function notAFile(file: string, info: Stats): XcshToolsError {
  return new XcshToolsError("ENOT_A_FILE", `${file} is ${kindOf(info)}, not a regular file: it was not read`, {
    file,
    hint: `xcsh-tools only reads regular files here. Remove ${file} (or the link that leads to it); it is recreated when needed.`,
  });
}

function defaultTooLarge(file: string, size: number, maxBytes: number): XcshToolsError {
  return new XcshToolsError("EFILE_TOO_LARGE", `${file} is ${size} bytes or more, more than the ${maxBytes} bytes xcsh-tools reads of it`, {
    file,
    hint: `This is not a file xcsh-tools or the host wrote: move ${file} away (or trim it) and retry.`,
  });
}

function readError(file: string, error: unknown): XcshToolsError {
  return new XcshToolsError("EREAD", `Cannot read ${file}: ${errorMessage(error)}`, { file, hint: "Check the file's permissions.", cause: error });
}

/**
 * The bytes of the regular file `file`, or `undefined` when nothing is there (`ENOENT`,
 * `ENOTDIR`). Anything else is a coded error: `ENOT_A_FILE`, the size limit's, `EREAD`.
 */
export function readFileBounded(file: string, options: BoundedReadOptions = {}): Buffer | undefined {
  const maxBytes = options.maxBytes ?? MAX_READ_BYTES;
  const tooLarge = (size: number) => options.tooLarge?.(file, size) ?? defaultTooLarge(file, size, maxBytes);
  let before: Stats;
  try {
    before = statSync(file);
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw readError(file, error);
  }
  if (!before.isFile()) throw notAFile(file, before);
  if (before.size > maxBytes) throw tooLarge(before.size);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO swapped in after the stat opens at once instead of waiting for a writer
    // (the fstat below then refuses it). It changes nothing for a regular file. Windows has no FIFOs.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw readError(file, error);
  }
  try {
    const opened = fstatSync(fd);
    if (!opened.isFile()) throw notAFile(file, opened);
    if (opened.size > maxBytes) throw tooLarge(opened.size);
    // One byte more than the size: reading it shows the file grew meanwhile (still bounded below).
    return readToEnd(fd, Buffer.allocUnsafe(Math.min(opened.size, maxBytes) + 1), maxBytes, tooLarge);
  } catch (error) {
    if (error instanceof XcshToolsError) throw error;
    throw readError(file, error);
  } finally {
    closeSync(fd);
  }
}

/** Read `fd` to its end into `buffer`, growing it up to one byte past `maxBytes` for a file that grows. */
function readToEnd(fd: number, buffer: Buffer, maxBytes: number, tooLarge: (size: number) => XcshToolsError): Buffer {
  for (let length = 0; ; ) {
    if (length === buffer.length) {
      if (length > maxBytes) throw tooLarge(length);
      const bigger = Buffer.allocUnsafe(Math.min(length * 2, maxBytes + 1));
      buffer.copy(bigger, 0, 0, length);
      buffer = bigger;
    }
    const n = readSync(fd, buffer, length, buffer.length - length, null);
    if (n === 0) return buffer.subarray(0, length);
    length += n;
  }
}

/** `readFileBounded` as UTF-8 text. */
export function readTextBounded(file: string, options: BoundedReadOptions = {}): string | undefined {
  return readFileBounded(file, options)?.toString("utf8");
}
