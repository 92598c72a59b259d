/**
 * Reading a plugin root's components: `scanPluginComponents(root, {rootKind})`.
 *
 * Marketplace plugins (xcsh or Claude Code) follow Claude Code's layout. Default places:
 * `tools/` (xcsh), `skills/<name>/SKILL.md` (or one `SKILL.md` at the root), `commands/*.md`,
 * `agents/*.md`, `output-styles/*.md`, `hooks/hooks.json`, `.mcp.json`, `.lsp.json`,
 * `monitors/monitors.json`, `bin/*`, and xcsh's own `hooks/pre/*` and `hooks/post/*` scripts.
 * A plugin.json (`.xcsh-plugin/` first, else `.claude-plugin/`) may name other places: for
 * `commands`, `agents`, `skills` and `outputStyles` its paths replace the default folder; for
 * `hooks`, `mcpServers` and `lspServers` (a path or the object inline) they add to the default
 * file, the manifest's entry winning a name both define; `monitors` adds to monitors.json.
 *
 * What xcsh loads (its host's discovery of marketplace plugin roots): from the roots of its own
 * registry, `tools/` (through this project's loader), the default `skills/`, `commands/` and
 * `agents/` folders (agents for the task tool), `hooks/pre|post/` scripts and the root
 * `.mcp.json`; never a plugin.json path, `hooks.json`, LSP servers, output styles, monitors or
 * `bin/`. From Claude Code's cache the host reads nothing itself; only `tools/` is loaded, by
 * this project's loader. An npm plugin brings what its `xcsh` manifest names: tools, hooks,
 * extensions and commands, all modules the host imports.
 *
 * Untrusted input: every path a manifest names is resolved inside the root (`confinePath`) and
 * every file found is checked to stay inside it after symlinks; `${CLAUDE_PLUGIN_ROOT}` and
 * `${XCSH_PLUGIN_ROOT}` in commands are replaced by the root, and a path built from them that
 * leaves the root is reported. Nothing is executed or imported; problems become issues.
 */
import { existsSync, readdirSync, type Dirent } from "node:fs";
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { confinePath, isPathInside, realPathOrNearest } from "../core/contain.js";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { statOrUndefined } from "../core/paths.js";
import { listPluginJsonPaths } from "../manifest/plugin-json.js";
import { PI_ONLY_KINDS, listManifestEntries, type PiOnlyKind, type PluginManifest } from "../manifest/plugin-manifest.js";
import { isRecord, pointer, type ValidationIssue } from "../manifest/result.js";
import { checkSchema } from "../manifest/schema-check.js";
import { NO_COST, estimateTokens, listedSkillName, listingCost } from "./cost.js";
import { claudeCodeDropsFields, readFrontmatter } from "./frontmatter.js";

/** For `validate`, which judges a frontmatter we read leniently by the YAML error behind it. */
export { claudeCodeDropsFields, readFrontmatter };
import { ROOT_VARS, pathTailAt, substituteRoot } from "./root-refs.js";
import {
  AgentFrontmatterSchema,
  CommandFrontmatterSchema,
  OutputStyleFrontmatterSchema,
  SkillFrontmatterSchema,
  validateHooks,
  validateLspServers,
  validateMcpServers,
  MonitorListSchema,
} from "./schemas.js";
import { KIND_WORDS, type Component, type ComponentExec, type ComponentIssue, type PluginComponents, type PluginRootKind } from "./types.js";

/** Options of `scanPluginComponents`. */
export interface ScanOptions {
  rootKind: PluginRootKind;
  /** For `npm` roots: the package's `xcsh` (or `pi`) manifest and the key it sits under. */
  manifest?: PluginManifest;
  manifestKey?: string;
  /**
   * Whether to report manifest paths that are missing or escape (default true). `validate` checks
   * those already with the manifest's own checks, so it turns this off to say each thing once;
   * an escaping path is skipped either way.
   */
  reportDeclaredPaths?: boolean;
  /**
   * The folder the plugin will be run from, when it is read elsewhere first (an install reads
   * its scratch copy): `${CLAUDE_PLUGIN_ROOT}` and paths in what components run name this one.
   */
  rootAs?: string;
  /**
   * The plugin's name, which Claude Code puts in front of its skills' and commands' names in
   * the listing the model sees (`plugin:skill`, part of their cost); default: plugin.json's
   * `name`, else the folder's name.
   */
  pluginName?: string;
}

const TOOL_EXTENSIONS = new Set([".ts", ".js", ".mjs", ".mts", ".cts", ".cjs"]);
const MAX_FILE_BYTES = 1024 * 1024;

