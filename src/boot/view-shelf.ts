/**
 * The views a refresh replaced, kept aside (`boot-shelf.json`, beside the index, in the views
 * file's own shape) so that a change undone (`enable` after `disable`, a feature turned on again)
 * gets its view back without a scan (issue 44): a scan of a 21-plugin folder was the largest part
 * of such a command's work. Only the refresh reads this file; a boot never does.
 *
 * A shelved view is served only by the rule the boot itself serves a view by (a fresh check):
 * every input it recorded has the signature it recorded, or is a file whose bytes hash as they
 * did; and no path it names is outside the folders discovery reads (views.ts `viewPathOutside`:
 * the file is in the user's folder, which anything may have edited). One exception, the rule of
 * views.ts `keptAfterLockChange`: the runtime lock may hold other bytes when they read, for
 * discovery, as the bytes the view was built from did (`readings`: the digest of that reading,
 * recorded when the view was shelved from bytes whose hash is the view's; a setting changed
 * meanwhile). The inputs are fingerprinted again (stat, then bytes) and those fingerprints are
 * what the view records, so the next boot does not hash the moved files again. Anything else (a
 * missing, unreadable, corrupt or foreign file, a link, another version, another generator)
 * reads as an empty shelf: the refresh scans, as it did before the shelf existed.
 */
import { lstatSync } from "node:fs";
import path from "node:path";
import { readFileBounded } from "../core/bounded-read.js";
import { MAX_JSON_FILE_BYTES } from "../manifest/json-file.js";
import { BOOT_INDEX_VERSION, readViewsFile, sameKey, type BootView, type ViewKey } from "./format.js";
import { captureFingerprints, currentSignature, hashBytes, type InputFingerprint } from "./fingerprint.js";
import { fsPromises } from "./store.js";
import { discovery, viewPathOutside } from "./views.js";
import { bootIndexGenerator, type World } from "./world.js";

/** Views kept per question, and in all: a few toggles back, and a file read in about a millisecond. */
const MAX_PER_KEY = 2;
const MAX_SHELVED = 4;

/** A shelved view, and the digest of what discovery read in the runtime lock it was built from, when known. */
export interface ShelvedView {
  view: BootView;
  reading?: string;
}

/** The shelf of `world`'s index. */
function shelfFile(world: World): string {
  return path.join(path.dirname(world.file), "boot-shelf.json");
}

/** Whether the shelf is a regular file: a link (to the index, say) is neither read nor written through. */
function plainFile(file: string): boolean {
  try {
    return lstatSync(file).isFile();
  } catch {
    return false;
  }
}

/** The shelved views, or none when the file is not one this version wrote (never throws). */
export function readShelf(world: World): ShelvedView[] {
  const file = shelfFile(world);
  if (!plainFile(file)) return [];
  const read = readViewsFile(file, bootIndexGenerator());
  if (read.status !== "ok") return [];
  const readings = Array.isArray(read.raw.readings) ? (read.raw.readings as unknown[]) : [];
  return (read.raw.views as BootView[]).map((view, i) => (typeof readings[i] === "string" ? { view, reading: readings[i] } : { view }));
}

/** The digest of what discovery reads in the runtime lock's `bytes` (discovery/providers/npm.ts `runtimeLockReading`). */
async function readingOf(world: World, bytes: Uint8Array): Promise<string> {
  const { runtimeLockReading } = await discovery();
  return hashBytes(Buffer.from(await runtimeLockReading(Buffer.from(bytes).toString("utf8"), world.paths.runtimeLock)));
}

/** The runtime lock input of `view`, if it has one. */
const lockInputOf = (world: World, view: BootView) => view.inputs.find((input) => input.path === world.paths.runtimeLock && input.kind === "stat");

/**
 * `view` replaced by a refresh, shelved with the reading of the lock it was built from when
 * `lockBefore` (the lock's bytes before the change) are those bytes (its recorded hash).
 */
export async function shelvedOf(world: World, view: BootView, lockBefore: Uint8Array | undefined): Promise<ShelvedView> {
  const sha = lockInputOf(world, view)?.sha;
  if (lockBefore === undefined || sha === undefined || lockBefore.length > MAX_JSON_FILE_BYTES || (await hashBytes(lockBefore)) !== sha) return { view };
  return { view, reading: await readingOf(world, lockBefore) };
}

