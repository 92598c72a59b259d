/**
 * Carrying out a plan inside the mutation's transaction. Everything that can fail before the
 * first write has already happened (fetch, copy, hash, validate: prepare.ts); here each new cache
 * folder is moved into a journal staging slot, each old one is staged for removal and each
 * registry document is written into its slot. Live state changes only at commit, when the
 * journal swaps everything in; a failure at any step before that leaves the tree as it was.
 */
import { pathExists, movePath } from "../core/atomic-fs.js";
import type { Mutation } from "../plugins/mutation.js";
import type { PluginPlan } from "./plan.js";
import { stageProjectList } from "./registry.js";
import { xcshPaths } from "../core/paths.js";
import type { MarketplaceContext } from "./context.js";
import { hashTree } from "./tree.js";

/** A cache folder the plan needs, built in scratch. */
export interface CacheAdd {
  dir: string;
  /** The scratch copy to move into place. */
  from: string;
  /** Its content hash (an existing folder with the same hash is reused). */
  hash: string;
}

/** Stage a plan in the mutation's transaction. */
export async function applyPluginPlan(
  ctx: MarketplaceContext,
  m: Mutation,
  plan: PluginPlan,
  adds: CacheAdd[],
  projectList: string[] | undefined,
): Promise<void> {
  const seen = new Set<string>();
  for (const add of adds) {
    if (seen.has(add.dir)) continue;
    seen.add(add.dir);
    // Keyed by content: an existing folder of the same key is the same plugin, unless damaged.
    if ((await pathExists(add.dir)) && (await hashTree(add.dir).catch(() => "")) === add.hash) continue;
    const slot = await m.tx.stage(add.dir);
    await movePath(add.from, slot);
    await m.step("marketplace:staged-cache");
  }
  for (const dir of plan.cacheRemovals) {
    if (seen.has(dir)) continue;
    await m.tx.stageRemoval(dir, xcshPaths(ctx.roots).pluginCache, { what: "cached plugin folder" });
  }
  await m.step("marketplace:staged-removals");
  for (const write of plan.writes) await m.tx.stageJson(write.file, write.value);
  if (projectList) await stageProjectList(m.tx, ctx, projectList);
  await m.step("marketplace:staged-registries");
}
