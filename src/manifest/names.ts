/**
 * Name rules, one place for all of them:
 *
 * - plugin and marketplace names: `^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`, 1..64 (the host's
 *   `isValidNameSegment`); ids `name@marketplace`, at most 128;
 * - npm package names: npm's rules for new packages, as `validate-npm-package-name` (npm's own
 *   check) gives them;
 * - tool names: LLM function names, `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$` (what the model APIs accept).
 *
 * Each check returns `undefined` when the name is valid, else the reason in words.
 */
import validateNpmPackageName from "validate-npm-package-name";

export const NAME_SEGMENT_RE = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;
export const NAME_SEGMENT_MAX = 64;
export const PLUGIN_ID_MAX = 128;
export const TOOL_NAME_RE = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
export const NPM_NAME_MAX = 214;

/** Why `name` is not a valid plugin or marketplace name, or `undefined`. */
export function nameSegmentProblem(name: string): string | undefined {
  if (name.length === 0) return "it is empty";
  if (name.length > NAME_SEGMENT_MAX) return `it has ${name.length} characters (at most ${NAME_SEGMENT_MAX})`;
  if (!NAME_SEGMENT_RE.test(name)) {
    if (/[A-Z]/.test(name)) return "it has capital letters (use lowercase kebab-case)";
    if (/^[.-]|[.-]$/.test(name)) return "it starts or ends with '.' or '-'";
    return "it may only contain a-z, 0-9, '.' and '-'";
  }
  return undefined;
}

/**
 * Why Claude Code (2.1.332, `claude plugin validate`) refuses `name`, or `undefined` where it
 * takes it. Its rules are wider than ours: a plugin.json name is refused only for whitespace (any
 * other non-kebab name is its warning); a catalog's name and its entries' names are parts of a
 * plugin id: letters of either case, digits, ".", "_" and "-", starting with a letter or digit.
 */
export function claudeNameProblem(name: string, where: "plugin.json" | "id-part"): string | undefined {
  if (/\s/.test(name)) return "it contains spaces";
  if (where === "id-part" && !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) return "each part of a plugin id may use only letters, digits, '.', '_' and '-', and must start with a letter or digit";
  return undefined;
}

/**
 * A name problem of ours that Claude Code does not share (see `claudeNameProblem`): xcsh makes
 * ids and folder names of plugin and marketplace names and installs only kebab-case ones, so it
 * is said as a warning of what xcsh will refuse, not as a format error.
 */
export const XCSH_ONLY_NAME_RULE = "Claude Code accepts it, but xcsh installs only lowercase kebab-case names (they become ids and folder names), so xcsh-tools will refuse to install it";

/**
 * Why a third party may not use `name` as a plugin name in Claude Code (2.1.332): it passes as
 * one of Anthropic's own. Anthropic's catalogs list such plugins legitimately, so only a
 * plugin.json validated on its own is held to it (Claude Code says: validate the marketplace).
 */
export function reservedPluginNameProblem(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (["claude", "anthropic", "anthropics", "claude-code", "claude-mods"].includes(lower)) return `"${name}" is one of Anthropic's own names`;
  const prefix = ["claude-", "anthropic-", "anthropics-", "cc-plugin-"].find((p) => lower.startsWith(p));
  if (prefix) return `a third party's plugin name cannot start with "${prefix}"`;
  const words = lower.split(/[-_.]+/);
  if (words.includes("official") && (words.includes("claude") || words.includes("anthropic"))) return `it puts "official" beside "claude" or "anthropic"`;
  return undefined;
}

/** Whether a plugin name mentions Claude or Anthropic (Claude Code warns: it reads as theirs). */
export function mentionsAnthropic(name: string): boolean {
  const words = name.toLowerCase().split(/[-_.]+/);
  return words.includes("claude") || words.includes("anthropic") || words.includes("anthropics");
}

/** A suggestion for an invalid name segment: lowercase kebab-case. */
export function suggestNameSegment(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[.-]+|[.-]+$/g, "")
    .slice(0, NAME_SEGMENT_MAX);
}

/** Why `id` is not a valid `name@marketplace` id, or `undefined`. */
export function pluginIdProblem(id: string): string | undefined {
  if (id.length > PLUGIN_ID_MAX) return `it has ${id.length} characters (at most ${PLUGIN_ID_MAX})`;
  const at = id.lastIndexOf("@");
  if (at <= 0 || at === id.length - 1) return 'it is not "name@marketplace"';
  const plugin = nameSegmentProblem(id.slice(0, at));
  if (plugin) return `the plugin name "${id.slice(0, at)}" is invalid: ${plugin}`;
  const market = nameSegmentProblem(id.slice(at + 1));
  if (market) return `the marketplace name "${id.slice(at + 1)}" is invalid: ${market}`;
  return undefined;
}

/** Why `name` is not a valid npm package name (for new packages), or `undefined`. */
export function npmNameProblem(name: string): string | undefined {
  if (name.length === 0) return "it is empty";
  const verdict = validateNpmPackageName(name);
  if (verdict.validForNewPackages) return undefined;
  const reason = verdict.errors?.[0] ?? verdict.warnings?.[0] ?? "it is not a valid npm package name";
  // The library speaks of "name ..."; our messages already name the field, so: "it ...".
  return reason.startsWith("name ") ? `it ${reason.slice("name ".length)}` : reason;
}

/** Why `name` is not a valid tool (LLM function) name, or `undefined`. */
export function toolNameProblem(name: string): string | undefined {
  if (name.length === 0) return "it is empty";
  if (name.length > 64) return `it has ${name.length} characters (at most 64)`;
  if (!TOOL_NAME_RE.test(name)) {
    if (/^[0-9-]/.test(name)) return "it must start with a letter or '_'";
    return "it may only contain letters, digits, '_' and '-'";
  }
  return undefined;
}

/** A suggestion for an invalid tool name. */
export function suggestToolName(name: string): string {
  const cleaned = name.replace(/[^a-zA-Z0-9_-]+/g, "_").replace(/^[^a-zA-Z_]+/, "");
  return (cleaned || "my_tool").slice(0, 64);
}
