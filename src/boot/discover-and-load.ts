/**
 * `discoverAndLoadCustomTools`: the host's one-call boot entry. It
 * discovers tool paths from every source in the order of docs/library-api.md (src/discovery: project level before
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
 *
 * Workspace trust (`projectTrust`) is decided here, once, before the index or any project file is
 * read; the index and the scan get the decision, so a host's callback is asked once per call. An
 * untrusted project's own sources are left out and returned in `untrusted`, not in `errors`: an
 * untrusted project is a normal state, not a failure to show at every start.
 */
import path from "node:path";
import { projectFolder, resolveRoots } from "../core/paths.js";
import { decideProjectTrustOf, trustWorldOf } from "../core/trust.js";
import { discoverWithBootIndex } from "./discover.js";
import { applyManagedPolicy } from "./policy-filter.js";
import { discoverToolPaths } from "../discovery/index.js";
import { loadDiscoveredTools } from "../host/loader.js";
import type { DiscoverCustomToolsOptions } from "../core/host-options.js";
import type { CustomToolsLoadResult, PushPendingAction } from "../core/contract.js";

/** Discover every tool a host would load from `cwd` and load them: never throws, never hangs. */
export async function discoverAndLoadCustomTools(
  configuredPaths: string[],
  cwd: string,
  builtInToolNames: string[],
  pushPendingAction?: PushPendingAction,
  options: DiscoverCustomToolsOptions = {},
): Promise<CustomToolsLoadResult> {
  const trusted = await decideTrust(cwd, options);
  const discoverOptions = { ...options, projectTrust: trusted };
  const discovered =
    options.bootIndex === false
      ? await discoverToolPaths(configuredPaths, cwd, discoverOptions)
      : // The files a fresh index just found regular (one lstat each instead of a stat) spare the loader its own lstat of each.
        await discoverWithBootIndex(configuredPaths, cwd, discoverOptions, true).catch(() => discoverToolPaths(configuredPaths, cwd, discoverOptions));
  const { providers: _providers, disabledProviders: _disabled, bootIndex: _bootIndex, projectTrust: _projectTrust, lazyTools, onLazyToolError, ...loadOptions } = options;
  // The organization policy after discovery, so the boot index's answer and a scan's are judged alike.
  const allowed = await applyManagedPolicy(discovered.paths, (p) => p, resolveRoots(options), cwd);
  const loaded =
    lazyTools === true && options.bootIndex !== false
      ? await (await import("./lazy-tools.js")).loadWithLazyTools(allowed.kept, cwd, builtInToolNames, pushPendingAction, { ...loadOptions, ...(onLazyToolError ? { onLazyToolError } : {}) }, options, "inputs" in discovered ? discovered.inputs : undefined, "regular" in discovered ? discovered.regular : undefined)
      : await loadDiscoveredTools(allowed.kept, cwd, builtInToolNames, pushPendingAction, loadOptions, "regular" in discovered ? discovered.regular : undefined);
  return {
    tools: loaded.tools,
    errors: [...discovered.errors, ...allowed.errors, ...loaded.errors],
    ...(discovered.untrusted ? { untrusted: discovered.untrusted } : {}),
    setUIContext: loaded.setUIContext,
  };
}

/** The host's decision, its callback's answer, else the user's record; anything failing trusts nothing. */
async function decideTrust(cwd: string, options: DiscoverCustomToolsOptions): Promise<boolean> {
  try {
    const roots = resolveRoots(options);
    // About the project root found from cwd, as discovery decides it (discovery/index.ts).
    return await decideProjectTrustOf(path.resolve(cwd), projectFolder(cwd, roots), options.projectTrust, trustWorldOf(roots));
  } catch {
    return false;
  }
}
