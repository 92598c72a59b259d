/**
 * Installed npm plugins: first those of the plugin seeds (`XCSH_PLUGIN_SEED_DIR`, see
 * `discoverSeeds` below), then the `dependencies` of `<xcshHome>/plugins/package.json`, in object order. For each name, `node_modules/<name>/package.json` is read and
 * its manifest is `xcsh`, else `pi` (a package with neither is not a plugin: reported in
 * `ignored`). Linked plugins (`node_modules/<name>` a symlink) work the same; their package is
 * the link's target.
 *
 * Effective state, as the host's: a plugin is skipped when the runtime lock says
 * `enabled: false` (a lock entry without `enabled` counts as enabled) or when
 * `<cwd>/.xcsh/plugin-overrides.json` lists it in `disabled`. Its features are
 * `overrides.features[name] ?? lock.enabledFeatures ?? null` and its tool entries are
 * `selectEntries(manifest, "tools", features)`. `"*"` in a feature list means every declared
 * feature; other names the manifest does not declare are `EUNKNOWN_FEATURE` (the known ones still
 * apply). Tools are user level: the plugins live in the user's xcsh root; overrides only modify.
 *
 * Fail closed: when the lock or the overrides file is unusable we cannot tell which plugins the
 * user switched off, so no npm plugin tool is discovered (one `ESTATE_FILE` record says why) —
 * loading code the user disabled is worse than loading none. Only `.xcsh/plugin-overrides.json`
 * is read (the host's manager reads only it; its loader also tries `.codex`/`.gemini`), and only
 * in a trusted project: in an untrusted one the overrides are not read (only reported), so they
 * can neither enable a plugin the user disabled nor change its features; the lock alone decides.
 *
 * Entries: an absolute entry, one that leaves the package by `../`, or one whose real path (after
 * symlinks) is outside the package's real path is `EENTRY_ESCAPE`; a missing one is
 * `EENTRY_NOT_FOUND` (the host drops both silently). An entry may name a module, a tool
 * folder with an index, or a folder of tools (scanned like a tools directory).
 */
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import { Type, type Static, type TSchema } from "../../manifest/typebox.js";
import { errorMessage, isXcshToolsError } from "../../core/errors.js";
import { effectiveOverridesFile, projectPaths } from "../../core/paths.js";
import type { ToolSource } from "../../core/contract.js";
import { readJsonFile } from "../../manifest/json-file.js";
import { notAPluginReason, pickManifest, readHostManifest, selectEntries, type PluginManifest } from "../../manifest/plugin-manifest.js";
import { PluginsPackageJsonSchema } from "../../manifest/plugins-package.js";
import { pointerSegment } from "../../manifest/result.js";
import { checkSchema } from "../../manifest/schema-check.js";
import { RuntimePluginStateSchema, runtimeEnabled } from "../../manifest/runtime-lock.js";
import { discoveryError, type DiscoveryErrorCode } from "../records.js";
import type { SeedManifest } from "../../manifest/seed.js";
import { describeIssues, readStateFile, stateFileFromText, type StateFileRead } from "../state-file.js";
import { reportSkipped } from "../untrusted.js";
import { resolveToolEntry } from "../tools-dir.js";
import { isPathInside } from "../../core/contain.js";
import { npmPluginOutside } from "../../core/state-places.js";
import type { DiscoveryContext, DiscoverySink, ToolProvider } from "../types.js";

const NAME = "npm Plugin";

/**
 * Outer shapes only: per-plugin parts are checked one by one so that one bad plugin entry of
 * the lock or the overrides spoils only that plugin.
 */
const LockEnvelopeSchema = Type.Object({
  plugins: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  settings: Type.Optional(Type.Unknown()),
});
const OverridesEnvelopeSchema = Type.Object({
  disabled: Type.Optional(Type.Array(Type.String())),
  features: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  settings: Type.Optional(Type.Unknown()),
});
const FeatureListSchema = Type.Array(Type.String());

/** A dependency key that is a package name and cannot walk out of node_modules. */
const PACKAGE_NAME = /^(?:@[^/@\s]+\/)?[^/@\s][^/\s]*$/;

const USER_SOURCE: ToolSource = { provider: "npm", providerName: NAME, level: "user" };
const FAIL_CLOSED = "no npm plugin tools were loaded, because which plugins are disabled is unknown";

