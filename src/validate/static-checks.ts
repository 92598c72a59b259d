/**
 * The static checks of `validate`: everything that needs the disk but not the plugin's code.
 * Documents go through the pure validators of `src/manifest`; declared paths are then checked
 * on disk (exist, stay inside the package through symlinks), and tool modules are collected with
 * discovery's own folder rules (`src/discovery/tools-dir.ts`) so that validate finds exactly the
 * modules the host would load.
 *
 * The file system calls are synchronous on purpose, as in discovery's folder scans
 * (discovery/tools-dir.ts): a plugin's checks are a dozen stat/realpath calls and one small
 * JSON file, one after another, and each fs/promises call is a thread-pool round trip costing
 * more than the call itself (every plugin of an install is checked so before its modules can be).
 */
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { XcshToolsError, errorMessage, nodeErrorCode } from "../core/errors.js";
import { checkJsonDepth, checkJsonSize, readJsonOrUndefined, readJsonText } from "../manifest/json-file.js";
import { isPathInside } from "../core/contain.js";
import { statOrUndefined } from "../core/paths.js";
import { resolveToolEntry, scanToolsDir } from "../discovery/tools-dir.js";
import type { DiscoverySink } from "../discovery/types.js";
import type { ToolLoadError, ToolSource } from "../core/contract.js";
import { validateInstalledPlugins } from "../manifest/installed-plugins.js";
import { validateKnownMarketplaces } from "../manifest/known-marketplaces.js";
import { relativeSourceDir, validateMarketplaceCatalog, type MarketplaceCatalog } from "../manifest/marketplace-catalog.js";
import { claudeCodeDropsFields, readFrontmatter, scanPluginComponents, type ScanOptions } from "../components/scan.js";
import { listPluginJsonPaths, validatePluginJson, type PluginJson } from "../manifest/plugin-json.js";
import { entryPathProblem, listManifestEntries, validatePluginPackageJson } from "../manifest/plugin-manifest.js";
import { validatePluginOverrides } from "../manifest/plugin-overrides.js";
import { validatePluginsPackageJson } from "../manifest/plugins-package.js";
import { isRecord, pointer, type ValidationResult } from "../manifest/result.js";
import { validateRuntimeLock } from "../manifest/runtime-lock.js";
import { prepareSettingsCheck, validateSettingsFile } from "../core/settings-check.js";
import type { ValidateRun } from "./run.js";
import type { ValidateIssue } from "./types.js";

/**
 * Loaded by the checks that use them, not with this module: the host's differences and the team
 * files sit in the restore's chunk (the bundle's `seed` group, which brings the restore stamp and
 * the marketplace registry's chunk with it), and the registry's validator in that registry's
 * chunk. An install's and a link's package check (`checkPluginPackage`) then loads none of the
 * three (~10 ms of CPU per `link`; issue 44), only a tools entry that is a folder asks the host's rules.
 */
const hostDifferences = () => import("./host-differences.js");
const teamFiles = () => import("./team-files.js");

const SOURCE: ToolSource = { provider: "config", providerName: "validate", level: "project" };

/** The state files `validate` recognises by name, and their validators. */
export const STATE_FILES: Record<string, (value: unknown, file: string) => ValidationResult<unknown> | Promise<ValidationResult<unknown>>> = {
  "installed_plugins.json": (v, file) => validateInstalledPlugins(v, { flavour: file.split(path.sep).includes(".claude") ? "claude" : "xcsh" }),
  "known_marketplaces.json": (v) => validateKnownMarketplaces(v),
  "marketplaces.json": async (v) => (await import("../manifest/marketplaces-registry.js")).validateMarketplacesRegistry(v),
  "xcsh-plugins.lock.json": (v) => validateRuntimeLock(v),
  "plugin-overrides.json": (v) => validatePluginOverrides(v),
  // Our own settings files (the JSON ones; YAML and JS configs are checked when they are loaded).
  "xcsh-tools.json": (v, file) => validateSettingsFile(v, file),
  ".xcsh-toolsrc.json": (v, file) => validateSettingsFile(v, file),
  "xcsh-tools.config.json": (v, file) => validateSettingsFile(v, file),
};

