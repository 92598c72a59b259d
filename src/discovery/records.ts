/**
 * Error records of discovery (state files are read in state-file.ts, which needs the schema
 * checker; this file stays light because the boot path and the public API import it).
 */
import type { ToolLoadError, ToolSource } from "../core/contract.js";

/** Discovery error codes (public API; the table in docs/library-api.md). */
export const DISCOVERY_ERROR_CODES = [
  "ESTATE_FILE", // a state file is unreadable, not JSON, or has the wrong shape: ignored whole
  "ESTATE_ENTRY", // one entry of a state file has the wrong shape: only that entry is skipped
  "EPLUGIN_ID", // a marketplace plugin id is not `name@marketplace`
  "EPLUGIN_NOT_FOUND", // a registered plugin's folder (installPath, node_modules/<name>) is missing
  "EPLUGIN_MANIFEST", // a plugin's package.json is not JSON, or its `xcsh`/`pi` manifest is malformed
  "EUNKNOWN_FEATURE", // the lock or the overrides enable a feature the manifest does not declare
  "EENTRY_NOT_FOUND", // a manifest tools entry, a configured path or a symlinked tool does not exist
  "EENTRY_ESCAPE", // a manifest tools entry leaves its package (`../`, absolute, symlink out)
  "ENOT_A_MODULE", // an explicit entry is not a tool module (`.md`, `.json`, `.sh`, empty folder)
  "ETOOLS_DIR", // a tools directory exists but cannot be listed (a file, no permission)
  "EPROVIDER", // a provider failed unexpectedly (a bug of ours): its source is skipped
  "EPATH_OUTSIDE", // a path read back from a state file is outside the folder its kind lives in: not read
  "ESEED_UNREADABLE", // a plugin seed (XCSH_PLUGIN_SEED_DIR) or its xcsh-seed.json cannot be read: its plugins are not loaded
  "ESEED_INVALID", // a seed's xcsh-seed.json is not JSON or has the wrong shape: its plugins are not loaded
  "ESEED_FORMAT", // a seed written by a newer xcsh-tools: its plugins are not loaded
  "ESEED_INCOMPLETE", // a plugin a seed lists is missing from it or at another version: that plugin is not loaded
] as const;
export type DiscoveryErrorCode = (typeof DISCOVERY_ERROR_CODES)[number];

/** Build an error record. */
export function discoveryError(code: DiscoveryErrorCode, path: string, error: string, source: ToolSource): ToolLoadError {
  return { path, code, error, source };
}
