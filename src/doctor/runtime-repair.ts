/**
 * The pure repair of the runtime lock (`xcsh-plugins.lock.json`) and our install record against
 * what package.json lists and what node_modules holds. One function decides it, so that the
 * diagnosis (which reports each change as a warning) and `--fix` (which applies them, computed
 * again from the state read under the lock) can never disagree.
 *
 * Rules (the host's doctor drops orphans too; the rest it leaves broken):
 *   - a runtime entry, settings section or record entry of a plugin package.json no longer
 *     lists: removed (`orphan:runtime|settings|record:<name>`);
 *   - an installed plugin without a runtime entry: added as a new install is — enabled, default
 *     features (`plugin:<name>:runtime`);
 *   - a runtime `version` that is not the installed one: set to it (`plugin:<name>:runtime`);
 *   - enabled features the installed manifest does not declare: dropped (`plugin:<name>:feature:<f>`).
 * Plugins whose folder is missing or unreadable are left alone: reinstalling them comes first.
 */
import type { InstalledPlugin } from "../plugins/inventory.js";
import { dependenciesOf, withRecordEntry, withRuntimePlugin, withoutRuntimePlugin, type StateFiles } from "../plugins/state.js";

/** One change, keyed like the finding that reports it. */
export interface RuntimeChange {
  id: string;
  /** The plugin it is about. */
  name: string;
  /** What is wrong, for the finding. */
  problem: string;
  /** What the repair does. */
  repair: string;
}

/** The repaired files and each change made. */
export function repairRuntimeState(files: StateFiles, inventory: readonly InstalledPlugin[]): { after: StateFiles; changes: RuntimeChange[] } {
  const deps = dependenciesOf(files.packageJson);
  const listed = (name: string) => Object.hasOwn(deps, name);
  const changes: RuntimeChange[] = [];
  let runtimeLock = files.runtimeLock;
  let record = files.record;

  for (const name of Object.keys(runtimeLock?.plugins ?? {})) {
    if (listed(name)) continue;
    runtimeLock = withoutRuntimePlugin(runtimeLock, name, { keepSettings: true });
    changes.push({ id: `orphan:runtime:${name}`, name, problem: `the runtime lock has an entry for ${name}, which package.json does not list (not installed)`, repair: `remove ${name}'s runtime entry` });
  }
  for (const name of Object.keys(runtimeLock?.settings ?? {})) {
    if (listed(name)) continue;
    runtimeLock = withoutRuntimePlugin(runtimeLock, name);
    changes.push({ id: `orphan:settings:${name}`, name, problem: `the runtime lock keeps settings of ${name}, which is not installed`, repair: `remove ${name}'s settings` });
  }
  for (const name of Object.keys(record.plugins)) {
    if (listed(name)) continue;
    record = withRecordEntry(record, name, undefined);
    changes.push({ id: `orphan:record:${name}`, name, problem: `xcsh-tools' install record has ${name}, which is not installed`, repair: `forget ${name} in the install record` });
  }

  for (const plugin of inventory) {
    if (!listed(plugin.name) || !plugin.manifest || plugin.problem || plugin.version === undefined) continue;
    const name = plugin.name;
    const entry = runtimeLock?.plugins && Object.hasOwn(runtimeLock.plugins, name) ? runtimeLock.plugins[name] : undefined;
    if (!entry) {
      runtimeLock = withRuntimePlugin(runtimeLock, name, { version: plugin.version, enabledFeatures: null, enabled: true });
      changes.push({ id: `plugin:${name}:runtime`, name, problem: `${name}@${plugin.version} is installed but has no entry in the runtime lock`, repair: `add ${name} to the runtime lock (enabled, default features)` });
      continue;
    }
    if (entry.version !== plugin.version) {
      runtimeLock = withRuntimePlugin(runtimeLock, name, { version: plugin.version });
      changes.push({ id: `plugin:${name}:runtime`, name, problem: `the runtime lock says ${name}@${entry.version ?? "(no version)"} but ${plugin.version} is installed`, repair: `set ${name}'s runtime version to ${plugin.version}` });
    }
    const declared = Object.keys(plugin.manifest.features ?? {});
    const enabled = entry.enabledFeatures;
    if (Array.isArray(enabled)) {
      const unknown = enabled.filter((f) => f !== "*" && !declared.includes(f));
      if (unknown.length > 0) {
        runtimeLock = withRuntimePlugin(runtimeLock, name, { enabledFeatures: enabled.filter((f) => !unknown.includes(f)) });
        for (const feature of unknown) {
          changes.push({
            id: `plugin:${name}:feature:${feature}`,
            name,
            problem: `feature "${feature}" of ${name} is enabled but ${name}@${plugin.version} does not declare it (${declared.length > 0 ? `it declares ${declared.join(", ")}` : "it declares no features"})`,
            repair: `drop "${feature}" from ${name}'s enabled features`,
          });
        }
      }
    }
  }
  return { after: { packageJson: files.packageJson, runtimeLock, record }, changes };
}
