/**
 * Resolving install specs to packages, before anything is written: pacote fetches each spec's
 * full manifest (`fullMetadata`: the abbreviated registry documents drop the `xcsh` field, and we
 * need it to check features before installing), and the package is checked statically as a
 * plugin (name, version, manifest). Folders and tarball files are read in place, git URLs are
 * cloned into npm's cache — nothing lands in the plugins folder, so `--dry-run` can resolve too.
 */
import { XcshToolsError } from "../core/errors.js";
import { validatePluginPackageJson, type PluginManifest } from "../manifest/plugin-manifest.js";
import { warmDependencies } from "./dependency-warmup.js";
import { declaredScripts, dependencyNames } from "./inventory.js";
import { installScriptsOf } from "./install-scripts.js";
import { loadPacote, loadTar, npmError, npmOptions, npmPolicySourceOf, type NpmClientOptions } from "./npm-client.js";
import { assertNotForbidden, assertSourcesAllowed } from "../core/policy.js";
import { assertGitSpec, type InstallSpec } from "./spec.js";
import type { InstallScript } from "../components/consent.js";
import { TARBALL_CHECK_OPTION, inspectTarball } from "./tarball-check.js";

/** A spec resolved to one package version. */
export interface ResolvedPackage {
  spec: InstallSpec;
  name: string;
  version: string;
  /** Where the bytes come from (tarball URL, file, git URL with commit). */
  resolved: string | undefined;
  integrity: string | undefined;
  manifest: PluginManifest;
  scripts: string[];
  /** Its own preinstall/install/postinstall commands: what --allow-scripts runs of it (a dry run names them). */
  installScripts: InstallScript[];
  /** The packages its manifest has npm install beside it (dependencies, optional and peer ones). */
  dependencyNames: string[];
}

/**
 * The organization policy's check of a spec before anything of it is read or fetched (its source,
 * and its name when the spec names one): `EPOLICY_*`. Returns the policy in effect. `seed` asks it
 * before it makes its build folder.
 */
export function assertSpecAllowed(spec: InstallSpec, client: Pick<NpmClientOptions, "registry">, cwd: string, verb = "install"): ReturnType<typeof assertSourcesAllowed> {
  const policy = assertSourcesAllowed([{ source: npmPolicySourceOf(spec.npmSpec, client, undefined, cwd), what: "plugin", subject: `${verb} ${spec.raw}` }]);
  if (spec.name !== undefined) assertNotForbidden(policy, spec.name);
  return policy;
}

/** Fetch and check the package a spec names. Throws coded errors; writes nothing of ours. */
export async function resolveSpec(spec: InstallSpec, client: NpmClientOptions, cwd: string): Promise<ResolvedPackage> {
  // The organization policy first: a refused source is never read, fetched or cloned.
  const policy = assertSpecAllowed(spec, client, cwd);
  const resolved = await fetchAndCheck(spec, client, cwd);
  // Folders, tarballs and git specs name their package only once read.
  assertNotForbidden(policy, resolved.name);
  return resolved;
}

/** The policy of installed npm plugins, each checked by the source its record names, before a registry is asked about them (`update`, `outdated`). */
export function assertInstalledAllowed(plugins: readonly { name: string; dependency: string; record?: { spec: string } | undefined }[], client: Pick<NpmClientOptions, "registry">, verb = "update"): void {
  assertSourcesAllowed(plugins.map((p) => ({ source: npmPolicySourceOf(p.record?.spec ?? p.dependency, client, p.record ? undefined : p.name), what: "plugin" as const, subject: `${verb} ${p.name}` })));
}

