/**
 * xcsh-tools' own settings: found by cosmiconfig, validated by their TypeBox schema
 * (`manifest/xcsh-tools-settings.ts`), layered, and remembered value by value with their origin
 * so that `doctor` can say where each one came from.
 *
 * Layers, highest first: flags > environment > project file > user file > defaults. Layering is
 * per leaf (`timeouts.gitMs` from the project file and `timeouts.fetchMs` from the user file can
 * coexist); arrays are replaced whole, never concatenated.
 *
 * - Project file: the first of `package.json#xcsh-tools`, `.xcsh-toolsrc` (JSON or YAML),
 *   `.xcsh-toolsrc.json`, `.xcsh-toolsrc.yaml`, `.xcsh-toolsrc.yml`, `xcsh-tools.config.js`,
 *   `.mjs`, `.cjs`, `.json`, in `cwd` or the nearest trusted folder above it (up to `stopDir`,
 *   default the file-system root). We walk the folders ourselves and load each candidate with
 *   cosmiconfig's loaders: its "global" strategy would also read `~/.config/xcsh-tools` through
 *   the real HOME, which neither tests nor hosts can redirect.
 * - User file: the first of `xcsh-tools.json`, `xcsh-tools.yaml`, `xcsh-tools.yml` in the
 *   xcsh root (`~/.xcsh/xcsh-tools.json` by default), next to the host's own state.
 * - Environment (empty values count as unset): `XCSH_TOOLS_REGISTRY`, `XCSH_TOOLS_ALLOW_SCRIPTS`,
 *   `XCSH_TOOLS_BUILTIN_TOOLS` (comma list), `XCSH_TOOLS_FACTORY_TIMEOUT_MS`,
 *   `XCSH_TOOLS_IMPORT_TIMEOUT_MS`, `XCSH_TOOLS_GIT_TIMEOUT_MS`, `XCSH_TOOLS_FETCH_TIMEOUT_MS`,
 *   `XCSH_TOOLS_LOCK_WAIT_MS`, `XCSH_TOOLS_DISABLED_PROVIDERS` (comma list), `XCSH_TOOLS_COLOR`
 *   (auto|always|never; else `NO_COLOR` set → never), `XCSH_TOOLS_JSON`,
 *   `XCSH_TOOLS_TARBALL_UNPACKED_BYTES`, `XCSH_TOOLS_TARBALL_ENTRIES`,
 *   `XCSH_TOOLS_TARBALL_PATH_LENGTH` (the `limits.*` of every tarball),
 *   `XCSH_TOOLS_CONTEXT_WARN_TOKENS` (doctor warns past this always-on context). Booleans accept
 *   1/0, true/false, yes/no, on/off.
 *
 * A key we do not know is a warning with a did-you-mean (a newer xcsh-tools may know it); a known
 * key with a wrong value is `ECONFIG` naming the file (or variable, or flag) and the field.
 *
 * Trust. A project settings file is the project's, and a project folder is untrusted input
 * (core/trust.ts): its file applies only when the folder holding it is trusted — `cwd` by the
 * caller's decision (`projectTrusted`), a folder above it by the user's record (the home folder
 * always). An untrusted folder's files are never loaded, not even parsed (a JS config would run
 * its code); each is a warning `ECONFIG_UNTRUSTED_PROJECT`, and the search goes on upward as if
 * it were not there. Files are read by cosmiconfig's loaders called directly, never through a
 * cosmiconfig explorer: creating one reads cosmiconfig's meta-config from the process's folder
 * (`.config/config.js` would run) and its `$import` reads further files a project names. And a
 * project file, trusted or not, never sets a secret setting (`PROJECT_SECRET_KEYS`): the key is
 * ignored with `ECONFIG_PROJECT_SECRET` naming the file and field.
 */
import { closestKey } from "../manifest/unknown-keys.js";
import path from "node:path";
import { readFile, stat } from "node:fs/promises";
import { checkJsonDepth, checkJsonSize } from "../manifest/json-file.js";
import { describeValue, type ValidationResult } from "../manifest/result.js";
import type { XcshToolsSettings, XcshToolsSettingsFile } from "../manifest/xcsh-tools-settings.js";
import { XcshToolsError, errorMessage, isXcshToolsError } from "./errors.js";
import { xcshPaths } from "./paths.js";
import { isProjectTrustedByUser, readTrustRecord, trustingEntry } from "./trust.js";
import { realPathOrNearest } from "./contain.js";