/**
 * All that discovery takes from the runtime lock's bytes `text` (read from `file`): how the
 * envelope reads, its `plugins`, and the records the reading makes. The npm provider is the only
 * reader of the lock, and reads nothing else of it, so two texts with the same reading give the
 * same answer: a refresh after a change of the lock's settings alone keeps its views (boot/views.ts).
 */
export function runtimeLockReading(text: string, file: string): string {
  const errors: unknown[] = [];
  const sink = { addError: (error: unknown) => errors.push(error) } as unknown as DiscoverySink;
  const read = stateFileFromText(text, file, LockEnvelopeSchema, USER_SOURCE, sink, FAIL_CLOSED);
  return JSON.stringify({ status: read.status, plugins: read.status === "ok" ? read.value.plugins : undefined, errors });
}

export const npmProvider: ToolProvider = {
  id: "npm",
  name: NAME,
  async discover(ctx, sink) {
    const userSource: ToolSource = { ...USER_SOURCE };
    const projectSource: ToolSource = { provider: "npm", providerName: NAME, level: "project" };
    const failClosed = FAIL_CLOSED;
    const project = projectPaths(ctx.cwd);
    if (!ctx.projectTrusted) for (const file of [project.pluginOverrides, ...project.otherPluginOverrides]) reportSkipped(file, projectSource, "plugin-overrides", sink);

    const seeds = ctx.paths.seeds;
    const pkg = await readStateFile(ctx.paths.pluginsPackageJson, PluginsPackageJsonSchema, userSource, sink);
    if (pkg.status !== "ok" && seeds.length === 0) return;
    const names = pkg.status === "ok" ? Object.keys(pkg.value.dependencies ?? {}) : [];
    if (names.length === 0 && seeds.length === 0) return;

    const lockFile = ctx.paths.runtimeLock;
    const lock = names.length > 0 ? await readStateFile(lockFile, LockEnvelopeSchema, userSource, sink, failClosed) : { status: "missing" as const };
    const overridesFile = effectiveOverridesFile(ctx.cwd);
    const overrides: StateFileRead<Static<typeof OverridesEnvelopeSchema>> = ctx.projectTrusted
      ? await readStateFile(overridesFile, OverridesEnvelopeSchema, projectSource, sink, failClosed)
      : { status: "missing" };
    if (overrides.status === "bad") return;
    const disabled = new Set(overrides.status === "ok" ? (overrides.value.disabled ?? []) : []);
    const featureOverrides = overrides.status === "ok" ? (overrides.value.features ?? {}) : {};
    // Seeds first: a seeded plugin wins over the user's copy of the same name (as Claude Code's seeds).
    const seeded = await discoverSeeds(ctx, sink, { disabled, featureOverrides, overridesFile });
    if (lock.status === "bad" || pkg.status !== "ok") return;
    const lockPlugins = lock.status === "ok" ? (lock.value.plugins ?? {}) : {};

    for (const name of names) {
      if (seeded.has(name)) continue;
      const source: ToolSource = { ...userSource, plugin: name };
      if (!PACKAGE_NAME.test(name) || name.split("/").some((part) => part === "." || part === "..")) {
        const file = ctx.paths.pluginsPackageJson;
        sink.addError(discoveryError("ESTATE_ENTRY", file, `${file} /dependencies/${pointerSegment(name)}: "${name}" is not a package name; it was skipped.`, source));
        continue;
      }
      const state = pluginPart(lockPlugins, name, RuntimePluginStateSchema, { file: lockFile, at: "/plugins", source, sink });
      if (state === "bad" || !runtimeEnabled(state) || disabled.has(name)) continue;
      const overridden = pluginPart(featureOverrides, name, FeatureListSchema, { file: overridesFile, at: "/features", source: { ...source, level: "project" }, sink });
      if (overridden === "bad") continue;
      const features = overridden ?? state?.enabledFeatures ?? null;
      const featuresFile = overridden ? overridesFile : lockFile;

      const dir = path.join(ctx.paths.pluginsNodeModules, name);
      const outside = npmPluginOutside(dir, name, pkg.value.dependencies?.[name], ctx.paths);
      if (outside) {
        sink.addError(discoveryError("EPATH_OUTSIDE", dir, `${outside}; plugin ${name} was not loaded.`, source));
        continue;
      }
      await discoverPlugin(dir, name, features, featuresFile, source, sink);
    }
  },
};

