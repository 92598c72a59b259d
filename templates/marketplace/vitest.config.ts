import { defineConfig } from "vitest/config";

// The first test of a file loads its tool as the host does (on Node 20 that transpiles it):
// on a busy machine that can outlast vitest's default of 5 seconds.
export default defineConfig({ test: { testTimeout: 30_000 } });
