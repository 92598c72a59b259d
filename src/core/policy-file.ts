/**
 * Where the organization policy lives (core/policy.ts reads it), apart from its reader: the host's
 * boot, `tools` and the fast no-op `install` ask only whether the file exists, and load the reader
 * (TypeBox, the schema, the rules) when it does. A machine without a policy pays one `stat`.
 *
 * No environment variable, flag or setting moves the file, since a user could set those. Tests
 * reach it through `MANAGED_POLICY_SEAM`, a global symbol only code already running inside the
 * process can set (test/helpers/managed-policy-preload.mjs, imported with `node --import`).
 */
import { statSync } from "node:fs";
import path from "node:path";

/** The global symbol a test preload sets to a policy file path before main runs (never read from the environment). */
export const MANAGED_POLICY_SEAM = Symbol.for("xcsh-tools.managed-policy-file");

/** The managed policy file of this platform, as Claude Code places its own managed-settings.json. */
export function managedPolicyFile(platform: NodeJS.Platform = process.platform): string {
  const seam = (globalThis as Record<symbol, unknown>)[MANAGED_POLICY_SEAM];
  if (typeof seam === "string" && seam !== "") return seam;
  if (platform === "darwin") return "/Library/Application Support/xcsh/managed-settings.json";
  // Not %ProgramFiles%: an environment variable is the user's to set (Claude Code reads the fixed path too).
  if (platform === "win32") return path.win32.join("C:\\Program Files", "xcsh", "managed-settings.json");
  return "/etc/xcsh/managed-settings.json";
}

/**
 * Whether there may be a policy to read: false only when nothing is at the path. A `stat` that
 * fails otherwise (a folder on the way not readable) counts as present, so the reader reports
 * it (`EPOLICY_UNREADABLE`): never fails open.
 */
export function managedPolicyPresent(file: string = managedPolicyFile()): boolean {
  try {
    return statSync(file, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== "ENOENT" && code !== "ENOTDIR";
  }
}
