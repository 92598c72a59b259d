/**
 * `plugin.json`: a marketplace plugin's own manifest, at `.xcsh-plugin/plugin.json` or Claude
 * Code's `.claude-plugin/plugin.json`. xcsh reads only `name` (for `--plugin-dir`
 * roots) and `version` (cache key); Claude reads the components. Unknown top-level keys are
 * warnings (Claude strips them); unknown keys inside `userConfig` and `lspServers` are errors,
 * because Claude refuses to load such a plugin. Whether component paths exist is checked by
 * `src/validate`.
 */
import { Type, type Static } from "./typebox.js";
import { semver } from "../core/npm-spec.js";
import { entryPathProblem } from "./plugin-manifest.js";
import { XCSH_ONLY_NAME_RULE, claudeNameProblem, mentionsAnthropic, nameSegmentProblem, reservedPluginNameProblem, suggestNameSegment } from "./names.js";
import { IssueCollector, isRecord, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";
import { unknownKeyWarnings } from "./unknown-keys.js";

const PathOrPaths = Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }))]);
const PathOrObject = Type.Union([Type.String({ minLength: 1 }), Type.Record(Type.String(), Type.Unknown()), Type.Array(Type.Unknown())]);

/**
 * The component fields a plugin declares (paths to commands, agents, skills…, or inline hook and
 * server definitions). Claude Code accepts them both in `plugin.json` and inline in a catalog's
 * plugin entry, so both schemas spread this one definition.
 */
export const PLUGIN_COMPONENT_FIELDS = {
  commands: Type.Optional(PathOrPaths),
  agents: Type.Optional(PathOrPaths),
  skills: Type.Optional(PathOrPaths),
  outputStyles: Type.Optional(PathOrPaths),
  hooks: Type.Optional(PathOrObject),
  mcpServers: Type.Optional(PathOrObject),
  lspServers: Type.Optional(PathOrObject),
};

export const UserConfigOptionSchema = Type.Object({
  type: Type.Union([Type.Literal("string"), Type.Literal("number"), Type.Literal("boolean"), Type.Literal("directory"), Type.Literal("file")]),
  title: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  required: Type.Optional(Type.Boolean()),
  default: Type.Optional(Type.Unknown()),
  multiple: Type.Optional(Type.Boolean()),
  sensitive: Type.Optional(Type.Boolean()),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
});

/**
 * A plugin.json dependency as Claude Code (2.1.332) takes it: `name`, `name@marketplace`, each
 * optionally followed by `@version` or `@^version`. It refuses any other range (`~1.1.0`,
 * `>=1.0.0`, `*`, `=1.2.0`) and will not install the plugin (conformance install case
 * dependencies-bad-range).
 */
export const DEPENDENCY_RE = /^[A-Za-z0-9][-A-Za-z0-9._]*(@[A-Za-z0-9][-A-Za-z0-9._]*)?(@\^?[A-Za-z0-9][-A-Za-z0-9.+]*)?$/;

/** One dependency of a plugin.json: the plugin, its marketplace (absent: the dependent's own), the version range asked. */
export interface PluginDependency {
  name: string;
  marketplace?: string;
  range?: string;
}

/**
 * The dependencies a plugin.json declares, as Claude Code reads them: `name[@marketplace][@range]`
 * (a last part that is a semver range rather than a name is the range) or `{name, marketplace?}`.
 * Entries of another shape are left out (validation reports them).
 */
export function pluginDependencies(json: unknown): PluginDependency[] {
  const list = isRecord(json) && Array.isArray(json.dependencies) ? json.dependencies : [];
  const out: PluginDependency[] = [];
  // One `@` part after the name is a range when it reads as a version (`^1.2`, `1.2.0`, `1.x`), else the marketplace.
  const readsAsVersion = (part: string) => part.startsWith("^") || (/^\d/.test(part) && semver.validRange(part) !== null);
  for (const dep of list) {
    if (isRecord(dep) && typeof dep.name === "string") {
      out.push({ name: dep.name, ...(typeof dep.marketplace === "string" ? { marketplace: dep.marketplace } : {}) });
      continue;
    }
    if (typeof dep !== "string" || !DEPENDENCY_RE.test(dep)) continue;
    const [name, first, second] = dep.split("@") as [string, string?, string?];
    const range = second ?? (first !== undefined && readsAsVersion(first) ? first : undefined);
    const marketplace = second !== undefined || range === undefined ? first : undefined;
    out.push({ name, ...(marketplace ? { marketplace } : {}), ...(range ? { range } : {}) });
  }
  return out;
}

