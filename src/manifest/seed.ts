/**
 * A plugin seed (docs/design/fleets.md): a read-only folder built at image-build time by
 * `xcsh-tools seed`, holding npm plugins installed as a plugins folder holds them
 * (`<seed>/plugins/package.json`, `<seed>/plugins/node_modules/`), and `xcsh-seed.json`, which
 * says what it is: the format version, what it was built from (a team lock, by the sha256 of its
 * bytes, or specs named on the command line) and per plugin its version, npm integrity and the
 * `tree1` hash of its installed folder.
 *
 * Everything here is synchronous and small (the boot path reads seeds during discovery). Reading
 * never writes: a seed is never changed by anything but `xcsh-tools seed` building a new one.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { isRealPathInside, relativePathClimbsOut } from "../core/contain.js";
import { jsonErrorDetail } from "../core/json-position.js";
import { Type, type Static } from "./typebox.js";
import { checkSchema } from "./schema-check.js";
import { pointerSegment } from "./result.js";
import { npmNameProblem } from "./names.js";

/** The one format this version reads and writes; a newer seed is `ESEED_FORMAT`. */
export const SEED_FORMAT = 1;
export const SEED_MANIFEST = "xcsh-seed.json";

const SeededPluginSchema = Type.Object({
  version: Type.String({ minLength: 1 }),
  /** npm's SRI of the tarball the plugin came from (what a team lock records). */
  integrity: Type.String({ minLength: 1 }),
  /** `tree1-sha256:<hex>` of `<seed>/plugins/node_modules/<name>` as built. */
  tree: Type.String({ pattern: "^tree1-sha256:[0-9a-f]{64}$" }),
});

export const SeedManifestSchema = Type.Object({
  seedFormat: Type.Integer({ minimum: 1 }),
  generator: Type.String(),
  from: Type.Union([
    Type.Object({ kind: Type.Literal("lock"), file: Type.String(), sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }) }),
    Type.Object({ kind: Type.Literal("specs"), specs: Type.Array(Type.String()) }),
  ]),
  plugins: Type.Record(Type.String(), SeededPluginSchema),
});
export type SeedManifest = Static<typeof SeedManifestSchema>;
export type SeededPlugin = Static<typeof SeededPluginSchema>;

/**
 * `xcsh-seed-modules.json`: what validating each tool module of the seed's plugins produced when
 * `seed` installed them (the boot index's module records, keyed by the module's path inside its
 * package, its sha256 and the runtime that imported it). A restore that uses the seed hands them
 * to the boot index refresh (boot/prevalidated.ts), so the refresh imports no module whose bytes
 * and runtime are the recorded ones. A separate file: the boot path reads `xcsh-seed.json` at every
 * start and never needs these (parameter schemas are most of their bytes). No file (a seed built
 * before it existed): every module goes through the validation child, as before.
 */
export const SEED_MODULES = "xcsh-seed-modules.json";

const SeedToolSchema = Type.Object({
  index: Type.Optional(Type.Integer({ minimum: 0 })),
  name: Type.Optional(Type.String()),
  label: Type.Optional(Type.Unknown()),
  description: Type.Optional(Type.Unknown()),
  parameters: Type.Optional(Type.Unknown()),
  problems: Type.Array(Type.Object({ code: Type.String(), field: Type.String(), message: Type.String() })),
});

