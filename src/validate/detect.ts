/**
 * What is at the path `validate` was given. First match wins:
 *
 * | path | kind |
 * |---|---|
 * | `…/plugin.json` | plugin-json |
 * | `…/marketplace.json` | marketplace-catalog |
 * | `…/package.json` | plugin-package (its folder) |
 * | a state file by name (installed_plugins.json, known_marketplaces.json, marketplaces.json, xcsh-plugins.lock.json, plugin-overrides.json, and our settings xcsh-tools.json, .xcsh-toolsrc.json, xcsh-tools.config.json; a team set's xcsh-team.json, xcsh-team.lock.json, team.local.json) | state-file |
 * | any other file | tool-file (a .md/.json/.sh is reported as not a module) |
 * | a folder with `.xcsh-plugin/marketplace.json` or `.claude-plugin/marketplace.json` | marketplace |
 * | a folder with a package.json (unless it has no `xcsh`/`pi` manifest and the folder has a plugin.json) | plugin-package |
 * | a folder with `.xcsh-plugin/plugin.json` or `.claude-plugin/plugin.json` | plugin-folder |
 * | a folder with `index.ts|js|mjs` | tool-file (the index) |
 * | a folder with a `tools/` folder | plugin-folder |
 * | a folder with Claude Code's default components (`skills/`, `commands/`, `agents/`, `output-styles/`, `monitors/`, `hooks/hooks.json`, `.mcp.json`, `.lsp.json`): a plugin without plugin.json | plugin-folder |
 * | any other folder | tools-folder |
 */
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { statOrUndefined } from "../core/paths.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { STATE_FILES } from "./static-checks.js";
import { TEAM_FILES } from "./team-files.js";
import type { TargetKind } from "./types.js";

const exists = (p: string) => statOrUndefined(p) !== undefined;
const isDir = (p: string) => statOrUndefined(p)?.isDirectory() === true;

/** Whether a package.json names an `xcsh` or `pi` manifest (an unreadable one counts: validate reports it). */
async function hasPluginManifest(file: string): Promise<boolean> {
  const pkg = readJsonOrUndefined(file);
  return typeof pkg !== "object" || pkg === null || "xcsh" in pkg || "pi" in pkg;
}

/** Detect the kind of `target` (absolute). Throws `ETARGET_NOT_FOUND` (exit 2). */
/** Where Claude Code looks for a plugin's components when it has no plugin.json (plugins reference). */
const CLAUDE_DEFAULT_FOLDERS = ["skills", "commands", "agents", "output-styles", "monitors"];
const CLAUDE_DEFAULT_FILES = [path.join("hooks", "hooks.json"), ".mcp.json", ".lsp.json"];

/** `typed`: the path as the user gave it, for the message (defaults to `target`). */
export async function detectTarget(target: string, typed: string = target): Promise<{ kind: TargetKind; path: string }> {
  const info = statOrUndefined(target);
  if (!info) {
    throw new XcshToolsError("ETARGET_NOT_FOUND", `Nothing to validate at ${typed}`, {
      file: target,
      hint: "Pass a tool file, a tools folder, a plugin package, a marketplace repository or a plugin.json.",
      exitCode: 2,
    });
  }
  if (!info.isDirectory()) {
    const base = path.basename(target);
    if (base === "plugin.json") return { kind: "plugin-json", path: target };
    if (base === "marketplace.json") return { kind: "marketplace-catalog", path: target };
    if (base === "package.json") return { kind: "plugin-package", path: path.dirname(target) };
    if (Object.hasOwn(STATE_FILES, base) || Object.hasOwn(TEAM_FILES, base)) return { kind: "state-file", path: target };
    return { kind: "tool-file", path: target };
  }
  if (exists(path.join(target, ".xcsh-plugin", "marketplace.json")) || exists(path.join(target, ".claude-plugin", "marketplace.json"))) {
    return { kind: "marketplace", path: target };
  }
  const pluginJson = exists(path.join(target, ".xcsh-plugin", "plugin.json")) || exists(path.join(target, ".claude-plugin", "plugin.json"));
  // A Claude Code plugin may ship a package.json of its own (an MCP server's, built with npm):
  // without an xcsh/pi manifest it is not an npm plugin, and its plugin.json says what it is.
  if (exists(path.join(target, "package.json")) && !(pluginJson && !(await hasPluginManifest(path.join(target, "package.json"))))) return { kind: "plugin-package", path: target };
  if (pluginJson) return { kind: "plugin-folder", path: target };
  for (const index of ["index.ts", "index.js", "index.mjs"]) {
    if (exists(path.join(target, index))) return { kind: "tool-file", path: path.join(target, index) };
  }
  if (isDir(path.join(target, "tools"))) return { kind: "plugin-folder", path: target };
  // Claude Code's plugin.json is optional: a folder with its default component folders is a plugin.
  for (const folder of CLAUDE_DEFAULT_FOLDERS) if (isDir(path.join(target, folder))) return { kind: "plugin-folder", path: target };
  for (const file of CLAUDE_DEFAULT_FILES) if (exists(path.join(target, file))) return { kind: "plugin-folder", path: target };
  return { kind: "tools-folder", path: target };
}
