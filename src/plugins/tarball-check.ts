/**
 * Refusing hostile package tarballs while they stream, before anything is extracted.
 *
 * Every tarball npm's libraries install passes through one method, pacote's
 * `FetcherBase.prototype.tarballStream`: registry packages and every dependency arborist reifies,
 * tarball URLs, tarball files, packed folders and git checkouts, and the marketplace's npm
 * source. `guardTarballStreams` wraps it once per process: the bytes are read to the end
 * through the check below, kept aside compressed (in memory while small, then in a temporary
 * file), and only a tarball that passed is replayed to pacote's extractor. A refused tarball
 * leaves nothing extracted in the staging tree or in live state.
 *
 * The check decompresses with zlib as a stream and counts the decompressed bytes itself, so a
 * small archive that expands to gigabytes is refused after at most the limit's worth of work and
 * a few chunks of memory; entries are read with node-tar's own parser (the one pacote extracts
 * with, so both see the same entries). Refused with `ETARBALL_TOO_LARGE` (exit 2): more
 * unpacked bytes, entries or path length than the `limits.*` settings allow. Refused with
 * `ETARBALL_UNSAFE` (exit 2), naming the entry: an absolute path, a `..` segment, a symlink or
 * hard link that leaves the package, a device or FIFO. `ETARBALL`: not gzip or not tar.
 *
 * pacote's extractor would silently skip links and strip `..`; refusing loudly says that the
 * package is hostile instead of installing the rest of it.
 */
import { createReadStream } from "node:fs";
import { mkdtemp, open, rm, type FileHandle } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { relativePathClimbsOut } from "../core/contain.js";
import { once } from "node:events";
import { Readable } from "node:stream";
import { createGunzip, type Gunzip } from "node:zlib";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { DEFAULT_SETTINGS, SETTING_ENV_VARS, type SettingKey } from "../core/settings-keys.js";

type Tar = typeof import("tar");

/** The limits one tarball must stay within (settings `limits.*`). */
export interface TarballLimits {
  /** Decompressed bytes (the tar stream: file data plus headers). */
  unpackedBytes: number;
  /** Entries (files, folders, links). */
  entries: number;
  /** Bytes of one entry's path as the archive names it. */
  pathLength: number;
}

/** Each limit's setting, for the hint of a refusal. */
const TARBALL_LIMIT_SETTINGS: Record<keyof TarballLimits, SettingKey> = {
  unpackedBytes: "limits.tarballUnpackedBytes",
  entries: "limits.tarballEntries",
  pathLength: "limits.tarballPathLength",
};

/** What a tarball check is told. */
export interface TarballCheckOptions {
  limits?: Partial<TarballLimits>;
  /** How messages name the tarball (package, URL or file). */
  what: string;
  /** Also require `<top folder>/package.json` (a package the user named, not a dependency). */
  requirePackageJson?: boolean;
}

/** The key of pacote's options object our check reads (npm-client.ts sets it). */
export const TARBALL_CHECK_OPTION = "xcshTarballCheck";

/**
 * The checks of the plugins a command installs, by the bytes they must be: each plugin's tarball,
 * keyed by its integrity and its resolved URL (the packument's `dist`), is checked as the package
 * the user named (named as typed, a package.json at its root required) when npm's installer
 * fetches it. resolve.ts registers them instead of reading every plugin's tarball once more
 * before arborist reads it again (npm-client.ts `pluginTarballs`).
 */
export type PluginTarballChecks = Map<string, Pick<TarballCheckOptions, "what" | "requirePackageJson">>;

/**
 * The key of pacote's options object holding a tarball's bytes already read and proven to hash to
 * `integrity` (npm-client.ts `cachedTarball`: npm's cache file for that integrity, checked by
 * cacache). A fetcher asked for exactly that integrity streams them instead of opening npm's cache
 * itself; everything after (this check, pacote's extractor) is unchanged. Any other fetcher ignores them.
 */
export const HELD_BYTES_OPTION = "xcshHeldBytes";

/** What `HELD_BYTES_OPTION` holds. */
export interface HeldBytes {
  integrity: string;
  bytes: Buffer;
}

/** The limits `given`, and the `limits.*` settings' defaults for the others (core/settings-keys.ts says why those). */
export function tarballLimitsOf(given: Partial<TarballLimits> | undefined): TarballLimits {
  const defaults = DEFAULT_SETTINGS.limits;
  return { unpackedBytes: defaults.tarballUnpackedBytes, entries: defaults.tarballEntries, pathLength: defaults.tarballPathLength, ...(given ?? {}) };
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 * 1024) return `${+(n / (1024 * 1024 * 1024)).toFixed(2)} GiB`;
  if (n >= 1024 * 1024) return `${+(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${+(n / 1024).toFixed(1)} KiB`;
  return `${n} bytes`;
}

