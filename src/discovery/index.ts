/**
 * Tool discovery: where the tools an xcsh host loads at boot come from (SPEC §2), found by
 * scanning the disk only — no plugin code is imported here, so the CLI `tools` command and the
 * boot index can call it freely.
 *
 * Order. Providers run in `PROVIDER_IDS` order: native, claude, codex, claude-plugins,
 * xcsh-plugins, npm, config. Within every provider the project level comes before the user level
 * ("project shadows user"): the loader keeps the first tool of a name, so a project tool wins
 * over a user tool of the same name, as the host does for native tools (xcsh-host-formats §4.2,
 * §4.6). Marketplace providers go further and let a project registry entry shadow the user's
 * entries of the same plugin id. Inside a tools directory, entries are sorted by name.
 *
 * Problems are records, never throws: `errors` (coded, see records.ts), `metadata` (`.md`/`.json`
 * in tool dirs, never modules) and `ignored` (stray files). Providers run concurrently, each into
 * its own sink, and results are concatenated in provider order, so the output is deterministic.
 * Duplicate paths are left in: the loader dedupes by real path and reports name conflicts.
 */
import path from "node:path";
import { errorMessage } from "../core/errors.js";
import { resolveRoots, xcshPaths } from "../core/paths.js";
import type { DiscoverCustomToolsOptions } from "../host/options.js";
import { discoveryError } from "./records.js";
import type { DiscoveryContext, DiscoverySink, ToolDiscoveryResult } from "./types.js";

import { selectProviders } from "./select.js";
export { selectProviders };
export type { IgnoredToolFile, ToolDiscoveryResult, ToolMetadataFile } from "./types.js";
export { DISCOVERY_ERROR_CODES, type DiscoveryErrorCode } from "./records.js";

/** Options of `discoverToolPaths`: the roots to read from and which providers to run. */
export type DiscoverToolPathsOptions = Pick<DiscoverCustomToolsOptions, "home" | "xcshHome" | "env" | "providers" | "disabledProviders">;

function collectingSink(result: ToolDiscoveryResult): DiscoverySink {
  return {
    addPath: (p, source) => result.paths.push({ path: p, source }),
    addError: (error) => result.errors.push(error),
    addMetadata: (file) => result.metadata.push(file),
    addIgnored: (file) => result.ignored.push(file),
  };
}

function emptyResult(): ToolDiscoveryResult {
  return { paths: [], errors: [], metadata: [], ignored: [] };
}

/** Find every tool path a host would load from `cwd`, in load order, with every problem found. */
export async function discoverToolPaths(
  configuredPaths: readonly string[],
  cwd: string,
  options: DiscoverToolPathsOptions = {},
): Promise<ToolDiscoveryResult> {
  // The providers (and the manifest validators under them: TypeBox's value module, semver,
  // npm-package-arg) load only when a scan runs, so a host booting from a fresh boot index and a
  // fresh `xcsh-tools tools` never pay for them.
  const { TOOL_PROVIDERS } = await import("./providers/index.js");
  const roots = resolveRoots(options);
  const ctx: DiscoveryContext = {
    cwd: path.resolve(cwd),
    home: roots.home,
    paths: xcshPaths(roots),
    configuredPaths,
  };
  const parts = await Promise.all(
    selectProviders(options).map(async (id) => {
      const provider = TOOL_PROVIDERS[id];
      const part = emptyResult();
      try {
        await provider.discover(ctx, collectingSink(part));
      } catch (error) {
        // A bug of ours must not cost the host its other sources.
        part.errors.push(
          discoveryError("EPROVIDER", ctx.cwd, `Discovery of ${provider.name} tools failed: ${errorMessage(error)}`, {
            provider: id,
            providerName: provider.name,
            level: "user",
          }),
        );
      }
      return part;
    }),
  );
  const result = emptyResult();
  for (const part of parts) {
    result.paths.push(...part.paths);
    result.errors.push(...part.errors);
    result.metadata.push(...part.metadata);
    result.ignored.push(...part.ignored);
  }
  return result;
}
