/** A team project of a test world, as a teammate's clone has it. */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { loadRegistryOptions } from "../../src/plugins/npmrc.js";
import type { NpmClientOptions } from "../../src/plugins/npm-client.js";
import type { TeamWorld } from "../../src/teamset/index.js";
import { marketplaceCtx } from "./marketplace-fixtures.js";
import { runCli } from "./run-cli.js";
import { writeTrustRecord, type TmpWorld } from "./tmp-home.js";

/** `<w.root>/project` declaring `declared` (xcsh-team.json, an empty `.xcsh/`), trusted by `w`'s user; its root. */
export async function trustedTeamProject(w: TmpWorld, declared: Record<string, unknown>): Promise<string> {
  const root = path.join(w.root, "project");
  await w.write(path.join(root, "xcsh-team.json"), { version: 1, plugins: declared });
  await w.write(path.join(root, ".xcsh", ".keep"), "");
  await writeTrustRecord(w.xcshHome, [root]);
  return root;
}

/**
 * A teammate locks `declared` (`install --yes` in A's trusted project) and commits; B clones:
 * B's trusted project with the same declaration and A's lock. B's root.
 */
export async function lockedByAClonedByB(a: TmpWorld, b: TmpWorld, declared: Record<string, unknown>): Promise<string> {
  const rootA = await trustedTeamProject(a, declared);
  const locked = await runCli(["install", "--yes"], { cwd: rootA, home: a.home, timeoutMs: 120_000 });
  if (locked.code !== 0) throw new Error(`A's install --yes failed (${locked.code}): ${locked.stderr}`);
  const rootB = await trustedTeamProject(b, declared);
  await writeFile(path.join(rootB, "xcsh-team.lock.json"), await readFile(path.join(rootA, "xcsh-team.lock.json"), "utf8"));
  return rootB;
}

/** The npm client options `w`'s user has (their .npmrc), scripts off: what a restore in `w` fetches with. */
export async function npmClientOf(w: TmpWorld): Promise<NpmClientOptions> {
  const registry = (await loadRegistryOptions({ home: w.home, env: {}, pluginsDir: path.join(w.xcshHome, "plugins") })).options;
  return { registry, home: w.home, allowScripts: false };
}

/** The team world of `w` at `root` for an in-process restore, executables approved. */
export async function teamWorldOf(w: TmpWorld, root: string): Promise<TeamWorld> {
  return { ctx: marketplaceCtx(w, { cwd: root, approveExecutables: async () => undefined }), npm: await npmClientOf(w) };
}
