/**
 * Package folders already unpacked in this process, handed to npm's installer instead of the
 * tarball being read a second time.
 *
 * A team restore reads every locked package before it installs anything (plugins/team.ts
 * `resolvePinned`: the manifest the install plans with, the files the consent preview reads), and
 * pacote reads a tarball's manifest by unpacking it whole. Arborist's reify then unpacked the same
 * bytes again from npm's cache into the staging copy: each tarball was decompressed, checked
 * (tarball-check.ts) and written twice. With the folders handed over, reify's `pacote.extract`
 * of a package whose locked integrity names a handed folder moves that folder into place.
 *
 * Why this gives the same tree and the same guarantees: the folder is what pacote's own `extract`
 * wrote, in this process, with the same options (npmOptions: modes, umask), from bytes that
 * matched this very integrity and passed the tarball check; it sat in our scratch, read and never
 * run (the consent preview reads it). The answer to "are these the locked bytes?" is therefore
 * already known, and only for that integrity: any other (a different lock entry, a tarball URL or
 * git spec, whose fetchers differ) is not in the map and is extracted as before, integrity checked.
 * A folder serves one destination (it is moved); a second one, a folder that cannot be moved
 * (another file system, a package with bundled dependencies), or one that is gone, falls back to
 * the normal extract. Only callers that
 * pass `UNPACKED_OPTION` (applyPinned) are concerned; every other install extracts as before.
 */
import { mkdir, readdir, rename } from "node:fs/promises";
import path from "node:path";

/** The key of pacote's (and so arborist's) options object holding the handed folders. */
export const UNPACKED_OPTION = "xcshUnpacked";

/** Unpacked registry tarballs by the integrity they were checked against; each taken once. */
export class UnpackedFolders {
  readonly #dirs = new Map<string, string>();

  /** Offer `dir`, unpacked from bytes that matched `integrity` (a registry tarball URL's). */
  offer(integrity: string, dir: string): void {
    this.#dirs.set(integrity, dir);
  }

  /** The folder on offer for `integrity`, left on offer. */
  peek(integrity: string): string | undefined {
    return this.#dirs.get(integrity);
  }

  /** The folder for `integrity`, removed from the offer (a moved folder serves one place). */
  take(integrity: string): string | undefined {
    const dir = this.#dirs.get(integrity);
    this.#dirs.delete(integrity);
    return dir;
  }
}

/**
 * Move the package's files from `dir` into `dest` as pacote's extract writes them: into the folder,
 * beside a `node_modules` that arborist may be filling at the same time with the package's nested
 * dependencies (it unpacks every package at once), which is never touched. False, having moved
 * nothing, when that cannot be done that way: the package brings a `node_modules` of its own
 * (bundled), or `dest` already holds files (pacote would empty them first). A move that fails
 * half-way is left to pacote's extract, which empties the package's files and writes them anew.
 */
export async function moveInto(dir: string, dest: string): Promise<boolean> {
  const entries = await readdir(dir);
  if (entries.includes("node_modules")) return false;
  const present = await readdir(dest).catch(() => [] as string[]);
  if (present.some((entry) => entry !== "node_modules")) return false;
  await mkdir(dest, { recursive: true });
  await Promise.all(entries.map((entry) => rename(path.join(dir, entry), path.join(dest, entry))));
  return true;
}

/** The fields of a pacote fetcher the hand-over reads. */
interface FetcherLike {
  spec?: { type?: string };
  resolved?: string | null;
  from?: string;
  opts?: Record<string, unknown>;
}

const HANDED = Symbol.for("xcsh-tools.unpackedHandOver");

/**
 * Wrap pacote's `extract` (FetcherBase's; arborist's reify calls it for every package it unpacks)
 * so that a registry tarball whose integrity names a handed folder is moved into place instead of
 * read again. Idempotent.
 */
export function handOverUnpacked(pacote: typeof import("pacote")): void {
  let proto: Record<PropertyKey, unknown> | null = (pacote as unknown as { RemoteFetcher: { prototype: object } }).RemoteFetcher.prototype as Record<PropertyKey, unknown>;
  while (proto && !Object.prototype.hasOwnProperty.call(proto, "extract")) proto = Object.getPrototypeOf(proto) as Record<PropertyKey, unknown> | null;
  if (!proto || proto[HANDED]) return;
  const original = proto.extract as (this: FetcherLike, dest: string) => Promise<unknown>;
  proto[HANDED] = true;
  proto.extract = async function handedExtract(this: FetcherLike, dest: string) {
    const handed = this.opts?.[UNPACKED_OPTION];
    // The integrity arborist asks for (pacote parsed it: its string form is the lock's for a
    // single hash; any other form simply finds no folder). Only the fetcher the folder was
    // unpacked with: a registry tarball URL, pacote's "remote".
    const asked = this.opts?.integrity;
    const dir = handed instanceof UnpackedFolders && this.spec?.type === "remote" && asked ? handed.take(String(asked)) : undefined;
    if (dir !== undefined && (await moveInto(dir, dest).catch(() => false))) return { resolved: this.resolved, integrity: String(asked), from: this.from };
    return original.call(this, dest);
  };
}
