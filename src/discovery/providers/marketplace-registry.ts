/**
 * What the two marketplace sources share: reading an `installed_plugins.json` (v2) registry and
 * scanning the `tools/` folder of one installed plugin root.
 *
 * A registry is checked in two steps so one bad entry spoils only that entry: the document must
 * be `{version: number, plugins: {…}}` (else `ESTATE_FILE`, the whole file is ignored), then each
 * id must be `name@marketplace` (`EPLUGIN_ID`) holding an array of entries, and each entry must
 * match `InstalledPluginEntrySchema` (`ESTATE_ENTRY`, naming the JSON path).
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { confinePath } from "../../core/contain.js";
import { errorMessage } from "../../core/errors.js";
import { Type } from "../../manifest/typebox.js";
import type { ToolSource } from "../../core/contract.js";
import { InstalledPluginEntrySchema, splitPluginId, type InstalledPluginEntry } from "../../manifest/installed-plugins.js";
import { pointerSegment } from "../../manifest/result.js";
import { checkSchema } from "../../manifest/schema-check.js";
import { discoveryError } from "../records.js";
import { describeIssues, readStateFile } from "../state-file.js";
import { scanToolsDir } from "../tools-dir.js";
import type { DiscoverySink } from "../types.js";

/**
 * The registry's outer shape only. `InstalledPluginsRegistrySchema` also requires every id to
 * hold an array, which would make one odd id spoil the whole file; ids are checked one by one.
 */
const RegistryEnvelopeSchema = Type.Object({
  version: Type.Number(),
  plugins: Type.Record(Type.String(), Type.Unknown()),
});

/** One valid entry of a registry, with where it sits in the file. */
export interface RegistryEntry {
  /** `name@marketplace`. */
  id: string;
  entry: InstalledPluginEntry;
  /** JSON pointer of the entry, for messages. */
  pointer: string;
}

/** The valid entries of a registry, grouped by id in file order; `undefined` when missing or bad. */
export async function readInstalledRegistry(file: string, source: ToolSource, sink: DiscoverySink): Promise<Map<string, RegistryEntry[]> | undefined> {
  const read = await readStateFile(file, RegistryEnvelopeSchema, source, sink);
  if (read.status !== "ok") return undefined;
  const byId = new Map<string, RegistryEntry[]>();
  for (const [id, entries] of Object.entries(read.value.plugins)) {
    const idPointer = `/plugins/${pointerSegment(id)}`;
    const pluginSource = { ...source, plugin: id };
    if (!splitPluginId(id)) {
      sink.addError(discoveryError("EPLUGIN_ID", file, `${file} ${idPointer}: plugin id "${id}" is not "name@marketplace"; its entries were skipped.`, pluginSource));
      continue;
    }
    if (!Array.isArray(entries)) {
      sink.addError(discoveryError("ESTATE_ENTRY", file, `${file} ${idPointer}: expected an array of install entries; it was skipped.`, pluginSource));
      continue;
    }
    const valid: RegistryEntry[] = [];
    entries.forEach((raw, index) => {
      const pointer = `${idPointer}/${index}`;
      const checked = checkSchema(InstalledPluginEntrySchema, raw);
      if (!checked.ok) {
        sink.addError(discoveryError("ESTATE_ENTRY", file, `${describeIssues(file, pointer, checked.issues)}; this entry was skipped.`, pluginSource));
        return;
      }
      valid.push({ id, entry: checked.value, pointer });
    });
    byId.set(id, valid);
  }
  return byId;
}

/** `items` without the repeats of an installPath, first kept. */
export function uniqueByInstallPath(items: RegistryEntry[]): RegistryEntry[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = path.resolve(item.entry.installPath);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Scan `<installPath>/tools` of one plugin. The installPath must be strictly below `place`, the
 * one folder installs of this registry live in (core/state-places.ts), once symlinks are
 * resolved: `EPATH_OUTSIDE` otherwise, and nothing there is read or imported. The plugin folder
 * must exist (`EPLUGIN_NOT_FOUND` otherwise: the registry points at nothing); its `tools/` folder
 * is optional. Tools must stay inside the plugin folder once symlinks are followed.
 */
export async function scanPluginRoot(registryFile: string, item: RegistryEntry, source: ToolSource, sink: DiscoverySink, place: string): Promise<void> {
  const root = item.entry.installPath;
  let real: string;
  try {
    real = confinePath(root, place, { what: "install path", file: registryFile, field: `${item.pointer}/installPath` }, { strictlyBelow: true });
  } catch (error) {
    const message = `Plugin ${item.id} (${registryFile} ${item.pointer}/installPath) has installPath ${root}, which is outside ${place} where installs live; it was not loaded. ${errorMessage(error)}`;
    sink.addError(discoveryError("EPATH_OUTSIDE", root, message, source));
    return;
  }
  const info = await stat(real).catch(() => undefined);
  if (!path.isAbsolute(root) || !info?.isDirectory()) {
    const message = `Plugin ${item.id} (${registryFile} ${item.pointer}) has installPath ${root}, which is not an existing absolute folder; reinstall the plugin.`;
    sink.addError(discoveryError("EPLUGIN_NOT_FOUND", root, message, source));
    return;
  }
  await scanToolsDir(path.join(root, "tools"), source, sink, { within: real });
}