/** Where a setting's value came from. */
export type SettingOrigin = "flag" | "env" | "default" | `project:${string}` | `user:${string}`;

/** One setting's value with its origin; `via` names the variable or flag when there is one. */
export interface SettingValue<T = unknown> {
  value: T;
  origin: SettingOrigin;
  via?: string;
}

/** Every leaf setting, dotted. */
export const SETTING_KEYS = [
  "registry",
  "allowScripts",
  "builtInTools",
  "timeouts.factoryMs",
  "timeouts.importMs",
  "timeouts.gitMs",
  "timeouts.fetchMs",
  "lockWaitMs",
  "disabledProviders",
  "output.color",
  "output.json",
  "limits.tarballUnpackedBytes",
  "limits.tarballEntries",
  "limits.tarballPathLength",
  "contextWarnTokens",
] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];

/** The environment variable of each setting. */
export const SETTING_ENV_VARS: Record<SettingKey, string> = {
  registry: "XCSH_TOOLS_REGISTRY",
  allowScripts: "XCSH_TOOLS_ALLOW_SCRIPTS",
  builtInTools: "XCSH_TOOLS_BUILTIN_TOOLS",
  "timeouts.factoryMs": "XCSH_TOOLS_FACTORY_TIMEOUT_MS",
  "timeouts.importMs": "XCSH_TOOLS_IMPORT_TIMEOUT_MS",
  "timeouts.gitMs": "XCSH_TOOLS_GIT_TIMEOUT_MS",
  "timeouts.fetchMs": "XCSH_TOOLS_FETCH_TIMEOUT_MS",
  lockWaitMs: "XCSH_TOOLS_LOCK_WAIT_MS",
  disabledProviders: "XCSH_TOOLS_DISABLED_PROVIDERS",
  "output.color": "XCSH_TOOLS_COLOR",
  "output.json": "XCSH_TOOLS_JSON",
  "limits.tarballUnpackedBytes": "XCSH_TOOLS_TARBALL_UNPACKED_BYTES",
  "limits.tarballEntries": "XCSH_TOOLS_TARBALL_ENTRIES",
  "limits.tarballPathLength": "XCSH_TOOLS_TARBALL_PATH_LENGTH",
  contextWarnTokens: "XCSH_TOOLS_CONTEXT_WARN_TOKENS",
};

/** The defaults (registry unset: npm's own `.npmrc` resolution decides). */
export const DEFAULT_SETTINGS: XcshToolsSettings = {
  allowScripts: false,
  builtInTools: [],
  timeouts: { factoryMs: 5_000, importMs: 10_000, gitMs: 120_000, fetchMs: 30_000 },
  lockWaitMs: 30_000,
  disabledProviders: [],
  output: { color: "auto", json: false },
  // Per tarball; why these values: plugins/tarball-check.ts (DEFAULT_TARBALL_LIMITS, the same).
  limits: { tarballUnpackedBytes: 512 * 1024 * 1024, tarballEntries: 100_000, tarballPathLength: 1024 },
  // A tenth of a 200k-token context window, spent before the user types anything.
  contextWarnTokens: 20_000,
};

/** Project-level search places, in priority order within one folder. */
export const PROJECT_SEARCH_PLACES = [
  "package.json",
  ".xcsh-toolsrc",
  ".xcsh-toolsrc.json",
  ".xcsh-toolsrc.yaml",
  ".xcsh-toolsrc.yml",
  "xcsh-tools.config.js",
  "xcsh-tools.config.mjs",
  "xcsh-tools.config.cjs",
  "xcsh-tools.config.json",
] as const;

/**
 * Settings a project file may never set, whoever trusts the project: a trusted project is one
 * whose tools may run, not one that may redirect the user's own machinery.
 *   - `registry`: where every plugin's code is downloaded from, and where npm sends the user's
 *     credentials for the default registry; a project naming its own would serve its own code.
 *   - `allowScripts`: runs the lifecycle scripts of every package an install brings, with the
 *     user's rights.
 * The others only change how long we wait, what checks report, or how output looks.
 */
