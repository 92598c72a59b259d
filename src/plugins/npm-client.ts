/**
 * npm's libraries, loaded lazily and called with one options object built here: the registry
 * options from the user's npm config (npmrc.ts), npm's own cache (`<cache>/_cacache`, shared
 * with the npm CLI so a warm npm cache is a warm cache for us), no scripts ever, and the
 * timeouts of our settings. Nothing else in the engine knows pacote's or arborist's option names.
 *
 * Registry failures are turned into coded errors here: `EREGISTRY` for a registry that cannot
 * be reached or answers 5xx (never "up to date", pi #4889), `ENOT_FOUND` for a package or
 * version that does not exist, `EAUTH` for 401/403, `EINTEGRITY` for a tarball whose hash does
 * not match; a tarball URL off the registries, a full disk and a refused permission are
 * `ETARBALL`, `EDISK_FULL` and `EPERMISSION` (core/failure.ts). Messages are redacted of the
 * configured secrets.
 */
import { setMaxListeners } from "node:events";
import path from "node:path";
import { XcshToolsError, errorMessage, nodeErrorCode } from "../core/errors.js";
import { gitEnvForNpm, gitError } from "../core/git.js";
import { codedFailure, failedUrlOf } from "../core/failure.js";
import { registryFor, secretsOf, type RegistryOptions } from "./npmrc.js";
import type { PolicySource } from "../core/policy.js";
import { npmPolicySource } from "../core/policy-npm.js";
import { SPOOL_MEMORY_BYTES, TARBALL_CHECK_OPTION, guardTarballStreams, type PluginTarballChecks, type TarballLimits } from "./tarball-check.js";
import { UNPACKED_OPTION, handOverUnpacked, type UnpackedFolders } from "./unpacked.js";

/** Everything pacote and arborist calls need. */
export interface NpmClientOptions {
  registry: RegistryOptions;
  /** The user's home (npm's default cache is `<home>/.npm`). */
  home: string;
  /** Run the install scripts of what an install adds, after consent (install-scripts.ts); never while fetching. */
  allowScripts: boolean;
  fetchTimeoutMs?: number;
  signal?: AbortSignal;
  /**
   * Packuments fetched during this command, shared by our resolve step and arborist (pacote's
   * in-memory cache) so that each is fetched once. Both ask for full documents (we need the
   * `xcsh` field, which abbreviated documents drop), so the cache keys match. A plain Map, not
   * arborist's size-bounded LRU: that one keeps no document whose response gave no length, and
   * gzip answers (Verdaccio's, among others) give none, so every packument would be fetched twice.
   */
  packumentCache?: Map<string, unknown>;
  /** The user typed a local git spec (`git+file://…`): npm's git may use the file transport. */
  allowLocalGit?: boolean;
  /** Limits every tarball is checked against while it streams (settings `limits.*`; tarball-check.ts). */
  tarballLimits?: Partial<TarballLimits>;
  /** Packages this process already unpacked from their locked bytes: arborist moves them into place (unpacked.ts). */
  unpacked?: UnpackedFolders;
  /**
   * Set by a command that installs what it resolves (not a dry run): resolve.ts then registers each
   * registry plugin's tarball check here instead of fetching and checking the tarball ahead of
   * npm's installer, which fetches the same bytes (by integrity) through the same check
   * (tarball-check.ts `PluginTarballChecks`): each plugin's tarball is read and checked once.
   */
  pluginTarballs?: PluginTarballChecks;
}