/** Line and column of a JSON.parse error position, for messages. */
function locate(text: string, message: string): string {
  const match = /position (\d+)/.exec(message);
  if (!match) return "";
  const pos = Number(match[1]);
  const before = text.slice(0, pos).split("\n");
  return ` (line ${before.length}, column ${before[before.length - 1]!.length + 1})`;
}

/** Read and parse a JSON file, recording `EJSONPARSE`/`EREAD`; `undefined` when unusable. */
export async function readJson(file: string, run: ValidateRun): Promise<{ value: unknown } | undefined> {
  let text: string;
  try {
    const read = readJsonText(file);
    if (read === undefined) throw Object.assign(new Error(`${file} does not exist`), { code: "ENOENT" });
    text = read;
  } catch (error) {
    // Too large (EJSON_TOO_LARGE) or not a regular file (ENOT_A_FILE): the reader's own code.
    if (error instanceof XcshToolsError && error.code !== "EREAD") {
      run.error(file, { path: "", code: error.code, message: error.message, hint: error.hint ?? "Move the file away or fix it." });
      return undefined;
    }
    const missing = nodeErrorCode(error) === "ENOENT";
    run.error(file, { path: "", code: missing ? "EENTRY_NOT_FOUND" : "EREAD", message: missing ? `${file} does not exist` : `cannot read ${file}: ${errorMessage(error)}`, hint: missing ? "Create the file or fix the path." : "Check the file's permissions." });
    return undefined;
  }
  try {
    checkJsonSize(text.length, file);
    const value: unknown = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    checkJsonDepth(value, file);
    return { value };
  } catch (error) {
    if (error instanceof XcshToolsError) {
      run.error(file, { path: "", code: error.code, message: error.message, hint: error.hint ?? "Move the file away or fix it." });
      return undefined;
    }
    const message = errorMessage(error);
    run.error(file, { path: "", code: "EJSONPARSE", message: `not valid JSON${locate(text, message)}: ${message}`, hint: "Fix the syntax (a trailing comma, a missing quote or brace); JSON allows no comments." });
    return undefined;
  }
}

/** The real path of `p`, or `fallback` when it cannot be resolved. */
function realpathOr(p: string, fallback: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return fallback;
  }
}

/** A sink that records discovery's findings as findings of `file` at `at`. */
function sinkFor(run: ValidateRun, file: string, at: string, found: string[]): DiscoverySink {
  return {
    addPath: (p) => found.push(p),
    addError: (e: ToolLoadError) => run.error(file, { path: at, code: e.code, message: e.error, hint: hintFor(e.code) }),
    addMetadata: () => undefined,
    addIgnored: () => undefined,
    addSkipped: () => undefined,
  };
}

function hintFor(code: string): string {
  switch (code) {
    case "EENTRY_NOT_FOUND":
      return "Create the file, fix the path, or build the package before validating.";
    case "EENTRY_ESCAPE":
      return "Keep every file inside the package: copy it in instead of linking to it, and avoid ../ paths.";
    case "ENOT_A_MODULE":
      return "Point at a .ts, .js or .mjs module, or a folder with an index module.";
    default:
      return "See the message.";
  }
}

/**
 * Check one declared path of a package on disk: it exists and its real path stays inside the
 * package. Returns the absolute path when usable.
 */
async function checkDeclaredPath(run: ValidateRun, file: string, root: string, rootReal: string, entry: string, at: string, what: string, missing: "error" | "warning" = "error"): Promise<string | undefined> {
  if (entryPathProblem(entry)) return undefined; // reported by the pure validator
  const target = path.resolve(root, entry);
  const info = statOrUndefined(target);
  if (!info) {
    (missing === "warning" ? run.warn : run.error).call(run, file, { path: at, code: "EENTRY_NOT_FOUND", message: `${at}: the ${what} "${entry}" does not exist (${target})`, expected: "an existing file or folder inside the package", found: "nothing", hint: hintFor("EENTRY_NOT_FOUND") });
    return undefined;
  }
  const real = realpathOr(target, target);
  if (!isPathInside(real, rootReal)) {
    run.error(file, { path: at, code: "EENTRY_ESCAPE", message: `${at}: the ${what} "${entry}" resolves through a symbolic link to ${real}, outside the package ${rootReal}`, found: real, hint: hintFor("EENTRY_ESCAPE") });
    return undefined;
  }
  return target;
}