class Scan {
  readonly components: Component[] = [];
  readonly errors: ComponentIssue[] = [];
  readonly warnings: ComponentIssue[] = [];
  readonly realRoot: string;
  /** See ScanOptions.pluginName; set once plugin.json is read. */
  pluginName: string;

  constructor(
    readonly root: string,
    readonly kind: PluginRootKind,
    readonly reportDeclared = true,
    readonly rootAs = root,
  ) {
    this.realRoot = realPathOrNearest(root);
    this.pluginName = path.basename(root);
  }

  /** A path under the root as it will be once the plugin is where it runs from. */
  relocate(p: string): string {
    return this.rootAs === this.root || !isPathInside(p, this.root) ? p : path.join(this.rootAs, path.relative(this.root, p));
  }

  /** Whether the host loads components of this root from their default place. */
  get xcshRoot(): boolean {
    return this.kind === "xcsh-marketplace" || this.kind === "folder";
  }

  error(file: string, issue: Omit<ComponentIssue, "file">): void {
    this.errors.push({ file, ...issue });
  }

  warn(file: string, issue: Omit<ComponentIssue, "file">): void {
    this.warnings.push({ file, ...issue });
  }

  absorb(file: string, result: { issues?: ValidationIssue[]; warnings: ValidationIssue[] }): void {
    if ("issues" in result && result.issues) for (const issue of result.issues) this.error(file, issue);
    for (const warning of result.warnings) this.warn(file, warning);
  }

  /** The real path of a found file, or undefined (reported) when a link takes it out of the root. */
  inside(p: string, file: string, at: string): string | undefined {
    const real = realPathOrNearest(p);
    if (isPathInside(real, this.realRoot)) return real;
    this.error(file, { path: at, code: "EENTRY_ESCAPE", message: `${p} resolves to ${real}, outside the plugin ${this.realRoot}; it was not read`, hint: "Keep every component file inside the plugin folder (no symbolic links out of it)." });
    return undefined;
  }

  /** A path a manifest names, confined to the root; undefined (reported) when it escapes or is missing. */
  declared(entry: string, file: string, at: string): string | undefined {
    const target = path.resolve(this.root, substituteRoot(entry, this.root));
    try {
      confinePath(target, this.root, { what: "component path", file, field: at });
    } catch (error) {
      if (this.reportDeclared) this.error(file, { path: at, code: "EENTRY_ESCAPE", message: `${at}: "${entry}" must stay inside the plugin (${errorMessage(error)})`, found: JSON.stringify(entry), hint: "Use a ./ path inside the plugin folder." });
      return undefined;
    }
    if (!existsSync(target)) {
      if (this.reportDeclared) this.error(file, { path: at, code: "EENTRY_NOT_FOUND", message: `${at}: the component path "${entry}" does not exist (${target})`, expected: "an existing file or folder inside the plugin", found: "nothing", hint: "Fix the path or add the file." });
      return undefined;
    }
    return target;
  }

  readText(p: string, at = ""): string | undefined {
    try {
      const text = readTextBounded(p, {
        maxBytes: MAX_FILE_BYTES,
        tooLarge: (file, size) => new XcshToolsError("EFILE_TOO_LARGE", `${file} is ${size} bytes; component files over ${MAX_FILE_BYTES} bytes are not read`, { hint: "Split the file; no host loads a component this large into context." }),
      });
      if (text !== undefined) return text;
      this.error(p, { path: at, code: "EREAD", message: `${p} cannot be read: it does not exist`, hint: "Check the file's permissions." });
    } catch (error) {
      // A FIFO or device in the plugin (ENOT_A_FILE) is reported, never read.
      const coded = error instanceof XcshToolsError ? error : undefined;
      this.error(p, { path: at, code: coded?.code ?? "EREAD", message: coded?.message ?? `${p} cannot be read: ${errorMessage(error)}`, hint: coded?.hint ?? "Check the file's permissions." });
    }
    return undefined;
  }

  /** A default component file of the root (`.mcp.json`, `hooks/hooks.json`...), parsed; undefined when absent, outside or broken. */
  readDefault(file: string): unknown {
    return isFile(file) && this.inside(file, file, "") ? this.readJson(file) : undefined;
  }

