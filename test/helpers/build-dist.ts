/**
 * Build `dist/` once for tests that spawn built code (validate's module checker, the CLI). Test
 * files run in parallel forks, so the build takes a lock folder and skips when another file
 * built in the last minute: two concurrent tsc runs writing one dist/ would race.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const LOCK = path.join(os.tmpdir(), `xcsh-tools-build-${Buffer.from(REPO).toString("hex").slice(-24)}.lock`);
const STAMP = path.join(REPO, "dist", ".test-build-stamp");

function freshStamp(): boolean {
  try {
    return Date.now() - statSync(STAMP).mtimeMs < 60_000;
  } catch {
    return false;
  }
}

/** Make sure dist/ holds a build of the current sources. */
export async function buildDist(): Promise<void> {
  // Built once for the whole run by the global setup (test/helpers/global-dist.ts).
  if (process.env.XCSH_TOOLS_TEST_DIST_BUILT === "1") return;
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      if (waited > 120_000) throw new Error(`build lock ${LOCK} held for 2 minutes`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (freshStamp()) return;
    try {
      execFileSync(process.execPath, [path.join(REPO, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], { cwd: REPO, stdio: "pipe" });
    } catch {
      // tsc emits despite type errors elsewhere in the tree (others work concurrently);
      // the tests then fail on behaviour, not on a missing file.
    }
    // As `npm run build` does: TypeBox, npm's libraries, the validation child and the CLI program
    // as one file each (scripts/bundle.mjs).
    execFileSync(process.execPath, [path.join(REPO, "scripts", "bundle.mjs")], { cwd: REPO, stdio: "pipe" });
    writeFileSync(STAMP, String(Date.now()));
  } finally {
    rmdirSync(LOCK);
  }
}
