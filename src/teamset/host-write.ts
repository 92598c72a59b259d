/**
 * Writing the generated host files (host-files.ts renders them) in a restore's transaction: the
 * one way both the restore engine (restore.ts) and the seed-satisfied restore (fast-seed.ts) write
 * them, so the two cannot write different bytes. Imports only what the fast path may load.
 */
import { readFile, writeFile } from "node:fs/promises";
import { pathExists as exists } from "../core/atomic-fs.js";
import { outsideEveryRepository } from "../core/git-discovery.js";
import path from "node:path";
import type { TeamPaths, XcshRoots } from "../core/paths.js";
import { stageProjectRegistry } from "../marketplace/registry.js";
import type { Mutation } from "../plugins/mutation.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { isRecord } from "../manifest/result.js";
import { GITIGNORE_TEXT, type HostFiles } from "./host-files.js";

/** The project's registry as it is now (ids the set does not mention are kept by renderHostFiles). */
export function existingRegistry(file: string): ({ plugins: Record<string, unknown[]> } & Record<string, unknown>) | undefined {
  const doc = readJsonOrUndefined(file);
  return isRecord(doc) && isRecord(doc.plugins) ? (doc as { plugins: Record<string, unknown[]> } & Record<string, unknown>) : undefined;
}

/** Stage `text` as `file` unless it holds those bytes already; what is staged is added to `written`. */
export async function stageText(m: Pick<Mutation, "tx">, file: string, text: string, written: string[]): Promise<void> {
  const current = await readFile(file, "utf8").catch(() => undefined);
  if (current === text) return;
  await writeFile(await m.tx.stage(file), text, { mode: 0o644 });
  written.push(file);
}

/**
 * The project registry, the overrides (when there are any, or to empty an existing file), the
 * `.gitignore` when there is none, and the registry's place in our list of project registries (so
 * no cache clean-up deletes what it points at).
 */
export async function stageHostFiles(m: Pick<Mutation, "tx">, roots: XcshRoots, paths: TeamPaths, host: HostFiles, written: string[]): Promise<void> {
  await stageText(m, paths.installedPlugins, host.registryText, written);
  if (Object.keys(host.overrides).length > 0 || (await exists(paths.pluginOverrides))) await stageText(m, paths.pluginOverrides, host.overridesText, written);
  if (!(await exists(paths.gitignore))) await stageText(m, paths.gitignore, GITIGNORE_TEXT, written);
  if (written.includes(paths.installedPlugins)) await stageProjectRegistry({ roots }, m, paths.installedPlugins);
}

/**
 * The generated files git tracks in the work tree at `root` (relative paths; none outside a work
 * tree): the restore refuses them (`ETEAM_GENERATED_TRACKED`, cli/team-restore.ts), since they hold
 * one machine's paths. Asked of git read-only (`ls-files`).
 */
export async function trackedGeneratedFiles(root: string, paths: TeamPaths, options: { env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<string[]> {
  const generated = [path.dirname(paths.installedPlugins), paths.pluginOverrides, paths.marketplacesRegistry, path.dirname(paths.catalogCache)].map((file) => path.relative(root, file));
  // No repository git could find: nothing tracked, and git's module not even loaded.
  if (outsideEveryRepository(root, options.env)) return [];
  const { trackedFiles } = await import("../core/git.js");
  return (await trackedFiles(root, generated, options)) ?? [];
}
