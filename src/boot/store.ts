/**
 * Reading and writing the index files for one world: the views (all a boot reads) and, when
 * asked, the module records; finding and replacing a view; and whether a rebuilt index says
 * anything new (so a command that changed nothing changes no byte). Reading never throws: any
 * problem reads as an empty index with the reason.
 */
import path from "node:path";
import { errorMessage } from "../core/errors.js";
import { BOOT_INDEX_VERSION, readBootIndex, readModuleRecords, sameKey, serializeBootIndex, type BootIndex, type BootView, type ViewKey } from "./format.js";
import { bootIndexGenerator, type World } from "./world.js";

/** What writes the files (atomic-fs.js) and node:fs/promises (about 2 ms to load under Bun): writes only. */
const atomicFs = () => import("../core/atomic-fs.js");
export const fsPromises = () => import("node:fs/promises");

/** Views kept in the file (most recently built first). */
export const MAX_BOOT_VIEWS = 8;

export function emptyIndex(): BootIndex {
  return { version: BOOT_INDEX_VERSION, generator: bootIndexGenerator(), writtenAt: new Date(0).toISOString(), views: [], modules: {} };
}

/** The index, with its module records when `withModules` (a boot needs only the views). */
export async function loadIndex(world: World, withModules: boolean): Promise<{ index: BootIndex; reason?: string; status: string; modulesProblem?: string }> {
  try {
    const read = await readBootIndex({ views: world.file, modules: world.paths.bootModules }, bootIndexGenerator(), withModules);
    if (read.status === "ok") return { index: read.index, status: "ok", ...(read.modulesProblem ? { modulesProblem: read.modulesProblem } : {}) };
    return { index: emptyIndex(), reason: read.reason, status: read.status };
  } catch (error) {
    return { index: emptyIndex(), reason: `cannot read the boot index: ${errorMessage(error)}`, status: "corrupt" };
  }
}

/** The module records alone (format.ts `readModuleRecords`); never throws: any problem reads as none. */
export function loadModuleRecords(world: World): BootIndex["modules"] {
  try {
    return readModuleRecords(world.paths.bootModules, bootIndexGenerator()).modules;
  } catch {
    return {};
  }
}

/**
 * Write the views file, and first the records file when `withModules` (an index loaded without
 * its records must not overwrite them with none).
 */
export async function writeIndex(world: World, index: BootIndex, withModules: boolean): Promise<void> {
  index.writtenAt = new Date().toISOString();
  index.generator = bootIndexGenerator();
  await (await fsPromises()).mkdir(path.dirname(world.file), { recursive: true });
  const { writeFileAtomic } = await atomicFs();
  const texts = serializeBootIndex(index);
  // A cache that checks itself when read (format.ts: shape, version, generator; views.ts: every
  // input): no fsync, which a power cut could only make read as stale.
  if (withModules) await writeFileAtomic(world.paths.bootModules, texts.modules, undefined, { durable: false });
  await writeFileAtomic(world.file, texts.views, undefined, { durable: false });
}

export function findView(index: BootIndex, key: ViewKey): BootView | undefined {
  return index.views.find((view) => sameKey(view.key, key));
}

export function upsertView(index: BootIndex, view: BootView): void {
  index.views = [view, ...index.views.filter((v) => !sameKey(v.key, view.key))].slice(0, MAX_BOOT_VIEWS);
}


/** The module records of `index` in an order that does not depend on how they were built. */
function canonicalModules(index: BootIndex): unknown[] {
  return Object.keys(index.modules)
    .sort()
    .map((key) => {
      const records = index.modules[key]!;
      return [key, Object.keys(records).sort().map((runtime) => records[runtime])];
    });
}

/** The same views (inputs and answers) and module records, whenever each was built. */
export function sameAnswers(a: BootIndex, b: BootIndex): boolean {
  const canonical = (index: BootIndex) => JSON.stringify({ generator: index.generator, views: index.views.map(({ builtAt: _builtAt, ...view }) => view), modules: canonicalModules(index) });
  return b.generator === bootIndexGenerator() && canonical({ ...a, generator: b.generator }) === canonical(b);
}

/** The same module records (the views aside). */
export function sameModules(a: BootIndex, b: BootIndex): boolean {
  return JSON.stringify(canonicalModules(a)) === JSON.stringify(canonicalModules(b));
}