export const PROJECT_SECRET_KEYS = ["registry", "allowScripts"] as const satisfies readonly SettingKey[];

/** User-level files in the xcsh root, in priority order. */
export const USER_SETTINGS_FILES = ["xcsh-tools.json", "xcsh-tools.yaml", "xcsh-tools.yml"] as const;

/** A non-fatal finding, e.g. an unknown key. */
export interface ConfigWarning {
  code: string;
  /** The file, `env` or `flags`. */
  source: string;
  /** Dotted field. */
  path: string;
  message: string;
}

/** Options of `loadSettings`: the world is injected. */
export interface LoadSettingsOptions {
  cwd: string;
  /** The xcsh root, holding the user-level file. */
  xcshHome: string;
  env?: NodeJS.ProcessEnv;
  /** Values given on the command line (any subset, nested like the file). */
  flags?: XcshToolsSettingsFile;
  /** Last folder the project search looks in. Default: the file-system root. */
  stopDir?: string;
  /**
   * Whether the project at `cwd` is trusted: a decision, or a question asked only when a project
   * settings file is found in `cwd` itself. Default: untrusted (project files are ignored).
   */
  projectTrusted?: boolean | (() => boolean | Promise<boolean>);
  /** The user's home (always trusted), for a project file found above `cwd`. */
  home?: string;
}

/** The merged settings, each leaf's origin, the files used, and warnings. */
export interface LoadedSettings {
  settings: XcshToolsSettings;
  values: Record<SettingKey, SettingValue>;
  files: { project?: string; user?: string };
  warnings: ConfigWarning[];
  /** Project settings files left out because their folder is not trusted (never read). */
  ignoredProjectFiles?: string[];
}

const NESTED_KEYS: Record<string, readonly string[]> = {
  timeouts: ["factoryMs", "importMs", "gitMs", "fetchMs"],
  output: ["color", "json"],
  limits: ["tarballUnpackedBytes", "tarballEntries", "tarballPathLength"],
};
const TOP_KEYS = ["$schema", "registry", "allowScripts", "builtInTools", "timeouts", "lockWaitMs", "disabledProviders", "output", "limits", "contextWarnTokens"];

/** The known key closest to `key`, if it is close enough to be a typo. */
export const suggestKey = closestKey;

/** How a layer names itself in messages and how a field is spelled there. */
interface LayerSource {
  /** "the file /p/.xcsh-toolsrc", "the environment", "the command line". */
  label: string;
  /** For warnings: the file path, `env` or `flags`. */
  id: string;
  file?: string;
  /** How to name a dotted field in this layer ("timeouts.gitMs", "XCSH_TOOLS_GIT_TIMEOUT_MS"). */
  field(dotted: string): string;
}

/*
 * The schema check of a settings layer is loaded on first need: most commands run with no
 * settings file, no XCSH_TOOLS_* variable and no setting flag, and loading TypeBox for nothing
 * made up a third of a `tools` query. `validateSettingsLayer` is synchronous (it is also the
 * pure check `validate` runs), so an asynchronous caller prepares the check first; an empty
 * layer needs none.
 */
type SettingsCheck = (doc: unknown) => ValidationResult<XcshToolsSettingsFile>;
let settingsCheck: SettingsCheck | undefined;

/** Load the settings schema check (idempotent). Call before validating a non-empty layer. */
export async function prepareSettingsCheck(): Promise<void> {
  if (settingsCheck) return;
  const [{ checkSchema }, { XcshToolsSettingsFileSchema }] = await Promise.all([import("../manifest/schema-check.js"), import("../manifest/xcsh-tools-settings.js")]);
  settingsCheck = (doc) => checkSchema(XcshToolsSettingsFileSchema, doc);
}

function checkSettingsDocument(doc: Record<string, unknown>): ValidationResult<XcshToolsSettingsFile> {
  if (Object.keys(doc).length === 0) return { ok: true, value: doc as XcshToolsSettingsFile, warnings: [] };
  if (!settingsCheck) throw new Error("internal: prepareSettingsCheck() must run before a settings layer is validated");
  return settingsCheck(doc);
}

