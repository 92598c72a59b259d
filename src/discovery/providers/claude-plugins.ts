/**
 * Claude Code marketplace plugins: `tools/` of each plugin in `~/.claude/plugins/installed_plugins.json`
 * (v2). Read only: we never write under `~/.claude`.
 *
 * Claude Code records every install of an id as one entry: `scope: "user"` entries apply
 * everywhere; `scope: "project"` and `"local"` entries carry the `projectPath` they were installed
 * for and apply only when `cwd` is that folder or inside it (an entry without `projectPath`
 * applies nowhere). Per id, applicable project entries shadow the user entries (the rule of every
 * source: project before user), so a stale project install elsewhere never hides the user's
 * (anthropics/claude-code#54310) and a project pin wins over the user's version. All applicable
 * entries of the winning level are used, deduplicated by installPath. Project-level plugin roots
 * come first, then user-level ones, each in registry order. `enabled: false` entries are skipped.
 * In an untrusted project its project entries are left out (reported, their folders untouched)
 * and the user's entries of those ids apply.
 *
 * Claude Code's own switch decides next: `enabledPlugins` of its settings (manifest/claude-settings.ts),
 * the project's `.claude/settings.local.json` over its `.claude/settings.json` over the user's
 * `~/.claude/settings.json`. An id set to `false` by the nearest layer that names it is not loaded;
 * an id no layer names is. The project's two files are read only in a trusted project (else
 * reported as left out, and the user's file alone decides). A settings file that is not JSON or
 * whose `enabledPlugins` has the wrong shape is one `ESTATE_FILE` record and counts as absent.
 */
import { placeOf } from "../../core/state-places.js";
import type { ToolSource } from "../../core/contract.js";
import { isPathInside, realPathOrNearest } from "../../core/contain.js";
import type { DiscoveryContext, DiscoverySink, ToolProvider } from "../types.js";
import { readInstalledRegistry, scanPluginRoot, uniqueByInstallPath, type RegistryEntry } from "./marketplace-registry.js";
import { ClaudeSettingsSchema, claudeSettingsFiles, mergeEnabledPlugins, type ClaudeEnablement } from "../../manifest/claude-settings.js";
import { readStateFile } from "../state-file.js";
import { reportSkipped } from "../untrusted.js";

const NAME = "Claude Code Marketplace";

export const claudePluginsProvider: ToolProvider = {
  id: "claude-plugins",
  name: NAME,
  async discover(ctx, sink) {
    const file = ctx.paths.claudeInstalledPlugins;
    const fileSource: ToolSource = { provider: "claude-plugins", providerName: NAME, level: "user" };
    const registry = await readInstalledRegistry(file, fileSource, sink);
    if (!registry) return;
    const enablement = await readClaudeEnablement(ctx, sink);
    const cwd = realPathOrNearest(ctx.cwd);
    const projectRoots: RegistryEntry[] = [];
    const userRoots: RegistryEntry[] = [];
    for (const [id, entries] of registry) {
      if (enablement.get(id)?.enabled === false) continue;
      const project: RegistryEntry[] = [];
      const user: RegistryEntry[] = [];
      for (const item of entries) {
        if (item.entry.enabled === false) continue;
        const scope = item.entry.scope ?? "user";
        if (scope === "user") user.push(item);
        else if (item.entry.projectPath && isPathInside(cwd, realPathOrNearest(item.entry.projectPath))) {
          if (ctx.projectTrusted) project.push(item);
          else sink.addSkipped({ path: item.entry.installPath, source: { provider: "claude-plugins", providerName: NAME, level: "project", plugin: item.id }, kind: "claude-project-plugin" });
        }
      }
      if (project.length > 0) projectRoots.push(...uniqueByInstallPath(project));
      else userRoots.push(...uniqueByInstallPath(user));
    }
    for (const [level, roots] of [["project", projectRoots], ["user", userRoots]] as const) {
      for (const item of roots) {
        const source: ToolSource = { provider: "claude-plugins", providerName: NAME, level, plugin: item.id };
        await scanPluginRoot(file, item, source, sink, placeOf("claude-install", { roots: { home: ctx.home, xcshHome: ctx.paths.root } }));
      }
    }
  },
};

/** `enabledPlugins` of Claude Code's settings layers, merged (project layers only when trusted). */
export async function readClaudeEnablement(ctx: Pick<DiscoveryContext, "home" | "cwd" | "projectTrusted">, sink: DiscoverySink): Promise<Map<string, ClaudeEnablement>> {
  const layers: Parameters<typeof mergeEnabledPlugins>[0][number][] = [];
  for (const { level, file } of claudeSettingsFiles(ctx.home, ctx.cwd)) {
    const source: ToolSource = { provider: "claude-plugins", providerName: NAME, level: level === "user" ? "user" : "project" };
    if (level !== "user" && !ctx.projectTrusted) {
      reportSkipped(file, source, "claude-settings", sink);
      continue;
    }
    const read = await readStateFile(file, ClaudeSettingsSchema, source, sink, "its enabledPlugins were not applied");
    if (read.status === "ok") layers.push({ level, file, settings: read.value });
  }
  return mergeEnabledPlugins(layers);
}
