/**
 * Building and checking plugin seeds (docs/design/fleets.md). The install itself is the plugins
 * engine's (the CLI points a command at the folder being built); this module turns that plugins
 * folder into a seed: drops our own state (`.xcsh-tools/`: a journal, a boot index of the build
 * machine), hashes each plugin's installed folder, writes `xcsh-seed.json` and makes every file
 * read-only. `verifySeed` re-hashes (doctor, restore).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { chmod, lstat, readFile, readdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
// The hashing module alone: the seed-satisfied restore (fast-seed.ts) must not load the marketplace engine.
import { hashTree } from "../marketplace/tree.js";
import { SEED_FORMAT, readSeedManifest, readSeedModules, seedIntegrityError, seedModulesOf, seedOf, seededPluginProblem, seedPaths, type SeedManifest, type SeedModule, type SeededPlugin } from "../manifest/seed.js";
import { pickManifest } from "../manifest/plugin-manifest.js";
import { pointerSegment } from "../manifest/result.js";
import { XcshToolsError } from "../core/errors.js";

/** What a seed was built from, as its manifest records it. */
export type SeedOrigin = SeedManifest["from"];

/** The `tree1` hash of an installed plugin folder (the prefix names the algorithm, as a team lock's `hash`). */
export async function seedTreeHash(pluginDir: string): Promise<string> {
  return `tree1-sha256:${await hashTree(pluginDir)}`;
}

/**
 * Finish the seed in `dir` whose `plugins/` the installer filled: `plugins` maps each top-level
 * plugin to its version and npm integrity. Writes the manifest, then makes the whole folder
 * read-only (files 0444, or 0555 when executable; folders 0555).
 */