function pointerToDotted(pointer: string): string {
  return pointer.replace(/^\//, "").split("/").filter(Boolean).join(".");
}

/**
 * Check one layer's document: unknown keys become warnings, a wrong value throws `ECONFIG`.
 * Pure; exported for `config validate` and tests.
 */
export function validateSettingsLayer(
  document: unknown,
  source: LayerSource,
): { value: XcshToolsSettingsFile; warnings: ConfigWarning[] } {
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw new XcshToolsError("ECONFIG", `${source.label}: settings must be an object, found ${describeValue(document)}`, {
      file: source.file,
      path: "",
      hint: `Make ${source.file ?? source.label} contain an object like {"lockWaitMs": 30000}.`,
      exitCode: 2,
    });
  }
  const warnings: ConfigWarning[] = [];
  const unknown = (dotted: string, key: string, known: readonly string[]) => {
    const suggestion = suggestKey(key, known);
    warnings.push({
      code: "ECONFIG_UNKNOWN_KEY",
      source: source.id,
      path: dotted,
      message:
        `${source.label}: unknown setting "${source.field(dotted)}"` +
        (suggestion ? `; did you mean "${source.field(dotted.replace(/[^.]+$/, suggestion))}"?` : " (ignored)"),
    });
  };
  const doc = document as Record<string, unknown>;
  for (const key of Object.keys(doc)) {
    if (!TOP_KEYS.includes(key)) {
      unknown(key, key, TOP_KEYS.filter((k) => k !== "$schema"));
      continue;
    }
    const nested = NESTED_KEYS[key];
    const inner = doc[key];
    if (nested && inner && typeof inner === "object" && !Array.isArray(inner)) {
      for (const innerKey of Object.keys(inner)) {
        if (!nested.includes(innerKey)) unknown(`${key}.${innerKey}`, innerKey, nested);
      }
    }
  }
  const result = checkSettingsDocument(doc);
  if (!result.ok) {
    const first = result.issues[0]!;
    const field = source.field(pointerToDotted(first.path));
    const more = result.issues.length > 1 ? ` (and ${result.issues.length - 1} more)` : "";
    throw new XcshToolsError(
      "ECONFIG",
      `${source.label}: "${field}" is invalid: expected ${first.expected ?? "a valid value"}, found ${first.found ?? "something else"}${more}`,
      {
        file: source.file,
        path: pointerToDotted(first.path),
        hint:
          `Fix "${field}" in ${source.file ?? source.label}.` +
          (result.issues.length > 1 ? ` Also: ${result.issues.slice(1).map((i) => i.message).join("; ")}` : ""),
        exitCode: 2,
      },
    );
  }
  const value = result.value;
  if (value.registry !== undefined) {
    let ok = false;
    try {
      const url = new URL(value.registry);
      ok = url.protocol === "http:" || url.protocol === "https:";
    } catch {
      ok = false;
    }
    if (!ok) {
      const field = source.field("registry");
      throw new XcshToolsError("ECONFIG", `${source.label}: "${field}" must be an http(s) URL, found ${describeValue(value.registry)}`, {
        file: source.file,
        path: "registry",
        hint: `Set "${field}" to a URL like https://registry.npmjs.org/ in ${source.file ?? source.label}.`,
        exitCode: 2,
      });
    }
  }
  return { value, warnings };
}

function getLeaf(doc: XcshToolsSettingsFile, key: SettingKey): unknown {
  const [head, tail] = key.split(".") as [string, string | undefined];
  const top = (doc as Record<string, unknown>)[head];
  if (tail === undefined) return top;
  return top && typeof top === "object" ? (top as Record<string, unknown>)[tail] : undefined;
}

function setLeaf(target: Record<string, unknown>, key: SettingKey, value: unknown): void {
  const [head, tail] = key.split(".") as [string, string | undefined];
  if (tail === undefined) {
    target[head] = value;
    return;
  }
  const inner = (target[head] ??= {}) as Record<string, unknown>;
  inner[tail] = value;
}

const TRUE_WORDS = new Set(["1", "true", "yes", "on"]);
const FALSE_WORDS = new Set(["0", "false", "no", "off"]);