function tooLarge(what: string, limit: keyof TarballLimits, detail: string): XcshToolsError {
  const key = TARBALL_LIMIT_SETTINGS[limit];
  return new XcshToolsError("ETARBALL_TOO_LARGE", `${what}: refused, ${detail} (setting ${key})`, {
    hint: `Nothing was installed. If you trust this package, raise "${key}" in your xcsh-tools settings (xcsh-tools.json in the xcsh root) or set ${SETTING_ENV_VARS[key]}.`,
    exitCode: 2,
  });
}

function unsafe(what: string, problem: string): XcshToolsError {
  return new XcshToolsError("ETARBALL_UNSAFE", `${what}: refused, ${problem}`, {
    hint: "Nothing was installed. A package tarball may only hold files inside its own folder; do not install this one (rebuild it with `npm pack` if it is yours).",
    exitCode: 2,
  });
}

function invalid(what: string, reason: string, cause?: unknown): XcshToolsError {
  return new XcshToolsError("ETARBALL", `${what}: not a valid package tarball (${reason})`, { hint: "Rebuild it with `npm pack`.", ...(cause === undefined ? {} : { cause }) });
}

function isAbsoluteLike(p: string): boolean {
  return p.startsWith("/") || p.startsWith("\\") || /^[a-zA-Z]:/.test(p);
}

/** Why an entry is unsafe inside its package, or `undefined`. */
function entryProblem(entryPath: string, type: string, linkpath: string): string | undefined {
  const p = entryPath.replace(/\\/g, "/");
  if (isAbsoluteLike(entryPath)) return `"${entryPath}" is an absolute path`;
  const segments = p.split("/");
  if (segments.includes("..")) return `"${entryPath}" climbs out of the package with ".."`;
  if (type === "SymbolicLink") {
    if (isAbsoluteLike(linkpath)) return `the symlink "${entryPath}" points at the absolute path "${linkpath}"`;
    // pacote strips the first path component (npm's "package/"): the link resolves inside that.
    const inside = segments.slice(1).join("/");
    const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(inside || "."), linkpath.replace(/\\/g, "/")));
    if (relativePathClimbsOut(resolved)) return `the symlink "${entryPath}" points out of the package ("${linkpath}")`;
  }
  if (type === "Link") {
    if (isAbsoluteLike(linkpath)) return `the hard link "${entryPath}" points at the absolute path "${linkpath}"`;
    if (linkpath.replace(/\\/g, "/").split("/").includes("..")) return `the hard link "${entryPath}" points out of the package ("${linkpath}")`;
  }
  if (type === "CharacterDevice" || type === "BlockDevice" || type === "FIFO") return `"${entryPath}" is a device or FIFO, not a file`;
  return undefined;
}

/** What a passed check saw. */
export interface TarballSummary {
  entries: number;
  unpackedBytes: number;
}

/** What the check of one tarball has seen so far; the first refusal is kept and stops it. */
interface TarScan {
  limits: TarballLimits;
  what: string;
  failure?: XcshToolsError;
  parserError?: unknown;
  badArchive: boolean;
  entries: number;
  /** Sizes the entries declare. */
  declared: number;
  /** Decompressed bytes fed to the parser. */
  unpacked: number;
  sawPackageJson: boolean;
}

/**
 * Read a (gzipped) package tarball to its end and check it; resolves when it passed, rejects with
 * a coded error otherwise. `onChunk` sees each compressed chunk as it is read (the spool).
 * Memory stays a few chunks whatever the archive expands to.
 */
