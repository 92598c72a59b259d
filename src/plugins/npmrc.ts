/**
 * The user's npm configuration, turned into the flat options object pacote, arborist and
 * npm-registry-fetch take (`registry`, `@scope:registry`, `//host/:_authToken`, `ca`, …).
 *
 * Why a loader of our own: npm's loader (`@npmcli/config`) is not a dependency, it reads
 * `process.env` and `os.homedir()` deep inside (we inject the world), and it pulls in npm's whole
 * option table. Each file is parsed by `ini`, as npm parses it; this module keeps only npm's
 * layering and `${VAR}` expansion from the injected env (an unset variable is an error, as in
 * npm).
 *
 * Files, lowest precedence first (npm's order, with "the project" being the plugins folder,
 * since that is where our npm project lives):
 *   1. user config: `$npm_config_userconfig`, else `<home>/.npmrc`
 *   2. project config: `<plugins>/.npmrc`
 *   3. `npm_config_<key>` variables of the injected env (as npm)
 *   4. our settings `registry`, then the `--registry` flag (the caller passes them as overrides)
 *
 * Auth keys are kept exactly as npm-registry-fetch expects them (`//host/path/:_authToken`). A
 * legacy unscoped `_authToken`/`_auth`/`username`/`_password` is scoped to the default registry
 * (npm 7/8 behaviour; npm 9+ refuses it — accepting it is kinder and just as safe). `_password`
 * is base64, as in npm. `always-auth` is accepted and ignored: npm-registry-fetch sends the
 * credentials of the registry a URL belongs to, always. `cafile` is read into `ca`.
 *
 * Secrets never leave this module in text form: `secretsOf` lists them so that messages which
 * might echo one are redacted (npm-client.ts).
 */
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import ini from "ini";
import { XcshToolsError, errorMessage, isXcshToolsError } from "../core/errors.js";

/** The default registry when nothing configures one (npm's). */
export const DEFAULT_REGISTRY = "https://registry.npmjs.org/";

/** A parsed config: flat keys, values as strings, booleans or string lists. */
export type NpmConfig = Record<string, string | boolean | string[]>;

/** Where the config came from (for `doctor` and messages). */
export interface NpmConfigSources {
  files: string[];
  env: string[];
}

/** The options pacote and arborist get. */
export interface RegistryOptions {
  registry: string;
  /** Every other key npm-registry-fetch understands (`@scope:registry`, `//host/:_authToken`, `ca`, `strictSSL`, …). */
  [key: string]: unknown;
}

/** Options of `loadRegistryOptions`. */
export interface LoadNpmConfigOptions {
  home: string;
  env: NodeJS.ProcessEnv;
  /** The plugins folder (its `.npmrc` is the project config). */
  pluginsDir: string;
  /** Our settings' `registry` (wins over the files). */
  settingsRegistry?: string | undefined;
  /** The `--registry` flag (wins over everything). */
  flagRegistry?: string | undefined;
}

function configError(file: string, message: string, hint: string): XcshToolsError {
  return new XcshToolsError("ENPMRC", `${file}: ${message}`, { file, hint, exitCode: 2 });
}

function expandEnv(value: string, env: NodeJS.ProcessEnv, file: string, key: string): string {
  // npm: `${VAR}` is replaced, `\${VAR}` stays literal; `${VAR?}` (npm 10) is empty when unset.
  return value.replace(/(\\*)\$\{([^}?]+)(\?)?\}/g, (whole, slashes: string, name: string, optional?: string) => {
    if (slashes.length % 2 === 1) return whole.slice(1);
    const found = env[name];
    if (found === undefined) {
      if (optional) return slashes;
      throw configError(file, `cannot expand ${key}: \${${name}} is not set in the environment`, `Set ${name}, or remove it from the file.`);
    }
    return slashes + found;
  });
}

