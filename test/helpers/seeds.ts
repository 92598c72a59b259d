/**
 * Helpers of the plugin seed tests (test/e2e/seed.test.ts, ci-recipe.test.ts): a seed is
 * read-only by design, so a temp folder holding one is made writable again before it is
 * removed or edited; and the coded error of a `--json` refusal.
 */
import { chmod, cp, readdir, stat } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { runCli, type ProcessResult } from "./run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "./tmp-home.js";

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

/**
 * A clean machine of a seed test: its own HOME (npm pointed at `registryUrl`), the committed team
 * files of the project at `project` (xcsh-team.json and its lock), trusted unless told; added to
 * `worlds` for `removeWorlds`.
 */
export async function teamMachine(project: string, registryUrl: string, worlds: TmpWorld[], prefix: string, trusted = true): Promise<TmpWorld> {
  const w = await makeTmpWorld(prefix);
  worlds.push(w);
  await writeUserNpmrc(w.home, registryUrl);
  for (const file of ["xcsh-team.json", "xcsh-team.lock.json"]) await cp(path.join(project, file), path.join(w.cwd, file));
  if (trusted) expect((await runCli(["trust"], { cwd: w.cwd, home: w.home })).code).toBe(0);
  return w;
}

/** Remove temp worlds that may hold read-only seeds. */
export async function removeWorlds(worlds: readonly (TmpWorld | undefined)[]): Promise<void> {
  for (const w of worlds) {
    if (!w) continue;
    await makeWritable(w.root);
    await w.cleanup();
  }
}

/**
 * The image build of a seed test: a world whose project declares `plugins` (name → spec) against
 * `registryUrl`, trusted, locked by `install --yes`, then seeded from that lock into `<root>/seed`.
 */
export async function seedImage(registryUrl: string, prefix: string, plugins: Record<string, string>): Promise<{ image: TmpWorld; seed: string }> {
  const image = await makeTmpWorld(prefix);
  await writeUserNpmrc(image.home, registryUrl);
  await image.write(path.join(image.cwd, "xcsh-team.json"), { version: 1, plugins: Object.fromEntries(Object.entries(plugins).map(([name, spec]) => [name, { spec }])) });
  const img = (args: string[]) => runCli(args, { cwd: image.cwd, home: image.home, timeoutMs: 180_000 });
  expect((await img(["trust"])).code).toBe(0);
  const locked = await img(["install", "--yes"]);
  expect(locked.code, locked.stderr).toBe(0);
  const seed = path.join(image.root, "seed");
  const built = await img(["seed", seed, "--from", ".", "--yes"]);
  expect(built.code, built.stderr).toBe(0);
  return { image, seed };
}
