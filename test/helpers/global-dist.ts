/**
 * Vitest global setup: build `dist/` once, before any test file starts, and tell the test files
 * so (`XCSH_TOOLS_TEST_DIST_BUILT=1` in the environment the workers inherit). The files' own
 * `buildDist()` calls then return at once: the sources do not change during a run, and a
 * rebuild in one file while another file's CLI runs from `dist/` would rewrite the files under it.
 *
 * `.ci/run` sets `XCSH_TOOLS_TEST_DIST_FRESH=1` after `npm ci` has built `dist/` from the same
 * checkout (the prepare script), so CI does not build it a second time.
 */
import { buildDist } from "./build-dist.js";

export async function setup(): Promise<void> {
  if (process.env.XCSH_TOOLS_TEST_DIST_FRESH !== "1") await buildDist();
  process.env.XCSH_TOOLS_TEST_DIST_BUILT = "1";
}