/** The flat options object for pacote/arborist. */
export function npmOptions(client: NpmClientOptions): Record<string, unknown> {
  const reg = client.registry;
  const cacheRoot = typeof reg.cache === "string" ? reg.cache : path.join(client.home, ".npm");
  const { cache: _cache, ...rest } = reg;
  // Every concurrent fetch listens on the interrupt signal; dozens at once are expected.
  if (client.signal) setMaxListeners(0, client.signal);
  return {
    ...rest,
    cache: path.join(cacheRoot, "_cacache"),
    // Never while fetching, packing or installing: scripts run only after consent (install-scripts.ts).
    ignoreScripts: true,
    audit: false,
    fund: false,
    progress: false,
    installLinks: false,
    fullMetadata: true,
    ...(client.packumentCache ? { packumentCache: client.packumentCache } : {}),
    // pacote and arborist run git themselves for git specs and git dependencies (a plugin's
    // package.json may name one): the environment carries our git settings (core/git.ts), the
    // only thing of their git calls we control. npm's libraries use \`env\` for git alone.
    env: gitEnvForNpm(process.env, client.allowLocalGit === true),
    // @npmcli/git keeps each repository's refs for 5 minutes per process, and for a commit a
    // cached ref still names it clones the branch's tip as that commit: a restore after the
    // branch moved installed the new tip as the locked commit. Every git call reads the refs anew.
    noGitRevCache: true,
    ...(client.tarballLimits || client.pluginTarballs
      ? { [TARBALL_CHECK_OPTION]: { ...(client.tarballLimits ? { limits: client.tarballLimits } : {}), ...(client.pluginTarballs ? { plugins: client.pluginTarballs } : {}) } }
      : {}),
    ...(client.fetchTimeoutMs ? { timeout: client.fetchTimeoutMs } : {}),
    ...(client.signal ? { signal: client.signal } : {}),
    ...(client.unpacked ? { [UNPACKED_OPTION]: client.unpacked } : {}),
  };
}

/** Remove every configured secret from `text`. */
export function redact(text: string, registry: RegistryOptions): string {
  let out = text;
  for (const secret of secretsOf(registry)) out = out.split(secret).join("***");
  return out;
}

/** Whether `url` is on one of the configured registries (the default one or a scope's). */
function isRegistryUrl(url: string, registry: RegistryOptions): boolean {
  const registries = [registry.registry, ...Object.entries(registry).filter(([key, value]) => key.endsWith(":registry") && typeof value === "string").map(([, value]) => value as string)];
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  return registries.some((r) => {
    try {
      const base = new URL(r);
      const prefix = base.pathname.endsWith("/") ? base.pathname : `${base.pathname}/`;
      return base.origin === target.origin && `${target.pathname}/`.startsWith(prefix);
    } catch {
      return false;
    }
  });
}

/** A full disk's code in one of npm's log lines (`log.warn("tar", "TAR_ENTRY_ERROR", "ENOSPC: …")`, or the error itself). */
function diskFullIn(args: readonly unknown[]): { code: string; path?: string } | undefined {
  for (const arg of args) {
    const code = nodeErrorCode(arg) ?? (typeof arg === "string" ? /\b(ENOSPC|EDQUOT)\b/.exec(arg)?.[1] : undefined);
    if (code === "ENOSPC" || code === "EDQUOT") {
      const where = (arg as { path?: unknown })?.path;
      return { code, ...(typeof where === "string" ? { path: where } : {}) };
    }
  }
  return undefined;
}

/**
 * Run npm's installer (or packer) on `folder`, failing with `EDISK_FULL` when the disk filled up
 * during it. node-tar, unpacking a package, turns a failed write into a warning and carries on
 * (pacote logs it through proc-log's `process.emit("log", …)`), so a full disk otherwise surfaces
 * later as a truncated package.json, `EPLUGIN_INVALID`, which is a lie about the package.
 */
export async function failOnFullDisk<T>(folder: string, what: string, run: () => Promise<T>): Promise<T> {
  let full: { code: string; path?: string } | undefined;
  const listener = (...args: unknown[]) => {
    full ??= diskFullIn(args);
  };
  process.on("log", listener);
  const asError = () => codedFailure(Object.assign(new Error(`${full!.code}: no space left on device`), full), { what, folder })!;
  try {
    const result = await run().catch((error: unknown) => {
      throw full ? asError() : error;
    });
    if (full) throw asError();
    return result;
  } finally {
    process.off("log", listener);
  }
}

/**
 * A coded error for a failed registry/fetch call about `what` (a spec or package name). A failure
 * of the disk, of a permission or of a tarball URL (`tarballUrl`: the URL the spec names; else
 * any URL outside the configured registries that the error names) says so (core/failure.ts);
 * only a failed request to a registry is reported as the registry's.
 */