/**
 * The plugins of the seeds (`XCSH_PLUGIN_SEED_DIR`), used in place: for each seed in order, each
 * plugin its `xcsh-seed.json` lists that no earlier seed had. A seed's plugins are on unless the
 * project's overrides switch them off (the user's runtime lock is about the user's own tree);
 * their features are the overrides' or the plugin's defaults. A seed that cannot be read, or a
 * plugin missing from it, is a coded record (manifest/seed.ts) and loads nothing of it. Returns
 * the names the seeds took.
 */
async function discoverSeeds(ctx: DiscoveryContext, sink: DiscoverySink, project: { disabled: ReadonlySet<string>; featureOverrides: Record<string, unknown>; overridesFile: string }): Promise<Set<string>> {
  const taken = new Set<string>();
  if (ctx.paths.seeds.length === 0) return taken;
  const { readSeedManifest, seededPluginProblem, seedPaths } = await import("../../manifest/seed.js");
  for (const dir of ctx.paths.seeds) {
    const seedSource: ToolSource = { provider: "npm", providerName: NAME, level: "user", seed: dir };
    let manifest: SeedManifest;
    try {
      manifest = readSeedManifest(dir);
    } catch (error) {
      if (!isXcshToolsError(error)) throw error;
      sink.addError(discoveryError(error.code as DiscoveryErrorCode, error.file ?? dir, `${error.message}; no plugin of this seed was loaded. ${error.hint ?? ""}`.trim(), seedSource));
      continue;
    }
    for (const [name, entry] of Object.entries(manifest.plugins)) {
      if (taken.has(name) || !PACKAGE_NAME.test(name) || name.split("/").some((part) => part === "." || part === "..")) continue;
      taken.add(name);
      const source: ToolSource = { ...seedSource, plugin: name };
      const problem = seededPluginProblem(dir, name, entry);
      if (problem) {
        sink.addError(discoveryError("ESEED_INCOMPLETE", problem.file ?? dir, `${problem.message}; plugin ${name} was not loaded. ${problem.hint ?? ""}`.trim(), source));
        continue;
      }
      if (project.disabled.has(name)) continue;
      const overridden = pluginPart(project.featureOverrides, name, FeatureListSchema, { file: project.overridesFile, at: "/features", source: { ...source, level: "project" }, sink });
      if (overridden === "bad") continue;
      await discoverPlugin(path.join(seedPaths(dir).nodeModules, name), name, overridden ?? null, project.overridesFile, source, sink);
    }
  }
  return taken;
}

/** Plugin `name`'s own part of the lock or the overrides, checked: `"bad"` (reported) when it has the wrong shape. */
function pluginPart<S extends TSchema>(doc: Record<string, unknown>, name: string, schema: S, where: { file: string; at: string; source: ToolSource; sink: DiscoverySink }): Static<S> | undefined | "bad" {
  if (!Object.hasOwn(doc, name)) return undefined;
  const checked = checkSchema(schema, doc[name]);
  if (checked.ok) return checked.value;
  const issues = describeIssues(where.file, `${where.at}/${pointerSegment(name)}`, checked.issues);
  where.sink.addError(discoveryError("ESTATE_ENTRY", where.file, `${issues}; plugin ${name} was not loaded.`, where.source));
  return "bad";
}

async function discoverPlugin(dir: string, name: string, features: string[] | null, featuresFile: string, source: ToolSource, sink: DiscoverySink): Promise<void> {
  const manifest = await readPluginManifest(dir, name, source, sink);
  if (!manifest) return;
  const selection = features === null ? null : checkedSelection(manifest, features, { name, featuresFile, source, sink });
  // The declaration travels with each entry into the boot index's view (the manifest is one of its inputs).
  if (manifest.staticTools === true) source = { ...source, staticTools: true };
  await addToolEntries(dir, name, selectEntries(manifest, "tools", selection), source, sink);
}

/**
 * Hand the tool modules of plugin `name`'s manifest `entries` (folder `dir`) to `sink`, as the host
 * loads them: an entry that leaves the package is `EENTRY_ESCAPE`, a missing one `EENTRY_NOT_FOUND`.
 * Also what a state change that turns entries on validates first (plugins/turned-on.ts).
 */