/** Read the environment layer; values are parsed here and then checked like a file. */
function envLayer(env: NodeJS.ProcessEnv): { doc: Record<string, unknown>; vias: Map<SettingKey, string> } {
  const doc: Record<string, unknown> = {};
  const vias = new Map<SettingKey, string>();
  for (const key of SETTING_KEYS) {
    const name = SETTING_ENV_VARS[key];
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") continue;
    const text = raw.trim();
    let value: unknown = text;
    if (key === "allowScripts" || key === "output.json") {
      const lower = text.toLowerCase();
      value = TRUE_WORDS.has(lower) ? true : FALSE_WORDS.has(lower) ? false : text;
    } else if (key === "builtInTools" || key === "disabledProviders") {
      value = text.split(",").map((s) => s.trim()).filter(Boolean);
    } else if (key.endsWith("Ms") || key.startsWith("limits.") || key === "contextWarnTokens") {
      value = /^\d+$/.test(text) ? Number(text) : text;
    }
    setLeaf(doc, key, value);
    vias.set(key, name);
  }
  if (getLeaf(doc, "output.color") === undefined && env.NO_COLOR !== undefined && env.NO_COLOR !== "") {
    setLeaf(doc, "output.color", "never");
    vias.set("output.color", "NO_COLOR");
  }
  return { doc, vias };
}

/**
 * cosmiconfig's own loaders (parse-json, js-yaml, `import()`), loaded on first need: a folder with
 * no candidate file (most hosts' case) never loads them. Called directly rather than through an
 * explorer (see the header: no meta-config, no `$import`).
 */