export const PluginJsonSchema = Type.Object({
  $schema: Type.Optional(Type.String()),
  name: Type.String({ minLength: 1 }),
  /** Claude Code's display title (2026); the name stays the id. */
  displayName: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  /** Whether a fresh install starts enabled (a catalog entry's `defaultEnabled` wins). */
  defaultEnabled: Type.Optional(Type.Boolean()),
  /** Claude Code's release channels (2026): an object, as Claude Code requires; kept as written, we install what the catalog names. */
  channels: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  author: Type.Optional(Type.Union([Type.String(), Type.Object({ name: Type.String({ minLength: 1 }), email: Type.Optional(Type.String()), url: Type.Optional(Type.String()) })])),
  homepage: Type.Optional(Type.String()),
  repository: Type.Optional(Type.Union([Type.String(), Type.Object({ url: Type.String() })])),
  license: Type.Optional(Type.String()),
  keywords: Type.Optional(Type.Array(Type.String())),
  dependencies: Type.Optional(Type.Array(Type.Union([Type.String({ pattern: DEPENDENCY_RE.source }), Type.Object({ name: Type.String(), marketplace: Type.Optional(Type.String()) })]))),
  ...PLUGIN_COMPONENT_FIELDS,
  monitors: Type.Optional(Type.Array(Type.Object({ name: Type.String(), command: Type.String(), description: Type.Optional(Type.String()), when: Type.Optional(Type.String()) }))),
  settings: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  userConfig: Type.Optional(Type.Record(Type.String(), UserConfigOptionSchema)),
});
export type PluginJson = Static<typeof PluginJsonSchema>;

const KEYS = Object.keys(PluginJsonSchema.properties);
const USER_CONFIG_KEYS = Object.keys(UserConfigOptionSchema.properties);
const COMPONENT_PATH_KEYS = Object.keys(PLUGIN_COMPONENT_FIELDS);

/** Component paths declared by a plugin.json or a catalog entry (string forms only; inline objects are not paths). */
export function listPluginJsonPaths(json: Record<string, unknown>, base = "", keys: readonly string[] = COMPONENT_PATH_KEYS): { entry: string; pointer: string }[] {
  const out: { entry: string; pointer: string }[] = [];
  for (const key of keys) {
    const value = json[key];
    if (typeof value === "string") out.push({ entry: value, pointer: pointer(base, key) });
    else if (Array.isArray(value)) value.forEach((v, i) => typeof v === "string" && out.push({ entry: v, pointer: pointer(base, key, i) }));
  }
  return out;
}

/** The file suffix Claude Code requires of a component path that names one file, by field. */
const COMPONENT_FILE_SUFFIX: Record<string, string> = { agents: ".md", hooks: ".json", mcpServers: ".json", lspServers: ".json" };

/**
 * Component paths must stay inside the plugin (installs copy only its folder). Claude Code
 * (2.1.332) also refuses a path without "./" and a path of the wrong kind (`agents` must name .md
 * files, `hooks`/`mcpServers`/`lspServers` a .json file): errors in a Claude Code manifest,
 * warnings in ours, where xcsh resolves both.
 */