const SeedModuleSchema = Type.Object({
  /** The module's path inside its plugin's package folder, `/`-separated. */
  file: Type.String({ minLength: 1 }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  /** The runtime that validated it, as the boot index's records name it ("node", "bun"). */
  runtime: Type.String({ minLength: 1 }),
  tools: Type.Array(SeedToolSchema),
});

export const SeedModulesSchema = Type.Object({
  seedFormat: Type.Integer({ minimum: 1 }),
  plugins: Type.Record(Type.String(), Type.Array(SeedModuleSchema)),
});
export type SeedModules = Static<typeof SeedModulesSchema>;
export type SeedModule = Static<typeof SeedModuleSchema>;

/** Where a seed's parts are. */
export function seedPaths(dir: string) {
  const plugins = path.join(dir, "plugins");
  return { dir, manifest: path.join(dir, SEED_MANIFEST), modules: path.join(dir, SEED_MODULES), plugins, packageJson: path.join(plugins, "package.json"), nodeModules: path.join(plugins, "node_modules") };
}

const REBUILD = "rebuild the seed with xcsh-tools seed <dir> (docs/fleets.md), or take this folder out of XCSH_PLUGIN_SEED_DIR";

/**
 * The checked manifest of the seed at `dir`: `ESEED_UNREADABLE` (folder or manifest missing or
 * not readable), `ESEED_FORMAT` (written by a newer xcsh-tools), `ESEED_INVALID` (not JSON, a
 * field of the wrong shape), each naming the file and the field.
 */
export function readSeedManifest(dir: string): SeedManifest {
  const file = seedPaths(dir).manifest;
  let text: string;
  try {
    if (!statSync(dir).isDirectory()) throw new Error("not a folder");
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new XcshToolsError("ESEED_UNREADABLE", `The plugin seed ${dir} (XCSH_PLUGIN_SEED_DIR) cannot be read: ${file}: ${errorMessage(error)}`, {
      file,
      hint: `Mount the seed readable for this user (every file of it, read-only is fine), or ${REBUILD}.`,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new XcshToolsError("ESEED_INVALID", `${file} is not JSON: ${jsonErrorDetail(text, error)}`, { file, hint: `It was not written by xcsh-tools seed: ${REBUILD}.` });
  }
  const format = (raw as { seedFormat?: unknown } | null)?.seedFormat;
  if (typeof format === "number" && Number.isInteger(format) && format > SEED_FORMAT) {
    throw new XcshToolsError("ESEED_FORMAT", `${file} /seedFormat: ${format} was written by a newer xcsh-tools; this one reads seed format ${SEED_FORMAT}`, {
      file,
      path: "/seedFormat",
      hint: `Upgrade xcsh-tools in the image to the version that built the seed, or build the seed with this version (xcsh-tools seed <dir>).`,
    });
  }
  const checked = checkSchema(SeedManifestSchema, raw);
  if (!checked.ok) {
    const issue = checked.issues[0]!;
    throw new XcshToolsError("ESEED_INVALID", `${file} ${issue.path || "/"}: ${issue.expected}, found ${issue.found}`, { file, path: issue.path || "/", hint: `It was not written by xcsh-tools seed, or it was edited: ${REBUILD}.` });
  }
  // A key is joined to node_modules: only a package name, never a path out of it.
  const bad = Object.keys(checked.value.plugins).find((name) => npmNameProblem(name) !== undefined);
  if (bad !== undefined) {
    throw new XcshToolsError("ESEED_INVALID", `${file} /plugins/${pointerSegment(bad)}: expected an npm package name, found ${JSON.stringify(bad)} (${npmNameProblem(bad)})`, { file, path: `/plugins/${pointerSegment(bad)}`, hint: `It was not written by xcsh-tools seed, or it was edited: ${REBUILD}.` });
  }
  return checked.value;
}

/**
 * The recorded module outcomes of the seeded plugin `name`, each `file` made absolute inside its
 * package folder; none when the seed has no `xcsh-seed-modules.json` or it lists nothing for
 * `name`. `ESEED_INVALID` (naming the file and field) when the file is not JSON, has the wrong
 * shape, or names a module outside the plugin's folder (absolute, climbing out with `..`, or
 * through a link): such a file was not written by `seed`, and nothing is trusted from it.
 */
export function seedModulesOf(dir: string, name: string): (Omit<SeedModule, "file"> & { file: string })[] {
  const paths = seedPaths(dir);
  const recorded = readSeedModulesOnce(dir);
  if (!recorded || !Object.hasOwn(recorded.plugins, name)) return [];
  const pluginDir = path.join(paths.nodeModules, name);
  return recorded.plugins[name]!.map((module, i) => {
    const at = `/plugins/${pointerSegment(name)}/${i}/file`;
    const absolute = path.join(pluginDir, ...module.file.split("/"));
    // Lexically first (no path out of the package is ever joined to anything), then through links.
    if (module.file.includes("\\") || path.posix.isAbsolute(module.file) || path.win32.isAbsolute(module.file) || relativePathClimbsOut(module.file) || !isRealPathInside(absolute, pluginDir)) {
      throw seedModulesInvalid(paths.modules, at, `expected a path inside the folder of ${name} (${pluginDir}), found ${JSON.stringify(module.file)}`);
    }
    return { ...module, file: absolute };
  });
}

const seedModulesInvalid = (file: string, at: string, what: string) =>
  new XcshToolsError("ESEED_INVALID", `${file} ${at}: ${what}`, { file, path: at, hint: `It was not written by xcsh-tools seed, or it was edited: ${REBUILD}.` });

/** The checked `xcsh-seed-modules.json` of the seed at `dir`, `undefined` when it has none. */
export function readSeedModules(dir: string): SeedModules | undefined {
  const file = seedPaths(dir).modules;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new XcshToolsError("ESEED_UNREADABLE", `The plugin seed ${dir} (XCSH_PLUGIN_SEED_DIR) cannot be read: ${file}: ${errorMessage(error)}`, { file, hint: `Mount the seed readable for this user (every file of it, read-only is fine), or ${REBUILD}.` });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new XcshToolsError("ESEED_INVALID", `${file} is not JSON: ${jsonErrorDetail(text, error)}`, { file, hint: `It was not written by xcsh-tools seed: ${REBUILD}.` });
  }
  const checked = checkSchema(SeedModulesSchema, raw);
  if (!checked.ok) {
    const issue = checked.issues[0]!;
    throw seedModulesInvalid(file, issue.path || "/", `${issue.expected}, found ${issue.found}`);
  }
  return checked.value;
}

/**
 * Why the seeded plugin `name` cannot be used as its manifest lists it (`ESEED_INCOMPLETE`: its
 * folder or package.json is missing, its version is another, its folder leaves the seed), or
 * `undefined`. Cheap (one stat, one small read): the boot path asks it; the full content check
 * is `verifySeededTree`.
 */
export function seededPluginProblem(dir: string, name: string, entry: SeededPlugin): XcshToolsError | undefined {
  const paths = seedPaths(dir);
  const pluginDir = path.join(paths.nodeModules, name);
  const field = `/plugins/${pointerSegment(name)}`;
  const incomplete = (what: string) =>
    new XcshToolsError("ESEED_INCOMPLETE", `The plugin seed ${dir} lists ${name}@${entry.version} (${paths.manifest} ${field}) but ${what}`, { file: paths.manifest, path: field, hint: `The seed was changed after it was built: ${REBUILD}.` });
  // Before anything of it is read: a link (of the plugin, or of node_modules) leading out of the seed names someone else's files.
  if (!isRealPathInside(pluginDir, dir)) return incomplete(`${pluginDir} resolves outside the seed ${dir}`);
  let version: unknown;
  try {
    version = (JSON.parse(readFileSync(path.join(pluginDir, "package.json"), "utf8")) as { version?: unknown }).version;
  } catch (error) {
    return incomplete(`${path.join(pluginDir, "package.json")} cannot be read (${errorMessage(error)})`);
  }
  if (version !== entry.version) return incomplete(`${path.join(pluginDir, "package.json")} /version is ${JSON.stringify(version)}`);
  return undefined;
}

/** `ESEED_INTEGRITY` when the installed folder's `tree1` hash is not the one the seed recorded. */
export function seedIntegrityError(dir: string, name: string, entry: SeededPlugin, got: string): XcshToolsError | undefined {
  if (got === entry.tree) return undefined;
  const paths = seedPaths(dir);
  const field = `/plugins/${pointerSegment(name)}/tree`;
  return new XcshToolsError("ESEED_INTEGRITY", `The files of ${name} in the plugin seed ${dir} are not those it was built with: ${paths.manifest} ${field} expects ${entry.tree}, the folder ${path.join(paths.nodeModules, name)} hashes to ${got}`, {
    file: paths.manifest,
    path: field,
    hint: `A file was added, removed or changed after the seed was built: ${REBUILD}.`,
  });
}

/**
 * Checked manifests (and module records) by seed folder, with the identity of the file they were
 * read from: a lookup per plugin name (a restore of 20 plugins, `hiddenUserCopies` over every user
 * plugin) costs one `stat`, not a read, a parse and a schema check. A changed file is read again.
 */
const manifestsRead = new Map<string, { identity: string; value: SeedManifest }>();
const modulesRead = new Map<string, { identity: string; value: SeedModules | undefined }>();

function readOnce<T>(cache: Map<string, { identity: string; value: T }>, dir: string, file: string, read: (dir: string) => T): T {
  const info = statSync(file, { throwIfNoEntry: false });
  const identity = info ? `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}` : undefined;
  const known = cache.get(dir);
  if (identity !== undefined && known?.identity === identity) return known.value;
  const value = read(dir);
  if (identity !== undefined) cache.set(dir, { identity, value });
  return value;
}

const readSeedManifestOnce = (dir: string) => readOnce(manifestsRead, dir, seedPaths(dir).manifest, readSeedManifest);
const readSeedModulesOnce = (dir: string) => readOnce(modulesRead, dir, seedPaths(dir).modules, readSeedModules);

/** The first seed of `dirs` that lists `name`, with its entry (first wins, as Claude Code's seeds). Seeds that cannot be read are skipped here; discovery and doctor report them. */
export function seedOf(dirs: readonly string[], name: string): { dir: string; entry: SeededPlugin } | undefined {
  for (const dir of dirs) {
    let manifest: SeedManifest;
    try {
      manifest = readSeedManifestOnce(dir);
    } catch {
      continue;
    }
    if (Object.hasOwn(manifest.plugins, name)) return { dir, entry: manifest.plugins[name]! };
  }
  return undefined;
}

/** The names the user installed themselves (`PLUGINS/package.json` dependencies); none when it cannot be read. */
export function userPluginNames(pluginsPackageJson: string): string[] {
  try {
    const deps = (JSON.parse(readFileSync(pluginsPackageJson, "utf8")) as { dependencies?: unknown }).dependencies;
    return deps !== null && typeof deps === "object" ? Object.keys(deps) : [];
  } catch {
    return [];
  }
}

/** A user's own plugin that is not loaded because a seed provides the name (docs/design/fleets.md "Precedence"). */
export interface HiddenUserCopy {
  code: "WSEED_HIDES";
  name: string;
  /** The seed that provides the name, and wins. */
  seed: string;
  /** The seed's manifest, which lists the name. */
  file: string;
  message: string;
  hint: string;
}

/**
 * The user's own plugins that a seed hides: the seed's copy of the name is loaded, the user's is
 * not. Said, never silent: a user who installed a newer or patched copy would otherwise believe it
 * runs. One place, so that `list`, `tools` and `doctor` say the same.
 */
export function hiddenUserCopies(dirs: readonly string[], pluginsPackageJson: string): HiddenUserCopy[] {
  if (dirs.length === 0) return [];
  return userPluginNames(pluginsPackageJson).flatMap((name) => {
    const seeded = seedOf(dirs, name);
    if (!seeded) return [];
    return [
      {
        code: "WSEED_HIDES" as const,
        name,
        seed: seeded.dir,
        file: seedPaths(seeded.dir).manifest,
        message: `your own ${name} is not loaded: the plugin seed ${seeded.dir} (XCSH_PLUGIN_SEED_DIR) provides ${name}@${seeded.entry.version}, and a seed wins`,
        hint: `Uninstall your copy (xcsh-tools uninstall ${name}), or rebuild the seed without ${name} to use yours.`,
      },
    ];
  });
}

/**
 * `ESEEDED` for a change (`update`, `uninstall`, `disable`…) of plugins the user has not installed
 * and a seed provides: a seed is never written, so the change cannot be made here.
 */
export function assertNotSeeded(dirs: readonly string[], names: readonly string[], installed: (name: string) => boolean, verb: string): void {
  for (const name of names) {
    if (installed(name)) continue;
    const seeded = seedOf(dirs, name);
    if (!seeded) continue;
    throw new XcshToolsError("ESEEDED", `Cannot ${verb} ${name}: it comes from the read-only plugin seed ${seeded.dir} (XCSH_PLUGIN_SEED_DIR), at ${seeded.entry.version}`, {
      file: seedPaths(seeded.dir).manifest,
      path: `/plugins/${pointerSegment(name)}`,
      hint: `A seed is never changed in place. Rebuild the image's seed (xcsh-tools seed <dir> --from <project>, or with the plugin specs you want), or switch it off for one project with xcsh-tools disable --scope project ${name}.`,
    });
  }
}
