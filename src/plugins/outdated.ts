/**
 * `outdated` and the input of `update`: for each installed registry plugin, npm's three
 * columns — `current` (what node_modules holds), `wanted` (the highest version the saved range
 * allows; for a saved dist-tag, that tag's version) and `latest` (the `latest` dist-tag). Plugins
 * from folders, tarballs, links and git have no registry versions: their wanted/latest are null.
 *
 * Packuments are fetched fresh (`preferOnline`): a cached document would report "up to date"
 * while a newer version exists. Any registry failure is an error for the whole command
 * (`EREGISTRY`, `EAUTH`, `ENOT_FOUND`) — never a silent "up to date" (pi #4889).
 */
import { semver } from "../core/npm-spec.js";
import type { InstalledPlugin } from "./inventory.js";
import { loadPacote, npmError, npmOptions, type NpmClientOptions } from "./npm-client.js";
import type { VersionInfo } from "./plan.js";

/** One row of `outdated`. */
export interface OutdatedRow extends VersionInfo {
  dependency: string;
  source: string;
  /** current differs from wanted or latest. */
  outdated: boolean;
}

function isRegistryDependency(plugin: InstalledPlugin): boolean {
  if (plugin.linked) return false;
  const source = plugin.record?.source ?? "registry";
  if (source !== "registry") return false;
  return semver.validRange(plugin.dependency) !== null || /^[a-z0-9][a-z0-9._-]*$/i.test(plugin.dependency);
}

/** Registry versions of the given installed plugins (all of them when `names` is empty). */
export async function checkOutdated(plugins: InstalledPlugin[], client: NpmClientOptions): Promise<OutdatedRow[]> {
  const pacote = await loadPacote();
  return Promise.all(
    plugins.map(async (plugin): Promise<OutdatedRow> => {
      const source = plugin.linked ? "link" : (plugin.record?.source ?? "registry");
      if (!isRegistryDependency(plugin)) {
        return { name: plugin.name, current: plugin.version, wanted: null, latest: null, dependency: plugin.dependency, source, outdated: false };
      }
      let packument: { versions: Record<string, unknown>; "dist-tags": Record<string, string> };
      try {
        packument = (await pacote.packument(plugin.name, { ...npmOptions(client), preferOnline: true } as never)) as never;
      } catch (error) {
        throw npmError(error, plugin.name, client, plugin.name);
      }
      const versions = Object.keys(packument.versions ?? {});
      const tags = packument["dist-tags"] ?? {};
      const range = semver.validRange(plugin.dependency);
      const wanted = range !== null ? semver.maxSatisfying(versions, range) : (tags[plugin.dependency] ?? null);
      const latest = tags.latest ?? null;
      const outdated = plugin.version !== undefined && ((wanted !== null && wanted !== plugin.version) || (latest !== null && latest !== plugin.version && semver.gt(latest, plugin.version)));
      return { name: plugin.name, current: plugin.version, wanted, latest, dependency: plugin.dependency, source, outdated };
    }),
  );
}
