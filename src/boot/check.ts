/** `checkBootIndex`: whether the index answers, for `doctor`, without changing anything. */
import path from "node:path";
import type { BootView } from "./format.js";
import { prepareModules } from "./module-records.js";
import { findView, loadIndex } from "./store.js";
import { viewChange, viewPathOutside } from "./views.js";
import { decideTrust, keyOf, worldOf, type BootIndexOptions } from "./world.js";

/** What `checkBootIndex` reports (for `doctor`). */
export interface BootIndexCheck {
  file: string;
  /** `fresh`: usable as is; `stale`: a view's inputs changed; the others: the file itself. */
  state: "fresh" | "stale" | "missing" | "corrupt" | "unknown-version" | "other-generator" | "no-view";
  fresh: boolean;
  reason: string;
  views: number;
  /** Module records, one per tool entry and runtime that validated it. */
  modules: number;
  /** Tool entries of the checked views without a module record (`tools` would validate them). */
  unvalidated: number;
  /** Why the records file was read as no records (corrupt, another version), when it was. */
  modulesProblem?: string;
}

/**
 * Check the index without changing anything. With `cwd`, the view for that question (cwd,
 * configuredPaths, providers) is checked; without, every view, and the first stale one is named.
 */
export async function checkBootIndex(options: BootIndexOptions = {}): Promise<BootIndexCheck> {
  const world = worldOf(options);
  const loaded = await loadIndex(world, true);
  const base = {
    file: world.file,
    views: loaded.index.views.length,
    modules: Object.values(loaded.index.modules).reduce((sum, records) => sum + Object.keys(records).length, 0),
    ...(loaded.modulesProblem ? { modulesProblem: loaded.modulesProblem } : {}),
  };
  if (loaded.status !== "ok") {
    return { ...base, state: loaded.status as BootIndexCheck["state"], fresh: false, reason: loaded.reason ?? loaded.status, unvalidated: 0 };
  }
  const key = options.cwd !== undefined ? keyOf(world, options.configuredPaths ?? [], options.cwd, options, await decideTrust(world, options.cwd, options.projectTrust)) : undefined;
  const views = key ? [findView(loaded.index, key)].filter((v): v is BootView => v !== undefined) : loaded.index.views;
  if (views.length === 0) {
    const reason = options.cwd !== undefined ? `no entry for ${path.resolve(options.cwd)}` : "the index holds no entry";
    return { ...base, state: "no-view", fresh: false, reason, unvalidated: 0 };
  }
  let unvalidated = 0;
  for (const view of views) {
    const change = (await viewChange(view)) ?? viewPathOutside(world, view.key, view);
    if (change !== undefined) return { ...base, state: "stale", fresh: false, reason: change, unvalidated: 0 };
    for (const module of await prepareModules(view, loaded.index, true)) if (!module.record) unvalidated += 1;
  }
  return { ...base, state: "fresh", fresh: true, reason: "fresh", unvalidated };
}

