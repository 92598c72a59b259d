/**
 * The warm restore's record (docs/design/team-sets.md (c), `content-hashes.json`): for each
 * content-keyed cache folder a restore created, the full `tree1` hash it was verified against
 * (the folder's name holds 12 hex digits of it only), its version and commit. A restore whose lock
 * names a recorded folder that still exists installs it as it is: no catalog fetch, no copy, no
 * hash (`doctor --verify` is where the folder's bytes are checked again).
 *
 * The record is ours and only ever names folders below the plugin cache: a key that is not a
 * plain folder name is ignored, so a hand edit cannot point a restore elsewhere.
 */
import { lstatSync } from "node:fs";
import path from "node:path";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";

/** What the record keeps of one cache folder. */
export interface CachedContent {
  /** The lock's `hash` (`tree1-sha256:<64 hex>`). */
  hash: string;
  version: string;
  gitCommitSha?: string;
}

export type ContentHashes = Record<string, CachedContent>;

/** The record at `file`; empty when it is missing or not a record (the restore then fetches as before). */
export function readContentHashes(file: string): ContentHashes {
  const doc = readJsonOrUndefined(file);
  const out: ContentHashes = {};
  if (!isRecord(doc) || !isRecord(doc.folders)) return out;
  for (const [name, v] of Object.entries(doc.folders)) {
    if (!isRecord(v) || typeof v.hash !== "string" || typeof v.version !== "string" || name !== path.basename(name) || name === ".." || name === ".") continue;
    out[name] = { hash: v.hash, version: v.version, ...(typeof v.gitCommitSha === "string" ? { gitCommitSha: v.gitCommitSha } : {}) };
  }
  return out;
}

/**
 * The cache folder of `marketplace`'s `plugin` the record says holds exactly `hash` at `version`,
 * when it still exists as a folder (a link in its place is not followed: it could lead out of the cache).
 */
export function reusableFolder(record: ContentHashes, pluginCache: string, marketplace: string, plugin: string, locked: { version: string; hash: string }): { cacheDir: string; content: CachedContent } | undefined {
  const prefix = `${marketplace}___${plugin}___`;
  for (const [name, content] of Object.entries(record)) {
    if (!name.startsWith(prefix) || content.hash !== locked.hash || content.version !== locked.version) continue;
    // The folder's name carries the hash's first 12 hex digits (marketplace/prepare.ts cacheDirOf).
    if (!name.endsWith(`-${locked.hash.slice(locked.hash.indexOf(":") + 1, locked.hash.indexOf(":") + 13)}`)) continue;
    const cacheDir = path.join(pluginCache, name);
    if (lstatSync(cacheDir, { throwIfNoEntry: false })?.isDirectory()) return { cacheDir, content };
  }
  return undefined;
}

/** The record's bytes with `added` folders recorded, or `undefined` when nothing is new. */
export function contentHashesText(record: ContentHashes, added: ReadonlyArray<{ cacheDir: string; content: CachedContent }>): string | undefined {
  const next: ContentHashes = { ...record };
  let changed = false;
  for (const { cacheDir, content } of added) {
    const name = path.basename(cacheDir);
    const was = next[name];
    if (was && was.hash === content.hash && was.version === content.version && was.gitCommitSha === content.gitCommitSha) continue;
    next[name] = content;
    changed = true;
  }
  if (!changed) return undefined;
  const folders = Object.fromEntries(Object.keys(next).sort().map((k) => [k, next[k]]));
  return `${JSON.stringify({ version: 1, folders }, null, 2)}\n`;
}
