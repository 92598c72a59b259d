/**
 * Fingerprints of the files and folders the boot index depends on, and the check that they are
 * unchanged. The rule is "hash at write time, stat at read time, hash only when the stat differs":
 *
 * - every input gets a stat signature (`type:size:mtimeMs:ino`, or `missing`): one `stat` (or
 *   `lstat` for a plugin folder that may be a link) per input at boot;
 * - files whose bytes matter (state files, manifests, tool entries) also get a sha256 at write
 *   time. When their signature differs at boot (a `touch`, a rewrite with the same content, a
 *   copy), the file is read and hashed once: same bytes still count as fresh;
 * - a folder's signature changes when an entry is added, removed or renamed in it (its mtime),
 *   which is how new or deleted tools in a tools directory are seen without listing it.
 *
 * Signatures are taken BEFORE the content they vouch for is read (see `captureFingerprints`'s
 * callers), so a change racing with the write makes the index stale, never wrongly fresh.
 */
import { constants, lstatSync, statSync, type Stats } from "node:fs";
import { readFileBounded } from "../core/bounded-read.js";

/** How an input is looked at: `stat` follows symlinks, `lstat` sees the link itself. */
export type InputKind = "stat" | "lstat";

/** One recorded input of the index. */
export interface InputFingerprint {
  path: string;
  kind: InputKind;
  /** `type:size:mtimeMs:ino`, or `missing`. */
  sig: string;
  /** sha256 of the content, for files whose bytes matter. */
  sha?: string;
}

/** An input to fingerprint: its path, how to stat it, and whether its bytes are hashed. */
export interface InputRequest {
  path: string;
  kind?: InputKind;
  hash?: boolean;
}

/*
 * The file type from the mode bits, as `Stats`'s `isSymbolicLink()`, `isDirectory()` and
 * `isFile()` each compute it (`(mode & S_IFMT) === S_IF...`): one read instead of up to three
 * method calls, which a boot makes for every input (1,627 at 1,000 tools) as cold code, where the
 * calls cost about as much as the `lstat`s themselves (~3 ms of ~11 at 1,000 tools, Node 22).
 */
const { S_IFMT, S_IFLNK, S_IFDIR, S_IFREG } = constants;
const typeBits = (info: Stats): number => info.mode & S_IFMT;
/** Like `info.isFile()`. */
export const isFileStat = (info: Stats | undefined): boolean => info !== undefined && typeBits(info) === S_IFREG;

function typeOf(info: Stats): string {
  const type = typeBits(info);
  if (type === S_IFLNK) return "l";
  if (type === S_IFDIR) return "d";
  if (type === S_IFREG) return "f";
  return "o";
}

/** The stat signature of `info` (undefined: missing). */
export function signatureOf(info: Stats | undefined): string {
  if (!info) return "missing";
  return `${typeOf(info)}:${info.size}:${info.mtimeMs}:${info.ino}`;
}

/*
 * Synchronous on purpose: a fresh boot stats a few hundred inputs and does nothing else until it
 * knows the answer. One stat(2) is microseconds, while the promise API pays a thread-pool round
 * trip and a promise per call (several times the whole check's cost under Bun).
 */
const NO_THROW = { throwIfNoEntry: false } as const;

function statNow(file: string, kind: InputKind): Stats | undefined {
  try {
    return kind === "lstat" ? lstatSync(file, NO_THROW) : statSync(file, NO_THROW);
  } catch {
    return undefined;
  }
}

function statSig(file: string, kind: InputKind): { sig: string; isFile: boolean } {
  const info = statNow(file, kind);
  return info ? { sig: signatureOf(info), isFile: isFileStat(info) } : { sig: "missing", isFile: false };
}

/** The signature `file` has now (`missing` when it cannot be stat'ed). */
export function currentSignature(file: string, kind: InputKind = "stat"): string {
  return signatureOf(statNow(file, kind));
}

// node:crypto loads on the first hash: a fresh boot only stats (it costs ~9 ms to load under Bun).
let crypto: Promise<typeof import("node:crypto")> | undefined;

/**
 * sha256 of a file's bytes, or undefined when it cannot be read. The read is synchronous for the
 * reason the stats are: these are small files (manifests, state files, tool entries), and the
 * promise API's open/stat/read/close thread-pool trips cost more than the read (the boot index
 * refresh after a 20-plugin install hashes ~60 files).
 */
