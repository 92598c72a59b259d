/**
 * The pure planner of marketplace plugin changes. It takes the registries as
 * loaded under the lock and what was fetched, and returns a plan: one item per id (ADD / CHANGE /
 * REMOVE / NOOP with a reason), the cache folders to add and to remove, and the registry documents
 * to write. `--dry-run` prints it; `apply.ts` carries it out in one transaction.
 *
 * Cache folders are keyed by content (`<mkt>___<plugin>___<version>-<hash12>`), so a changed
 * plugin never lands in the folder of its old content under the same version (the host's
 * and Claude Code's stale-cache bug family). An old folder is removed only when no registry still
 * references it: the user registry, the current project's, and every other project registry we
 * have written (in the host, GC looked at one scope only). When one of those cannot be read,
 * nothing is removed (a leaked folder is harmless; a deleted one breaks a project).
 */
import path from "node:path";
import { confinePath, isRealPathBelow } from "../core/contain.js";
import { pointerSegment } from "../manifest/result.js";
import type { InstalledPluginEntry } from "../manifest/installed-plugins.js";
import type { Scope } from "./context.js";
import { referencedPaths, withEntries, type InstalledDoc } from "./registry.js";

/** What an install of one id looks like. */
export interface InstallTarget {
  version: string;
  installPath: string;
  gitCommitSha?: string;
}

/** One line of a plan. */
export interface PlanItem {
  op: "ADD" | "CHANGE" | "REMOVE" | "NOOP";
  id: string;
  scope: Scope;
  from?: InstallTarget & { enabled: boolean };
  to?: InstallTarget & { enabled: boolean };
  reason: string;
}

/** The registries being changed, and the folders that stop being referenced. */
export interface WorkingSet {
  docs: Partial<Record<Scope, InstalledDoc>>;
  files: Partial<Record<Scope, string>>;
  changed: Set<Scope>;
  /** installPaths some change stopped referencing (GC candidates). */
  released: Set<string>;
  items: PlanItem[];
  /** The one folder installPaths may live in (core/state-places.ts, kind `xcsh-install`). */
  pluginCache: string;
}

/** A finished plan. */
export interface PluginPlan {
  items: PlanItem[];
  /** Registry files and their new documents. */
  writes: { file: string; value: InstalledDoc }[];
  /** Cache folders to delete at commit. */
  cacheRemovals: string[];
  /** Cache folders no longer referenced but kept (another registry could not be read). */
  cacheKept: string[];
}

/** Start planning from the loaded registries. */
export function startPlan(docs: Partial<Record<Scope, InstalledDoc>>, files: Partial<Record<Scope, string>>, pluginCache: string): WorkingSet {
  return { docs: { ...docs }, files, changed: new Set(), released: new Set(), items: [], pluginCache };
}

/**
 * Mark the folders of `id`'s old entries as released (deleted at commit unless still referenced),
 * after checking each is strictly below the plugin cache once symlinks are resolved: an entry
 * pointing anywhere else (edited by hand, or a project's file) fails the whole command with
 * `EPATH_OUTSIDE` naming the registry and the entry, before anything is written or deleted.
 */
function release(ws: WorkingSet, scope: Scope, id: string, entries: readonly InstalledPluginEntry[], keep?: string): void {
  entries.forEach((e, i) => {
    const resolved = path.resolve(e.installPath);
    if (resolved === keep) return;
    confinePath(e.installPath, ws.pluginCache, { what: "install path", ...(ws.files[scope] ? { file: ws.files[scope] } : {}), field: `/plugins/${pointerSegment(id)}/${i}/installPath`, hint: `Nothing was changed. Restore ${ws.files[scope] ?? "the registry"}, or remove the entry ${id} from it by hand.` }, { strictlyBelow: true });
    ws.released.add(resolved);
  });
}

/** Add `item` to the plan and return it (callers add reasons to NOOPs). */
function recordItem(ws: WorkingSet, item: PlanItem): PlanItem {
  ws.items.push(item);
  return item;
}

function targetOf(entry: InstalledPluginEntry | undefined): (InstallTarget & { enabled: boolean }) | undefined {
  if (!entry) return undefined;
  return { version: entry.version ?? "unknown", installPath: entry.installPath, ...(entry.gitCommitSha ? { gitCommitSha: entry.gitCommitSha } : {}), enabled: entry.enabled !== false };
}

/** The entries of `id` in `scope`. */
export function entriesOf(ws: WorkingSet, scope: Scope, id: string): InstalledPluginEntry[] {
  const doc = ws.docs[scope];
  const list = doc && Object.hasOwn(doc.plugins, id) ? doc.plugins[id] : undefined;
  return Array.isArray(list) ? list : [];
}

/**
 * Install `target` as `id` in `scope`. An existing install keeps its enabled state and
 * installedAt; the same folder (same content) is a NOOP; a fresh install of a catalog entry with
 * `defaultEnabled: false` is written disabled (the host's rule).
 */
