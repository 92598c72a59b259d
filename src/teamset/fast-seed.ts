/**
 * The seed-satisfied restore (docs/design/fleets.md "A restore the seeds satisfy"): `install` with
 * no spec on a machine whose seeds (XCSH_PLUGIN_SEED_DIR) hold every npm plugin of the project's
 * lock, at its version and integrity and with the files they were built with, fetches and installs
 * nothing; the restore engine (restore.ts) then only writes the host files. This does that same
 * work without loading the engine's modules (the resolver, the marketplace and plugins engines,
 * the consent scanner): the CLI's start-up is most of such a restore's cost (issue 43's target).
 *
 * It answers only the case it can answer exactly as the engine would, byte for byte in the files
 * and the report: a trusted project, nothing pending in our journal, a lock in canonical bytes that
 * satisfies the set and locks only npm plugins, every plugin of the set an npm plugin that is on
 * and that a seed provides as locked, no install record of the user's (so no team install to
 * remove or move), no organization policy file (the engine enforces it). Anything else, or any error, is `undefined`: the engine runs and says why (a
 * tampered seed is its `ESEED_INTEGRITY`, a seed that disagrees with the lock its
 * `ESEED_LOCK_MISMATCH`). A wrong fast answer would leave a machine on a set it did not verify; a
 * needless engine run only costs time.
 *
 * Verification is the engine's: `seededAsLocked` re-hashes each seeded plugin's folder against the
 * tree hash its seed recorded (no cache: measured, hashing is a small part of the cost, and a
 * cache keyed by file identities would trust mtimes a seed's owner can set). It also hands the
 * seed's module records to the boot index refresh after the commit (boot/prevalidated.ts), so the
 * refresh imports no seeded module whose bytes and runtime are the recorded ones.
 *
 * Consent is the engine's too: a seeded plugin is used in place, so the engine asks nothing for it
 * (the image maker consented when `seed` installed it) and neither does this.
 */
import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { projectFolder, resolveRoots, teamPaths, xcshPaths } from "../core/paths.js";
import { managedPolicyFile } from "../core/policy.js";
import { decideProjectTrustOf, trustWorldOf } from "../core/trust.js";
import { readTeamLock } from "../manifest/team-lock.js";
import { pluginsPaths, runMutation, type MutationWorld } from "../plugins/mutation.js";
import { pendingWork, type FastRestoreInput } from "./fast.js";
import { renderHostFiles } from "./host-files.js";
import { existingRegistry, stageHostFiles, trackedGeneratedFiles } from "./host-write.js";
import { loadTeamSet } from "./load.js";
import { isCanonicalLock } from "./lock-format.js";
import type { RestoreReport } from "./restore.js";
import { satisfies } from "./satisfy.js";
import { seededAsLocked, type SeededAsLocked } from "./seed.js";
import { withStampAtCommit } from "./stamp-write.js";

/** What the CLI knows before any command runs, and where warnings go (the engine's world's channel). */
export interface SeededRestoreInput extends FastRestoreInput {
  /** `--registry` as given: a settings layer, checked as the CLI checks it. */
  flags: FastRestoreInput["flags"] & { registry?: unknown };
  onWarning?: (message: string) => void;
}

/** The engine's report of a restore the seeds satisfy, having written what it writes; `undefined`: the engine decides. */
export async function seededRestore(input: SeededRestoreInput): Promise<{ root: string; report: RestoreReport } | undefined> {
  try {
    return await restoreFromSeeds(input);
  } catch {
    return undefined;
  }
}