export function npmError(error: unknown, what: string, client: NpmClientOptions, name?: string, tarballUrl?: string): XcshToolsError {
  if (error instanceof XcshToolsError) return error;
  const git = npmGitFailure(error);
  if (git) {
    const coded = gitError(`${what}: git ${git.op}`, git.code, git.stderr);
    // No `cause`: its message ("An unknown git error occurred") would only contradict git's words.
    return new XcshToolsError("EGIT", redact(coded.message, client.registry), { hint: coded.hint });
  }
  const failedUrl = failedUrlOf(error);
  const offRegistry = tarballUrl ?? (failedUrl !== undefined && !isRegistryUrl(failedUrl, client.registry) ? failedUrl : undefined);
  const machine = codedFailure(error, { what, ...(offRegistry !== undefined ? { tarballUrl: offRegistry } : {}) });
  if (machine) return new XcshToolsError(machine.code, redact(machine.message, client.registry), { ...(machine.file ? { file: machine.file } : {}), ...(machine.hint ? { hint: machine.hint } : {}), cause: error, exitCode: machine.exitCode });
  const code = nodeErrorCode(error) ?? "";
  const status = (error as { statusCode?: number }).statusCode;
  const message = redact(errorMessage(error), client.registry);
  const registry = registryFor(name, client.registry);
  if (code === "E404" || status === 404 || code === "ETARGET") {
    return new XcshToolsError("ENOT_FOUND", `${what}: not found on ${registry} (${message})`, { hint: "Check the name and version (`npm view <name> versions`), and the registry your .npmrc points at.", cause: error });
  }
  if (code === "E401" || code === "E403" || status === 401 || status === 403 || code === "ENEEDAUTH") {
    return new XcshToolsError("EAUTH", `${what}: the registry ${registry} refused the request (${message})`, { hint: `Add a token for it to ~/.npmrc: ${registry.replace(/^https?:/, "")}:_authToken=\${TOKEN}`, cause: error });
  }
  if (code === "EINTEGRITY") {
    return new XcshToolsError("EINTEGRITY", `${what}: the downloaded tarball does not match its integrity hash`, { hint: "The registry or a proxy served different bytes than it recorded; retry, or `npm cache verify`.", cause: error });
  }
  if (code === "EUNSUPPORTEDPROTOCOL" || code === "EINVALIDTAGNAME" || code === "EINVALIDPACKAGENAME") {
    return new XcshToolsError("ESPEC", `${what}: ${message}`, { hint: "Check the spec.", exitCode: 2, cause: error });
  }
  if (code === "ENOGIT" || /git/i.test(code) || code === "128") {
    return new XcshToolsError("EGIT", `${what}: git failed (${message})`, { hint: "Check the git URL and that git is installed.", cause: error });
  }
  if (code === "ENOENT" || code === "ENOTDIR") {
    return new XcshToolsError("ENOT_FOUND", `${what}: ${message}`, { hint: "Check the path.", cause: error });
  }
  // node-tar's own refusals (its decompression-ratio guard among them) carry a `tarCode`.
  if (code === "TAR_BAD_ARCHIVE" || code === "Z_DATA_ERROR" || code === "TAR_ENTRY_INVALID" || (error as { tarCode?: unknown })?.tarCode !== undefined || /tar|gzip|zlib|decompression/i.test(message)) {
    return new XcshToolsError("ETARBALL", `${what}: not a valid package tarball (${message})`, { hint: "Rebuild it with `npm pack`.", cause: error });
  }
  if (code === "EJSONPARSE" || (error as Error)?.name === "JSONParseError") {
    // A package.json that is not JSON (in a folder, a tarball or a registry document): the
    // package is broken, the network is fine.
    return new XcshToolsError("EPLUGIN_INVALID", `${what}: its package.json is not valid JSON (${message})`, { hint: "Fix the package's package.json (`xcsh-tools validate --static <folder>` shows where).", exitCode: 2, cause: error });
  }
  if (code === "ABORT_ERR" || (error as Error)?.name === "AbortError") {
    return new XcshToolsError("EABORTED", `Interrupted while fetching ${what}`, { hint: "Nothing was changed.", cause: error });
  }
  const shownUrl = failedUrl !== undefined ? redact(failedUrl, client.registry) : registry;
  if (typeof status === "number") {
    return new XcshToolsError("EREGISTRY", `${what}: the registry ${registry} answered HTTP ${status} for ${shownUrl} (${message})`, { hint: "The registry failed; retry later, or check the registry URL (--registry, settings `registry`, or ~/.npmrc).", cause: error });
  }
  return new XcshToolsError("EREGISTRY", `${what}: cannot reach the registry ${registry}${failedUrl !== undefined ? ` (request to ${shownUrl})` : ""} (${message})`, { hint: "Check your network and the registry URL (--registry, settings `registry`, or ~/.npmrc).", cause: error });
}

