/**
 * xcsh-tools' own settings, layered: found (settings-files.ts), checked against their TypeBox
 * schema (settings-check.ts), and remembered value by value with their origin so that `doctor`
 * can say where each one came from. The keys and defaults are in settings-keys.ts.
 *
 * Layers, highest first: flags > environment > project file > user file > defaults. Layering is
 * per leaf (`timeouts.gitMs` from the project file and `timeouts.fetchMs` from the user file can
 * coexist); arrays are replaced whole, never concatenated.
 *
 * Environment (empty values count as unset): `XCSH_TOOLS_REGISTRY`, `XCSH_TOOLS_ALLOW_SCRIPTS`,
 * `XCSH_TOOLS_BUILTIN_TOOLS` (comma list), `XCSH_TOOLS_FACTORY_TIMEOUT_MS`,
 * `XCSH_TOOLS_IMPORT_TIMEOUT_MS`, `XCSH_TOOLS_GIT_TIMEOUT_MS`, `XCSH_TOOLS_FETCH_TIMEOUT_MS`,
 * `XCSH_TOOLS_LOCK_WAIT_MS`, `XCSH_TOOLS_DISABLED_PROVIDERS` (comma list), `XCSH_TOOLS_COLOR`
 * (auto|always|never; else `NO_COLOR` set → never), `XCSH_TOOLS_JSON`,
 * `XCSH_TOOLS_TARBALL_UNPACKED_BYTES`, `XCSH_TOOLS_TARBALL_ENTRIES`,
 * `XCSH_TOOLS_TARBALL_PATH_LENGTH` (the `limits.*` of every tarball),
 * `XCSH_TOOLS_CONTEXT_WARN_TOKENS` (doctor warns past this always-on context). Booleans accept
 * 1/0, true/false, yes/no, on/off.
 *
 * A project file applies only in a trusted project (settings-files.ts), and, trusted or not, never
 * sets a secret setting (`PROJECT_SECRET_KEYS`): the key is ignored with `ECONFIG_PROJECT_SECRET`
 * naming the file and field.
 */
import type { XcshToolsSettings, XcshToolsSettingsFile } from "../manifest/xcsh-tools-settings.js";
import { DEFAULT_SETTINGS, PROJECT_SECRET_KEYS, SETTING_ENV_VARS, SETTING_KEYS, getLeaf, setLeaf, type SettingKey, type SettingOrigin, type SettingValue } from "./settings-keys.js";
import { fileSource, prepareSettingsCheck, validateSettingsLayer, type ConfigWarning, type LayerSource } from "./settings-check.js";
import { findProjectSettings, findUserSettings, shadowedFileWarning, untrustedProjectFileWarning } from "./settings-files.js";
import { trustWorldOf } from "./trust.js";

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
  home: string;
}

/** The merged settings, each leaf's origin, the files used, and warnings. */
export interface LoadedSettings {
  settings: XcshToolsSettings;
  values: Record<SettingKey, SettingValue>;
  files: { project?: string; user?: string };
  warnings: ConfigWarning[];
}

/** One checked layer, highest first in `loadSettings`. */
interface Layer {
  doc: XcshToolsSettingsFile;
  origin: SettingOrigin;
  via?: (key: SettingKey) => string | undefined;
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

/** Check one layer's document (loading the schema check when it holds anything), collecting its warnings. */
async function checkLayer(doc: unknown, source: LayerSource, warnings: ConfigWarning[]): Promise<XcshToolsSettingsFile> {
  if (typeof doc === "object" && doc !== null && Object.keys(doc).length > 0) await prepareSettingsCheck();
  const checked = validateSettingsLayer(doc, source);
  warnings.push(...checked.warnings);
  return checked.value;
}

/** Find, validate and layer the settings (flags > env > project > user > defaults). */
export async function loadSettings(options: LoadSettingsOptions): Promise<LoadedSettings> {
  const warnings: ConfigWarning[] = [];
  const layers: Layer[] = [];
  if (options.flags !== undefined) {
    const doc = await checkLayer(options.flags, { label: "the command line", id: "flags", field: (dotted) => dotted }, warnings);
    layers.push({ doc, origin: "flag", via: (key) => key });
  }
  const fromEnv = envLayer(options.env ?? {});
  const envField = (dotted: string) => fromEnv.vias.get(dotted as SettingKey) ?? SETTING_ENV_VARS[dotted as SettingKey] ?? dotted;
  const envDoc = await checkLayer(fromEnv.doc, { label: "the environment", id: "env", field: envField }, warnings);
  layers.push({ doc: envDoc, origin: "env", via: (key) => fromEnv.vias.get(key) });

  const files: LoadedSettings["files"] = {};
  const project = await projectLayer(options, warnings);
  if (project.layer) layers.push(project.layer);
  if (project.file) files.project = project.file;
  const user = await findUserSettings(options.xcshHome);
  if (user) {
    layers.push({ doc: await checkLayer(user.config, fileSource(user.file), warnings), origin: `user:${user.file}` });
    files.user = user.file;
  }
  const { settings, values } = mergeLayers(layers);
  return { settings, values, files, warnings };
}

/** The project file's layer, without its secret keys; the untrusted files passed over are warnings. */
async function projectLayer(options: LoadSettingsOptions, warnings: ConfigWarning[]): Promise<{ layer?: Layer; file?: string }> {
  const project = await findProjectSettings(options.cwd, options.stopDir, {
    ...(options.projectTrusted !== undefined ? { cwd: options.projectTrusted } : {}),
    world: trustWorldOf(options),
  });
  for (const file of project.ignored) warnings.push(untrustedProjectFileWarning(file));
  if (project.file === undefined) return {};
  const doc = await checkLayer(project.config, fileSource(project.file), warnings);
  for (const key of PROJECT_SECRET_KEYS) {
    if (getLeaf(doc, key) === undefined) continue;
    delete (doc as Record<string, unknown>)[key];
    warnings.push(projectSecretWarning(project.file, key));
  }
  for (const other of project.shadowed) warnings.push(shadowedFileWarning(other, project.file));
  return { layer: { doc, origin: `project:${project.file}` }, file: project.file };
}

/** Each leaf from the highest layer that sets it, else its default. */
function mergeLayers(layers: Layer[]): { settings: XcshToolsSettings; values: Record<SettingKey, SettingValue> } {
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
  return { settings: settings as XcshToolsSettings, values };
}

/** `ECONFIG_PROJECT_SECRET`: a key of `PROJECT_SECRET_KEYS` in a project file, ignored. */
function projectSecretWarning(file: string, key: SettingKey): ConfigWarning {
  const why = key === "registry" ? "it decides where plugin code comes from and where your npm credentials go" : "it runs the install scripts of every package";
  return {
    code: "ECONFIG_PROJECT_SECRET",
    source: file,
    path: key,
    message: `${file}: "${key}" is ignored: a project file may not set it (${why}); set it in your own ~/.xcsh/xcsh-tools.json, ${SETTING_ENV_VARS[key]} or on the command line`,
  };
}
