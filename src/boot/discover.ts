/**
 * The host's boot path: `discoverWithBootIndex` answers a discovery question from a fresh view
 * (one read of the views file, one `stat` per input) or scans and rewrites the view. Only what
 * that path needs is imported here; the module records, checks and refreshes live elsewhere.
 */
import { errorMessage } from "../core/errors.js";
import type { ToolLoadError, ToolSource, UntrustedProjectReport } from "../core/contract.js";
import type { BootView, ViewKey } from "./format.js";
import { findView, loadIndex, upsertView, writeIndex } from "./store.js";
import { discovery, scanView, viewChange, viewPathOutside } from "./views.js";
import { decideTrust, keyOf, worldOf, type BootIndexOptions, type World } from "./world.js";

/** A discovery answer: the loader's input and the discovery errors. */
export interface BootDiscovery {
  paths: { path: string; source: ToolSource }[];
  errors: ToolLoadError[];
  /** When the project was not trusted: what it had that was left out. */
  untrusted?: UntrustedProjectReport;
  /** Whether the answer came from a fresh index, and if not why. */
  index: { fresh: boolean; reason: string; written: boolean };
  /** From a fresh index: the view's inputs, each just found unchanged (lazy tools reuse the entries' signatures). */
  inputs?: BootView["inputs"];
  /** From a fresh index, when asked (`regularFiles`): the inputs just found to be regular files, not links. */
  regular?: ReadonlySet<string>;
}

/**
 * The discovery answer for a host boot: from the index when it is fresh, else from a scan that
 * then rewrites the index. Never throws because of the index (any problem → a plain scan).
 * `regularFiles`: also answer `regular` from a fresh index (the lazy boot's loader uses it).
 */
export async function discoverWithBootIndex(configuredPaths: readonly string[], cwd: string, options: BootIndexOptions = {}, regularFiles = false): Promise<BootDiscovery> {
  let world: World;
  let key: ViewKey;
  let loaded: Awaited<ReturnType<typeof loadIndex>>;
  let reason: string;
  // Decided once: the scans below and any fallback get the decision, never the host's question again.
  let trusted = false;
  try {
    world = worldOf(options);
    const decided = decideTrust(world, cwd, options.projectTrust);
    trusted = typeof decided === "boolean" ? decided : await decided;
    key = keyOf(world, configuredPaths, cwd, options, trusted);
    loaded = await loadIndex(world, false);
    const view = findView(loaded.index, key);
    if (view) {
      const regular = regularFiles ? new Set<string>() : undefined;
      const change = await viewChange(view, regular);
      // The index was parsed for this call alone: its arrays are the caller's, no copy needed.
      const outside = change === undefined ? viewPathOutside(world, key, view) : undefined;
      if (change === undefined && outside === undefined) return { paths: view.paths, errors: view.errors, ...(view.untrusted ? { untrusted: view.untrusted } : {}), index: { fresh: true, reason: "fresh", written: false }, inputs: view.inputs, ...(regular ? { regular } : {}) };
      reason = change ?? outside!;
    } else reason = loaded.reason ?? "no entry for this project folder and configured paths";
  } catch (error) {
    const result = await (await discovery()).discoverToolPaths(configuredPaths, cwd, { ...options, projectTrust: trusted });
    return { ...discoveryAnswer(result), index: { fresh: false, reason: `boot index unusable: ${errorMessage(error)}`, written: false } };
  }
  let written = false;
  try {
    const { view, consistent } = await scanView(world, key);
    if (consistent) {
      try {
        upsertView(loaded.index, view);
        await writeIndex(world, loaded.index, false);
        written = true;
      } catch {
        // A read-only root or a full disk: the host still boots, from the scan.
      }
    }
    return { ...discoveryAnswer(view), index: { fresh: false, reason, written } };
  } catch (error) {
    const result = await (await discovery()).discoverToolPaths(configuredPaths, cwd, { ...options, projectTrust: trusted });
    return { ...discoveryAnswer(result), index: { fresh: false, reason: `${reason}; rebuilding failed: ${errorMessage(error)}`, written } };
  }
}

function discoveryAnswer(result: Pick<BootView, "paths" | "errors" | "untrusted">): Omit<BootDiscovery, "index"> {
  return { paths: result.paths, errors: result.errors, ...(result.untrusted ? { untrusted: result.untrusted } : {}) };
}