export async function inspectTarball(tar: Tar, source: AsyncIterable<Buffer>, options: TarballCheckOptions, onChunk?: (chunk: Buffer) => Promise<void> | void): Promise<TarballSummary> {
  const scan: TarScan = { limits: tarballLimitsOf(options.limits), what: options.what, badArchive: false, entries: 0, declared: 0, unpacked: 0, sawPackageJson: false };
  const what = scan.what;
  const { parser, done } = checkingParser(tar, scan);
  const feed = parserFeed(parser, scan);
  // The producer writes compressed chunks into zlib (waiting while it is full); the loop below
  // takes decompressed chunks one at a time, so memory stays a few chunks.
  const gunzip = createGunzip();
  const stop = new AbortController();
  const producer = writeGzip(source, gunzip, stop.signal, what, onChunk);
  try {
    for await (const out of gunzip) await feed(out as Buffer);
    await producer;
    parser.end();
    await done;
    if (scan.failure) throw scan.failure;
    if (scan.parserError) throw invalid(what, errorMessage(scan.parserError), scan.parserError);
    if (scan.badArchive || scan.entries === 0) throw invalid(what, "not a tar archive");
    if (options.requirePackageJson && !scan.sawPackageJson) {
      throw new XcshToolsError("ETARBALL", `${what}: not a valid package tarball (no package.json at its root)`, { hint: "Rebuild it with `npm pack` from the plugin's folder." });
    }
    return { entries: scan.entries, unpackedBytes: scan.unpacked };
  } catch (error) {
    // Stop reading: the rest of a refused archive is never needed.
    stop.abort();
    gunzip.destroy();
    if (error instanceof XcshToolsError) throw error;
    const code = (error as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("Z_")) throw invalid(what, `not gzip data: ${errorMessage(error)}`, error);
    throw error;
  }
}

/** node-tar's parser, checking each entry against the limits and `entryProblem` into `scan`. */
function checkingParser(tar: Tar, scan: TarScan): { parser: InstanceType<Tar["Parser"]>; done: Promise<void> } {
  // zstd and brotli off: the bytes it sees are what our own gunzip counted, never a second layer.
  const parser = new tar.Parser({ zstd: false, brotli: false } as never);
  parser.on("warn", (code: string) => {
    if (code === "TAR_BAD_ARCHIVE") scan.badArchive = true;
  });
  parser.on("error", (error: unknown) => {
    scan.parserError ??= error;
  });
  const onEntry = (entry: import("tar").ReadEntry) => {
    entry.resume();
    if (!scan.failure) scan.failure = checkEntry(scan, entry);
  };
  parser.on("entry", onEntry);
  parser.on("ignoredEntry", onEntry);
  const done = new Promise<void>((resolve) => {
    parser.on("end", () => resolve());
    parser.on("close", () => resolve());
  });
  return { parser, done };
}

/** Count one entry and check it: the refusal it earns, or `undefined`. */
function checkEntry(scan: TarScan, entry: import("tar").ReadEntry): XcshToolsError | undefined {
  const { limits, what } = scan;
  scan.entries++;
  if (scan.entries > limits.entries) return tooLarge(what, "entries", `it holds more entries than the limit of ${limits.entries}`);
  const entryPath = entry.path ?? "";
  if (Buffer.byteLength(entryPath) > limits.pathLength) {
    return tooLarge(what, "pathLength", `the entry "${entryPath.slice(0, 80)}…" has a path of ${Buffer.byteLength(entryPath)} bytes, more than the limit of ${limits.pathLength}`);
  }
  scan.declared += entry.size ?? 0;
  if (scan.declared > limits.unpackedBytes) return tooLarge(what, "unpackedBytes", `it unpacks to more than the limit of ${formatBytes(limits.unpackedBytes)}`);
  const problem = entryProblem(entryPath, String(entry.type), entry.linkpath ?? "");
  if (problem) return unsafe(what, problem);
  if (/^[^/]+\/package\.json$/.test(entryPath.replace(/\\/g, "/")) && /File$/.test(String(entry.type))) scan.sawPackageJson = true;
  return undefined;
}

/** Feed decompressed chunks to the parser, counting them; throws the scan's refusal as soon as there is one. */
function parserFeed(parser: InstanceType<Tar["Parser"]>, scan: TarScan): (chunk: Buffer) => Promise<void> {
  const { limits, what } = scan;
  // What pacote's extractor parses is what one gunzip gives. node-tar's parser would undo a
  // second gzip layer by itself (and so see other entries than the extractor): refused.
  let head = Buffer.alloc(0);
  return async (chunk) => {
    if (head.length < 2) {
      head = Buffer.concat([head, chunk.subarray(0, 2 - head.length)]);
      if (head.length === 2 && head[0] === 0x1f && head[1] === 0x8b) throw invalid(what, "compressed twice");
    }
    scan.unpacked += chunk.length;
    if (scan.unpacked > limits.unpackedBytes) scan.failure ??= tooLarge(what, "unpackedBytes", `it unpacks to more than the limit of ${formatBytes(limits.unpackedBytes)}`);
    if (scan.failure) throw scan.failure;
    if (!parser.write(chunk)) await new Promise<void>((resolve) => parser.once("drain", resolve));
    if (scan.failure) throw scan.failure;
    if (scan.parserError) throw invalid(what, errorMessage(scan.parserError), scan.parserError);
  };
}