export function checkComponentPaths(json: Record<string, unknown>, base: string, out: IssueCollector, flavour: "xcsh" | "claude" = "xcsh"): void {
  const report = (issue: Parameters<IssueCollector["error"]>[0]) => (flavour === "claude" ? out.error(issue) : out.warn(issue));
  for (const { entry, pointer: at } of listPluginJsonPaths(json, base)) {
    const problem = entryPathProblem(entry, "plugin");
    if (problem) {
      out.error({ path: at, code: "EENTRY_ESCAPE", message: `${at}: "${entry}" must stay inside the plugin, but ${problem.reason}`, found: JSON.stringify(entry), hint: "Use a ./ path inside the plugin folder; installs copy only the plugin folder." });
      continue;
    }
    if (!entry.startsWith("./")) report({ path: at, code: "ECOMPONENT_PATH", message: `${at}: "${entry}" must start with "./" (Claude Code refuses the plugin otherwise)`, found: JSON.stringify(entry), hint: `Write "./${entry}".` });
    const field = at.slice(base.length).split("/")[1] ?? "";
    const suffix = COMPONENT_FILE_SUFFIX[field];
    if (suffix && !entry.endsWith(suffix)) report({ path: at, code: "ECOMPONENT_PATH", message: `${at}: "${entry}" must name a ${suffix} file (Claude Code refuses the plugin otherwise)`, expected: `a path ending in ${suffix}`, found: JSON.stringify(entry), hint: field === "agents" ? 'List the agent files themselves, e.g. ["./agents/reviewer.md"], or drop the field: agents/ is read by default.' : `Point "${field}" at the ${suffix} file itself, e.g. "./${field === "hooks" ? "hooks/hooks" : field === "mcpServers" ? ".mcp" : ".lsp"}${suffix}".` });
  }
}

/**
 * Where Claude Code's shapes are narrower than the ones we read (a plugin.json or a catalog
 * entry in `.claude-plugin/`): `author` must be an object with a name, `repository` a string.
 * Its validator refuses them; its installer installs such a plugin all the same (2.1.332,
 * test/fixtures/conformance/install/refused-manifests), so an install reports them as warnings
 * (`level: "warning"`).
 */
export function checkClaudeShapes(json: Record<string, unknown>, base: string, out: IssueCollector, level: "error" | "warning" = "error"): void {
  if (level === "warning") return asWarnings(out, (found) => checkClaudeShapes(json, base, found));
  if (isRecord(json.repository)) {
    const repo = pointer(base, "repository");
    const url = typeof json.repository.url === "string" ? json.repository.url : "https://…";
    out.error({ path: repo, code: "ETYPE", message: `${repo}: Claude Code requires a string (the repository's URL), found an object`, expected: "a string", found: "an object", hint: `Write "repository": ${JSON.stringify(url)}.` });
  }
  const at = pointer(base, "author");
  if (typeof json.author === "string") out.error({ path: at, code: "ETYPE", message: `${at}: Claude Code requires an object, found a string`, expected: "an object {name, email?, url?}", found: JSON.stringify(json.author), hint: `Write "author": {"name": ${JSON.stringify(json.author)}}.` });
  else if (isRecord(json.author) && typeof json.author.name !== "string") out.error({ path: pointer(at, "name"), code: "EREQUIRED", message: `${pointer(at, "name")}: the author needs a name`, expected: "a string", found: "nothing", hint: 'Write "author": {"name": "Your Name"}.' });
}

/** What `check` finds, every error of it told `out` as a warning: what Claude Code's installer takes though its validator refuses it. */
function asWarnings(out: IssueCollector, check: (found: IssueCollector) => void): void {
  const found = new IssueCollector();
  check(found);
  for (const issue of found.issues) out.warn(issue);
  out.warnings.push(...found.warnings);
}

/**
 * Claude Code's reserved plugin names (2.1.332): refused where a third party could pass for
 * Anthropic; a name that merely mentions Claude or Anthropic is its warning.
 */
export function checkReservedPluginName(name: string, at: string, out: IssueCollector): void {
  const reserved = reservedPluginNameProblem(name);
  if (reserved) out.error({ path: at, code: "EPLUGIN_RESERVED", message: `${at}: plugin name "${name}" is reserved: ${reserved}; Claude Code refuses it as passing for one of Anthropic's own plugins`, found: JSON.stringify(name), hint: "Name the plugin for what it does. If it is one of Anthropic's own plugins, validate the marketplace that lists it." });
  else if (mentionsAnthropic(name)) out.warn({ path: at, code: "EPLUGIN_RESERVED", message: `${at}: plugin name "${name}" reads as one of Anthropic's own plugins`, found: JSON.stringify(name), hint: "Name the plugin for what it does, without claude or anthropic." });
}

