/**
 * A test's own process reads no machine policy (vitest.config.ts `setupFiles`,
 * test/helpers/no-managed-policy.ts): this file imports nothing that sets the seam itself, so
 * only the setup file can make it pass. A machine with /etc/xcsh/managed-settings.json must run
 * the suite as one without.
 */
import { describe, expect, it } from "vitest";
import { loadManagedPolicy, managedPolicyFile } from "../../src/core/policy.js";

describe("in-process tests and the organization policy", () => {
  it("read a policy file that does not exist, not the platform's", () => {
    for (const platform of ["linux", "darwin", "win32"] as const) {
      expect(managedPolicyFile(platform)).not.toBe(platformFile(platform));
    }
    const loaded = loadManagedPolicy();
    expect(loaded.state).toBe("none");
    expect(loaded.file).toMatch(/xcsh-tools-no-managed-policy-[0-9a-f]{16}/);
  });
});

function platformFile(platform: "linux" | "darwin" | "win32"): string {
  return { linux: "/etc/xcsh/managed-settings.json", darwin: "/Library/Application Support/xcsh/managed-settings.json", win32: "C:\\Program Files\\xcsh\\managed-settings.json" }[platform];
}