export async function finishSeed(dir: string, origin: SeedOrigin, plugins: ReadonlyMap<string, { version: string; integrity: string }>, generator: string): Promise<SeedManifest> {
  const paths = seedPaths(dir);
  await rm(path.join(paths.plugins, ".xcsh-tools"), { recursive: true, force: true });
  const entries: Record<string, SeededPlugin> = {};
  for (const name of [...plugins.keys()].sort()) {
    const { version, integrity } = plugins.get(name)!;
    entries[name] = { version, integrity, tree: await seedTreeHash(path.join(paths.nodeModules, name)) };
  }
  const manifest: SeedManifest = { seedFormat: SEED_FORMAT, generator, from: origin, plugins: entries };
  await writeFile(paths.modules, `${JSON.stringify({ seedFormat: SEED_FORMAT, plugins: await validatedModules(paths.nodeModules, Object.keys(entries)) })}\n`);
  await writeFile(paths.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  await makeReadOnly(dir);
  return manifest;
}

/**
 * The module outcomes this process validated while installing the seed's plugins (the install's
 * staging validation, boot/prevalidated.ts), for the plugins `names`, as `xcsh-seed-modules.json`
 * records them: each only when the seed's file holds the validated bytes.
 */
async function validatedModules(nodeModules: string, names: readonly string[]): Promise<Record<string, SeedModule[]>> {
  const { validatedOutcomes } = await import("../boot/prevalidated.js");
  const outcomes = validatedOutcomes();
  const recorded: Record<string, SeedModule[]> = {};
  for (const name of names) {
    const modules: SeedModule[] = [];
    for (const { place, sha, runtime, tools } of outcomes) {
      const prefix = `${path.join(name)}${path.sep}`;
      if (!place.startsWith(prefix)) continue;
      const file = place.slice(prefix.length);
      const bytes = await readFile(path.join(nodeModules, place)).catch(() => undefined);
      if (!bytes || createHash("sha256").update(bytes).digest("hex") !== sha) continue;
      // The fields a boot index record keeps of a tool (boot/module-records.ts), no more.
      const kept = tools.map(({ index, name: toolName, label, description, parameters, problems }) => ({ ...(index !== undefined ? { index } : {}), ...(toolName !== undefined ? { name: toolName } : {}), ...(label !== undefined ? { label } : {}), ...(description !== undefined ? { description } : {}), ...(parameters !== undefined ? { parameters } : {}), problems }));
      modules.push({ file: file.split(path.sep).join("/"), sha256: sha, runtime, tools: kept });
    }
    if (modules.length > 0) recorded[name] = modules.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  }
  return recorded;
}

/**
 * Seed modes, recursively: read-only (files 0444, or 0555 when executable; folders 0555), or
 * `writable` again (0644/0755) so that a half-built seed can be removed. A folder is opened before
 * its entries are walked and closed after them.
 */
async function setModes(target: string, writable: boolean): Promise<void> {
  const info = await lstat(target).catch(() => undefined);
  if (!info || info.isSymbolicLink()) return;
  if (!info.isDirectory()) return chmod(target, (info.mode & 0o111 ? 0o111 : 0) | (writable ? 0o644 : 0o444));
  if (writable) await chmod(target, 0o755);
  for (const name of await readdir(target)) await setModes(path.join(target, name), writable);
  if (!writable) await chmod(target, 0o555);
}

const makeReadOnly = (dir: string) => setModes(dir, false);

/** Make a seed folder (half-built, or a copy) writable again. */
export const makeSeedWritable = (dir: string) => setModes(dir, true);

/**
 * Every problem of the seed at `dir`, in full (the boot path checks only versions): the manifest
 * (`ESEED_UNREADABLE`, `ESEED_INVALID`, `ESEED_FORMAT`), each plugin's presence
 * (`ESEED_INCOMPLETE`) and content (`ESEED_INTEGRITY`). Never writes.
 */
export async function verifySeed(dir: string, only?: ReadonlySet<string>): Promise<{ manifest?: SeedManifest; problems: XcshToolsError[] }> {
  let manifest: SeedManifest;
  try {
    manifest = readSeedManifest(dir);
  } catch (error) {
    return { problems: [error as XcshToolsError] };
  }
  const problems: XcshToolsError[] = [];
  let modulesReadable = true;
  try {
    readSeedModules(dir);
  } catch (error) {
    problems.push(error as XcshToolsError);
    modulesReadable = false;
  }
  for (const [name, entry] of Object.entries(manifest.plugins)) {
    if (only && !only.has(name)) continue;
    const problem = seededPluginProblem(dir, name, entry) ?? seedIntegrityError(dir, name, entry, await seedTreeHash(path.join(seedPaths(dir).nodeModules, name))) ?? (modulesReadable ? seedModulesProblem(dir, name) : undefined);
    if (problem) problems.push(problem);
  }
  return { manifest, problems };
}

/** `ESEED_INVALID` when the seed's module records name a file outside `name`'s folder. */
function seedModulesProblem(dir: string, name: string): XcshToolsError | undefined {
  try {
    seedModulesOf(dir, name);
    return undefined;
  } catch (error) {
    return error as XcshToolsError;
  }
}

/** A plugin of a team lock that a seed holds as locked: used in place, never fetched or copied. */
export interface SeededAsLocked {
  dir: string;
  /** Every feature the seeded version declares (a declaration's `features: "*"`). */
  features: string[];
}

/**
 * The seed that provides the locked npm plugin `name` (the first seed listing it), checked in
 * full before a restore relies on it: the seed must hold the lock's version and integrity
 * (`ESEED_LOCK_MISMATCH`, naming both files and fields) and its files must be those it was built
 * with (`ESEED_INCOMPLETE`, `ESEED_INTEGRITY`). `undefined` when no seed lists it.
 */
export async function seededAsLocked(seedDirs: readonly string[], name: string, locked: { version: string; integrity: string }, lockFile: string): Promise<SeededAsLocked | undefined> {
  const found = seedOf(seedDirs, name);
  if (!found) return undefined;
  const { dir, entry } = found;
  const manifestFile = seedPaths(dir).manifest;
  for (const field of ["version", "integrity"] as const) {
    if (entry[field] === locked[field]) continue;
    const at = `/plugins/${pointerSegment(name)}/${field}`;
    throw new XcshToolsError("ESEED_LOCK_MISMATCH", `The plugin seed ${dir} and ${lockFile} disagree on ${name}: ${manifestFile} ${at} is ${entry[field]}, ${lockFile} /npm/${pointerSegment(name)}/${field} is ${locked[field]}`, {
      file: manifestFile,
      path: at,
      hint: `The first seed that lists a plugin provides it. Rebuild the seed from this lock (xcsh-tools seed <dir> --from <project>), or take ${dir} out of XCSH_PLUGIN_SEED_DIR to install ${name} from the registry.`,
    });
  }
  const problem = seededPluginProblem(dir, name, entry) ?? seedIntegrityError(dir, name, entry, await seedTreeHash(path.join(seedPaths(dir).nodeModules, name)));
  if (problem) throw problem;
  // What the seed's build validated: the boot index refresh after the restore's commit imports none
  // of these modules again while their bytes and the runtime are the recorded ones.
  const modules = seedModulesOf(dir, name);
  if (modules.length > 0) (await import("../boot/prevalidated.js")).rememberRecorded(modules.map(({ file, sha256, runtime, tools }) => ({ file, sha: sha256, runtime, tools })));
  // Read synchronously, as seededPluginProblem and the tree hash just did (no overlap to gain).
  const pkg = JSON.parse(readFileSync(path.join(seedPaths(dir).nodeModules, name, "package.json"), "utf8")) as unknown;
  const features = (pickManifest(pkg)?.manifest as { features?: unknown } | undefined)?.features;
  return { dir, features: features !== null && typeof features === "object" ? Object.keys(features) : [] };
}