async function fetchAndCheck(spec: InstallSpec, client: NpmClientOptions, cwd: string): Promise<ResolvedPackage> {
  // pacote runs git itself for git specs: their URL and committish are checked again here.
  assertGitSpec(spec);
  const pacote = await loadPacote();
  // A tarball file is checked before pacote reads it, as a stream (its size is the user's disk's,
  // not our memory's): pacote's extractor would silently drop a hostile entry and install the rest.
  if (spec.source === "tarball") {
    const file = spec.parsed.fetchSpec ?? spec.npmSpec;
    const { createReadStream } = await import("node:fs");
    const stream = createReadStream(file);
    let opened = true;
    await new Promise<void>((resolve) => {
      stream.once("open", () => resolve());
      stream.once("error", () => {
        opened = false; // pacote reports the missing file with its own code below
        resolve();
      });
    });
    if (opened) await inspectTarball(await loadTar(), stream, { what: spec.raw, limits: client.tarballLimits ?? {}, requirePackageJson: true });
  }
  if (spec.source === "directory") {
    // pacote reads any package.json, however large or deep; ours have limits (json-file.ts).
    const { readJsonFile } = await import("../manifest/json-file.js");
    const { isXcshToolsError } = await import("../core/errors.js");
    const file = `${spec.parsed.fetchSpec ?? spec.npmSpec}/package.json`;
    try {
      await readJsonFile(file);
    } catch (error) {
      if (isXcshToolsError(error, "EJSON_TOO_LARGE") || isXcshToolsError(error, "EJSON_DEPTH") || isXcshToolsError(error, "EJSONPARSE")) {
        throw new XcshToolsError("EPLUGIN_INVALID", `${spec.raw} is not an installable xcsh plugin: ${error.message}`, { file, hint: error.hint, exitCode: 2, cause: error });
      }
      // Anything else (unreadable, missing): pacote reports it with its own code below.
    }
  }
  // Reading a tarball's manifest extracts it (pacote): the check inside pacote's stream
  // (tarball-check.ts) names it as the user did and requires a package.json at its root.
  const check = { [TARBALL_CHECK_OPTION]: { what: spec.raw, requirePackageJson: true, ...(client.tarballLimits ? { limits: client.tarballLimits } : {}) } };
  let pkg: Record<string, unknown>;
  try {
    pkg = (await pacote.manifest(spec.npmSpec, { ...npmOptions(client), ...check, fullMetadata: true, where: cwd } as never)) as unknown as Record<string, unknown>;
  } catch (error) {
    throw npmError(error, spec.raw, client, spec.name, spec.source === "remote" ? spec.npmSpec : undefined);
  }
  // Never throws; awaited below, so arborist finds every dependency's packument in memory.
  const warming = warmDependencies(pacote, pkg, client, cwd);
  // Installing (not a dry run): npm's installer reads the plugin's tarball, by this integrity or
  // URL, through the same check as the user's package; reading it here first only read it again
  // (a tarball URL's manifest above already read and checked it once).
  const deferred = (spec.source === "registry" || spec.source === "remote") && deferTarballCheck(client, pkg, spec.raw);
  if (!deferred && (spec.source === "remote" || spec.source === "registry")) {
    // The bytes arborist will install (pacote's cache keeps them, so they are fetched once).
    // A registry package is fetched by the tarball URL and integrity its manifest just gave, as
    // arborist does from a lockfile: a cache that holds those bytes answers by digest, with no
    // request at all (by name@version, every tarball cost a revalidation round trip).
    const pinned = spec.source === "registry" ? { resolved: pkg._resolved, integrity: pkg._integrity } : {};
    // Checked inside pacote's stream (tarball-check.ts), as the manifest above.
    try {
      await pacote.tarball.stream(spec.source === "registry" ? `${String(pkg.name)}@${String(pkg.version)}` : spec.npmSpec, (stream) => drain(stream), { ...npmOptions(client), ...pinned, ...check, where: cwd } as never);
    } catch (error) {
      throw npmError(error, spec.raw, client, spec.name, spec.source === "remote" ? spec.npmSpec : undefined);
    }
  }
  await warming;
  return packageOf(spec, pkg);
}

/**
 * Register a registry or tarball-URL plugin's tarball check for npm's installer to apply (npm-client.ts
 * `pluginTarballs`), under the integrity and URL its manifest gave; false when the command checks
 * tarballs here (a dry run) or the manifest names neither.
 */
function deferTarballCheck(client: NpmClientOptions, pkg: Record<string, unknown>, what: string): boolean {
  const keys = [pkg._integrity, pkg._resolved].filter((key): key is string => typeof key === "string" && key !== "");
  if (!client.pluginTarballs || keys.length === 0) return false;
  for (const key of keys) client.pluginTarballs.set(key, { what, requirePackageJson: true });
  return true;
}

/** Codes an install reports as they are: what is wrong says more than "invalid" (an entry leaving the package, no manifest the host reads). */
const PASSED_THROUGH = new Set(["ENOT_A_PLUGIN", "EOMP_MANIFEST", "EENTRY_ESCAPE"]);

/**
 * A fetched package.json checked statically as a plugin (name, version, manifest), as the
 * planner takes it; `pkg` is pacote's manifest (`_resolved`, `_integrity` when it gave them).
 */
export function packageOf(spec: InstallSpec, pkg: Record<string, unknown>): ResolvedPackage {
  const checked = validatePluginPackageJson(pkg);
  if (!checked.ok) {
    const first = checked.issues[0]!;
    throw new XcshToolsError(PASSED_THROUGH.has(first.code) ? first.code : "EPLUGIN_INVALID", `${spec.raw} is not an installable xcsh plugin: ${first.message}`, {
      hint: first.hint ?? "Run `xcsh-tools validate --static` on the package (it imports nothing).",
      exitCode: 2,
    });
  }
  return {
    spec,
    name: String(pkg.name),
    version: String(pkg.version),
    resolved: typeof pkg._resolved === "string" ? pkg._resolved : undefined,
    integrity: typeof pkg._integrity === "string" ? pkg._integrity : undefined,
    manifest: checked.value.manifest,
    scripts: declaredScripts(pkg),
    installScripts: installScriptsOf(String(pkg.name), pkg),
    dependencyNames: dependencyNames(pkg),
  };
}

/** Resolve several specs concurrently; two specs naming one package are a usage error. */
export async function resolveSpecs(specs: InstallSpec[], client: NpmClientOptions, cwd: string): Promise<ResolvedPackage[]> {
  const resolved = await Promise.all(specs.map((spec) => resolveSpec(spec, client, cwd)));
  const seen = new Map<string, string>();
  for (const item of resolved) {
    const other = seen.get(item.name);
    if (other !== undefined) {
      throw new XcshToolsError("EUSAGE", `"${other}" and "${item.spec.raw}" both install ${item.name}`, { hint: "Give each plugin once.", exitCode: 2 });
    }
    seen.set(item.name, item.spec.raw);
  }
  return resolved;
}

/** Read a stream to its end, keeping nothing (the check already ran; the bytes are in npm's cache). */
async function drain(stream: unknown): Promise<void> {
  for await (const _chunk of stream as AsyncIterable<unknown>) {
    // nothing to keep
  }
}