/** Modules of a tools entry (a module, a folder with an index, or a tools folder). */
async function collectToolEntry(run: ValidateRun, file: string, target: string, rootReal: string, at: string, unit: string, staticTools: boolean): Promise<number> {
  const found: string[] = [];
  await resolveToolEntry(target, SOURCE, sinkFor(run, file, at, found), { what: "tools entry", within: rootReal });
  for (const module of found) run.addModule(module, unit, realpathOr(module, module), staticTools);
  return found.length;
}

/**
 * The components of a plugin root (src/components): their formats, names and the paths their
 * commands name. Manifest paths are checked by the manifest checks, so not reported twice.
 */
function checkComponents(run: ValidateRun, dir: string, unit: string, options: ScanOptions): void {
  const found = scanPluginComponents(dir, { ...options, reportDeclaredPaths: false });
  for (const issue of found.errors) {
    const { file, ...rest } = issue;
    if (issue.code !== "EENTRY_ESCAPE" && (run.componentProblems === "warning" || claudeCodeLoadsAnyway(issue) || (run.inClaudeCatalog && !guardsPermissions(issue)))) run.warn(file, rest);
    else run.error(file, rest);
  }
  for (const { file, ...rest } of found.warnings) {
    if (rest.code === "EFRONTMATTER_YAML" && !run.inClaudeCatalog && claudeCodeRefusesFrontmatter(file)) {
      const issue = { ...rest, code: "EFRONTMATTER", message: `${rest.message.replace(/; read line by line.*$/, "")}: a value runs on over lines that read as keys; Claude Code refuses it (every frontmatter field would be dropped)`, hint: "Put the long value in a block scalar (description: | then indented lines) or in quotes." };
      if (run.componentProblems === "warning") run.warn(file, issue);
      else run.error(file, issue);
    } else run.warn(file, rest);
  }
  for (const c of found.components) if (c.kind !== "tool") run.components.push({ ...c, plugin: unit });
  for (const c of found.components) {
    if (c.kind === "command" && c.description === undefined) {
      run.warn(c.file, { path: "", code: "ENO_DESCRIPTION", message: `the command "${c.name}" has no description in a frontmatter block; Claude Code and the host list it without one`, hint: "Start the file with ---, description: what the command does, then ---." });
    }
    // The command as written: the scanner's exec has the plugin root already put in.
    const written = c.kind === "hook" && c.pointer ? valueAt(readJsonOrUndefined(c.file), `${c.pointer}/command`) : undefined;
    if (typeof written !== "string" || !hasUnquotedPluginRoot(written)) continue;
    const at = c.pointer ?? "";
    run.warn(c.file, { path: `${at}/command`, code: "EHOOK_UNQUOTED_ROOT", message: `${at}/command: the command uses \${CLAUDE_PLUGIN_ROOT} without quotes; where the plugin's folder has a space in its path the shell splits the command and the hook fails`, found: JSON.stringify(written), hint: 'Put the placeholder in double quotes: "\\"${CLAUDE_PLUGIN_ROOT}/scripts/x.sh\\"".' });
  }
}

/** Whether Claude Code (2.1.332) refuses a component's frontmatter that we read leniently (`claudeCodeDropsFields`). */
function claudeCodeRefusesFrontmatter(file: string): boolean {
  try {
    return claudeCodeDropsFields(readFrontmatter(readFileSync(file, "utf8")));
  } catch {
    return false;
  }
}

/** The value at a JSON pointer of a parsed document, or `undefined`. */
function valueAt(doc: unknown, pointerText: string): unknown {
  let at: unknown = doc;
  for (const raw of pointerText.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(at)) at = at[Number(key)];
    else if (isRecord(at)) at = at[key];
    else return undefined;
  }
  return at;
}

/**
 * Whether a shell command line names the plugin root outside quotes (Claude Code 2.1.332 warns).
 * By hand: only the quote state of a POSIX command line matters here, and no library in use
 * parses shell words with their quoting kept.
 */
export function hasUnquotedPluginRoot(command: string): boolean {
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i];
    if (ch === "\\" && quote !== "'") {
      i++;
      continue;
    }
    if (quote) {
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') quote = ch;
    else if (command.startsWith("${CLAUDE_PLUGIN_ROOT}", i) || /^\$CLAUDE_PLUGIN_ROOT(?![A-Za-z0-9_])/.test(command.slice(i))) return true;
  }
  return false;
}