  readJson(p: string): unknown {
    const text = this.readText(p);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      this.error(p, { path: "", code: "EJSONPARSE", message: `${p} is not valid JSON: ${errorMessage(error)}`, hint: "Fix the JSON syntax." });
      return undefined;
    }
  }

  /** Replace root variables and report paths under them that leave the root or do not exist. */
  exec(command: string, args: readonly string[], env: Record<string, string> | undefined, file: string, at: string, extra: Partial<ComponentExec> = {}): ComponentExec {
    const resolved = substituteRoot(command, this.rootAs);
    const resolvedArgs = args.map((a) => substituteRoot(a, this.rootAs));
    for (const text of [command, ...args]) this.checkRootRefs(text, file, at);
    return { command: resolved, args: resolvedArgs, env: Object.keys(env ?? {}), ...(extra.cwd !== undefined ? { cwd: substituteRoot(extra.cwd, this.rootAs) } : {}), ...(extra.shell ? { shell: true } : {}) };
  }

  /** `${CLAUDE_PLUGIN_ROOT}/x/y` in a command: the file must exist and stay inside the root. */
  checkRootRefs(text: string, file: string, at: string): void {
    for (const v of ROOT_VARS) {
      let index = text.indexOf(v);
      while (index !== -1) {
        const tail = pathTailAt(text, index + v.length);
        index = text.indexOf(v, index + v.length);
        if (!tail.startsWith("/") || tail.length < 2) continue;
        const target = path.resolve(this.root, `.${tail}`);
        if (!isPathInside(target, this.root) || !isPathInside(realPathOrNearest(target), this.realRoot)) {
          this.error(file, { path: at, code: "EENTRY_ESCAPE", message: `${at}: ${v}${tail} leaves the plugin folder`, found: JSON.stringify(`${v}${tail}`), hint: "Commands may name files inside the plugin only." });
        } else if (!existsSync(target)) {
          // A warning: Claude Code installs such plugins (the file is often a build output left
          // out of the repository); the command fails when it runs.
          this.warn(file, { path: at, code: "EENTRY_NOT_FOUND", message: `${at}: ${v}${tail} does not exist (${target}); the command fails until it does`, found: "nothing", hint: "Add the file (commit the build output the command runs) or fix the command." });
        }
      }
    }
  }

  add(component: Component): void {
    this.components.push(component);
  }
}

/** The plugin.json of a marketplace root, when it has a usable one. */
type RootManifest = { file: string; json: Record<string, unknown> } | undefined;

/** The string paths a root's plugin.json names under `key`. */
function declaredPaths(manifest: RootManifest, key: string): { entry: string; pointer: string }[] {
  return manifest ? listPluginJsonPaths(manifest.json, "", [key]) : [];
}