/** Write the compressed source into `gunzip`, refusing what is not gzip; a failure destroys `gunzip` with it. */
async function writeGzip(source: AsyncIterable<Buffer>, gunzip: Gunzip, signal: AbortSignal, what: string, onChunk?: (chunk: Buffer) => Promise<void> | void): Promise<void> {
  let magic = Buffer.alloc(0);
  try {
    for await (const raw of source) {
      const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
      if (magic.length < 2) {
        magic = Buffer.concat([magic, chunk.subarray(0, 2 - magic.length)]);
        if (magic.length === 2 && (magic[0] !== 0x1f || magic[1] !== 0x8b)) throw invalid(what, "not gzip data");
      }
      if (onChunk) await onChunk(chunk);
      if (signal.aborted) return;
      if (!gunzip.write(chunk)) await once(gunzip, "drain", { signal });
    }
    if (magic.length < 2) throw invalid(what, magic.length === 0 ? "empty" : "not gzip data");
    gunzip.end();
  } catch (error) {
    if (!signal.aborted) gunzip.destroy(error as Error);
  }
}

/**
 * Where a checked tarball's compressed bytes wait until it has passed: memory up to
 * `SPOOL_MEMORY_BYTES` (almost every package), a temporary file beyond, so that arborist
 * extracting many large packages at once does not hold them all in memory.
 */
export const SPOOL_MEMORY_BYTES = 1024 * 1024;

class Spool {
  private chunks: Buffer[] = [];
  private size = 0;
  private dir: string | undefined;
  private file: FileHandle | undefined;

  async add(chunk: Buffer): Promise<void> {
    if (!this.file && this.size + chunk.length <= SPOOL_MEMORY_BYTES) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return;
    }
    if (!this.file) {
      this.dir = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-tarball-"));
      this.file = await open(path.join(this.dir, "spool.tgz"), "w");
      for (const held of this.chunks) await this.file.write(held);
      this.chunks = [];
    }
    await this.file.write(chunk);
  }

  /** The bytes again, as a stream pacote's handlers can read (`pipe`, `on`, and Minipass's `concat`). */
  async replay(): Promise<Readable & { concat(): Promise<Buffer> }> {
    let stream: Readable;
    if (this.file) {
      await this.file.close();
      this.file = undefined;
      stream = createReadStream(path.join(this.dir!, "spool.tgz"));
    } else {
      stream = Readable.from(this.chunks, { objectMode: false });
    }
    return Object.assign(stream, { concat: async () => Buffer.concat((await stream.toArray()) as Buffer[]) });
  }

  async dispose(): Promise<void> {
    await this.file?.close().catch(() => undefined);
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}

/** The fields of a pacote fetcher the guard reads. */
interface FetcherLike {
  spec?: { name?: string | null; raw?: string; rawSpec?: string; type?: string };
  resolved?: string | null;
  /** ssri's parsed integrity, or a string. */
  integrity?: unknown;
  opts?: Record<string, unknown>;
}

/** The plugin check registered for the bytes a fetcher streams (`PluginTarballChecks`), if any. */
function pluginCheckOf(fetcher: FetcherLike): Pick<TarballCheckOptions, "what" | "requirePackageJson"> | undefined {
  const plugins = (fetcher.opts?.[TARBALL_CHECK_OPTION] as { plugins?: unknown } | undefined)?.plugins;
  if (!(plugins instanceof Map)) return undefined;
  for (const key of [fetcher.integrity ? String(fetcher.integrity) : undefined, fetcher.resolved ?? undefined]) {
    const found = key === undefined ? undefined : (plugins as PluginTarballChecks).get(key);
    if (found) return found;
  }
  return undefined;
}

/** How a refusal names the tarball a fetcher streams: the package and where it came from. */
function describeFetcher(fetcher: FetcherLike): string {
  const given = (fetcher.opts?.[TARBALL_CHECK_OPTION] as { what?: unknown } | undefined)?.what;
  if (typeof given === "string") return given;
  const name = fetcher.spec?.name ?? undefined;
  const from = withoutCredentials(String(fetcher.resolved ?? fetcher.spec?.rawSpec ?? fetcher.spec?.raw ?? "a tarball"));
  return name ? `${name} (${from})` : from;
}

