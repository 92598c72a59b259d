/**
 * The no-op restore (docs/design/team-sets.md (d) step 0): `xcsh-tools install` in a project whose
 * set is already restored answers from the restore stamp (stamp.ts), with no commander and no
 * engine loaded. It finds the root and decides trust as the CLI does (core/paths.ts, core/trust.ts),
 * hashes the input files, reads the stamp and stats the outputs it names. Every one equal: up to
 * date. Anything else, or anything that cannot be read, answers `undefined` and the command goes
 * to the engine: a wrong "up to date" would leave a teammate on a set the repository no longer
 * declares, a needless engine run only costs time.
 *
 * On the CLI's hot path: node built-ins and core modules that import only built-ins (the CLI's
 * program chunk has loaded those already; test/unit/teamset-fast.test.ts walks the imports).
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { realPathOrNearest } from "../core/contain.js";
import { projectRootOf, resolveRoots, teamPaths, teamStampFile, xcshPaths } from "../core/paths.js";
import { decideProjectTrustOf, trustWorldOf } from "../core/trust.js";
import { inputDigest, readInputDigests, readStamp, sameIdentity } from "./stamp.js";

/** What the CLI knows before any command runs: where it was started and the global flags. */
export interface FastRestoreInput {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `--cwd`, `--home` as given (resolved against `cwd`, as cli/context.ts resolves them). */
  flags: { cwd?: string; home?: string; frozen?: boolean };
}

/** The answer of an up-to-date project: how many plugins its set makes load. */
export interface FastRestoreResult {
  plugins: number;
}

/**
 * `{plugins}` when the project's restore has nothing to do, else `undefined` (the engine decides,
 * and says why). `--frozen` is answered only when the stamp recorded that the lock it restored was
 * canonical and satisfied the declaration: the input digest then proves it still is.
 */
export function fastRestore(input: FastRestoreInput): FastRestoreResult | undefined {
  try {
    return check(input);
  } catch {
    return undefined;
  }
}

function check({ cwd: started, env, flags }: FastRestoreInput): FastRestoreResult | undefined {
  const cwd = flags.cwd ? path.resolve(started, flags.cwd) : started;
  // The engine refuses a --cwd that is no folder (EUSAGE): never answer for the folder above it.
  if (!statSync(cwd).isDirectory()) return undefined;
  const roots = resolveRoots({ env, ...(env.HOME ? { home: env.HOME } : {}), ...(flags.home ? { xcshHome: path.resolve(started, flags.home) } : {}) });
  // Seeds (XCSH_PLUGIN_SEED_DIR) are re-checked by the engine, which needs no network for them.
  if (roots.seedDirs !== undefined) return undefined;
  const root = projectRootOf(cwd, roots);
  if (root === undefined) return undefined;
  const world = trustWorldOf(roots);
  if (decideProjectTrustOf(cwd, root, undefined, world) !== true) return undefined;
  const ours = xcshPaths(roots).ours;
  if (pendingWork(ours)) return undefined;
  const real = realPathOrNearest(root);
  const stamp = readStamp(teamStampFile(ours, real));
  if (stamp === undefined || stamp.root !== real || (flags.frozen && !stamp.frozenOk)) return undefined;
  if (stamp.trust.file !== world.trustFile || !sameIdentity(stamp.trust)) return undefined;
  const paths = teamPaths(root, roots.configDirName);
  if (inputDigest(paths, readInputDigests(paths)) !== stamp.inputs) return undefined;
  if (!stamp.outputs.every(sameIdentity)) return undefined;
  return { plugins: stamp.plugins };
}

/**
 * Whether a command left work for the next one: a journal to recover (core/journal.ts
 * `journalRoot`) or a committed change whose boot index refresh has not run (plugins/mutation.ts
 * `bootPendingFile`; the stamp is written at the commit, just before that refresh). The engine's
 * mutation finishes either; the fast path would skip it. Named here, not imported: those modules
 * are not on the CLI's hot path.
 */
export function pendingWork(ours: string): boolean {
  if (statSync(path.join(ours, "boot-refresh-pending"), { throwIfNoEntry: false }) !== undefined) return true;
  try {
    return readdirSync(path.join(ours, "journal")).length > 0;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}