function listDir(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

const isDirectory = (p: string) => statOrUndefined(p)?.isDirectory() === true;
const isFile = (p: string) => statOrUndefined(p)?.isFile() === true;

/** The plugin.json of a marketplace root (`.xcsh-plugin/` first), read leniently. */
function readPluginJson(scan: Scan): RootManifest {
  for (const folder of [".xcsh-plugin", ".claude-plugin"]) {
    const file = path.join(scan.root, folder, "plugin.json");
    if (!isFile(file)) continue;
    const json = scan.readJson(file);
    // plugin.json's own shape is validate's business (manifest/plugin-json.ts); here a bad
    // document only means the default places apply.
    return isRecord(json) ? { file, json } : undefined;
  }
  return undefined;
}

type MarkdownKind = "skill" | "command" | "agent" | "output-style";

const SCHEMAS = {
  skill: SkillFrontmatterSchema,
  command: CommandFrontmatterSchema,
  agent: AgentFrontmatterSchema,
  "output-style": OutputStyleFrontmatterSchema,
} as const;

/**
 * One Markdown component: frontmatter checked, description read, cost estimated. Its name is
 * Claude Code's: `fileName` (the skill's folder, the file without `.md`), except for a skill
 * whose SKILL.md is the very place a plugin names (`byFrontmatter`), which goes by its
 * frontmatter `name:` without a `plugin:` prefix.
 */
function addMarkdown(scan: Scan, kind: MarkdownKind, file: string, fileName: string, loaded: boolean, note: string | undefined, byFrontmatter = false): void {
  const real = scan.inside(file, file, "");
  if (!real) return;
  const text = scan.readText(file);
  if (text === undefined) return;
  const fm = readFrontmatter(text);
  if (fm.error) {
    scan.error(file, { path: "", code: "EFRONTMATTER", message: `${file}: ${fm.error}`, hint: "Start the file with ---, YAML key: value lines, then ---." });
  } else {
    if (fm.lenient) {
      scan.warn(file, { path: "", code: "EFRONTMATTER_YAML", message: `${file}: ${fm.lenient}; read line by line as "key: value", as xcsh and Claude Code do (a value continued on the next lines is lost)`, hint: 'Quote values that hold ": " or start with a special character (description: "…"), or use a block scalar (description: |).' });
    }
    const checked = checkSchema(SCHEMAS[kind], fm.data);
    for (const issue of checked.ok ? [] : checked.issues) {
      const entry = { ...issue, message: `frontmatter ${issue.message}` };
      // Read line by line every value is text: its type is the YAML's fault, reported above.
      if (fm.lenient && issue.code !== "EREQUIRED") scan.warn(file, entry);
      // An agent without a name or description is skipped by the hosts; the plugin still loads.
      else if (kind === "agent" && issue.code === "EREQUIRED") scan.warn(file, { ...entry, code: "EAGENT_SKIPPED", message: `${entry.message}: hosts skip this agent (the rest of the plugin loads)`, hint: "Add name: and description: to the agent's frontmatter (--- lines at the top of the file)." });
      else scan.error(file, entry);
    }
  }
  const data = fm.data;
  const declared = typeof data.name === "string" && data.name.trim() && kind !== "command" ? data.name.trim() : undefined;
  const unprefixed = declared?.startsWith(`${scan.pluginName}:`) ? declared.slice(scan.pluginName.length + 1) : declared;
  const name = (byFrontmatter && unprefixed) || fileName;
  const description = typeof data.description === "string" ? data.description : undefined;
  // What Claude Code lists: nothing of a frontmatter it drops, so the body's first line stands in.
  const listed = claudeCodeDropsFields(fm) ? {} : data;
  const listedDescription = typeof listed.description === "string" ? listed.description : undefined;
  const whenToUse = listed.when_to_use ?? listed["when-to-use"];
  if (description === undefined && kind === "skill" && !fm.error) {
    scan.warn(file, { path: "/description", code: "ENO_DESCRIPTION", message: `${kind} "${name}" has no description: the model cannot tell when to use it`, hint: "Add description: to the frontmatter." });
  }
  // Claude Code lists a plugin's Markdown commands among its skills (npm plugins' are the host's commands).
  const filedAs = kind === "command" && scan.kind !== "npm" ? "skill" : undefined;
  const listing = { kind: kind === "agent" ? "agent" : "skill", listedName: kind === "agent" ? name : listedSkillName(scan.pluginName, name), ...(listedDescription !== undefined ? { description: listedDescription } : {}), ...(whenToUse != null ? { whenToUse: String(whenToUse) } : {}), body: fm.body } as const;
  scan.add({
    kind,
    name,
    ...(declared !== undefined && declared !== name ? { declaredName: declared } : {}),
    ...(filedAs ? { filedAs } : {}),
    ...(description !== undefined ? { description } : {}),
    file,
    loadedByXcsh: loaded,
    ...(note ? { note } : {}),
    cost: kind === "output-style" ? { alwaysOn: 0, onInvoke: estimateTokens(fm.body.trim()) } : listingCost(listing),
  });
}

/**
 * Where components of a folder kind live: the paths the manifest's `key` names (they replace the
 * default folder, and xcsh never reads them), else the default folder, which xcsh reads when
 * `xcshLoads` and the root is one of its own.
 */
function componentPlaces(scan: Scan, manifest: RootManifest, key: string, folder: string, xcshLoads: boolean): { declared: boolean; places: { target: string; loaded: boolean; note: string | undefined }[] } {
  const custom = declaredPaths(manifest, key);
  const notLoaded = xcshLoads && scan.xcshRoot ? "not used by xcsh: the host reads only the default folder" : notLoadedNote(scan);
  if (custom.length === 0) {
    const loaded = xcshLoads && scan.xcshRoot;
    return { declared: false, places: [{ target: path.join(scan.root, folder), loaded, note: loaded ? undefined : notLoaded }] };
  }
  const places = custom.map(({ entry, pointer: at }) => scan.declared(entry, manifest!.file, at)).filter((t): t is string => t !== undefined);
  return { declared: true, places: places.map((target) => ({ target, loaded: false, note: notLoaded })) };
}

function scanSkills(scan: Scan, manifest: RootManifest): void {
  const { declared, places } = componentPlaces(scan, manifest, "skills", "skills", true);
  for (const { target: dir, loaded, note } of places) {
    if (isFile(path.join(dir, "SKILL.md"))) {
      addMarkdown(scan, "skill", path.join(dir, "SKILL.md"), path.basename(dir), loaded, note, true);
      continue;
    }
    for (const entry of listDir(dir)) {
      if (entry.name.startsWith(".")) continue;
      const skillFile = path.join(dir, entry.name, "SKILL.md");
      if (isFile(skillFile)) addMarkdown(scan, "skill", skillFile, entry.name, loaded, note);
    }
  }
  const rootSkill = path.join(scan.root, "SKILL.md");
  if (!declared && isFile(rootSkill)) addMarkdown(scan, "skill", rootSkill, path.basename(scan.root), false, scan.xcshRoot ? "not used by xcsh: the host reads skills/ only" : notLoadedNote(scan), true);
}

function notLoadedNote(scan: Scan): string {
  return scan.kind === "claude-cache" ? "not used by xcsh: the host does not read Claude Code's plugin cache" : "not used by xcsh";
}

/** commands/, agents/, output-styles/: flat .md files, or the files and folders a manifest names. */
function scanFlat(scan: Scan, manifest: RootManifest, kind: "command" | "agent" | "output-style", key: string, folder: string, xcshLoads: boolean): void {
  for (const { target, loaded, note } of componentPlaces(scan, manifest, key, folder, xcshLoads).places) {
    const files = isDirectory(target)
      ? listDir(target)
          .filter((e) => !e.name.startsWith(".") && e.name.endsWith(".md") && (e.isFile() || e.isSymbolicLink()))
          .map((e) => path.join(target, e.name))
      : isFile(target)
        ? [target]
        : [];
    for (const file of files) addMarkdown(scan, kind, file, path.basename(file, ".md"), loaded, note);
  }
}

function hookComponents(scan: Scan, file: string, value: unknown, inline: boolean, at: string): void {
  const checked = validateHooks(value, { inline });
  const base = inline ? at : "/hooks";
  scan.absorb(file, { ...(checked.ok ? {} : { issues: checked.issues.map((i) => ({ ...i, path: inline ? `${at}${i.path}` : i.path })) }), warnings: checked.warnings.map((i) => ({ ...i, path: inline ? `${at}${i.path}` : i.path })) });
  const events = inline ? value : isRecord(value) ? value.hooks : undefined;
  if (!isRecord(events)) return;
  for (const [event, groups] of Object.entries(events)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((group, g) => {
      if (!isRecord(group) || !Array.isArray(group.hooks)) return;
      const matcher = typeof group.matcher === "string" ? group.matcher : undefined;
      group.hooks.forEach((hook, h) => {
        if (!isRecord(hook) || typeof hook.type !== "string") return;
        const hat = pointer(base, event, g, "hooks", h);
        const name = `${event}${matcher ? ` [${matcher}]` : ""}`;
        const component: Component = {
          kind: "hook",
          name,
          file,
          pointer: hat,
          loadedByXcsh: false,
          note: scan.xcshRoot ? "not used by xcsh: the host runs hooks/pre and hooks/post scripts, not hooks.json" : notLoadedNote(scan),
          event,
          ...(matcher !== undefined ? { matcher } : {}),
          hookType: hook.type,
          ...(typeof hook.timeout === "number" ? { timeout: hook.timeout } : {}),
          cost: NO_COST,
        };
        if (hook.type === "command" && typeof hook.command === "string") component.exec = scan.exec(hook.command, [], undefined, file, hat, { shell: true });
        if (hook.type === "http" && typeof hook.url === "string") {
          component.url = hook.url;
          if (isRecord(hook.headers)) component.headers = Object.keys(hook.headers);
        }
        scan.add(component);
      });
    });
  }
}

function scanHooks(scan: Scan, manifest: RootManifest): void {
  const defaultFile = path.join(scan.root, "hooks", "hooks.json");
  const doc = scan.readDefault(defaultFile);
  if (doc !== undefined) hookComponents(scan, defaultFile, doc, false, "");
  const declared = manifest?.json.hooks;
  if (isRecord(declared)) {
    // Inline: either the events object itself or a hooks.json-like {hooks: {...}}.
    if (isRecord(declared.hooks)) hookComponents(scan, manifest!.file, declared, false, "/hooks");
    else hookComponents(scan, manifest!.file, declared, true, "/hooks");
  } else {
    for (const { entry, pointer: at } of declaredPaths(manifest, "hooks")) {
      const file = scan.declared(entry, manifest!.file, at);
      if (!file) continue;
      if (realPathOrNearest(file) === realPathOrNearest(defaultFile)) {
        scan.warn(manifest!.file, { path: at, code: "EDUPLICATE_COMPONENT", message: `${at}: "${entry}" is hooks/hooks.json, which is loaded anyway; its hooks would run twice`, hint: 'Remove the "hooks" field: hooks/hooks.json is read without it.' });
        continue;
      }
      const doc = scan.readJson(file);
      if (doc !== undefined) hookComponents(scan, file, doc, false, "");
    }
  }
  // xcsh's own hooks: scripts in hooks/pre and hooks/post, named after the tool they watch.
  for (const phase of ["pre", "post"] as const) {
    for (const { name, file } of scriptFiles(scan, path.join(scan.root, "hooks", phase))) {
      const tool = name.replace(/\.(sh|bash|zsh|fish)$/, "");
      scan.add({
        kind: "hook",
        name: `${phase} ${tool}`,
        file,
        loadedByXcsh: scan.xcshRoot,
        ...(scan.xcshRoot ? {} : { note: notLoadedNote(scan) }),
        event: phase === "pre" ? "before tool" : "after tool",
        matcher: tool,
        hookType: "script",
        exec: { command: scan.relocate(file), args: [], env: [] },
        cost: NO_COST,
      });
    }
  }
}

function serverComponents(scan: Scan, kind: "mcp-server" | "lsp-server", file: string, { map, base }: { map: unknown; base: string }, loaded: boolean, byName: Map<string, number>): void {
  const checked = kind === "mcp-server" ? validateMcpServers(map, base) : validateLspServers(map, base);
  scan.absorb(file, checked);
  if (!isRecord(map)) return;
  const valid = checked.ok ? checked.value : {};
  for (const [name, raw] of Object.entries(map)) {
    if (!isRecord(raw)) continue;
    const at = pointer(base, name);
    const server = (valid as Record<string, Record<string, unknown>>)[name] ?? raw;
    const component: Component = {
      kind,
      name,
      file,
      pointer: at,
      loadedByXcsh: loaded,
      ...(loaded ? {} : { note: kind === "lsp-server" || !scan.xcshRoot ? notLoadedNote(scan) : "not used by xcsh: the host reads .mcp.json only" }),
      cost: kind === "mcp-server" ? { alwaysOn: null, onInvoke: 0 } : NO_COST,
    };
    const env = isRecord(server.env) ? (server.env as Record<string, string>) : undefined;
    if (typeof server.command === "string") {
      const args = Array.isArray(server.args) ? server.args.filter((a): a is string => typeof a === "string") : [];
      component.exec = scan.exec(server.command, args, env, file, at, typeof server.cwd === "string" ? { cwd: server.cwd } : {});
      if (kind === "mcp-server") component.transport = "stdio";
    }
    if (kind === "mcp-server" && typeof server.url === "string") {
      component.url = server.url;
      component.transport = typeof server.type === "string" ? server.type : "http";
      if (isRecord(server.headers)) component.headers = Object.keys(server.headers);
    }
    const previous = byName.get(name);
    if (previous !== undefined) {
      // The manifest's definition wins a name both places define.
      scan.warn(file, { path: at, code: "EDUPLICATE_COMPONENT", message: `${KIND_WORDS[kind][0]} "${name}" is defined twice; this definition (${file}) replaces the one in ${scan.components[previous]!.file}`, hint: "Define each server once." });
      scan.components[previous] = component;
      continue;
    }
    byName.set(name, scan.components.length);
    scan.add(component);
  }
}

function scanServers(scan: Scan, manifest: RootManifest, kind: "mcp-server" | "lsp-server"): void {
  const key = kind === "mcp-server" ? "mcpServers" : "lspServers";
  // A file holds `{mcpServers: {...}}` or the map itself (both are in use).
  const mapOf = (doc: unknown, prefix = "") => (isRecord(doc) && isRecord(doc[key]) ? { map: doc[key], base: `${prefix}/${key}` } : { map: doc, base: prefix });
  const byName = new Map<string, number>();
  const defaultFile = path.join(scan.root, kind === "mcp-server" ? ".mcp.json" : ".lsp.json");
  const doc = scan.readDefault(defaultFile);
  if (doc !== undefined) serverComponents(scan, kind, defaultFile, mapOf(doc), kind === "mcp-server" && scan.xcshRoot, byName);
  const declared = manifest?.json[key];
  if (isRecord(declared)) serverComponents(scan, kind, manifest!.file, mapOf(declared, `/${key}`), false, byName);
  else {
    for (const { entry, pointer: at } of declaredPaths(manifest, key)) {
      const file = scan.declared(entry, manifest!.file, at);
      if (!file || realPathOrNearest(file) === realPathOrNearest(defaultFile)) continue;
      const doc = scan.readJson(file);
      if (doc !== undefined) serverComponents(scan, kind, file, mapOf(doc), false, byName);
    }
  }
}

function scanMonitors(scan: Scan, manifest: RootManifest): void {
  const sources: { file: string; value: unknown; base: string }[] = [];
  const defaultFile = path.join(scan.root, "monitors", "monitors.json");
  const doc = scan.readDefault(defaultFile);
  if (doc !== undefined) sources.push(isRecord(doc) && Array.isArray(doc.monitors) ? { file: defaultFile, value: doc.monitors, base: "/monitors" } : { file: defaultFile, value: doc, base: "" });
  if (manifest && manifest.json.monitors !== undefined) {
    const value = manifest.json.monitors;
    if (typeof value === "string") {
      const file = scan.declared(value, manifest.file, "/monitors");
      const doc = file && realPathOrNearest(file) !== realPathOrNearest(defaultFile) ? scan.readJson(file) : undefined;
      if (file && doc !== undefined) sources.push({ file, value: doc, base: "" });
    } else sources.push({ file: manifest.file, value, base: "/monitors" });
  }
  for (const { file, value, base } of sources) {
    const checked = checkSchema(MonitorListSchema, value, base);
    scan.absorb(file, checked);
    if (!checked.ok) continue;
    checked.value.forEach((monitor, i) => {
      const at = pointer(base, i);
      scan.add({
        kind: "monitor",
        name: monitor.name,
        ...(monitor.description ? { description: monitor.description } : {}),
        file,
        pointer: at,
        loadedByXcsh: false,
        note: notLoadedNote(scan),
        exec: scan.exec(monitor.command, [], undefined, file, `${at}/command`, { shell: true }),
        cost: NO_COST,
      });
    });
  }
}

/** The files of a scripts folder (`bin/`, `hooks/pre/`): no dot-files, no folders, nothing linked out of the root. */
function scriptFiles(scan: Scan, dir: string): { name: string; file: string }[] {
  return listDir(dir)
    .filter((entry) => !entry.name.startsWith(".") && !entry.isDirectory())
    .map((entry) => ({ name: entry.name, file: path.join(dir, entry.name) }))
    .filter(({ file }) => scan.inside(file, file, "") !== undefined);
}

function scanBin(scan: Scan): void {
  for (const { name, file } of scriptFiles(scan, path.join(scan.root, "bin"))) {
    scan.add({ kind: "bin", name, file, loadedByXcsh: false, note: "not used by xcsh: Claude Code puts bin/ on the PATH of its shell; xcsh does not", exec: { command: scan.relocate(file), args: [], env: [] }, cost: NO_COST });
  }
}

/** Modules of a marketplace plugin's `tools/` folder, by file (names come from importing them). */
function scanTools(scan: Scan): void {
  const dir = path.join(scan.root, "tools");
  for (const entry of listDir(dir)) {
    if (entry.name.startsWith(".")) continue;
    const file = path.join(dir, entry.name);
    const ext = path.extname(entry.name);
    const module = entry.isDirectory() ? ["index.ts", "index.js", "index.mjs"].map((i) => path.join(file, i)).find(isFile) : TOOL_EXTENSIONS.has(ext) && !entry.name.endsWith(".d.ts") ? file : undefined;
    if (!module || !scan.inside(module, module, "")) continue;
    scan.add({
      kind: "tool",
      name: entry.isDirectory() ? entry.name : path.basename(entry.name, ext),
      file: module,
      loadedByXcsh: true,
      ...(scan.kind === "claude-cache" ? { note: "loaded by xcsh-tools' loader, which the host calls at boot" } : {}),
      cost: { alwaysOn: null, onInvoke: 0 },
    });
  }
}

const NPM_KINDS = { tools: ["tool", "tools"], hooks: ["hook", "hook module"], extensions: ["extension", "extension module"], commands: ["command", "command module"] } as const;

/** An npm plugin: the entries its manifest names (top level and every feature's). */
function scanNpm(scan: Scan, manifest: PluginManifest, key: string): void {
  const pkgFile = path.join(scan.root, "package.json");
  for (const { kind: field, entry, pointer: at, feature } of listManifestEntries(manifest, `/${key}`)) {
    const target = scan.declared(entry, pkgFile, at);
    if (!target) continue;
    const [kind, label] = NPM_KINDS[field];
    const note = `${label} the host imports${feature ? ` (feature ${feature})` : ""}`;
    if (kind === "command" && target.endsWith(".md")) addMarkdown(scan, "command", target, path.basename(target, ".md"), true, note);
    else scan.add({ kind, name: path.basename(entry).replace(/\.(ts|js|mjs|cjs|mts|cts)$/, ""), file: target, loadedByXcsh: true, note, cost: kind === "tool" ? { alwaysOn: null, onInvoke: 0 } : NO_COST });
  }
}

const PI_KINDS = { skills: "skill", prompts: "prompt", themes: "theme" } as const satisfies Record<PiOnlyKind, Component["kind"]>;
/** pi's `isPattern`: entries that filter what the plain entries name (pi-mono core/package-manager.ts). */
const PI_PATTERN = /^[!+-]|[*?]/;
const PI_MAX_FILES = 2000;
const PI_MAX_DEPTH = 8;

/**
 * A `pi` manifest's skills, prompts and themes, as pi collects them from its plain entries (a file
 * is itself; a folder: skills are its top-level `.md` files and every `SKILL.md` below,
 * prompts every `.md` below, themes every `.json` below; hidden names and node_modules skipped).
 * pi's glob filters are not applied: the count is of what the plain entries name. Nothing is
 * read: the xcsh host loads none of them, so they are listed for the user to know, not judged.
 */
function scanPiOnly(scan: Scan, manifest: Record<string, unknown>): void {
  for (const key of PI_ONLY_KINDS) {
    const entries = manifest[key];
    if (!Array.isArray(entries)) continue;
    const kind = PI_KINDS[key];
    const seen = new Set<string>();
    for (const entry of entries) {
      if (typeof entry !== "string" || PI_PATTERN.test(entry)) continue;
      const target = path.resolve(scan.root, entry);
      if (!isPathInside(target, scan.root)) continue;
      for (const file of piFiles(target, key)) {
        if (seen.has(file) || seen.size >= PI_MAX_FILES || !scan.inside(file, file, "")) continue;
        seen.add(file);
        const base = path.basename(file);
        const name = base === "SKILL.md" ? path.basename(path.dirname(file)) : base.replace(/\.(md|json)$/, "");
        scan.add({ kind, name, file, loadedByXcsh: false, piOnly: true, note: `pi only: pi loads the package's ${key}, the xcsh host does not`, cost: NO_COST });
      }
    }
  }
}

function piFiles(target: string, key: PiOnlyKind): string[] {
  const info = statOrUndefined(target);
  if (info?.isFile()) return [target];
  if (!info?.isDirectory()) return [];
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > PI_MAX_DEPTH) return;
    for (const entry of listDir(dir)) {
      if (out.length >= PI_MAX_FILES) return;
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file, depth + 1);
      else if (!entry.isFile()) continue;
      else if (key === "skills" ? (depth === 0 ? entry.name.endsWith(".md") : entry.name === "SKILL.md") : entry.name.endsWith(key === "themes" ? ".json" : ".md")) out.push(file);
    }
  };
  walk(target, 0);
  return out;
}

