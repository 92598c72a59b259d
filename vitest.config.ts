import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One Verdaccio for the whole run (test/helpers/global-registry.ts); files publish their own names.
    globalSetup: ["test/helpers/global-registry.ts"],
    // Tests must never see the real HOME: each test makes its own (test/helpers/tmp-home.ts),
    // and this points HOME away from it for anything that forgets to.
    env: { HOME: "/nonexistent-home-for-tests", XCSH_HOME: "", NO_COLOR: "1" },
  },
});
