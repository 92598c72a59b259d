/**
 * Where xcsh-tools and the xcsh host (f5-sales-demo/xcsh at 3226372) load differently on
 * purpose: we keep our behaviour, and `validate` and `doctor` warn with a code of its own that
 * names what the host does, so a plugin author or user is not surprised by the host. Each code
 * cites the host's code it describes (packages/coding-agent/src/...).
 *
 * The scans here read folder listings (and, for `userConfig`, a plugin's few JSON component files,
 * each bounded), skip hidden names as the host's glob does (`hidden: false`), follow no symbolic
 * link into a folder, and stop after `MAX_FILES` files or `MAX_DEPTH` levels: they are for
 * warnings, and a hostile tree must not make them slow.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { isRealPathInside } from "../core/contain.js";
import { statOrUndefined } from "../core/paths.js";
import { isRecord } from "../manifest/result.js";

/** The codes, each with the host behaviour it names (also the README's table). */
export const HOST_DIFFERENCES = {
  WHOST_ENTRY_NO_INDEX:
    "a manifest tools entry is a folder without index.ts/index.js: the host passes the folder itself to import() and fails to load it " +
    "(extensibility/plugins/loader.ts:133-141, custom-tools/loader.ts:44); xcsh-tools scans the folder like a tools folder",
  WHOST_TOOLS_FILES:
    "files below a marketplace plugin's tools/ that are not tool modules: the host loads every non-hidden file below tools/, " +
    "subfolders included, as a tool (discovery/claude-plugins.ts:164-175 with discovery/helpers.ts:408-444, no extension filter), so " +
    "helpers, READMEs and JSON become load errors there; xcsh-tools loads only the top-level modules and folder index modules",
  WHOST_TOOL_STEM:
    "marketplace tools share a file stem: the host keys marketplace tools by file stem (claude-plugins.ts:167, capability/tool.ts:31) " +
    "and keeps only the first of a stem (capability/index.ts:167-182), and a project tool of that stem hides them all; " +
    "xcsh-tools loads each and reports a real name conflict only",
  WHOST_PROJECT_DISABLED:
    "a project install with enabled: false of a plugin also installed for the user: the host skips the disabled project entry " +
    "and then loads the user's copy (discovery/helpers.ts:821, :838-844); xcsh-tools lets the project entry switch the plugin off",
  WHOST_LOCK_MALFORMED:
    "the runtime lock is not valid JSON: the host fails to start the session's plugins (extensibility/plugins/loader.ts:20-28 rethrows); " +
    "xcsh-tools loads no npm plugin tool and every other source",
  WHOST_OVERRIDES_MALFORMED:
    "the project's plugin-overrides.json is not valid JSON: the host ignores it and takes the next of .xcsh/, .codex/, .gemini/ or none, " +
    "loading plugins the project disabled (extensibility/plugins/loader.ts:33-43); xcsh-tools loads no npm plugin tool until it is fixed",
  WHOST_USER_CONFIG:
    "Claude Code asks for each userConfig option when it enables the plugin and fills ${user_config.KEY} in the plugin's servers and hooks; " +
    "the host reads no userConfig: it asks for nothing and substitutes only ${CLAUDE_PLUGIN_ROOT} and ${XCSH_PLUGIN_ROOT} " +
    "(discovery/claude-plugins.ts:237-240, discovery/substitute-plugin-root.ts), so those places receive the text as written; " +
    "xcsh-tools installs the plugin as Claude Code does",
} as const;

export type HostDifferenceCode = keyof typeof HOST_DIFFERENCES;

const MAX_FILES = 2000;
const MAX_DEPTH = 8;
/** What our tools-folder scan imports at the top level of a tools folder (discovery/tools-dir.ts). */
const MODULE_EXT = /\.(?:ts|js|mjs|cjs|mts|cts)$/;

/** True when `target` is a folder that has neither `index.ts` nor `index.js` (what the host would import). */
export function folderWithoutIndex(target: string): boolean {
  if (!statOrUndefined(target)?.isDirectory()) return false;
  return !["index.ts", "index.js"].some((name) => statOrUndefined(path.join(target, name))?.isFile());
}

/** Every file the host would load below `toolsDir` (relative paths, `/`-separated), bounded. */
export function hostToolFiles(toolsDir: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string, depth: number) => {
    if (depth > MAX_DEPTH || out.length >= MAX_FILES) return;
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name.startsWith(".") || out.length >= MAX_FILES) continue;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(path.join(dir, entry.name), childRel, depth + 1);
      else if (entry.isFile() || entry.isSymbolicLink()) out.push(childRel);
    }
  };
  walk(toolsDir, "", 0);
  return out;
}

/** Of the host's files, those xcsh-tools does not load as modules (the host would try to). */
export function filesOnlyTheHostLoads(hostFiles: readonly string[]): string[] {
  return hostFiles.filter((rel) => {
    const parts = rel.split("/");
    if (parts.length === 1) return !MODULE_EXT.test(rel);
    return !(parts.length === 2 && (parts[1] === "index.ts" || parts[1] === "index.js"));
  });
}

/** The host's key of a marketplace tool file (claude-plugins.ts:167). */
export function hostToolStem(rel: string): string {
  return path.basename(rel).replace(/\.(ts|js|sh|bash|py)$/, "");
}

/** One stem the host loads once only. */
export interface StemCollision {
  stem: string;
  /** Plugin id and file of every tool of that stem, in load order (the first is the one the host keeps). */
  tools: { plugin: string; file: string }[];
  /** A project tool of that stem, which the host loads instead of all of them. */
  project?: string;
}

