/**
 * xcsh marketplace plugins: `tools/` of each plugin in `<cwd>/.xcsh/plugins/installed_plugins.json`
 * (project) and `<xcshHome>/plugins/installed_plugins.json` (user).
 *
 * The project registry is the one of the project root found by walking up from `cwd`, as the
 * host finds it (core/paths.ts `findProjectRoot`; helpers.ts:678-712, :748); outside any project
 * there is none. Every id the project registry lists — even with only `enabled: false` entries — shadows
 * the user's entries of that id: a project can pin another version or switch a plugin off. Its
 * entries are project level whatever their `scope` field says. `enabled: false` entries are
 * skipped; entries repeating an (id, installPath) pair are used once. When `cwd` is such that both
 * registry paths are the same file, it is read once, as the user registry. In an untrusted
 * project the project registry is not read (only reported), and the user's entries apply.
 */
import path from "node:path";
import { placeOf } from "../../core/state-places.js";
import type { ToolSource } from "../../core/contract.js";
import type { ToolProvider } from "../types.js";
import { reportSkipped } from "../untrusted.js";
import { readInstalledRegistry, scanPluginRoot, uniqueByInstallPath } from "./marketplace-registry.js";

const NAME = "xcsh Marketplace";

export const xcshPluginsProvider: ToolProvider = {
  id: "xcsh-plugins",
  name: NAME,
  async discover(ctx, sink) {
    const userFile = ctx.paths.installedPlugins;
    const projectFile = ctx.projectRegistry;
    const levels: { level: "project" | "user"; file: string }[] = [];
    if (projectFile !== undefined && path.resolve(projectFile) !== path.resolve(userFile)) {
      if (ctx.projectTrusted) levels.push({ level: "project", file: projectFile });
      else reportSkipped(projectFile, { provider: "xcsh-plugins", providerName: NAME, level: "project" }, "installed-plugins", sink);
    }
    levels.push({ level: "user", file: userFile });

    const shadowed = new Set<string>();
    for (const { level, file } of levels) {
      const registry = await readInstalledRegistry(file, { provider: "xcsh-plugins", providerName: NAME, level }, sink);
      if (!registry) continue;
      for (const [id, entries] of registry) {
        if (shadowed.has(id)) continue;
        if (level === "project") shadowed.add(id);
        for (const item of uniqueByInstallPath(entries.filter((e) => e.entry.enabled !== false))) {
          const source: ToolSource = { provider: "xcsh-plugins", providerName: NAME, level, plugin: id };
          // Project installs are cached in the user's plugin cache too (the host's layout).
          await scanPluginRoot(file, item, source, sink, placeOf("xcsh-install", { roots: { home: ctx.home, xcshHome: ctx.paths.root } }));
        }
      }
    }
  },
};