export async function hashFile(file: string): Promise<string | undefined> {
  try {
    const bytes = readFileBounded(file);
    return bytes === undefined ? undefined : await hashBytes(bytes);
  } catch {
    return undefined;
  }
}

/** The hash an input's `sha` records, of bytes in hand. */
export async function hashBytes(bytes: Uint8Array): Promise<string> {
  const { createHash } = await (crypto ??= import("node:crypto"));
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * Fingerprint each input (signature first, then the hash). Duplicates are taken once. An input
 * whose signature is still the one `known` (a view of the index being rebuilt) recorded with a
 * hash keeps that hash without reading the file: the rule a fresh check applies at every boot
 * (same signature, same bytes), so a refresh after a change rereads only what moved.
 */
export async function captureFingerprints(requests: readonly InputRequest[], known: readonly InputFingerprint[] = []): Promise<InputFingerprint[]> {
  const hashed = new Map<string, InputFingerprint>();
  for (const input of known) if (input.sha !== undefined) hashed.set(inputKey(input), input);
  const byKey = new Map<string, InputRequest>();
  for (const request of requests) {
    const kind = request.kind ?? "stat";
    const key = `${kind}\0${request.path}`;
    const known = byKey.get(key);
    if (known) known.hash = known.hash || request.hash;
    else byKey.set(key, { path: request.path, kind, hash: request.hash ?? false });
  }
  return Promise.all(
    [...byKey.values()].map(async (request) => {
      const kind = request.kind ?? "stat";
      const { sig, isFile } = statSig(request.path, kind);
      const fingerprint: InputFingerprint = { path: request.path, kind, sig };
      if (request.hash && isFile) {
        const before = hashed.get(inputKey({ path: request.path, kind }));
        const sha = before?.sig === sig ? before.sha : await hashFile(request.path);
        if (sha) fingerprint.sha = sha;
      }
      return fingerprint;
    }),
  );
}

/** The signatures `inputs` have now, by kind and path (`inputKey`). */
export function signaturesNow(inputs: readonly Pick<InputFingerprint, "path" | "kind">[]): Map<string, string> {
  return new Map(inputs.map((input) => [inputKey(input), currentSignature(input.path, input.kind)]));
}

/** The key of an input in `signaturesNow`'s map. */
export function inputKey(input: Pick<InputFingerprint, "path" | "kind">): string {
  return `${input.kind}\0${input.path}`;
}

/** Why `input` no longer matches the disk, or undefined when it still does. */
export async function inputChange(input: InputFingerprint): Promise<string | undefined> {
  const { sig, isFile } = statSig(input.path, input.kind);
  if (sig === input.sig) return undefined;
  if (input.sha !== undefined && isFile && (await hashFile(input.path)) === input.sha) return undefined;
  if (sig === "missing") return `${input.path} was removed`;
  if (input.sig === "missing") return `${input.path} appeared`;
  return `${input.path} changed`;
}

/**
 * The first change among `inputs`, or undefined when none changed. Every input is stat'ed
 * synchronously first (a fresh boot ends there, without a promise per input); only the inputs
 * whose signature moved are looked at again, concurrently, hashing the files that have a hash.
 *
 * `regular`, when given, receives the `stat` inputs found to be regular files that are not
 * links: those are looked at with `lstat` (and a `stat` after it only for a link, so the
 * signature is the same), which tells the lazy boot's loader what its own `lstat` of each entry
 * would (host/module-key.ts `locateModule`), one system call per entry instead of two.
 * Meaningful only when no change is found.
 */
export async function firstChange(inputs: readonly InputFingerprint[], regular?: Set<string>): Promise<string | undefined> {
  // A plain loop and no object per input: this runs once per boot, so it runs as cold code, where
  // every call and allocation shows (a third of the check's stat time under Bun).
  const moved: InputFingerprint[] = [];
  for (const input of inputs) {
    let info: Stats | undefined;
    if (regular !== undefined && input.kind === "stat") {
      info = statNow(input.path, "lstat");
      if (info !== undefined && typeBits(info) === S_IFLNK) info = statNow(input.path, "stat");
      else if (isFileStat(info)) regular.add(input.path);
    } else info = statNow(input.path, input.kind);
    if (signatureOf(info) !== input.sig) moved.push(input);
  }
  if (moved.length === 0) return undefined;
  const changes = await Promise.all(moved.map(inputChange));
  return changes.find((change) => change !== undefined);
}
