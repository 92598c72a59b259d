/**
 * Vitest setup file (vitest.config.ts `setupFiles`): every test file's process reads the
 * organization policy from a file that does not exist, not from the machine's
 * /etc/xcsh/managed-settings.json, so a machine with a policy runs the suite as one without.
 * It sets the in-process seam of src/core/policy.ts (`MANAGED_POLICY_SEAM`), as the CLI's
 * preload does for spawned runs (run-cli.ts `noManagedPolicy`). A test that needs a policy, or
 * the platform's place itself, goes through `withManagedPolicy`, which puts this default back.
 */
import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";

const SEAM = Symbol.for("xcsh-tools.managed-policy-file");
const seam = globalThis as Record<symbol, unknown>;

/** A policy file no one creates: a folder of random name under the temp folder, never made. */
export const NO_MANAGED_POLICY = path.join(os.tmpdir(), `xcsh-tools-no-managed-policy-${randomBytes(8).toString("hex")}`, "managed-settings.json");

seam[SEAM] = NO_MANAGED_POLICY;

/** Run `fn` with the policy read from `file` (`undefined`: the platform's own place), then back to none. */
export async function withManagedPolicy<T>(file: string | undefined, fn: () => T | Promise<T>): Promise<T> {
  if (file === undefined) delete seam[SEAM];
  else seam[SEAM] = file;
  try {
    return await fn();
  } finally {
    seam[SEAM] = NO_MANAGED_POLICY;
  }
}
