/**
 * Project-level sources of a project the user does not trust. Such a project is untrusted input:
 * its tools folders, marketplace installs and plugin overrides are left out, and not even read —
 * a hostile file cannot then steer a parser, a path or an import. What is left out is still
 * reported (`ToolDiscoveryResult.untrusted`), so `xcsh-tools tools` and hosts can say "not loaded:
 * project not trusted" rather than drop it silently. Presence is one `lstat`, which reads nothing
 * of the file or folder.
 */
import { lstatSync } from "node:fs";
import type { SkippedProjectSource, ToolSource } from "../core/contract.js";
import type { DiscoverySink } from "./types.js";

/** Report `file` as left out when something is there (a dangling link counts: someone put it there). */
export function reportSkipped(file: string, source: ToolSource, kind: SkippedProjectSource["kind"], sink: DiscoverySink): void {
  let present: boolean;
  try {
    present = lstatSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch {
    // ENOTDIR (`.xcsh` is a file) and the like: nothing of that kind is there.
    present = false;
  }
  if (present) sink.addSkipped({ path: file, source: { ...source, level: "project" }, kind });
}