/**
 * Component problems Claude Code's validator (2.1.332, test/fixtures/conformance) lets pass: it
 * skips the broken hook entry at run time, does not check LSP servers, names skills and agents
 * by folder or file (so two with one frontmatter name do not clash), reads an unclosed
 * frontmatter as none, and takes a skill name or description longer than the Agent Skills page
 * suggests. Ours say so as warnings, so that `validate` passes what Claude Code passes.
 */
const GUARDING_HOOK_EVENTS = new Set(["PreToolUse", "PermissionRequest"]);
/** A finding inside a PreToolUse or PermissionRequest hook: Claude Code refuses those, a guard that cannot load. */
function guardsPermissions(issue: ValidateIssue): boolean {
  const event = /^\/hooks\/([^/]+)(\/|$)/.exec(issue.path)?.[1];
  return event !== undefined && GUARDING_HOOK_EVENTS.has(event);
}
function claudeCodeLoadsAnyway(issue: ValidateIssue): boolean {
  const base = path.basename(issue.file);
  // Inside one event (`/hooks/<Event>/...`): Claude Code ignores that entry, the rest of the file
  // loads; except PreToolUse and PermissionRequest, whose broken entry may be what guards the
  // permissions beside it: Claude Code refuses those.
  if (/^\/hooks\/[^/]+(\/|$)/.test(issue.path)) return !guardsPermissions(issue);
  // Claude Code's validator does not read .lsp.json at all; inline servers it loads without these fields.
  if (base === ".lsp.json" || (issue.path.startsWith("/lspServers") && issue.code === "EREQUIRED")) return true;
  // Skills and agents are named by folder or file there, and a frontmatter it cannot close is "none".
  if (issue.code === "EDUPLICATE_COMPONENT" || issue.code === "EFRONTMATTER") return base.endsWith(".md");
  return base === "SKILL.md" && issue.code === "ESCHEMA" && (issue.path === "/description" || issue.path === "/name");
}

/** A plugin package: package.json with an `xcsh`/`pi` manifest. */
export async function checkPluginPackage(run: ValidateRun, dir: string): Promise<void> {
  const file = path.join(dir, "package.json");
  const read = await readJson(file, run);
  if (!read) return;
  const checked = validatePluginPackageJson(read.value);
  run.absorb(file, checked);
  const value = checked.ok ? checked.value : undefined;
  if (!value) return;
  const unit = value.pkg.name;
  const rootReal = realpathSync.native(dir);
  let modules = 0;
  for (const item of listManifestEntries(value.manifest, `/${value.key}`)) {
    const what = item.kind === "tools" ? "tools entry" : `${item.kind.replace(/s$/, "")} entry`;
    const target = await checkDeclaredPath(run, file, dir, rootReal, item.entry, item.pointer, what);
    if (!target) continue;
    if (item.kind === "tools") {
      // The host's rules are asked of a folder entry only: a file is imported as it is named.
      const host = statOrUndefined(target)?.isDirectory() ? await hostDifferences() : undefined;
      if (host?.folderWithoutIndex(target)) {
        run.warn(file, { path: item.pointer, code: "WHOST_ENTRY_NO_INDEX", message: `${item.pointer}: the tools entry "${item.entry}" is a folder without index.ts or index.js; ${host.HOST_DIFFERENCES.WHOST_ENTRY_NO_INDEX}`, hint: "Name the modules themselves in the entry, or add an index.ts to the folder." });
      }
      modules += await collectToolEntry(run, file, target, rootReal, item.pointer, unit, value.manifest.staticTools === true);
    }
  }
  if (modules === 0 && listManifestEntries(value.manifest, "").some((e) => e.kind === "tools")) {
    run.warn(file, { path: `/${value.key}/tools`, code: "ENO_TOOLS", message: "the tools entries contain no tool module", hint: "Add a .ts/.js/.mjs module to the tools folder." });
  }
  checkComponents(run, dir, unit, { rootKind: "npm", manifest: value.manifest, manifestKey: value.key });
  await checkPluginJsonFiles(run, dir);
}

