/**
 * Helpers of the plugin seed tests (test/e2e/seed.test.ts, ci-recipe.test.ts): a seed is
 * read-only by design, so a temp folder holding one is made writable again before it is
 * removed or edited; and the coded error of a `--json` refusal.
 */
import { chmod, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import type { ProcessResult } from "./run-cli.js";

/** Undo read-only modes under `dir` (folders 0755, files 0644); a missing `dir` is fine. */
export async function makeWritable(dir: string): Promise<void> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) return;
  await chmod(dir, info.isDirectory() ? 0o755 : 0o644);
  if (info.isDirectory()) for (const name of await readdir(dir)) await makeWritable(path.join(dir, name)).catch(() => undefined);
}

/** The coded error a `--json` command printed, after checking it failed. */
export function refusal(r: ProcessResult): { code: string; message: string; file?: string; path?: string; hint?: string } {
  expect(r.code, `${r.stdout}\n${r.stderr}`).not.toBe(0);
  return r.json().error;
}