export function planInstall(
  ws: WorkingSet,
  scope: Scope,
  id: string,
  target: InstallTarget,
  options: { now: string; defaultEnabled?: boolean; reason?: string; auto?: boolean },
): PlanItem {
  const doc = ws.docs[scope] ?? { version: 2, plugins: {} };
  const old = entriesOf(ws, scope, id);
  const first = old[0];
  const same = old.length === 1 && first && path.resolve(first.installPath) === path.resolve(target.installPath) && (first.gitCommitSha ?? undefined) === (target.gitCommitSha ?? undefined);
  if (same) return recordItem(ws, { op: "NOOP", id, scope, from: targetOf(first)!, to: targetOf(first)!, reason: `already installed: ${first.version ?? "unknown"} (${path.basename(first.installPath)})` });
  const enabled = first ? old.every((e) => e.enabled !== false) : options.defaultEnabled !== false;
  const entry: InstalledPluginEntry = {
    scope,
    installPath: target.installPath,
    version: target.version,
    installedAt: first?.installedAt ?? options.now,
    lastUpdated: options.now,
    ...(target.gitCommitSha ? { gitCommitSha: target.gitCommitSha } : {}),
    // The host writes `enabled` only as false; absent means enabled.
    ...(enabled ? {} : { enabled: false }),
    // Brought in as a dependency: only a fresh install is marked (one asked for by name stays so).
    ...((first ? first.auto === true : options.auto) ? { auto: true } : {}),
  };
  release(ws, scope, id, old, path.resolve(target.installPath));
  ws.docs[scope] = withEntries(doc, id, [entry]);
  ws.changed.add(scope);
  return recordItem(ws, {
    op: first ? "CHANGE" : "ADD",
    id,
    scope,
    ...(first ? { from: targetOf(first)! } : {}),
    to: targetOf(entry)!,
    reason: options.reason ?? (first ? `${first.version ?? "unknown"} → ${target.version}${first.version === target.version ? " (content changed)" : ""}` : `install ${target.version}`),
  });
}

/** Remove `id` from `scope`. */
export function planRemove(ws: WorkingSet, scope: Scope, id: string): PlanItem {
  const old = entriesOf(ws, scope, id);
  release(ws, scope, id, old);
  ws.docs[scope] = withEntries(ws.docs[scope] ?? { version: 2, plugins: {} }, id, []);
  ws.changed.add(scope);
  return recordItem(ws, { op: "REMOVE", id, scope, ...(old[0] ? { from: targetOf(old[0])! } : {}), reason: "uninstall" });
}

/** Enable or disable every entry of `id` in `scope`. */
export function planSetEnabled(ws: WorkingSet, scope: Scope, id: string, enabled: boolean): PlanItem {
  const old = entriesOf(ws, scope, id);
  if (old.every((e) => (e.enabled !== false) === enabled)) return recordItem(ws, { op: "NOOP", id, scope, from: targetOf(old[0])!, to: targetOf(old[0])!, reason: `already ${enabled ? "enabled" : "disabled"}` });
  const next = old.map((e) => {
    const { enabled: _drop, ...rest } = e;
    return enabled ? rest : { ...rest, enabled: false };
  });
  ws.docs[scope] = withEntries(ws.docs[scope]!, id, next);
  ws.changed.add(scope);
  return recordItem(ws, { op: "CHANGE", id, scope, from: targetOf(old[0])!, to: targetOf(next[0])!, reason: enabled ? "enable" : "disable" });
}

/**
 * Finish the plan: the registry writes, and the released cache folders nobody references any
 * more. `otherReferences` are the installPaths of every other registry (other projects);
 * `undefined` means one could not be read, so nothing is deleted. Only folders inside
 * `pluginCache` are ever deleted: a registry may point anywhere.
 */
export function finishPlan(ws: WorkingSet, options: { pluginCache: string; otherReferences: Set<string> | undefined }): PluginPlan {
  const writes: PluginPlan["writes"] = [];
  for (const scope of ["project", "user"] as const) {
    if (!ws.changed.has(scope)) continue;
    const file = ws.files[scope];
    const value = ws.docs[scope];
    if (file && value) writes.push({ file, value });
  }
  const referenced = new Set<string>(options.otherReferences ?? []);
  for (const doc of Object.values(ws.docs)) if (doc) for (const p of referencedPaths(doc)) referenced.add(p);
  const cacheRemovals: string[] = [];
  const cacheKept: string[] = [];
  for (const released of ws.released) {
    // Checked again here (real paths, strictly below): whatever released it, only cache folders go.
    if (referenced.has(released) || !isRealPathBelow(released, options.pluginCache)) continue;
    if (options.otherReferences === undefined) cacheKept.push(released);
    else cacheRemovals.push(released);
  }
  return { items: ws.items, writes, cacheRemovals: cacheRemovals.sort(), cacheKept: cacheKept.sort() };
}