/** `.xcsh-plugin/plugin.json` and `.claude-plugin/plugin.json` of a folder, when present. */
async function checkPluginJsonFiles(run: ValidateRun, dir: string, standalone = true): Promise<PluginJson | undefined> {
  let first: PluginJson | undefined;
  for (const folder of [".xcsh-plugin", ".claude-plugin"] as const) {
    const file = path.join(dir, folder, "plugin.json");
    if (!statOrUndefined(file)) continue;
    const json = await checkPluginJsonFile(run, file, standalone);
    first ??= json;
  }
  return first;
}

/**
 * One plugin.json: the document, then its component paths on disk. `standalone`: validated on its
 * own, not as a plugin of a catalog (see `validatePluginJson`).
 */
export async function checkPluginJsonFile(run: ValidateRun, file: string, standalone = true): Promise<PluginJson | undefined> {
  const read = await readJson(file, run);
  if (!read) return undefined;
  const flavour = path.basename(path.dirname(file)) === ".claude-plugin" ? "claude" : "xcsh";
  const checked = validatePluginJson(read.value, { flavour, standalone, install: run.componentProblems === "warning" });
  run.absorb(file, checked);
  if (!checked.ok) return undefined;
  const root = path.dirname(path.dirname(file));
  const rootReal = realpathSync.native(root);
  for (const { entry, pointer: at } of listPluginJsonPaths(checked.value)) {
    // A component path that is not there: Claude Code's installer takes the plugin (its loader
    // reports the path when it loads; install/installer-takes), so an install warns.
    const target = await checkDeclaredPath(run, file, root, rootReal, entry, at, "component path", run.componentProblems);
    // Claude Code reads a skills entry as a folder holding SKILL.md and refuses a file there.
    if (target && at.startsWith("/skills") && statOrUndefined(target)?.isFile()) {
      const parent = `./${path.relative(root, path.dirname(target)).split(path.sep).join("/")}`;
      run.error(file, { path: at, code: "ECOMPONENT_PATH", message: `${at}: "${entry}" is a file; a skills entry is a folder holding SKILL.md (Claude Code refuses the plugin otherwise)`, expected: "a folder", found: "a file", hint: `Point it at the folder: "${parent}".` });
    }
  }
  return checked.value;
}

/** A marketplace plugin folder: plugin.json (optional) and the `tools/` convention. */
export async function checkPluginFolder(run: ValidateRun, dir: string, unit?: string): Promise<void> {
  const { HOST_DIFFERENCES, USER_CONFIG_HINT, describeStemCollision, describeUserConfigUse, filesOnlyTheHostLoads, hostToolFiles, stemCollisions, userConfigUse } = await hostDifferences();
  const json = await checkPluginJsonFiles(run, dir, unit === undefined);
  const name = unit ?? json?.name ?? path.basename(dir);
  const userConfig = json && userConfigUse(dir, json);
  if (userConfig) {
    const file = [".xcsh-plugin", ".claude-plugin"].map((folder) => path.join(dir, folder, "plugin.json")).find((f) => statOrUndefined(f)) ?? dir;
    run.warn(file, { path: "/userConfig", code: "WHOST_USER_CONFIG", message: `/userConfig: ${name} ${describeUserConfigUse(userConfig)}; ${HOST_DIFFERENCES.WHOST_USER_CONFIG}`, hint: USER_CONFIG_HINT });
  }
  const toolsDir = path.join(dir, "tools");
  if (statOrUndefined(toolsDir)) {
    await checkToolsFolder(run, toolsDir, name, realpathSync.native(dir));
    const hostOnly = filesOnlyTheHostLoads(hostToolFiles(toolsDir));
    if (hostOnly.length > 0) {
      const shown = hostOnly.slice(0, 5).join(", ") + (hostOnly.length > 5 ? ` (and ${hostOnly.length - 5} more)` : "");
      run.warn(toolsDir, { path: "", code: "WHOST_TOOLS_FILES", message: `${shown}: ${HOST_DIFFERENCES.WHOST_TOOLS_FILES}`, hint: "Keep only tool modules (and folders with an index module) in tools/; move helpers, docs and data beside it, e.g. lib/." });
    }
    run.hostToolFolders.push({ id: name, toolsDir });
    // Within one plugin: folder tools are all "index" to the host. Across plugins: checkMarketplace.
    for (const collision of stemCollisions([{ id: name, toolsDir }])) {
      run.warn(collision.tools[0]!.file, { path: "", code: "WHOST_TOOL_STEM", message: `${describeStemCollision(collision)}; ${HOST_DIFFERENCES.WHOST_TOOL_STEM}`, hint: "Give the plugin's tool files distinct names (tools/<name>.ts rather than tools/<name>/index.ts)." });
    }
  }
  checkComponents(run, dir, name, { rootKind: "folder" });
}