/** Flag two skills, commands or agents of one plugin sharing a name: the host keeps one. */
function checkDuplicates(scan: Scan): void {
  for (const kind of ["skill", "command", "agent", "output-style"] as const) {
    const seen = new Map<string, Component>();
    for (const c of scan.components) {
      if (c.kind !== kind || c.piOnly) continue;
      // The xcsh host goes by the frontmatter name, Claude Code by the folder or file.
      const key = c.declaredName ?? c.name;
      const first = seen.get(key);
      if (first) scan.error(c.file, { path: "", code: "EDUPLICATE_COMPONENT", message: `two ${kind}s are named "${key}": ${first.file} and ${c.file}; a host keeps only one`, hint: "Rename one of them (the frontmatter name, else the file or folder name)." });
      else seen.set(key, c);
    }
  }
}

/** Every component a plugin root brings, with the problems found reading them. Never throws. */
export function scanPluginComponents(root: string, options: ScanOptions): PluginComponents {
  const scan = new Scan(path.resolve(root), options.rootKind, options.reportDeclaredPaths ?? true, options.rootAs ? path.resolve(options.rootAs) : undefined);
  if (options.rootKind === "npm") {
    if (options.pluginName) scan.pluginName = options.pluginName;
    if (options.manifest) scanNpm(scan, options.manifest, options.manifestKey ?? "xcsh");
    if (options.manifest && options.manifestKey === "pi") scanPiOnly(scan, options.manifest as Record<string, unknown>);
  } else {
    const manifest = readPluginJson(scan);
    const declaredName = manifest?.json.name;
    scan.pluginName = options.pluginName ?? (typeof declaredName === "string" && declaredName.trim() ? declaredName.trim() : scan.pluginName);
    scanTools(scan);
    scanSkills(scan, manifest);
    scanFlat(scan, manifest, "command", "commands", "commands", true);
    scanFlat(scan, manifest, "agent", "agents", "agents", true);
    scanFlat(scan, manifest, "output-style", "outputStyles", "output-styles", false);
    scanHooks(scan, manifest);
    scanServers(scan, manifest, "mcp-server");
    scanServers(scan, manifest, "lsp-server");
    scanMonitors(scan, manifest);
    scanBin(scan);
  }
  checkDuplicates(scan);
  return { root: scan.root, rootKind: options.rootKind, components: scan.components, errors: scan.errors, warnings: scan.warnings };
}
