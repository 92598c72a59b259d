/**
 * `discoverAndLoadCustomTools`: the host's one-call boot entry (xcsh-host-formats §2.5). It
 * discovers tool paths from every source in SPEC §2 order (src/discovery: project level before
 * user level in each source, configured paths last), then hands them to `loadCustomTools`, which
 * dedupes by real path and rejects name conflicts (first wins, builtins always win). Discovery
 * errors come first in `errors`, then load errors, each with its source. Metadata and ignored
 * files are not load errors; callers who want them use `discoverToolPaths`.
 *
 * The discovery answer comes from the boot index (src/boot) when it is fresh for this question
 * (cwd, configured paths, providers) — a `stat` per recorded input instead of a scan — and from a
 * full scan otherwise, which then rewrites the index. The index only replaces the scan: the
 * loader still imports every module, so what is loaded is exactly what a scan would load. Any
 * problem with the index means a scan; `bootIndex: false` skips it altogether.
 */
import { discoverWithBootIndex } from "../boot/index.js";
import { discoverToolPaths } from "../discovery/index.js";
import { loadCustomTools } from "./loader.js";
import type { DiscoverCustomToolsOptions } from "./options.js";
import type { CustomToolsLoadResult, PushPendingAction } from "./types.js";

/** Discover every tool a host would load from `cwd` and load them: never throws, never hangs. */
export async function discoverAndLoadCustomTools(
  configuredPaths: string[],
  cwd: string,
  builtInToolNames: string[],
  pushPendingAction?: PushPendingAction,
  options: DiscoverCustomToolsOptions = {},
): Promise<CustomToolsLoadResult> {
  const discovered =
    options.bootIndex === false
      ? await discoverToolPaths(configuredPaths, cwd, options)
      : await discoverWithBootIndex(configuredPaths, cwd, options).catch(() => discoverToolPaths(configuredPaths, cwd, options));
  const { providers: _providers, disabledProviders: _disabled, bootIndex: _bootIndex, ...loadOptions } = options;
  const loaded = await loadCustomTools(discovered.paths, cwd, builtInToolNames, pushPendingAction, loadOptions);
  return {
    tools: loaded.tools,
    errors: [...discovered.errors, ...loaded.errors],
    setUIContext: loaded.setUIContext,
  };
}
