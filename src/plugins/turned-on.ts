/**
 * The tool modules a state change turns on — `enable` of a plugin, `features --enable/--set` of a
 * feature, at either scope — checked before the change counts (issue 44: a change that downloads
 * nothing validates only what it changes). A module the boot index already holds a record of for
 * the same bytes is not imported again (re-enabling a plugin costs no child process); the others
 * are imported once in the validation child, as the boot index refresh would right after the
 * commit. A module that fails, an entry that leaves its package or does not exist, refuses the
 * whole change with `EVALIDATE` before anything is staged: the transaction rolls back and the
 * plugin stays as it was, instead of a change that commits tools the host then drops.
 *
 * Modules that stay on, and changes that turn nothing on (`disable`, `config`), check nothing.
 * The entries are resolved by discovery's own code (`addToolEntries`), so what is checked is what
 * the host will load.
 */
import path from "node:path";
import type { ToolLoadError, ToolSource } from "../core/contract.js";
import { XcshToolsError } from "../core/errors.js";
import type { PluginManifest } from "../manifest/plugin-manifest.js";
import { selectEntries } from "../manifest/plugin-manifest.js";
import { runtimeEnabled } from "../manifest/runtime-lock.js";
import type { MutationWorld } from "./mutation.js";
import { isProjectDisabled, projectFeatures, type OverridesFile } from "./project-overrides.js";
import { runtimeEntry, type RuntimeLockFile } from "./state.js";

/** The state a plugin's entries are chosen from: the runtime lock and the project's overrides (if read). */
interface Selection {
  runtimeLock: RuntimeLockFile | undefined;
  overrides: OverridesFile | undefined;
}

/** The tools entries of `name` the host would load under `selection`: none when it is off, else base + features, as discovery picks them. */
function activeEntries(name: string, manifest: PluginManifest, selection: Selection): string[] {
  const entry = runtimeEntry(selection.runtimeLock, name);
  if (!runtimeEnabled(entry) || isProjectDisabled(selection.overrides, name)) return [];
  return selectEntries(manifest, "tools", projectFeatures(selection.overrides, name) ?? entry?.enabledFeatures ?? null);
}

/**
 * Refuse (`EVALIDATE`) a change from `before` to `after` that turns on a tool module of one of
 * `plugins` that does not load. Runs plugin code (in the child): only for a change the user asked
 * for, never for a dry run.
 */
export async function checkTurnedOn(world: MutationWorld, where: { cwd: string; scratch: string }, plugins: readonly { name: string; dir: string; manifest: PluginManifest | undefined }[], before: Selection, after: Selection): Promise<void> {
  const turnedOn = plugins.flatMap((plugin) => {
    if (!plugin.manifest) return [];
    const was = new Set(activeEntries(plugin.name, plugin.manifest, before));
    const added = activeEntries(plugin.name, plugin.manifest, after).filter((entry) => !was.has(entry));
    return added.length > 0 ? [{ ...plugin, entries: added }] : [];
  });
  if (turnedOn.length === 0) return;
  const { addToolEntries } = await import("../discovery/providers/index.js");
  for (const plugin of turnedOn) {
    const paths: { path: string; source: ToolSource }[] = [];
    const errors: ToolLoadError[] = [];
    const source: ToolSource = { provider: "npm", providerName: "npm plugins", level: "user", plugin: plugin.name };
    await addToolEntries(plugin.dir, plugin.name, plugin.entries, source, {
      addPath: (file, from) => paths.push({ path: file, source: from }),
      addError: (error) => errors.push(error),
      addMetadata: () => undefined,
      addIgnored: () => undefined,
      addSkipped: () => undefined,
    });
    const problems = errors.map((error) => `${error.code} ${relative(plugin.dir, error.path)}: ${error.error}`);
    if (problems.length === 0 && paths.length > 0) {
      const { recordModules } = await import("../boot/refresh.js");
      const modules = await recordModules({ ...world.roots, env: world.env, ...where }, paths);
      for (const { file, record } of modules) {
        if (record?.failure) problems.push(`${record.failure.code} ${relative(plugin.dir, file)}: ${record.failure.message}`);
        for (const tool of record?.tools ?? []) for (const p of tool.problems) problems.push(`${p.code} ${relative(plugin.dir, file)}${p.field ? ` ${p.field}` : ""}: ${p.message}`);
      }
    }
    if (problems.length > 0) {
      const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : "";
      throw new XcshToolsError("EVALIDATE", `${plugin.name}: the tools this change turns on failed validation, so nothing was changed: ${problems.slice(0, 3).join("; ")}${more}`, {
        hint: `Fix the plugin's tools (see every problem with \`xcsh-tools validate ${plugin.dir}\`), then run the command again.`,
        file: plugin.dir,
      });
    }
  }
}

function relative(dir: string, file: string): string {
  return path.relative(dir, file) || ".";
}
