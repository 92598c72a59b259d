/**
 * Finding and reading the settings files.
 *
 * - Project file: the first of `package.json#xcsh-tools`, `.xcsh-toolsrc` (JSON or YAML),
 *   `.xcsh-toolsrc.json`, `.xcsh-toolsrc.yaml`, `.xcsh-toolsrc.yml`, `xcsh-tools.config.js`,
 *   `.mjs`, `.cjs`, `.json`, in `cwd` or the nearest trusted folder above it (up to `stopDir`,
 *   default the file-system root). We walk the folders ourselves and load each candidate with
 *   cosmiconfig's loaders: its "global" strategy would also read `~/.config/xcsh-tools` through
 *   the real HOME, which neither tests nor hosts can redirect.
 * - User file: the first of `xcsh-tools.json`, `xcsh-tools.yaml`, `xcsh-tools.yml` in the
 *   xcsh root (`~/.xcsh/xcsh-tools.json` by default), next to the host's own state.
 *
 * Trust. A project settings file is the project's, and a project folder is untrusted input
 * (core/trust.ts): its file applies only when the folder holding it is trusted — `cwd` by the
 * caller's decision (`projectTrusted`), a folder above it by the user's record (the home folder
 * always). An untrusted folder's files are never loaded, not even parsed (a JS config would run
 * its code); each is a warning `ECONFIG_UNTRUSTED_PROJECT`, and the search goes on upward as if
 * it were not there. Files are read by cosmiconfig's loaders called directly, never through a
 * cosmiconfig explorer: creating one reads cosmiconfig's meta-config from the process's folder
 * (`.config/config.js` would run) and its `$import` reads further files a project names.
 */
import path from "node:path";
import { statSync } from "node:fs";
import { checkJsonDepth, readJsonText } from "../manifest/json-file.js";
import { XcshToolsError, errorMessage, isXcshToolsError } from "./errors.js";
import { isProjectTrustedByUser, trustCommand, type TrustWorld } from "./trust.js";
import type { ConfigWarning } from "./settings-check.js";

/** Project-level search places, in priority order within one folder. */
const PROJECT_SEARCH_PLACES = [
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

/** User-level files in the xcsh root, in priority order. */
const USER_SETTINGS_FILES = ["xcsh-tools.json", "xcsh-tools.yaml", "xcsh-tools.yml"] as const;

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

/**
 * Synchronous: the project search stats nine names in every folder from `cwd` up (about forty for
 * a project four folders deep), one after the other, and a thread-pool round trip per stat cost
 * more than the stats (as the boot index's checks found, boot/fingerprint.ts).
 */
async function isFile(file: string): Promise<boolean> {
  try {
    return statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

/** Load one candidate file; `undefined` when it holds no settings (empty, or package.json without our key). */
async function loadCandidate(file: string): Promise<{ file: string; config: unknown } | undefined> {
  if (!(await isFile(file))) return undefined;
  try {
    const content = readJsonText(file) ?? "";
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
    const doc = JSON.parse(readJsonText(file) ?? "") as unknown;
    return typeof doc === "object" && doc !== null && Object.hasOwn(doc, "xcsh-tools");
  } catch {
    return false;
  }
}

/** How a project folder's trust is decided while searching for settings. */
export interface ProjectSettingsTrust {
  /** The decision for `cwd` itself (asked only when `cwd` holds a candidate). Default: untrusted. */
  cwd?: boolean | (() => boolean | Promise<boolean>);
  /** The user's record and home, for folders above `cwd`. */
  world: TrustWorld;
}

async function isFolderTrusted(dir: string, isCwd: boolean, trust: ProjectSettingsTrust): Promise<boolean> {
  if (!isCwd) return isProjectTrustedByUser(dir, trust.world);
  const decision = trust.cwd;
  return typeof decision === "function" ? (await decision()) === true : decision === true;
}

/**
 * The project settings file that applies in `cwd`, if any, and the files of untrusted folders
 * passed over on the way (never read).
 */
export async function findProjectSettings(
  cwd: string,
  stopDir: string | undefined,
  trust: ProjectSettingsTrust,
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
      if (!(await isFolderTrusted(dir, dir === start, trust))) {
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

/** `ECONFIG_UNTRUSTED_PROJECT`: a project settings file left out, unread, because its folder is not trusted. */
export function untrustedProjectFileWarning(file: string): ConfigWarning {
  const dir = path.dirname(file);
  return {
    code: "ECONFIG_UNTRUSTED_PROJECT",
    source: file,
    path: "",
    message: `${file} is ignored: the folder ${dir} is not trusted, and project settings apply only in trusted projects (trust it with \`${trustCommand(dir)}\`)`,
  };
}

/** `ECONFIG_SHADOWED`: a second settings file in the project's folder, ignored. */
export function shadowedFileWarning(other: string, used: string): ConfigWarning {
  return { code: "ECONFIG_SHADOWED", source: other, path: "", message: `${other} is ignored: ${used} in the same folder takes precedence` };
}