async function restoreFromSeeds({ cwd: started, env, flags, onWarning }: SeededRestoreInput): Promise<{ root: string; report: RestoreReport } | undefined> {
  const cwd = flags.cwd ? path.resolve(started, flags.cwd) : started;
  if (!statSync(cwd).isDirectory()) return undefined;
  const roots = resolveRoots({ env, ...(env.HOME ? { home: env.HOME } : {}), ...(flags.home ? { xcshHome: path.resolve(started, flags.home) } : {}) });
  const seedDirs = roots.seedDirs;
  if (!seedDirs || seedDirs.length === 0) return undefined;
  // The folder the engine restores (cli/team-restore.ts `teamRootOf`): the project root found from cwd, else cwd.
  const root = projectFolder(cwd, roots);
  if (decideProjectTrustOf(cwd, root, undefined, trustWorldOf(roots)) !== true) return undefined;
  // Our settings, as the CLI loads them (cli/context.ts): a file the engine would refuse (ECONFIG), or one it would warn about, is its to say.
  const { loadSettings } = await import("../core/config.js");
  const loaded = await loadSettings({ cwd, xcshHome: roots.xcshHome, home: roots.home, env, projectTrusted: () => Promise.resolve(true), ...(typeof flags.registry === "string" ? { flags: { registry: flags.registry } } : {}) });
  if (loaded.warnings.length > 0) return undefined;
  const { settings } = loaded;
  // An organization policy: the engine enforces it (sources, forbidden plugins) and says which rule refused what.
  if (statSync(managedPolicyFile(), { throwIfNoEntry: false }) !== undefined) return undefined;
  const plugins = pluginsPaths(roots);
  // An install record: the plugins engine may remove or move a team install of it. Pending work: the engine's recovery.
  if (statSync(plugins.record, { throwIfNoEntry: false }) !== undefined || pendingWork(plugins.ours)) return undefined;
  const paths = teamPaths(root, roots.configDirName);
  const set = loadTeamSet(root, roots.configDirName ? { configDirName: roots.configDirName } : {});
  if (!set) return undefined;
  const lockText = await readFile(paths.lock, "utf8");
  const lock = readTeamLock(paths.lock);
  if (!lock) return undefined;
  // The lock as a frozen restore wants it (so --frozen passes and no restore rewrites it), and nothing to resolve or fetch.
  if (!isCanonicalLock(lockText, paths.lock) || satisfies(set, lock).some((entry) => entry.state !== "ok")) return undefined;
  if (Object.keys(lock.marketplaces).length > 0 || Object.keys(lock.marketplacePlugins).length > 0) return undefined;
  const npmKeys = [...set.plugins.values()].map((p) => (p.kind === "npm" && p.enabled ? p.key : undefined));
  // An empty set, or one with anything but npm plugins that are on: the engine's (its report then differs in shape).
  if (npmKeys.length === 0 || npmKeys.includes(undefined) || Object.keys(lock.npm).some((name) => !set.plugins.has(name))) return undefined;
  // The engine's ETEAM_GENERATED_TRACKED check (git, read-only), started before the seeds are
  // checked so that its children run while they are read and hashed (started no earlier: a set
  // the path declines above costs no child the engine then starts again); anything tracked, or
  // any failure, is the engine's.
  const tracked = trackedGeneratedFiles(root, paths, { env, timeoutMs: settings.timeouts.gitMs }).catch(() => undefined);
  const seeded = new Map<string, SeededAsLocked>();
  for (const name of npmKeys as string[]) {
    const locked = lock.npm[name];
    const inSeed = locked ? await seededAsLocked(seedDirs, name, locked, paths.lock) : undefined;
    if (!inSeed) return undefined;
    seeded.set(name, inSeed);
  }
  if ((await tracked)?.length !== 0) return undefined;
  const registry = existingRegistry(paths.installedPlugins);
  const host = renderHostFiles({ set, pluginCache: xcshPaths(roots).pluginCache, installs: new Map(), npmFeatures: new Map([...seeded].map(([name, s]) => [name, s.features])), ...(registry ? { existingRegistry: registry } : {}) });
  if (host.offFolders.length > 0) return undefined;
  const written: string[] = [];
  // As the engine's commit: no stamp (inputs undefined) while seeds are used, an earlier one removed.
  const world: MutationWorld = withStampAtCommit<MutationWorld>({ roots, env, cwd: root, lockWaitMs: settings.lockWaitMs, ...(onWarning ? { onWarning } : {}) }, { root, paths, roots, inputs: undefined, plugins: 0, npm: {}, outputs: [] });
  await runMutation(world, "restore the project's plugin set", async (m) => {
    await stageHostFiles(m, roots, paths, host, written);
    await m.step("teamset:staged");
  });
  const report: RestoreReport = {
    dryRun: false,
    written,
    lockChanged: false,
    lockMerged: false,
    installed: [],
    fromSeeds: [...seeded].map(([name, s]) => `${name}@${lock.npm[name]!.version} (${s.dir})`),
    npmInstalled: [],
    removed: [],
    versionMoves: [],
    resolved: [],
    undeclared: host.undeclared,
    wouldRun: [],
    secretsNeeded: [],
    optOuts: [],
  };
  return { root, report };
}
