/**
 * The marketplace plugins installed in both scopes, as `list` shows them: read from the
 * registries alone (after finishing an interrupted change), each install path confined to the
 * plugin cache. Its own module: `list` must not load what installs and updates need (sources,
 * validation, the component readers).
 */
import { stat } from "node:fs/promises";
import { isXcshToolsError } from "../core/errors.js";
import { teamOffFolder, xcshPaths } from "../core/paths.js";
import { confineStatePath } from "../core/state-places.js";
import { splitPluginId } from "../manifest/installed-plugins.js";
import { pointerSegment } from "../manifest/result.js";
import { recoverBeforeRead } from "../plugins/mutation.js";
import type { MarketplaceContext, Scope } from "./context.js";
import { loadEngineState } from "./state.js";

/** One row of `list`. */
export interface InstalledRow {
  id: string;
  plugin: string;
  marketplace: string;
  scope: Scope;
  version: string;
  enabled: boolean;
  installPath: string;
  gitCommitSha?: string;
  /** A user install hidden by a project install of the same id. */
  shadowedBy?: "project";
  /** The project's set switches it off: the entry points at the set's empty `___off` folder (teamset/host-files.ts), which loads nothing and shadows a user copy. */
  offBySet?: boolean;
  /** The install folder is gone (run update or reinstall). */
  missing?: boolean;
  /** The installPath is outside the plugin cache (`EPATH_OUTSIDE`): not looked at, not loaded. */
  problem?: { code: string; message: string };
}

/** Installed marketplace plugins, project first. */
export async function listMarketplacePlugins(ctx: MarketplaceContext, options: { scope?: Scope } = {}): Promise<InstalledRow[]> {
  await recoverBeforeRead(ctx);
  const state = await loadEngineState(ctx);
  const projectIds = new Set(Object.keys(state.project?.installed.plugins ?? {}));
  const rows: InstalledRow[] = [];
  for (const s of [state.project, state.user]) {
    if (!s || (options.scope && s.paths.scope !== options.scope)) continue;
    for (const [id, entries] of Object.entries(s.installed.plugins)) {
      const split = splitPluginId(id);
      for (const [i, entry] of entries.entries()) {
        let problem: InstalledRow["problem"];
        try {
          confineStatePath("xcsh-install", entry.installPath, ctx, { file: s.paths.installedPlugins, field: `/plugins/${pointerSegment(id)}/${i}/installPath` });
        } catch (error) {
          if (!isXcshToolsError(error, "EPATH_OUTSIDE")) throw error;
          problem = { code: error.code, message: error.message };
        }
        const exists = problem === undefined && (await stat(entry.installPath).then((info) => info.isDirectory(), () => false));
        const offBySet = s.paths.scope === "project" && split !== undefined && entry.installPath === teamOffFolder(xcshPaths(ctx.roots).pluginCache, split.marketplace, split.plugin);
        rows.push({
          id,
          plugin: split?.plugin ?? id,
          marketplace: split?.marketplace ?? "",
          scope: s.paths.scope,
          version: offBySet ? "-" : (entry.version ?? "unknown"),
          enabled: !offBySet && entry.enabled !== false,
          ...(offBySet ? { offBySet } : {}),
          installPath: entry.installPath,
          ...(entry.gitCommitSha ? { gitCommitSha: entry.gitCommitSha } : {}),
          ...(s.paths.scope === "user" && projectIds.has(id) ? { shadowedBy: "project" as const } : {}),
          ...(exists || problem ? {} : { missing: true }),
          ...(problem ? { problem } : {}),
        });
      }
    }
  }
  return rows;
}