type Loader = (filepath: string, content: string) => unknown;
let loaders: Promise<Readonly<Record<string, Loader>>> | undefined;
function loadersOnce(): Promise<Readonly<Record<string, Loader>>> {
  return (loaders ??= import("cosmiconfig").then((m) => m.defaultLoaders as unknown as Record<string, Loader>));
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** Load one candidate file; `undefined` when it holds no settings (empty, or package.json without our key). */
async function loadCandidate(file: string): Promise<{ file: string; config: unknown } | undefined> {
  if (!(await isFile(file))) return undefined;
  try {
    checkJsonSize((await stat(file)).size, file);
    const content = await readFile(file, "utf8");
    if (content.trim() === "") return undefined;
    const byExtension = await loadersOnce();
    const ext = path.extname(file);
    const loader = byExtension[ext || "noExt"];
    if (!loader) throw new Error(`no loader for ${ext || "a file without extension"}`);
    let config = await loader(file, content);
    if (path.basename(file) === "package.json") config = config && typeof config === "object" ? (config as Record<string, unknown>)["xcsh-tools"] : undefined;
    if (config === undefined || config === null) return undefined;
    checkJsonDepth(config, file);
    return { file, config };
  } catch (error) {
    if (isXcshToolsError(error, "EJSON_TOO_LARGE") || isXcshToolsError(error, "EJSON_DEPTH")) {
      throw new XcshToolsError("ECONFIG", error.message, { file: error.file, hint: error.hint, cause: error, exitCode: 2 });
    }
    throw new XcshToolsError("ECONFIG", `Cannot read settings file ${file}: ${errorMessage(error)}`, {
      file,
      hint: `Fix the syntax of ${file} (JSON, YAML, or a JS module exporting an object).`,
      cause: error,
      exitCode: 2,
    });
  }
}

/**
 * Whether `file`, present in an untrusted folder, would be a settings file, told without running
 * or loading it: any candidate name, but package.json only when it holds our key (plain JSON, parsed only for that;
 * a broken one is no settings file here, since it is ignored either way).
 */
async function isIgnoredCandidate(file: string): Promise<boolean> {
  if (path.basename(file) !== "package.json") return true;
  try {
    const { size } = await stat(file);
    checkJsonSize(size, file);
    const doc = JSON.parse(await readFile(file, "utf8")) as unknown;
    return typeof doc === "object" && doc !== null && Object.hasOwn(doc, "xcsh-tools");
  } catch {
    return false;
  }
}

/** How a project folder's trust is decided while searching for settings. */
export interface ProjectSettingsTrust {
  /** The decision for `cwd` itself (asked only when `cwd` holds a candidate). */
  cwd?: boolean | (() => boolean | Promise<boolean>);
  /** The user's record and home, for folders above `cwd`. */
  world?: { xcshHome: string; home?: string };
}

function folderTrustedByUser(dir: string, world: ProjectSettingsTrust["world"]): boolean {
  if (!world) return false;
  const trustFile = xcshPaths({ home: world.home ?? "", xcshHome: world.xcshHome }).trustedProjects;
  if (world.home !== undefined) return isProjectTrustedByUser(dir, { home: world.home, trustFile });
  return trustingEntry(readTrustRecord(trustFile).record, realPathOrNearest(dir)) !== undefined;
}

/**
 * The project settings file that applies in `cwd`, if any, and the files of untrusted folders
 * passed over on the way (never read). Without `trust`, every folder is untrusted.
 */
export async function findProjectSettings(
  cwd: string,
  stopDir?: string,
  trust: ProjectSettingsTrust = {},
): Promise<{ file: string; config: unknown; shadowed: string[]; ignored: string[] } | { file?: undefined; ignored: string[] }> {
  const stop = stopDir === undefined ? undefined : path.resolve(stopDir);
  const start = path.resolve(cwd);
  const ignored: string[] = [];
  let dir = start;
  for (;;) {
    const present: string[] = [];
    for (const name of PROJECT_SEARCH_PLACES) {
      const file = path.join(dir, name);
      if (await isFile(file)) present.push(file);
    }
    if (present.length > 0) {
      const decision = dir === start ? trust.cwd : undefined;
      const trusted = dir === start ? (typeof decision === "function" ? (await decision()) === true : decision === true) : folderTrustedByUser(dir, trust.world);
      if (!trusted) {
        for (const file of present) if (await isIgnoredCandidate(file)) ignored.push(file);
      } else {
        for (let i = 0; i < present.length; i++) {
          const found = await loadCandidate(present[i]!);
          if (!found) continue;
          return { ...found, shadowed: present.slice(i + 1).filter((f) => path.basename(f) !== "package.json"), ignored };
        }
      }
    }
    const parent = path.dirname(dir);
    if (parent === dir || (stop !== undefined && dir === stop)) return { ignored };
    dir = parent;
  }
}

/** The user settings file in the xcsh root, if any. */
export async function findUserSettings(xcshHome: string): Promise<{ file: string; config: unknown } | undefined> {
  for (const name of USER_SETTINGS_FILES) {
    const found = await loadCandidate(path.join(xcshHome, name));
    if (found) return found;
  }
  return undefined;
}

function fileSource(file: string): LayerSource {
  return { label: file, id: file, file, field: (dotted) => dotted };
}

/** Find, validate and layer the settings (flags > env > project > user > defaults). */
export async function loadSettings(options: LoadSettingsOptions): Promise<LoadedSettings> {
  const env = options.env ?? {};
  const warnings: ConfigWarning[] = [];
  const layers: Array<{ doc: XcshToolsSettingsFile; origin: SettingOrigin; via?: (key: SettingKey) => string | undefined }> =
    [];
  const ready = async (doc: unknown) => {
    if (typeof doc === "object" && doc !== null && Object.keys(doc).length > 0) await prepareSettingsCheck();
  };

  if (options.flags !== undefined) {
    await ready(options.flags);
    const checked = validateSettingsLayer(options.flags, {
      label: "the command line",
      id: "flags",
      field: (dotted) => dotted,
    });
    warnings.push(...checked.warnings);
    layers.push({ doc: checked.value, origin: "flag", via: (key) => key });
  }

  const fromEnv = envLayer(env);
  await ready(fromEnv.doc);
  const envChecked = validateSettingsLayer(fromEnv.doc, {
    label: "the environment",
    id: "env",
    field: (dotted) => fromEnv.vias.get(dotted as SettingKey) ?? SETTING_ENV_VARS[dotted as SettingKey] ?? dotted,
  });
  layers.push({ doc: envChecked.value, origin: "env", via: (key) => fromEnv.vias.get(key) });

  const files: LoadedSettings["files"] = {};
  const project = await findProjectSettings(options.cwd, options.stopDir, {
    ...(options.projectTrusted !== undefined ? { cwd: options.projectTrusted } : {}),
    world: { xcshHome: options.xcshHome, ...(options.home !== undefined ? { home: options.home } : {}) },
  });
  for (const file of project.ignored) warnings.push(untrustedProjectFileWarning(file));
  if (project.file !== undefined) {
    await ready(project.config);
    const checked = validateSettingsLayer(project.config, fileSource(project.file));
    warnings.push(...checked.warnings);
    for (const key of PROJECT_SECRET_KEYS) {
      if (getLeaf(checked.value, key) === undefined) continue;
      delete (checked.value as Record<string, unknown>)[key];
      warnings.push(projectSecretWarning(project.file, key));
    }
    for (const other of project.shadowed) {
      warnings.push({
        code: "ECONFIG_SHADOWED",
        source: other,
        path: "",
        message: `${other} is ignored: ${project.file} in the same folder takes precedence`,
      });
    }
    layers.push({ doc: checked.value, origin: `project:${project.file}` });
    files.project = project.file;
  }

  const user = await findUserSettings(options.xcshHome);
  if (user) {
    await ready(user.config);
    const checked = validateSettingsLayer(user.config, fileSource(user.file));
    warnings.push(...checked.warnings);
    layers.push({ doc: checked.value, origin: `user:${user.file}` });
    files.user = user.file;
  }

  const values = {} as Record<SettingKey, SettingValue>;
  const settings: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    let chosen: SettingValue | undefined;
    for (const layer of layers) {
      const value = getLeaf(layer.doc, key);
      if (value === undefined) continue;
      const via = layer.via?.(key);
      chosen = { value, origin: layer.origin, ...(via === undefined ? {} : { via }) };
      break;
    }
    chosen ??= { value: getLeaf(DEFAULT_SETTINGS, key), origin: "default" };
    values[key] = chosen;
    if (chosen.value !== undefined) setLeaf(settings, key, structuredClone(chosen.value));
  }
  return { settings: settings as XcshToolsSettings, values, files, warnings, ...(project.ignored.length > 0 ? { ignoredProjectFiles: project.ignored } : {}) };
}