/**
 * Stems shared by more than one marketplace tool file (across plugins, or within one: folder
 * tools are all `index`), given the plugins in the host's load order, and the project tools
 * folder whose tools come first in the host (its native provider).
 */
export function stemCollisions(plugins: readonly { id: string; toolsDir: string }[], projectToolsDir?: string): StemCollision[] {
  const byStem = new Map<string, { plugin: string; file: string }[]>();
  for (const plugin of plugins) {
    const files = hostToolFiles(plugin.toolsDir);
    const hostOnly = new Set(filesOnlyTheHostLoads(files));
    // Files only the host loads are WHOST_TOOLS_FILES already; stems are about the tools both load.
    for (const rel of files.filter((f) => !hostOnly.has(f))) {
      const stem = hostToolStem(rel);
      const list = byStem.get(stem) ?? [];
      list.push({ plugin: plugin.id, file: path.join(plugin.toolsDir, rel) });
      byStem.set(stem, list);
    }
  }
  const projectStems = new Map<string, string>();
  if (projectToolsDir) {
    let entries: string[] = [];
    try {
      entries = readdirSync(projectToolsDir).filter((n) => !n.startsWith("."));
    } catch {
      entries = [];
    }
    for (const name of entries) projectStems.set(name.replace(/\.(ts|js|mjs|cjs|mts|cts|sh|bash|py|md|json)$/, ""), path.join(projectToolsDir, name));
  }
  const out: StemCollision[] = [];
  for (const [stem, tools] of byStem) {
    const project = projectStems.get(stem);
    if (tools.length > 1 || project !== undefined) out.push({ stem, tools, ...(project !== undefined ? { project } : {}) });
  }
  return out;
}

export function describeStemCollision(c: StemCollision): string {
  const files = c.tools.map((t) => `${t.file} (${t.plugin})`).join(", ");
  if (c.project !== undefined) return `marketplace tool file${c.tools.length > 1 ? "s" : ""} ${files} share${c.tools.length > 1 ? "" : "s"} the stem "${c.stem}" with the project tool ${c.project}: the host loads only the project tool`;
  return `marketplace tool files ${files} share the stem "${c.stem}": the host loads only ${c.tools[0]!.file}`;
}

/** The JSON files of a marketplace plugin where Claude Code substitutes `${user_config.KEY}`. */
const USER_CONFIG_PLACES = [".claude-plugin/plugin.json", ".xcsh-plugin/plugin.json", ".mcp.json", ".lsp.json", "hooks/hooks.json"];
const USER_CONFIG_REFERENCE = /\$\{user_config\.([A-Za-z_]\w*)\}/g;

/** A plugin's `userConfig` options as the host ignores them: each key (sensitive ones marked), and which files use which. */
export interface UserConfigUse {
  options: { key: string; sensitive: boolean }[];
  /** Plugin-relative files that reference `${user_config.KEY}`, with the keys each names. */
  references: { file: string; keys: string[] }[];
}

/**
 * The `userConfig` of the marketplace plugin at `pluginRoot` (its plugin.json, `doc` when the
 * caller parsed it already), undefined when it declares none. Reads at most the few files
 * Claude Code substitutes in, each bounded; a file that is missing or not text is skipped.
 */
export function userConfigUse(pluginRoot: string, doc?: unknown): UserConfigUse | undefined {
  const manifest = doc ?? pluginJsonOf(pluginRoot);
  const declared = isRecord(manifest) && isRecord(manifest.userConfig) ? manifest.userConfig : undefined;
  if (!declared || Object.keys(declared).length === 0) return undefined;
  const options = Object.entries(declared).map(([key, option]) => ({ key, sensitive: isRecord(option) && option.sensitive === true }));
  const references: UserConfigUse["references"] = [];
  for (const rel of USER_CONFIG_PLACES) {
    const text = readOrUndefined(path.join(pluginRoot, ...rel.split("/")), pluginRoot);
    if (text === undefined) continue;
    const keys = [...new Set([...text.matchAll(USER_CONFIG_REFERENCE)].map((m) => m[1]!))];
    if (keys.length > 0) references.push({ file: rel, keys });
  }
  return { options, references };
}

/** What `userConfigUse` found, as the warning's first half: the options, then where they are used. */
export function describeUserConfigUse(use: UserConfigUse): string {
  const options = use.options.map((o) => `${JSON.stringify(o.key)}${o.sensitive ? " (sensitive)" : ""}`).join(", ");
  const used = use.references.map((r) => `${r.file} uses ${r.keys.map((k) => "${user_config." + k + "}").join(", ")}`).join("; ");
  return `declares userConfig ${options}${used ? ` (${used})` : ""}`;
}

/** What a user of the plugin under xcsh can do instead. */
export const USER_CONFIG_HINT =
  "Under xcsh, give the plugin's servers what they need another way: its stdio MCP servers inherit the environment xcsh starts with, " +
  "so set there the variables the plugin documents; never write a sensitive value into a committed file.";

function pluginJsonOf(pluginRoot: string): unknown {
  for (const rel of [".claude-plugin/plugin.json", ".xcsh-plugin/plugin.json"]) {
    const text = readOrUndefined(path.join(pluginRoot, ...rel.split("/")), pluginRoot);
    if (text === undefined) continue;
    try {
      return JSON.parse(text);
    } catch {
      return undefined; // reported where plugin.json is validated
    }
  }
  return undefined;
}

/** The text of `file` when it is a file that stays inside `pluginRoot` once links are followed (1 MB at most); else undefined. */
function readOrUndefined(file: string, pluginRoot: string): string | undefined {
  try {
    if (!isRealPathInside(file, pluginRoot)) return undefined;
    return readTextBounded(file, { maxBytes: 1024 * 1024 });
  } catch {
    return undefined;
  }
}