/** A tools folder: every module in it, non-recursively, by discovery's rules. */
export async function checkToolsFolder(run: ValidateRun, dir: string, unit: string, within?: string): Promise<void> {
  const found: string[] = [];
  await scanToolsDir(dir, SOURCE, sinkFor(run, dir, "", found), within ? { within } : {});
  run.files.add(dir);
  for (const module of found) run.addModule(module, unit, realpathOr(module, module));
  if (found.length === 0) run.warn(dir, { path: "", code: "ENO_TOOLS", message: `${dir} contains no tool module`, hint: "A tool is a .ts/.js/.mjs file or a folder with an index module." });
}

/** A marketplace repository: its catalog(s), then every plugin with a relative source. */
export async function checkMarketplace(run: ValidateRun, dir: string): Promise<void> {
  const catalogs: { file: string; flavour: "xcsh" | "claude" }[] = [];
  for (const [folder, flavour] of [[".xcsh-plugin", "xcsh"], [".claude-plugin", "claude"]] as const) {
    const file = path.join(dir, folder, "marketplace.json");
    if (statOrUndefined(file)) catalogs.push({ file, flavour });
  }
  const checkedDirs = new Set<string>();
  const foldersBefore = run.hostToolFolders.length;
  for (const { file, flavour } of catalogs) {
    const checked = await checkCatalogFile(run, file, flavour);
    if (!checked) continue;
    const { catalog, bad } = checked;
    const rootReal = realpathSync.native(dir);
    for (const [i, entry] of catalog.plugins.entries()) {
      // Bare names (under metadata.pluginRoot) are checked too: entries the catalog check refused are in `bad`.
      if (bad.has(i) || !entry || typeof entry.source !== "string" || entryPathProblem(entry.source)) continue;
      const at = pointer("", "plugins", i, "source");
      const rel = relativeSourceDir(entry.source, catalog);
      if (flavour === "claude" && !statOrUndefined(path.resolve(dir, rel))) {
        // Claude Code's validator takes the catalog and fails only that plugin's install; `add` warns the same way.
        run.warn(file, { path: at, code: "ESOURCE_NOT_FOUND", message: `${at}: the plugin source "${entry.source}" does not exist in this repository; installing "${entry.name}" will fail`, expected: "a folder of the repository", found: "nothing", hint: `Create ${rel} or fix the source.` });
        continue;
      }
      const target = await checkDeclaredPath(run, file, dir, rootReal, rel, at, "plugin source");
      if (!target) continue;
      if (!statOrUndefined(target)?.isDirectory()) {
        run.error(file, { path: at, code: "ESOURCE_NOT_FOUND", message: `${at}: the plugin source "${entry.source}" is not a folder`, hint: "Point the source at the plugin's folder." });
        continue;
      }
      const key = realpathSync.native(target);
      if (checkedDirs.has(key)) continue;
      checkedDirs.add(key);
      if (statOrUndefined(path.join(target, "package.json"))) {
        const pkg = readJsonOrUndefined(path.join(target, "package.json"));
        if (isRecord(pkg) && (pkg.xcsh || pkg.pi)) {
          await checkPluginPackage(run, target);
          continue;
        }
      }
      // Claude Code judges a catalog by its manifests and its plugins' permission-guarding hooks: any
      // other broken component of a plugin is said when that plugin is validated or installed.
      run.inClaudeCatalog = flavour === "claude";
      await checkPluginFolder(run, target, entry.name);
      run.inClaudeCatalog = false;
      if (flavour === "claude") warnOverriddenVersion(run, file, at.replace(/\/source$/, ""), entry, target);
    }
  }
  // A plugin.json beside the catalog (a repository that is both) is read by Claude Code too.
  if (!checkedDirs.has(realpathSync.native(dir))) await checkPluginJsonFiles(run, dir, false);
  const { HOST_DIFFERENCES, describeStemCollision, stemCollisions } = await hostDifferences();
  for (const collision of stemCollisions(run.hostToolFolders.slice(foldersBefore))) {
    if (new Set(collision.tools.map((t) => t.plugin)).size < 2) continue; // warned per plugin
    run.warn(collision.tools[0]!.file, { path: "", code: "WHOST_TOOL_STEM", message: `${describeStemCollision(collision)}; ${HOST_DIFFERENCES.WHOST_TOOL_STEM}`, hint: "Give each plugin's tool files distinct names (e.g. prefix them with the plugin's name)." });
  }
}

