/**
 * Which files and folders a discovery result depends on. Discovery itself (src/discovery) is not
 * instrumented; instead this module lists, from the same well-known paths and from the result,
 * a superset of what the providers read. Listing too much only makes the index stale more often;
 * listing too little would make it lie, so every rule below names the provider read it covers:
 *
 * - state files, hashed: `<plugins>/package.json`, `xcsh-plugins.lock.json`, both
 *   `installed_plugins.json` (user, project), `~/.claude/plugins/installed_plugins.json`,
 *   `<cwd>/.xcsh/plugin-overrides.json` (npm, xcsh-plugins, claude-plugins providers), Claude
 *   Code's settings (`~/.claude/settings.json`, the project's `.claude/settings{,.local}.json`:
 *   their `enabledPlugins`, claude-plugins provider), and the
 *   user's trust record (the decision discovery made first: `trust`/`untrust` or a hand edit
 *   make every view stale);
 * - in an untrusted project the project's files are only stat'ed, never read or hashed (discovery
 *   only looked whether they are there), and the project registry's install paths are not followed;
 * - the six tools directories (native, claude, codex × project, user): their folder signature
 *   changes when a tool is added, removed or renamed;
 * - per npm dependency: `node_modules/<name>` (lstat: a link re-pointed or a folder replaced),
 *   its `package.json` (hashed), and every tools entry its manifest declares under any feature
 *   (folders among them are scanned by discovery); the same for each plugin a seed's
 *   `xcsh-seed.json` (hashed) lists (npm provider, seeds);
 * - per marketplace registry entry: its `installPath` and `installPath/tools`;
 * - each configured path, resolved as the config provider does;
 * - the project root's markers: every `<dir>/.xcsh` and `<dir>/.git` the walk-up from cwd looks
 *   at (core/paths.ts `findProjectRoot`), so a marker that appears or goes moves the project
 *   registry and makes the view stale;
 * - every path of the result — tool files (hashed), their folders (a folder tool's index choice),
 *   and the paths of errors, metadata and ignored files (a missing entry that appears, a folder
 *   without index that gets one).
 */
import path from "node:path";
import { readTextBounded } from "../core/bounded-read.js";
import { isPathBelow } from "../core/contain.js";
import { findProjectRoot, projectPaths, projectRootProbes, resolveUserPath, type XcshPaths } from "../core/paths.js";
import type { ToolDiscoveryResult } from "../discovery/index.js";
import { claudeSettingsFiles } from "../manifest/claude-settings.js";
import type { InputRequest } from "./fingerprint.js";

/** What a view's inputs are derived from. */
export interface InputContext {
  cwd: string;
  home: string;
  paths: XcshPaths;
  configuredPaths: readonly string[];
  /** Whether discovery used the project's own sources. */
  trusted: boolean;
}

/** Synchronous, as discovery's reads are (manifest/json-file.ts): small files, no thread-pool trips. */
async function readJsonLoose(file: string): Promise<unknown> {
  try {
    const text = readTextBounded(file);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function strings(value: unknown): string[] {
  if (typeof value === "string") return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Every tools entry a manifest declares, under any feature (a superset of any selection). */
function allToolEntries(pkg: unknown): string[] {
  const root = record(pkg);
  const manifest = record(root?.xcsh) ?? record(root?.pi);
  if (!manifest) return [];
  const entries = strings(manifest.tools);
  for (const feature of Object.values(record(manifest.features) ?? {})) entries.push(...strings(record(feature)?.tools));
  return entries;
}

/** Install paths of an installed_plugins.json (v2), tolerant of any shape. */
function installPaths(registry: unknown): string[] {
  const out: string[] = [];
  for (const entries of Object.values(record(record(registry)?.plugins) ?? {})) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      const installPath = record(entry)?.installPath;
      if (typeof installPath === "string" && path.isAbsolute(installPath)) out.push(installPath);
    }
  }
  return out;
}

/** The inputs of one discovery result (see the header for each rule). */
export async function collectInputs(ctx: InputContext, result: Pick<ToolDiscoveryResult, "paths" | "errors" | "metadata" | "ignored" | "untrusted">): Promise<InputRequest[]> {
  const project = projectPaths(ctx.cwd);
  const p = ctx.paths;
  const requests: InputRequest[] = [];
  const hashed = (file: string) => requests.push({ path: file, hash: true });
  const stated = (file: string) => requests.push({ path: file });

  for (const file of [p.pluginsPackageJson, p.runtimeLock, p.installedPlugins, p.claudeInstalledPlugins, p.trustedProjects]) hashed(file);
  const root = findProjectRoot(ctx.cwd, ctx.home, p.configDirName);
  const projectRegistry = root === undefined ? undefined : path.join(root, p.configDirName, "plugins", "installed_plugins.json");
  for (const file of [...(projectRegistry ? [projectRegistry] : []), project.pluginOverrides, ...project.otherPluginOverrides]) (ctx.trusted ? hashed : stated)(file);
  // Claude Code's settings decide which of its plugins load (claude-plugins provider, enabledPlugins).
  for (const { level, file } of claudeSettingsFiles(ctx.home, ctx.cwd)) (level === "user" || ctx.trusted ? hashed : stated)(file);
  for (const dir of [project.tools, p.userTools, project.claudeTools, path.join(p.claudeRoot, "tools"), project.codexTools, path.join(p.codexRoot, "tools")]) stated(dir);

  const [pkg, userRegistry, projectRegistryDoc, claudeRegistry] = await Promise.all([
    readJsonLoose(p.pluginsPackageJson),
    readJsonLoose(p.installedPlugins),
    ctx.trusted && projectRegistry ? readJsonLoose(projectRegistry) : undefined,
    readJsonLoose(p.claudeInstalledPlugins),
  ]);
  const names = Object.keys(record(record(pkg)?.dependencies) ?? {});
  const npmPlugin = async (nodeModules: string, name: string) => {
    const dir = path.join(nodeModules, name);
    if (!isPathBelow(dir, nodeModules)) return;
    requests.push({ path: dir, kind: "lstat" });
    const manifestFile = path.join(dir, "package.json");
    hashed(manifestFile);
    for (const entry of allToolEntries(await readJsonLoose(manifestFile))) stated(path.resolve(dir, entry));
  };
  await Promise.all(names.map((name) => npmPlugin(p.pluginsNodeModules, name)));
  // Plugin seeds (npm provider): each seed's manifest, and each plugin it lists as an npm plugin above.
  for (const seed of p.seeds) {
    const manifest = path.join(seed, "xcsh-seed.json");
    stated(seed);
    hashed(manifest);
    const listed = Object.keys(record(record(await readJsonLoose(manifest))?.plugins) ?? {});
    await Promise.all(listed.map((name) => npmPlugin(path.join(seed, "plugins", "node_modules"), name)));
  }
  for (const root of [...installPaths(userRegistry), ...installPaths(projectRegistryDoc), ...installPaths(claudeRegistry)]) {
    stated(root);
    stated(path.join(root, "tools"));
  }
  for (const configured of ctx.configuredPaths) stated(resolveUserPath(configured, ctx.cwd, ctx.home));

  for (const found of result.paths) {
    hashed(found.path);
    stated(path.dirname(found.path));
  }
  for (const other of [...result.errors, ...result.metadata, ...result.ignored, ...(result.untrusted?.skipped ?? [])]) stated(other.path);
  // Last, so a change of a file named above is the reason given, not its folder's.
  for (const marker of projectRootProbes(ctx.cwd, ctx.home, p.configDirName)) stated(marker);
  return requests;
}
