/**
 * Vitest global setup: build `dist/` once, before any test file starts, and tell the test files
 * so (`XCSH_TOOLS_TEST_DIST_BUILT=1` in the environment the workers inherit). The files' own
 * `buildDist()` calls then return at once: the sources do not change during a run, and a
 * rebuild in one file while another file's CLI runs from `dist/` would rewrite the files under it.
 * After `npm ci` (whose prepare script built `dist/` from this checkout) the build finds dist/
 * built from the same inputs and skips itself.
 */
import { buildDist } from "./build-dist.js";

export async function setup(): Promise<void> {
  await buildDist();
  process.env.XCSH_TOOLS_TEST_DIST_BUILT = "1";
}