/** The command line that trusts `dir`, for messages (quoted when it holds a space). */
function trustLine(dir: string): string {
  return `xcsh-tools trust ${/\s/.test(dir) ? JSON.stringify(dir) : dir}`;
}

/** `ECONFIG_UNTRUSTED_PROJECT`: a project settings file left out, unread, because its folder is not trusted. */
export function untrustedProjectFileWarning(file: string): ConfigWarning {
  const dir = path.dirname(file);
  return {
    code: "ECONFIG_UNTRUSTED_PROJECT",
    source: file,
    path: "",
    message: `${file} is ignored: the folder ${dir} is not trusted, and project settings apply only in trusted projects (trust it with \`${trustLine(dir)}\`)`,
  };
}

/** `ECONFIG_PROJECT_SECRET`: a key of `PROJECT_SECRET_KEYS` in a project file, ignored. */
export function projectSecretWarning(file: string, key: SettingKey): ConfigWarning {
  const why = key === "registry" ? "it decides where plugin code comes from and where your npm credentials go" : "it runs the install scripts of every package";
  return {
    code: "ECONFIG_PROJECT_SECRET",
    source: file,
    path: key,
    message: `${file}: "${key}" is ignored: a project file may not set it (${why}); set it in your own ~/.xcsh/xcsh-tools.json, ${SETTING_ENV_VARS[key]} or on the command line`,
  };
}


/** Pure check of one settings file's document, as `validate` reports it (no throw). */
export function validateSettingsFile(document: unknown, file: string): ValidationResult<XcshToolsSettingsFile> {
  const toPointer = (dotted: string) => (dotted ? `/${dotted.split(".").join("/")}` : "");
  try {
    const checked = validateSettingsLayer(document, fileSource(file));
    const warnings = checked.warnings.map((w) => ({ path: toPointer(w.path), code: w.code, message: w.message }));
    return { ok: true, value: checked.value, warnings };
  } catch (error) {
    if (!isXcshToolsError(error)) throw error;
    const issue = { path: toPointer(error.path ?? ""), code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
    return { ok: false, issues: [issue], warnings: [] };
  }
}
