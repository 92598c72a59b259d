import os from "node:os";
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
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core CI machine,
    // which then idles while each file waits on its CLI children, npm, git and Verdaccio. The files
    // are isolated (temp worlds, names of their own on the shared registry), so at least three
    // run at once; bigger machines keep the default.
    maxWorkers: Math.max(3, os.availableParallelism() - 1),
    // dist/ built once before any file (test/helpers/global-dist.ts), then one Verdaccio for the
    // whole run (test/helpers/global-registry.ts); files publish their own names.
    globalSetup: ["test/helpers/global-dist.ts", "test/helpers/global-registry.ts"],
    // Tests must never see the real HOME: each test makes its own (test/helpers/tmp-home.ts),
    // and this points HOME away from it for anything that forgets to.
    env: { HOME: "/nonexistent-home-for-tests", XCSH_HOME: "", NO_COLOR: "1" },
  },
});