/**
 * Validate a plugin.json; `flavour` is the folder it sits in. `standalone`: the plugin.json is
 * validated on its own, not as a plugin of a catalog (Claude Code's reserved plugin names apply
 * then: Anthropic's own catalogs list such plugins legitimately). `install`: checked for an install,
 * where what Claude Code's installer takes is a warning (`checkClaudeShapes`, reserved names).
 */
export function validatePluginJson(value: unknown, options: { flavour?: "xcsh" | "claude"; standalone?: boolean; install?: boolean } = {}): ValidationResult<PluginJson> {
  const out = new IssueCollector();
  const shape = checkSchema(PluginJsonSchema, value);
  out.absorb(shape);
  if (!isRecord(value)) return out.result(value as PluginJson);
  out.warnings.push(...unknownKeyWarnings(value, KEYS, "", { what: "plugin.json" }));
  if (typeof value.name === "string" && value.name.length > 0) {
    const problem = nameSegmentProblem(value.name);
    if (problem) {
      const claudeProblem = options.flavour === "claude" ? claudeNameProblem(value.name, "plugin.json") : undefined;
      const issue = { path: "/name", code: "EPLUGIN_NAME", message: `/name: plugin name "${value.name}" is invalid: ${claudeProblem ?? problem}`, expected: "lowercase kebab-case, at most 64 characters", found: JSON.stringify(value.name), hint: `Use e.g. "${suggestNameSegment(value.name) || "my-plugin"}".` };
      if (options.flavour === "claude" && !claudeProblem) out.warn({ ...issue, message: `/name: plugin name "${value.name}" is not kebab-case (${problem}): ${XCSH_ONLY_NAME_RULE}` });
      else out.error(issue);
    }
    // Its installer takes a reserved name (install/installer-takes: anthropics/claude-code's
    // claude-opus-4-5-migration added under another catalog name installs): a warning there.
    const name = value.name;
    if (options.flavour === "claude" && options.standalone) {
      if (options.install) asWarnings(out, (found) => checkReservedPluginName(name, "/name", found));
      else checkReservedPluginName(name, "/name", out);
    }
  }
  if (typeof value.version === "string" && !semver.valid(value.version)) {
    out.warn({ path: "/version", code: "EVERSION", message: `/version: "${value.version}" is not a semver version`, found: JSON.stringify(value.version), hint: 'Use "MAJOR.MINOR.PATCH"; the version is the cache key of installs.' });
  }
  if (isRecord(value.userConfig)) {
    for (const [key, option] of Object.entries(value.userConfig)) {
      const at = pointer("", "userConfig", key);
      if (!/^[A-Za-z_]\w*$/.test(key)) out.error({ path: at, code: "ECONFIG_KEY", message: `${at}: "${key}" is not a valid userConfig key`, expected: "a key matching ^[A-Za-z_]\\w*$", found: JSON.stringify(key), hint: "Use letters, digits and _ (e.g. API_KEY)." });
      if (isRecord(option)) {
        for (const w of unknownKeyWarnings(option, USER_CONFIG_KEYS, at, { what: "a userConfig option" })) out.error({ ...w, message: `${w.message} (Claude Code refuses to load plugins with unknown userConfig keys)` });
      }
    }
  }
  if (isRecord(value.hooks) && "hooks" in value.hooks) {
    out.warn({ path: "/hooks/hooks", code: "EHOOK_EVENT", message: '/hooks/hooks: inline hooks in plugin.json are the events themselves; Claude Code reads "hooks" here as an unknown event and ignores what it holds', found: "a hooks.json-style wrapper", hint: 'Write "hooks": {"PreToolUse": [...]} without the inner "hooks", or move the object to hooks/hooks.json.' });
  }
  checkComponentPaths(value, "", out, options.flavour);
  if (options.flavour === "claude") checkClaudeShapes(value, "", out, options.install ? "warning" : "error");
  return out.result(value as PluginJson);
}
