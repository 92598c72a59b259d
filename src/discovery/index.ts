/**
 * Tool discovery: where the tools an xcsh host loads at boot come from (docs/library-api.md, "Where tools come from"), found by
 * scanning the disk only — no plugin code is imported here, so the CLI `tools` command and the
 * boot index can call it freely.
 *
 * Order. Providers run in `PROVIDER_IDS` order: native, claude, codex, claude-plugins,
 * xcsh-plugins, npm, config. Within every provider the project level comes before the user level
 * ("project shadows user"): the loader keeps the first tool of a name, so a project tool wins
 * over a user tool of the same name, as the host does for native tools. Marketplace providers go further and let a project registry entry shadow the user's
 * entries of the same plugin id. Inside a tools directory, entries are sorted by name.
 *
 * Problems are records, never throws: `errors` (coded, see records.ts), `metadata` (`.md`/`.json`
 * in tool dirs, never modules) and `ignored` (stray files). Providers run concurrently, each into
 * its own sink, and results are concatenated in provider order, so the output is deterministic.
 * Duplicate paths are left in: the loader dedupes by real path and reports name conflicts.
 *
 * Trust. Whether the project may bring code is decided once, before any provider runs and so
 * before any project file is read (core/trust.ts: the `projectTrust` option, else the user's
 * record). Untrusted, every project-level source is left out unread and listed in `untrusted`
 * (untrusted.ts); user-level sources and configured paths are the same either way.
 */
import path from "node:path";
import { errorMessage } from "../core/errors.js";
import { projectFolder, projectRegistryFile, resolveRoots, xcshPaths } from "../core/paths.js";
import { decideProjectTrustOf, trustCommand, trustWorldOf } from "../core/trust.js";
import { realPathOrNearest } from "../core/contain.js";
import type { DiscoverCustomToolsOptions } from "../core/host-options.js";
import { discoveryError } from "./records.js";
import type { DiscoveryContext, DiscoverySink, SkippedProjectSource, ToolDiscoveryResult } from "./types.js";

import { selectProviders } from "./select.js";
export { selectProviders };
export type { IgnoredToolFile, SkippedProjectSource, ToolDiscoveryResult, ToolMetadataFile, UntrustedProjectReport } from "./types.js";
export { DISCOVERY_ERROR_CODES, type DiscoveryErrorCode } from "./records.js";

/**
 * What discovery takes from the runtime lock's bytes `text` (providers/npm.ts): the boot index's
 * refresh compares two (boot/views.ts). Loads the providers, as a scan does.
 */
export async function runtimeLockReading(text: string, file: string): Promise<string> {
  return (await import("./providers/npm.js")).runtimeLockReading(text, file);
}

/** Options of `discoverToolPaths`: the roots to read from, which providers to run, the project's trust. */
export type DiscoverToolPathsOptions = Pick<DiscoverCustomToolsOptions, "home" | "xcshHome" | "env" | "providers" | "disabledProviders" | "projectTrust">;

/** One provider's findings. */
type Part = Omit<ToolDiscoveryResult, "untrusted"> & { skipped: SkippedProjectSource[] };

function collectingSink(result: Part): DiscoverySink {
  return {
    addPath: (p, source) => result.paths.push({ path: p, source }),
    addError: (error) => result.errors.push(error),
    addMetadata: (file) => result.metadata.push(file),
    addIgnored: (file) => result.ignored.push(file),
    addSkipped: (skipped) => result.skipped.push(skipped),
  };
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
  const paths = xcshPaths(roots);
  const cwdDir = path.resolve(cwd);
  // Trust is about the project root the host would use (it reads that root's registry), which
  // covers `cwd` below it (core/trust.ts).
  const projectDir = projectFolder(cwdDir, roots);
  const projectTrusted = await decideProjectTrustOf(cwdDir, projectDir, options.projectTrust, trustWorldOf(roots));
  const projectRegistry = projectRegistryFile(cwdDir, roots);
  const ctx: DiscoveryContext = { cwd: cwdDir, home: roots.home, paths, configuredPaths, projectTrusted, ...(projectRegistry ? { projectRegistry } : {}) };
  const parts = await Promise.all(
    selectProviders(options).map(async (id) => {
      const provider = TOOL_PROVIDERS[id];
      const part: Part = { paths: [], errors: [], metadata: [], ignored: [], skipped: [] };
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
  const result: ToolDiscoveryResult = { paths: parts.flatMap((p) => p.paths), errors: parts.flatMap((p) => p.errors), metadata: parts.flatMap((p) => p.metadata), ignored: parts.flatMap((p) => p.ignored) };
  if (!projectTrusted) result.untrusted = { project: realPathOrNearest(projectDir), skipped: parts.flatMap((p) => p.skipped), trustCommand: trustCommand(projectDir) };
  return result;
}
