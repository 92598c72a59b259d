import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A hang guard, not a speed target (speed lives in bench/): CLI tests spawn several Node
    // processes each (the command, its validation child, npm's installer), and on a 2-core
    // machine running other suites at once 30 s was reached by healthy tests.
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks",
    // dist/ built once before any file (test/helpers/global-dist.ts), then one Verdaccio for the
    // whole run (test/helpers/global-registry.ts); files publish their own names.
    globalSetup: ["test/helpers/global-dist.ts", "test/helpers/global-registry.ts"],
    // Tests must never see the real HOME: each test makes its own (test/helpers/tmp-home.ts),
    // and this points HOME away from it for anything that forgets to.
    env: { HOME: "/nonexistent-home-for-tests", XCSH_HOME: "", NO_COLOR: "1" },
  },
});