/**
 * A catalog entry's version that the plugin's own plugin.json contradicts: Claude Code installs
 * and records plugin.json's (2.1.332 warns that the entry's is ignored).
 */
function warnOverriddenVersion(run: ValidateRun, file: string, at: string, entry: { name: string; version?: unknown }, dir: string): void {
  if (typeof entry.version !== "string") return;
  const manifest = path.join(dir, ".claude-plugin", "plugin.json");
  const own = readJsonOrUndefined(manifest);
  if (!isRecord(own) || typeof own.version !== "string" || own.version === entry.version) return;
  run.warn(file, { path: `${at}/version`, code: "EVERSION_OVERRIDDEN", message: `${at}/version: the entry says "${entry.version}" but ${manifest} says "${own.version}"; plugin.json wins at install, the entry's version is ignored`, found: JSON.stringify(entry.version), hint: `Write "version": "${own.version}" in the entry, or drop it and keep the version in plugin.json only.` });
}

/** One catalog file. */
export async function checkCatalogFile(
  run: ValidateRun,
  file: string,
  flavour: "xcsh" | "claude",
): Promise<{ catalog: MarketplaceCatalog; bad: Set<number> } | undefined> {
  const read = await readJson(file, run);
  if (!read) return undefined;
  const checked = validateMarketplaceCatalog(read.value, { flavour });
  run.absorb(file, checked);
  // Plugins whose entry is fine are still worth checking when another entry is bad.
  const value = read.value as MarketplaceCatalog;
  if (!value || typeof value !== "object" || !Array.isArray(value.plugins)) return undefined;
  const bad = new Set<number>();
  for (const issue of checked.ok ? [] : checked.issues) {
    const index = /^\/plugins\/(\d+)/.exec(issue.path)?.[1];
    if (index !== undefined) bad.add(Number(index));
  }
  return { catalog: value, bad };
}

/** A state file recognised by its name. */
export async function checkStateFile(run: ValidateRun, file: string): Promise<void> {
  const { TEAM_FILES, checkTeamFile } = await teamFiles();
  if (Object.hasOwn(TEAM_FILES, path.basename(file))) return checkTeamFile(run, file);
  const validate = STATE_FILES[path.basename(file)];
  if (!validate) return;
  await prepareSettingsCheck();
  const errorsBefore = run.errors.length;
  const read = await readJson(file, run);
  if (!read) {
    // Not JSON: the host reads these two differently from us (validate/host-differences.ts).
    const notJson = run.errors.slice(errorsBefore).some((e) => e.code === "EJSONPARSE");
    const code = path.basename(file) === "xcsh-plugins.lock.json" ? "WHOST_LOCK_MALFORMED" : path.basename(file) === "plugin-overrides.json" ? "WHOST_OVERRIDES_MALFORMED" : undefined;
    if (notJson && code) run.warn(file, { path: "", code, message: (await hostDifferences()).HOST_DIFFERENCES[code], hint: "Fix the JSON error above." });
    return;
  }
  run.absorb(file, await validate(read.value, file));
}

/** `~/.xcsh/plugins/package.json` (recognised by `name: "xcsh-plugins"`). */
export async function checkPluginsPackageJson(run: ValidateRun, file: string, value: unknown): Promise<void> {
  // Shape and option-shaped values; whether a git dependency may be a local repository depends
  // on our install record, which the plugin engine consults when it reads the file (plugins/state.ts).
  run.absorb(file, validatePluginsPackageJson(value, { localGit: () => true }));
}