function withoutCredentials(location: string): string {
  try {
    const url = new URL(location);
    if (url.username || url.password) {
      url.username = "";
      url.password = "";
      return url.href;
    }
  } catch {
    // Not a URL: a path.
  }
  return location;
}

const GUARDED = Symbol.for("xcsh-tools.tarballGuard");

/**
 * Wrap pacote's `tarballStream` (the one method every fetcher's tarball passes through) so that
 * each handler receives the bytes only after they passed `inspectTarball`. Idempotent.
 */
export function guardTarballStreams(pacote: typeof import("pacote"), tar: Tar): void {
  let proto: Record<PropertyKey, unknown> | null = (pacote as unknown as { RegistryFetcher: { prototype: object } }).RegistryFetcher.prototype as Record<PropertyKey, unknown>;
  while (proto && !Object.prototype.hasOwnProperty.call(proto, "tarballStream")) proto = Object.getPrototypeOf(proto) as Record<PropertyKey, unknown> | null;
  if (!proto || proto[GUARDED]) return;
  const original = proto.tarballStream as (this: FetcherLike, handler: (stream: unknown) => Promise<unknown>) => Promise<unknown>;
  proto[GUARDED] = true;
  proto.tarballStream = function guardedTarballStream(this: FetcherLike, handler: (stream: unknown) => Promise<unknown>) {
    // One deadline for the whole download, headers and body (npm's own `timeout` stops at the
    // headers, so a server that answers and then drips bytes would hold the install forever), and
    // one abort for every way an attempt ends early: destroying pacote's stream does not reach the
    // HTTP request below it, aborting its signal does (minipass-fetch closes the socket), so the
    // process can exit as soon as it has printed its error. pacote reads `opts.signal` when it
    // starts each attempt (cache, network, one retry): each gets a signal of its own.
    const ms = typeof this.opts?.timeout === "number" && this.opts.timeout > 0 ? this.opts.timeout : undefined;
    const deadline = ms === undefined ? undefined : AbortSignal.timeout(ms);
    const outer = this.opts?.signal as AbortSignal | undefined;
    let stop = new AbortController();
    const arm = () => {
      stop = new AbortController();
      if (this.opts) this.opts = { ...this.opts, signal: AbortSignal.any([stop.signal, ...(deadline ? [deadline] : []), ...(outer ? [outer] : [])]) };
    };
    arm();
    const plugin = pluginCheckOf(this);
    const what = plugin?.what ?? describeFetcher(this);
    const timedOut = (error: unknown) => (deadline?.aborted && !(error instanceof XcshToolsError) ? fetchTimeout(what, ms!, error) : error);
    const checked = async (stream: unknown) => {
      const source = stream as AsyncIterable<Buffer> & { on?(event: string, fn: (...a: unknown[]) => void): unknown; destroy?(): unknown };
      const given = (this.opts?.[TARBALL_CHECK_OPTION] ?? {}) as Partial<TarballCheckOptions>;
      const spool = new Spool();
      try {
        try {
          await inspectTarball(tar, source, { what, ...(given.limits ? { limits: given.limits } : {}), ...(given.requirePackageJson || plugin?.requirePackageJson ? { requirePackageJson: true } : {}) }, (chunk) => spool.add(chunk));
        } catch (error) {
          // Whatever the fetch still emits goes nowhere, and its connection is let go.
          source.on?.("error", () => undefined);
          source.destroy?.();
          stop.abort();
          arm();
          throw timedOut(error);
        }
        return await handler(await spool.replay());
      } finally {
        await spool.dispose();
      }
    };
    // Bytes already proven to be this fetcher's integrity: the same check and handler, without
    // pacote opening the very cache file they were read from again (no download, so no deadline).
    const held = this.opts?.[HELD_BYTES_OPTION] as HeldBytes | undefined;
    if (held && this.integrity && String(this.integrity) === held.integrity) return checked(Readable.from([held.bytes]));
    return original.call(this, checked).catch((error: unknown) => {
      stop.abort();
      throw timedOut(error);
    });
  };
}

/** `EFETCH_TIMEOUT`: a tarball download that did not finish within `timeouts.fetchMs`. */
function fetchTimeout(what: string, ms: number, cause: unknown): XcshToolsError {
  return new XcshToolsError("EFETCH_TIMEOUT", `${what}: the download did not finish within ${ms} ms`, { hint: "Raise timeouts.fetchMs (or XCSH_TOOLS_FETCH_TIMEOUT_MS), or check the network.", cause });
}
