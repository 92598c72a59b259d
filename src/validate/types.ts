/**
 * What `xcsh-tools validate` reports. Every finding names the file, a JSON path inside it (a
 * JSON pointer for documents; `/tools/<i>/<field>` for a tool a module's factory returned; ""
 * for the file as a whole), a stable code, a message and a hint.
 *
 * Error codes (public API):
 *
 * | code | meaning |
 * |---|---|
 * | `EJSONPARSE` | a JSON file is not valid JSON |
 * | `ETYPE` | a field has the wrong type |
 * | `EREQUIRED` | a required field is missing |
 * | `ESCHEMA` | a field breaks a schema rule (length, pattern, minimum) |
 * | `EUNKNOWN_KEY` | (warning) an unknown key, with "did you mean" when it is a typo |
 * | `EPLUGIN_NAME` / `EMARKETPLACE_NAME` | not `^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$` or longer than 64 (in `.claude-plugin/`: an error only where Claude Code refuses it too, else a warning that xcsh will not install it) |
 * | `EPLUGIN_ID` | not `name@marketplace`, or longer than 128 |
 * | `EMARKETPLACE_RESERVED` | (warning) a name Claude Code reserves for Anthropic's marketplaces, or one that impersonates them; an error for "official" beside claude/anthropic in `.claude-plugin/` (Claude Code refuses it) |
 * | `ERENAME` | (warning) a `renames` entry whose new name the catalog does not list, or whose old name it still lists |
 * | `EPACKAGE_NAME` | not a valid npm package name |
 * | `EVERSION` | not a semver version (range, for npm sources) |
 * | `ENOT_A_PLUGIN` | a package.json without an `xcsh` (or `pi`) manifest |
 * | `EMANIFEST_SHADOWED` | (warning) both `xcsh` and `pi`: `pi` is ignored |
 * | `EEMPTY_MANIFEST` | (warning) a manifest that declares nothing |
 * | `EFEATURE_NAME` | a feature name unusable in `pkg[a,b]` |
 * | `ESETTING_TYPE` | a setting type other than string, number, boolean, enum |
 * | `ESETTING_DEFAULT` / `ESETTING_RANGE` / `ESETTING_VALUES` / `ESETTING_KEY` | a setting that contradicts itself |
 * | `EENTRY_NOT_FOUND` | a declared file or folder does not exist (or is a dangling symlink) |
 * | `EENTRY_ESCAPE` | a declared path leaves its package (`../`, absolute, symlink out) |
 * | `ENOT_A_MODULE` | a tools entry that is not a module (.md, .json, .sh, empty folder) |
 * | `ENO_TOOLS` | (warning) a plugin or folder with no tool module |
 * | `ESOURCE_KIND` / `ESOURCE_PATH` / `ESOURCE_URL` / `ESHA` / `ESOURCE_NOT_FOUND` | a bad plugin source in a catalog |
 * | `ESOURCE_COMMAND` | a plugin source kind that would run a command to produce the plugin (never supported) |
 * | `EDUPLICATE_PLUGIN` / `EDUPLICATE_MARKETPLACE` | a name listed twice |
 * | `EFORMAT_VERSION` | a state file of another format version |
 * | `EIMPORT` / `EIMPORT_TIMEOUT` | the module cannot be imported / its import never settles |
 * | `EIMPORT_OUTSIDE` | a plugin's bare import resolves only above the plugin's folder (host/import/fence.ts): refused, never loaded |
 * | `ENOT_A_FACTORY` | the default export is not a function |
 * | `EFACTORY_THROW` / `EFACTORY_TIMEOUT` / `EFACTORY_RESULT` | the factory throws / never settles / returns no tool |
 * | `EHOST_EXPORTS` | the factory failed after reading `api.pi.X` while no host exports were available (`--pi <module>`) |
 * | `EMODULE_TIMEOUT` | the module blocked the event loop (infinite loop): the checker was killed |
 * | `EMODULE_EXIT` | the module or its factory exited the process |
 * | `ETOOL_SHAPE` | a returned tool lacks name, description, execute, or parameters is not an object schema |
 * | `ETOOL_NAME` | a tool name that is not an LLM function name |
 * | `EPARAMETERS` | parameters that are an object schema but malformed (required names a missing property, …) |
 * | `EDUPLICATE_TOOL` | two tools of one plugin (or run) share a name |
 * | `ECONFLICT_BUILTIN` | a tool named like a built-in tool: the host rejects it |
 * | `ECONFLICT` | (warning) two plugins of one marketplace share a tool name |
 * | `ENO_LABEL` | (warning) a tool without a label (the host shows its name) |
 * | `EVALIDATE_TIMEOUT` | the whole run ran out of time before this module was checked |
 * | `ETARGET_NOT_FOUND` / `ETARGET_UNKNOWN` | (exit 2) nothing at the path / nothing recognisable there |
 * | `EHOST_EXPORTS_MODULE` | (exit 2) `--pi` names a module that does not resolve or import |
 * | `WHOST_ENTRY_NO_INDEX` / `WHOST_TOOLS_FILES` / `WHOST_TOOL_STEM` / `WHOST_USER_CONFIG` | (warning) the host loads this differently (validate/host-differences.ts) |
 * | `EFRONTMATTER` | a skill, command, agent or output style whose YAML frontmatter does not parse or is unclosed (a warning for skills, commands and agents: Claude Code reads it as none) |
 * | `ENO_DESCRIPTION` | (warning) a skill without a description, a command without a frontmatter description |
 * | `EHOOK_EVENT` | (warning) a hooks.json event Claude Code does not document |
 * | `EHOOK_TYPE` | a hook type other than command, prompt, agent, http (like every hook entry problem: an error under PreToolUse/PermissionRequest, which guard permissions; a warning elsewhere, where Claude Code ignores the entry) |
 * | `EDUPLICATE_COMPONENT` | two output styles of one plugin share a name (skills, commands, agents, servers: a warning; Claude Code names them by file or folder) |
 * | `EPLUGIN_RESERVED` | a plugin name Claude Code reserves for Anthropic (`claude-*`, `anthropic-*`, `cc-plugin-*`, "official" beside claude), in a plugin.json validated alone or a third-party catalog; a warning when it only mentions claude/anthropic |
 * | `ECOMPONENT_PATH` | a component path without `./`, of the wrong kind (`agents` not .md, `hooks`/`mcpServers`/`lspServers` not .json, a skills entry that is a file): errors in `.claude-plugin/`, warnings in `.xcsh-plugin/` |
 * | `EVERSION_OVERRIDDEN` | (warning) a catalog entry's version that the plugin's plugin.json contradicts (plugin.json wins) |
 * | `EHOOK_UNQUOTED_ROOT` | (warning) a hook command with `${CLAUDE_PLUGIN_ROOT}` outside quotes |
 * | `EFILE_TOO_LARGE` / `EREAD` | a component file over 1 MiB / one that cannot be read |
 */

import type { Component, ComponentIssue } from "../components/types.js";

/** One finding of a validation run: a component's finding and a module's have one shape. */
export type ValidateIssue = ComponentIssue;

/** What was validated. */
export type TargetKind =
  | "tool-file"
  | "tools-folder"
  | "plugin-package"
  | "plugin-folder"
  | "marketplace"
  | "plugin-json"
  | "marketplace-catalog"
  | "state-file";

export interface ValidateReport {
  ok: boolean;
  /** `given`: the path as the user typed it (messages and the CLI show paths from it, validate/display.ts). */
  target: { path: string; kind: TargetKind; given: string };
  errors: ValidateIssue[];
  warnings: ValidateIssue[];
  /** Tools that would load: name and the module that returns them. */
  tools: { name: string; file: string; plugin?: string }[];
  /** The plugins' other components (skills, commands, agents, hooks, servers...), see src/components. */
  components: (Component & { plugin: string })[];
  /** Files looked at, for the readable report. */
  files: string[];
  /** Modules imported in the child. */
  modules: number;
  durationMs: number;
}