/**
 * Parse the text of an `.npmrc` with `ini`, the parser npm itself uses (quotes, comments and
 * `key[] = v` lists read exactly as npm reads them), then expand `${VAR}` in keys and values as
 * npm's config loader does. Sections (`[x]`) are not used by npm and are rejected.
 */
export function parseNpmrc(text: string, file: string, env: NodeJS.ProcessEnv): NpmConfig {
  const out: NpmConfig = {};
  for (const [rawKey, value] of Object.entries(ini.decode(text) as Record<string, unknown>)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      throw configError(file, `[${rawKey}]: ini sections are not supported in .npmrc`, `Remove the [${rawKey}] section header from ${file}; npm reads keys at the top level only.`);
    }
    const key = expandEnv(rawKey, env, file, rawKey);
    if (Array.isArray(value)) out[key] = value.map((item) => expandEnv(String(item), env, file, rawKey));
    else out[key] = typeof value === "string" ? coerce(expandEnv(value, env, file, rawKey)) : (value as boolean);
  }
  return out;
}

function coerce(value: string): string | boolean {
  if (value === "true") return true;
  if (value === "false") return false;
  return value;
}

async function readNpmrc(file: string, env: NodeJS.ProcessEnv): Promise<NpmConfig | undefined> {
  let text: string;
  try {
    const read = readTextBounded(file);
    if (read === undefined) return undefined;
    text = read;
  } catch (error) {
    if (isXcshToolsError(error) && error.code === "ENOT_A_FILE") throw new XcshToolsError("ENPMRC", error.message, { file, hint: error.hint ?? "" });
    throw new XcshToolsError("ENPMRC", `Cannot read ${file}: ${errorMessage(error)}`, { file, hint: "Check the file's permissions." });
  }
  return parseNpmrc(text, file, env);
}

/** `npm_config_foo_bar=x` → `foo-bar` (npm's rule: `_` → `-`, except keys starting with `//` or `_`). */
function envConfig(env: NodeJS.ProcessEnv): { config: NpmConfig; names: string[] } {
  const config: NpmConfig = {};
  const names: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !/^npm_config_/i.test(name)) continue;
    let key = name.slice("npm_config_".length);
    if (!key.startsWith("//") && !key.startsWith("_")) key = key.toLowerCase().replace(/_/g, "-");
    if (key === "userconfig" || key === "globalconfig") continue; // locations, not options
    config[key] = coerce(value);
    names.push(name);
  }
  return { config, names };
}

/** `https://host:8080/path/` → `//host:8080/path/` (npm's "nerf dart"). */
export function nerfDart(url: string): string {
  const parsed = new URL(url);
  const pathname = parsed.pathname.endsWith("/") ? parsed.pathname : `${parsed.pathname}/`;
  return `//${parsed.host}${pathname}`;
}

function normalizeRegistry(url: string, origin: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new XcshToolsError("ENPMRC", `${origin}: "${url}" is not a registry URL`, { hint: "Use a URL like https://registry.example.com/.", exitCode: 2 });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new XcshToolsError("ENPMRC", `${origin}: "${url}" is not an http(s) registry URL`, { hint: "Use a URL like https://registry.example.com/.", exitCode: 2 });
  }
  return parsed.href.endsWith("/") ? parsed.href : `${parsed.href}/`;
}

const LEGACY_AUTH = ["_authToken", "_auth", "username", "_password", "certfile", "keyfile"] as const;

