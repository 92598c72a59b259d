/**
 * The restore's side of the stamp (stamp.ts): the input digests taken before the set is read, and
 * the stamp written once the restore's transaction committed, under its lock, so the outputs'
 * identities are those of the committed files and no other command changed them in between.
 */
import { readFileSync, statSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { writeFileAtomic } from "../core/atomic-fs.js";
import { realPathOrNearest } from "../core/contain.js";
import { teamStampFile, xcshPaths, type TeamPaths, type XcshRoots } from "../core/paths.js";
import { trustWorldOf } from "../core/trust.js";
import { fileDigest, identityOf, inputDigest, inputFiles, readInputDigests, stampText, STAMP_VERSION } from "./stamp.js";

/** What the restore learns for its stamp as it goes (filled in while staging). */
export interface StampFacts {
  root: string;
  paths: TeamPaths;
  roots: XcshRoots;
  /** `readStampInputs` before the set was read; `undefined`: no stamp (the next `install` runs the engine). */
  inputs: string[] | undefined;
  plugins: number;
  /** npm plugins of the set, name → locked version. */
  npm: Record<string, string>;
  /** Every file and folder the restored set relies on. */
  outputs: string[];
  /** The lock's bytes after the restore (what it wrote, else what it read). */
  lockText?: string;
  frozenOk?: boolean;
}

/** The input files' digests now, or `undefined` when one cannot be read (the engine then says why). */
export function readStampInputs(paths: TeamPaths): string[] | undefined {
  try {
    return readInputDigests(paths);
  } catch {
    return undefined;
  }
}

/** `world` whose commit step (under the mutation's lock, after the commit) writes the stamp. */
export function withStampAtCommit<W extends { onStep?: (step: string) => void | Promise<void> }>(world: W, facts: StampFacts): W {
  return {
    ...world,
    onStep: async (step: string) => {
      await world.onStep?.(step);
      if (step === "mutation:committed") await writeRestoreStamp(facts);
    },
  };
}

/**
 * Write the stamp of `facts`. A stamp that cannot be written is removed instead: one left from an
 * earlier restore must not outlive the state it described (its outputs changed, so it would not
 * match anyway; removing it keeps that from resting on mtimes alone). Never fails the restore.
 */
async function writeRestoreStamp(facts: StampFacts): Promise<void> {
  const ours = xcshPaths(facts.roots).ours;
  const real = realPathOrNearest(facts.root);
  const file = teamStampFile(ours, real);
  try {
    if (facts.inputs === undefined || facts.lockText === undefined) throw new Error("no inputs");
    const digests = [...facts.inputs];
    digests[inputFiles(facts.paths).indexOf(facts.paths.lock)] = fileDigest(facts.lockText);
    const text = stampText({
      version: STAMP_VERSION,
      root: real,
      inputs: inputDigest(facts.paths, digests),
      plugins: facts.plugins,
      frozenOk: facts.frozenOk === true,
      npm: facts.npm,
      trust: identityOf(trustWorldOf(facts.roots).trustFile),
      outputs: [...new Set([...facts.outputs, ...gitIndexOf(facts.root)])].map(identityOf),
    });
    await mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, text, ours);
  } catch {
    await rm(file, { force: true }).catch(() => undefined);
  }
}

/**
 * The index of the git repository holding `root`, if any: what git tracks is an input of the
 * restore's `ETEAM_GENERATED_TRACKED` check, so a `git add` of a generated file (which rewrites
 * the index) sends the next `install` to the engine. Found as git finds it, by walking up to a
 * `.git` folder, or a `.git` file (worktree, submodule) naming its folder with `gitdir:`. Only
 * stat and one small read: no git process. The index is only stat'ed by the fast path.
 */
function gitIndexOf(root: string): string[] {
  for (let dir = path.resolve(root); ; dir = path.dirname(dir)) {
    const marker = path.join(dir, ".git");
    try {
      const found = statSync(marker);
      if (found.isDirectory()) return [path.join(marker, "index")];
      // A FIFO or a huge file in a cloned repository must not hang or fill the read.
      if (!found.isFile() || found.size > 4096) return [];
      const gitdir = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(marker, "utf8").slice(0, 4096))?.[1];
      return gitdir ? [path.join(path.resolve(dir, gitdir), "index")] : [];
    } catch {
      // no marker here: go on up
    }
    if (path.dirname(dir) === dir) return [];
  }
}
