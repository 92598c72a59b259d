/**
 * The shapes discovery works with. A provider is one tool source (docs/library-api.md): it looks at the
 * disk for one `DiscoveryContext` and reports what it found into a `DiscoverySink` — paths to
 * hand to the loader, metadata files, ignored files and error records. Providers never import
 * plugin code and never throw on bad input: every problem becomes a record.
 */
import type { XcshPaths } from "../core/paths.js";
import type { ProviderId } from "../core/host-options.js";
import type { SkippedProjectSource, ToolLoadError, ToolPathWithSource, ToolSource, UntrustedProjectReport } from "../core/contract.js";

export type { SkippedProjectSource, UntrustedProjectReport };

/** A `.md`/`.json` file found in a tools directory: described, never imported (docs/library-api.md). */
export interface ToolMetadataFile {
  path: string;
  source: ToolSource;
  kind: "md" | "json";
}

/** A file in a tools directory that is neither a tool module nor metadata (README.txt, x.sh…). */
export interface IgnoredToolFile {
  path: string;
  source: ToolSource;
  /** Why it was not handed to the loader, in words. */
  reason: string;
}

/** What `discoverToolPaths` returns. Paths are in load order; every path has a source. */
export interface ToolDiscoveryResult {
  paths: (ToolPathWithSource & { source: ToolSource })[];
  errors: ToolLoadError[];
  metadata: ToolMetadataFile[];
  ignored: IgnoredToolFile[];
  /**
   * Present when the project was not trusted: its project-level sources, left out unread. Not an
   * error (nothing failed); `xcsh-tools tools` shows them as "not loaded: project not trusted".
   */
  untrusted?: UntrustedProjectReport;
}

/** Everything a provider may look at: injected, never read from the process. */
export interface DiscoveryContext {
  /** Absolute project folder. */
  cwd: string;
  /**
   * The project's marketplace registry, found by the host's walk-up from `cwd`
   * (core/paths.ts `projectRegistryFile`); undefined outside any project.
   */
  projectRegistry?: string;
  /** The user's home (for `~`, `~/.claude`, `~/.codex`). */
  home: string;
  /** Paths of the xcsh root (`~/.xcsh` by default). */
  paths: XcshPaths;
  /** The `configuredPaths` argument, as given. */
  configuredPaths: readonly string[];
  /**
   * Whether the project (the project root found from `cwd`, which covers `cwd`) may bring code, decided once before any provider runs. When
   * false, providers read no project-level file or folder; they report what is there with
   * `addSkipped` (see `reportSkipped`).
   */
  projectTrusted: boolean;
}

/** Collects one provider's findings. */
export interface DiscoverySink {
  addPath(path: string, source: ToolSource): void;
  addError(error: ToolLoadError): void;
  addMetadata(file: ToolMetadataFile): void;
  addIgnored(file: IgnoredToolFile): void;
  /** A project-level source left out because the project is not trusted. */
  addSkipped(skipped: SkippedProjectSource): void;
}

/** One tool source. `discover` reports project-level findings before user-level ones. */
export interface ToolProvider {
  id: ProviderId;
  /** Human name, shown as `source.providerName`. */
  name: string;
  discover(ctx: DiscoveryContext, sink: DiscoverySink): Promise<void>;
}
