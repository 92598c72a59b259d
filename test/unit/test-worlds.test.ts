/**
 * The test worlds start as a new user's machine does: nothing trusted. A helper that trusted by
 * default let the README's walkthroughs pass while failing for a reader (issue 41); every test
 * that needs a trusted project now says so where it makes its world.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isProjectTrustedByUser, trustWorldOf } from "../../src/core/trust.js";
import { marketplaceCtx } from "../helpers/marketplace-fixtures.js";
import { makeTmpWorld } from "../helpers/tmp-home.js";
import { existsSync } from "node:fs";

describe("test worlds", () => {
  it("a default world trusts nothing and has no trust record; { trustProject: true } writes one naming the project", async () => {
    const plain = await makeTmpWorld();
    const trusted = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
    try {
      const roots = (w: typeof plain) => trustWorldOf({ home: w.home, xcshHome: w.xcshHome });
      expect(existsSync(path.join(plain.xcshHome, "plugins", ".xcsh-tools", "trusted-projects.json"))).toBe(false);
      expect(isProjectTrustedByUser(plain.cwd, roots(plain))).toBe(false);
      expect(isProjectTrustedByUser(trusted.cwd, roots(trusted))).toBe(true);
      // The marketplace engine's context answers from the world's record, not from the helper.
      expect([marketplaceCtx(plain).projectTrusted, marketplaceCtx(trusted).projectTrusted]).toEqual([false, true]);
    } finally {
      await Promise.all([plain.cleanup(), trusted.cleanup()]);
    }
  });
});