/** The runtime lock as it is: its fingerprint and the digest of its reading, from one read between two equal signatures. */
async function lockNow(world: World): Promise<{ fingerprint: InputFingerprint; reading: string } | undefined> {
  const file = world.paths.runtimeLock;
  const sig = currentSignature(file);
  if (!sig.startsWith("f:")) return undefined;
  let bytes: Buffer | undefined;
  try {
    bytes = readFileBounded(file, { maxBytes: MAX_JSON_FILE_BYTES });
  } catch {
    return undefined;
  }
  if (bytes === undefined || currentSignature(file) !== sig) return undefined;
  return { fingerprint: { path: file, kind: "stat", sig, sha: await hashBytes(bytes) }, reading: await readingOf(world, bytes) };
}

/**
 * The shelved view of `key` whose every input reads now as it did when it was built (the lock:
 * or reads for discovery as it did), with the fingerprints taken now, or undefined (then a scan
 * answers). The lock is looked at first, once: a view built from another state of it is passed
 * over without a look at its other inputs.
 */
export async function reinstated(world: World, key: ViewKey, shelf: readonly ShelvedView[]): Promise<BootView | undefined> {
  let lock: Awaited<ReturnType<typeof lockNow>> | null = null;
  for (const { view, reading } of shelf) {
    if (!sameKey(view.key, key) || viewPathOutside(world, key, view) !== undefined) continue;
    const lockInput = lockInputOf(world, view);
    if (lockInput !== undefined) {
      if (lock === null) lock = await lockNow(world);
      if (lock === undefined || (lock.fingerprint.sha !== lockInput.sha && (reading === undefined || lock.reading !== reading))) continue;
    }
    // The boot's rule, stopping at the first input that moved and has no hash (a folder's list, a
    // link): only files whose signature moved are read, stat first, then their bytes
    // (captureFingerprints), so what is recorded never vouches for unread bytes.
    const moved: InputFingerprint[] = [];
    let stale = false;
    for (const input of view.inputs) {
      if (input === lockInput || currentSignature(input.path, input.kind) === input.sig) continue;
      if (input.sha === undefined) {
        stale = true;
        break;
      }
      moved.push(input);
    }
    if (stale) continue;
    const now = await captureFingerprints(moved.map((input) => ({ path: input.path, kind: input.kind, hash: true })));
    if (!moved.every((input, i) => now[i]!.sha === input.sha)) continue;
    const taken = new Map(moved.map((input, i) => [input, now[i]!]));
    return { ...view, inputs: view.inputs.map((input) => (input === lockInput ? lock!.fingerprint : (taken.get(input) ?? input))) };
  }
  return undefined;
}

/** What a view answers and from what, its build time and its inputs' signatures aside: a view served again and replaced again is one view. */
function identity(view: BootView): string {
  return JSON.stringify({ ...view, builtAt: undefined, inputs: view.inputs.map(({ sig: _sig, ...input }) => input) });
}

/**
 * Shelve `replaced` (views a refresh replaced after a scan or from the shelf) and drop from the
 * shelf what `serving` (the index's views now) holds; most recent first, at most MAX_PER_KEY per
 * question and MAX_SHELVED in all. Written (atomically, without fsync: a cache checked at every
 * use) only when it changes.
 */
export async function updateShelf(world: World, shelf: readonly ShelvedView[], replaced: readonly ShelvedView[], serving: readonly BootView[]): Promise<void> {
  const served = new Set(serving.map(identity));
  const next: ShelvedView[] = [];
  const seen = new Set<string>();
  for (const shelved of [...replaced, ...shelf]) {
    const id = identity(shelved.view);
    if (served.has(id) || seen.has(id)) continue;
    if (next.filter((kept) => sameKey(kept.view.key, shelved.view.key)).length >= MAX_PER_KEY) continue;
    seen.add(id);
    next.push(shelved);
    if (next.length === MAX_SHELVED) break;
  }
  if (next.length === shelf.length && next.every((shelved, i) => shelved === shelf[i])) return;
  const file = shelfFile(world);
  // Removing what is there first when it is not a plain file: the link goes, never its target.
  if (next.length === 0 || !plainFile(file)) await (await fsPromises()).rm(file, { force: true });
  if (next.length === 0) return;
  const { writeFileAtomic } = await import("../core/atomic-fs.js");
  const views = next.map((shelved) => shelved.view);
  const readings = next.map((shelved) => shelved.reading ?? null);
  const text = `${JSON.stringify({ version: BOOT_INDEX_VERSION, generator: bootIndexGenerator(), writtenAt: new Date().toISOString(), views, readings })}\n`;
  await writeFileAtomic(file, text, undefined, { durable: false });
}