/** The user's npm config merged, with where it came from. */
export async function loadNpmConfig(options: LoadNpmConfigOptions): Promise<{ config: NpmConfig; sources: NpmConfigSources }> {
  const userFile = options.env.npm_config_userconfig || options.env.NPM_CONFIG_USERCONFIG || path.join(options.home, ".npmrc");
  const files = [path.resolve(options.home, userFile), path.join(options.pluginsDir, ".npmrc")];
  const config: NpmConfig = {};
  const used: string[] = [];
  for (const file of files) {
    const read = await readNpmrc(file, options.env);
    if (!read) continue;
    used.push(file);
    // Legacy unscoped credentials belong to the registry of the same file (or the default).
    const fileRegistry = typeof read.registry === "string" ? read.registry : typeof config.registry === "string" ? config.registry : DEFAULT_REGISTRY;
    for (const key of LEGACY_AUTH) {
      if (read[key] === undefined) continue;
      read[`${nerfDart(fileRegistry)}:${key}`] = read[key]!;
      delete read[key];
    }
    Object.assign(config, read);
  }
  const fromEnv = envConfig(options.env);
  Object.assign(config, fromEnv.config);
  if (options.settingsRegistry) config.registry = options.settingsRegistry;
  if (options.flagRegistry) config.registry = options.flagRegistry;
  return { config, sources: { files: used, env: fromEnv.names } };
}

function camel(key: string): string {
  return key.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** The flat options for pacote/arborist from a merged config (reads `cafile`). */
export async function toRegistryOptions(config: NpmConfig): Promise<RegistryOptions> {
  const registry = normalizeRegistry(typeof config.registry === "string" ? config.registry : DEFAULT_REGISTRY, "registry");
  const options: RegistryOptions = { registry };
  for (const [key, value] of Object.entries(config)) {
    if (key === "registry") continue;
    if (key.startsWith("//") || /^@[^:]+:registry$/.test(key)) {
      options[key] = key.endsWith(":registry") && typeof value === "string" ? normalizeRegistry(value, key) : value;
      continue;
    }
    switch (key) {
      case "strict-ssl":
        options.strictSSL = value !== false && value !== "false";
        break;
      case "ca":
        options.ca = value;
        break;
      case "cafile": {
        const file = String(value);
        try {
          const ca = readTextBounded(file);
          if (ca === undefined) throw new Error("it does not exist");
          options.ca = ca;
        } catch (error) {
          throw new XcshToolsError("ENPMRC", `cafile ${file} cannot be read: ${errorMessage(error)}`, { file, hint: "Fix the cafile path in your .npmrc.", exitCode: 2 });
        }
        break;
      }
      case "proxy":
      case "https-proxy":
      case "noproxy":
      case "local-address":
      case "fetch-retries":
      case "fetch-retry-factor":
      case "fetch-retry-mintimeout":
      case "fetch-retry-maxtimeout":
      case "fetch-timeout":
      case "prefer-offline":
      case "prefer-online":
      case "offline":
      case "user-agent":
      case "cache":
      case "git":
        options[camel(key)] = typeof value === "string" && /^\d+$/.test(value) ? Number(value) : value;
        break;
      default:
        // always-auth, save-prefix, … : npm options that do not change how we fetch.
        break;
    }
  }
  return options;
}

/** Registry options from the user's config, flags and settings. */
export async function loadRegistryOptions(options: LoadNpmConfigOptions): Promise<{ options: RegistryOptions; sources: NpmConfigSources }> {
  const { config, sources } = await loadNpmConfig(options);
  return { options: await toRegistryOptions(config), sources };
}

/** The registry a package name is fetched from (its scope's, else the default). */
export function registryFor(name: string | undefined, options: RegistryOptions): string {
  if (name?.startsWith("@")) {
    const scoped = options[`${name.split("/")[0]}:registry`];
    if (typeof scoped === "string") return scoped;
  }
  return options.registry;
}

/** Every secret value in the options, for redaction of messages that might echo one. */
export function secretsOf(options: RegistryOptions): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(options)) {
    if (/:(_authToken|_auth|_password)$/.test(key) && typeof value === "string" && value.length >= 4) {
      out.push(value);
      if (key.endsWith(":_password")) {
        try {
          out.push(Buffer.from(value, "base64").toString("utf8"));
        } catch {
          // not base64: the raw value is already listed
        }
      }
    }
  }
  return out;
}