/**
 * A git that npm's libraries ran and that failed (@npmcli/git's errors: the spawn's `cmd`, `args`,
 * exit `code` and `stderr`, under a fixed message such as "An unknown git error occurred" that
 * says nothing of what git said): the git operation, its exit code and stderr.
 */
function npmGitFailure(error: unknown): { op: string; code: number | null; stderr: string } | undefined {
  if (!error || typeof error !== "object") return undefined;
  const { cmd, args, code, stderr } = error as { cmd?: unknown; args?: unknown; code?: unknown; stderr?: unknown };
  if (typeof cmd !== "string" || !/^git(\.exe)?$/i.test(path.basename(cmd)) || !Array.isArray(args) || typeof stderr !== "string") return undefined;
  const op = args.find((a): a is string => typeof a === "string" && !a.startsWith("-")) ?? "";
  return { op, code: typeof code === "number" ? code : null, stderr };
}

type Pacote = typeof import("pacote");
type ArboristClass = typeof import("@npmcli/arborist").default;
type Tar = typeof import("tar");

let libraries: Promise<typeof import("./npm-libraries.js")> | undefined;
/** npm's libraries, imported on first use (npm-libraries.ts). */
function npmLibraries(): Promise<typeof import("./npm-libraries.js")> {
  libraries ??= import("./npm-libraries.js");
  return libraries;
}

/** pacote, loaded on first use, with every tarball it streams checked first (tarball-check.ts). */
export async function loadPacote(): Promise<Pacote> {
  const libs = await npmLibraries();
  const pacote = libs.pacote();
  guardTarballStreams(pacote, libs.tar());
  handOverUnpacked(pacote);
  return pacote;
}

/**
 * The bytes of a tarball locked at `integrity`, read from npm's cache (of `opts`, npmOptions') by that content address
 * (cacache's `content-v2` file, hashed and compared by cacache: bytes that do not hash to it are
 * never returned), or `undefined`: not there, not a regular file of at most the guard's in-memory
 * size, or unreadable. The caller then fetches as pacote does (which, given the same integrity,
 * reads this same file first, and on a corrupt one refreshes it from the registry).
 *
 * Why: a fetcher given an integrity reads exactly this file too, but through a stream pipeline
 * per package; a restore of a warm cache reads twenty-odd small files, and the per-package stream
 * set-up was a measurable part of its pinned fetch (docs/benchmarks.md, team sets, session 29).
 * Not under npm's `prefer-online`, which tells pacote to skip the cache.
 */
export async function cachedTarball(opts: Record<string, unknown>, integrity: string): Promise<Buffer | undefined> {
  if (opts.preferOnline || typeof opts.cache !== "string") return undefined; // truthy, as pacote reads it
  try {
    const cacache = (await npmLibraries()).cacache();
    const found = await cacache.get.hasContent(opts.cache, integrity);
    if (!found || !found.stat.isFile() || found.size > SPOOL_MEMORY_BYTES) return undefined;
    return await cacache.get.byDigest(opts.cache, integrity, { size: found.size, memoize: false });
  } catch {
    // Altered, vanished or unreadable: pacote's own path decides (it refetches what it cannot use).
    return undefined;
  }
}

/** Arborist's constructor, loaded on first use; the pacote it extracts with is guarded too. */
export async function loadArborist(): Promise<ArboristClass> {
  await loadPacote();
  return (await npmLibraries()).Arborist();
}

/** node-tar as pacote has it: the very instance pacote extracts with (tests and the local tarball check). */
export async function loadTar(): Promise<Tar> {
  return (await npmLibraries()).tar();
}

/** `npmPolicySource` (core/policy.ts) with the registry npm would ask for a name, from the user's .npmrc. */
export function npmPolicySourceOf(spec: string, client: Pick<NpmClientOptions, "registry">, name?: string, cwd?: string): PolicySource {
  return npmPolicySource(spec, (pkg) => registryFor(pkg, client.registry), name, cwd);
}
