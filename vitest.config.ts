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
    // Two files at once, on 2 cores as on 4: each file's own CLI processes leave a core idle while
    // they wait on the registry, git or the disk, and three at once made each file ~3.7x slower.
    // Safe because nothing rebuilds dist/ during a run (global-dist.ts, scripts/build.mjs's id).
    maxWorkers: 2,
    // dist/ built once before any file (test/helpers/global-dist.ts), then one Verdaccio for the
    // whole run (test/helpers/global-registry.ts); files publish their own names.
    globalSetup: ["test/helpers/global-dist.ts", "test/helpers/global-registry.ts"],
    // No organization policy in any test's own process unless the test sets one (the machine's
    // /etc/xcsh/managed-settings.json never changes a result); spawned CLIs: run-cli.ts.
    setupFiles: ["test/helpers/no-managed-policy.ts"],
    // Tests must never see the real HOME: each test makes its own (test/helpers/tmp-home.ts),
    // and this points HOME away from it for anything that forgets to.
    env: { HOME: "/nonexistent-home-for-tests", XCSH_HOME: "", NO_COLOR: "1" },
  },
});