export async function addToolEntries(dir: string, name: string, entries: readonly string[], source: ToolSource, sink: DiscoverySink): Promise<void> {
  // Synchronous file system calls, as in tools-dir.ts (small, sequential: fewer thread-pool trips).
  const realRoot = realpathSync.native(dir);
  for (const entry of new Set(entries)) {
    const target = path.resolve(dir, entry);
    const label = `tools entry "${entry}" of plugin ${name}`;
    const escape = entryEscape(entry, target, dir, realRoot, label);
    if (escape) {
      sink.addError(discoveryError("EENTRY_ESCAPE", target, escape, source));
      continue;
    }
    await resolveToolEntry(target, source, sink, { within: realRoot, what: `${label} (${target})` });
  }
}

/** The plugin's checked manifest; a missing or broken package.json or manifest is reported, a package without one ignored. */
async function readPluginManifest(dir: string, name: string, source: ToolSource, sink: DiscoverySink): Promise<PluginManifest | undefined> {
  const pkgFile = path.join(dir, "package.json");
  let pkg: unknown;
  try {
    pkg = await readJsonFile(pkgFile);
  } catch (error) {
    const message = isXcshToolsError(error) ? error.message : errorMessage(error);
    sink.addError(discoveryError("EPLUGIN_MANIFEST", pkgFile, `${message}; plugin ${name} was not loaded.`, source));
    return undefined;
  }
  if (pkg === undefined) {
    const message = `Plugin ${name} is listed in the plugins package.json but ${pkgFile} does not exist; reinstall it (xcsh-tools doctor --fix).`;
    sink.addError(discoveryError("EPLUGIN_NOT_FOUND", dir, message, source));
    return undefined;
  }
  const picked = pickManifest(pkg);
  if (!picked) {
    sink.addIgnored({ path: pkgFile, source, reason: notAPluginReason(pkg) });
    return undefined;
  }
  // As the host reads it (plugin-manifest.ts hostManifest): shapes it loads are loaded here too.
  const checked = readHostManifest(picked.manifest);
  if (!checked.ok) {
    const where = describeIssues(pkgFile, `/${picked.key}`, checked.issues);
    sink.addError(discoveryError("EPLUGIN_MANIFEST", pkgFile, `${where}; plugin ${name} was not loaded.`, source));
    return undefined;
  }
  return checked.value;
}

/** The enabled features the manifest declares (`*`: all of them); the unknown ones are reported, the others still apply. */
function checkedSelection(manifest: PluginManifest, features: string[], at: { name: string; featuresFile: string; source: ToolSource; sink: DiscoverySink }): string[] {
  const declared = Object.keys(manifest.features ?? {});
  const expanded = features.includes("*") ? [...new Set([...features.filter((f) => f !== "*"), ...declared])] : features;
  const unknown = expanded.filter((feature) => !declared.includes(feature));
  if (unknown.length > 0) {
    const { featuresFile } = at;
    const quoted = (names: string[]) => names.map((f) => `"${f}"`).join(", ");
    const message = `${featuresFile} enables feature${unknown.length > 1 ? "s" : ""} ${quoted(unknown)} of plugin ${at.name}, which declares ${declared.length > 0 ? quoted(declared) : "no features"}; the others still apply.`;
    at.sink.addError(discoveryError("EUNKNOWN_FEATURE", featuresFile, message, featuresFile.endsWith("plugin-overrides.json") ? { ...at.source, level: "project" } : at.source));
  }
  return expanded.filter((feature) => declared.includes(feature));
}

/** Why a tools entry may not be loaded (it leaves the package, by its path or its real path), or `undefined`. */
function entryEscape(entry: string, target: string, dir: string, realRoot: string, label: string): string | undefined {
  if (path.isAbsolute(entry) || !isPathInside(target, dir)) return `The ${label} points outside the package (${dir}); it was not loaded.`;
  try {
    statSync(target);
  } catch {
    return undefined; // missing: resolveToolEntry reports it
  }
  const real = realpathSync.native(target);
  return isPathInside(real, realRoot) ? undefined : `The ${label} resolves to ${real}, outside the package (${realRoot}); it was not loaded.`;
}
