/**
 * The restore stamp (docs/design/team-sets.md (c)): what a restore left on this machine, so that
 * the next `install` with nothing to do answers without loading the engine (fast.ts).
 *
 * A stamp holds the project root's real path, one digest of the input files' bytes (the
 * declaration, the lock, the personal file, Claude's two files; an absent file counts), and the
 * identity (`size`, `mtimeMs`; absent counts) of every output the restore relies on and of the
 * user's trust record. The fast path says "up to date" only when every one of these is equal now;
 * anything it cannot read or compare sends the command to the engine, which writes a new stamp.
 *
 * This module is read on the CLI's hot path: node built-ins and core modules that import only
 * built-ins (test/unit/teamset-fast.test.ts walks the imports).
 */
import { createHash } from "node:crypto";
import { statSync } from "node:fs";
import { readFileBounded, readTextBounded } from "../core/bounded-read.js";
import type { TeamPaths } from "../core/paths.js";

/** Bump when the meaning of a field changes: an older stamp then never matches. */
export const STAMP_VERSION = 1;

/** A file's or folder's identity as `stat` gives it; `size: -1` when it does not exist. */
export interface FileIdentity {
  file: string;
  size: number;
  mtimeMs: number;
}

export interface RestoreStamp {
  version: typeof STAMP_VERSION;
  /** The project root's real path (the stamp file's name is a hash of it). */
  root: string;
  /** `inputDigest` of the input files as the restore read them (the lock as it wrote it). */
  inputs: string;
  /** Plugins of the set the restore made load (declared on, not opted out). */
  plugins: number;
  /** The lock was canonical and satisfied the declaration: a `--frozen` restore would have passed. */
  frozenOk: boolean;
  /** The npm plugins this project's set installed in the user's tree, name → locked version (for other projects' clash notes, `doctor`). */
  npm: Record<string, string>;
  /** The trust record the project's trust was read from. */
  trust: FileIdentity;
  outputs: FileIdentity[];
}

/** The input files of a restore, in the digest's order. */
export function inputFiles(paths: TeamPaths): string[] {
  return [paths.declaration, paths.lock, paths.local, paths.claudeSettings, paths.claudeLocalSettings];
}

/** One input file's part of the digest: its bytes' sha256, or a mark for an absent file. */
export function fileDigest(bytes: Uint8Array | string | undefined): string {
  return bytes === undefined ? "absent" : createHash("sha256").update(bytes).digest("hex");
}

/** Each input file's digest, read now (bounded: a FIFO or a huge file throws, as the engine's reader does). */
export function readInputDigests(paths: TeamPaths): string[] {
  return inputFiles(paths).map((file) => fileDigest(readFileBounded(file)));
}

/** The stamp's `inputs`: the per-file digests, with their files' names, as one digest. */
export function inputDigest(paths: TeamPaths, digests: readonly string[]): string {
  const hash = createHash("sha256");
  inputFiles(paths).forEach((file, i) => hash.update(`${file}\0${digests[i]}\0`));
  return hash.digest("hex");
}

/** `file`'s identity now (symlinks followed, as the host reads them). */
export function identityOf(file: string): FileIdentity {
  const s = statSync(file, { throwIfNoEntry: false });
  return s === undefined ? { file, size: -1, mtimeMs: 0 } : { file, size: s.size, mtimeMs: s.mtimeMs };
}

/** Whether `recorded` is still what is on disk. */
export function sameIdentity(recorded: FileIdentity): boolean {
  const now = identityOf(recorded.file);
  return now.size === recorded.size && now.mtimeMs === recorded.mtimeMs;
}

/** The stamp's bytes. */
export function stampText(stamp: RestoreStamp): string {
  return `${JSON.stringify(stamp, null, 2)}\n`;
}

const isIdentity = (v: unknown): v is FileIdentity => {
  const r = v as FileIdentity | null;
  return typeof r === "object" && r !== null && typeof r.file === "string" && typeof r.size === "number" && typeof r.mtimeMs === "number";
};

/** The stamp at `file`, or `undefined` when it is absent or not a stamp of this version (never trusted half-read). */
export function readStamp(file: string): RestoreStamp | undefined {
  const text = readTextBounded(file, { maxBytes: 4 * 1024 * 1024 });
  if (text === undefined) return undefined;
  const doc = JSON.parse(text) as RestoreStamp | null;
  if (typeof doc !== "object" || doc === null || doc.version !== STAMP_VERSION) return undefined;
  if (typeof doc.root !== "string" || typeof doc.inputs !== "string" || !Number.isInteger(doc.plugins) || typeof doc.frozenOk !== "boolean") return undefined;
  if (!isIdentity(doc.trust) || !Array.isArray(doc.outputs) || !doc.outputs.every(isIdentity)) return undefined;
  if (typeof doc.npm !== "object" || doc.npm === null || Array.isArray(doc.npm) || !Object.values(doc.npm).every((v) => typeof v === "string")) return undefined;
  return doc;
}
