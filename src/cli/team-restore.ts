/**
 * The CLI's one way into the team-set engine (docs/design/team-sets.md (d)): the team world of a
 * command (the marketplace engine's context at the project root, npm's options, the consent
 * prompt) and `restoreProject`, the `npm ci` of plugins that `install` with no operand runs and
 * that every `--scope project` change runs after editing the declaration.
 */
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { isProjectTrustedByUser, trustWorldOf, untrustedProjectError } from "../core/trust.js";
import { projectFolder, statOrUndefined, teamPaths } from "../core/paths.js";
import type { RestoreOptions, RestoreReport, TeamEdit, TeamWorld } from "../teamset/index.js";
import { assertScopeAllowed } from "./project-scope.js";
import type { CommandContext } from "./context.js";
import { npmClient } from "./plugin-command.js";

/** What `install` with no operand (and a change that restores afterwards) accepts. */
export interface RestoreFlags {
  /** CI: the committed files must already describe the set (`ETEAM_FROZEN` otherwise). */
  frozen?: boolean;
  /** Accept what the set's plugins run without asking. */
  yes?: boolean;
  allowScripts?: boolean;
  /** Resolve, fetch and verify, print what would change and run; ask, write and run nothing. */
  dryRun?: boolean;
  /** No network: the seeds and the caches only (`EOFFLINE` listing what they lack). */
  offline?: boolean;
}

/**
 * The project root whose declared set `install` with no spec restores (the host's project folder:
 * the root found from cwd, else cwd itself), or `EUSAGE` when it has no xcsh-team.json and no
 * .claude/settings.json: only `stat`, so nothing of an untrusted project is read.
 */
export function teamRootOf(ctx: CommandContext): string {
  const root = projectFolder(ctx.cwd, ctx.roots);
  const paths = teamPaths(root, ctx.roots.configDirName);
  if (statOrUndefined(paths.declaration) === undefined && statOrUndefined(paths.claudeSettings) === undefined) {
    throw new XcshToolsError("EUSAGE", `install needs at least one spec: ${root} declares no plugin set (no xcsh-team.json, no .claude/settings.json)`, {
      hint: "Give a spec (xcsh-tools install @acme/xcsh-search), or declare the project's set: xcsh-tools install <spec> --scope project.",
      exitCode: 2,
    });
  }
  return root;
}

/** The project root when it declares a set (`update --scope project`, `outdated`), else undefined: `teamRootOf` without the error. */
export function declaredRootOf(ctx: CommandContext): string | undefined {
  try {
    return teamRootOf(ctx);
  } catch {
    return undefined;
  }
}

/** The team world of a command: marketplace context and npm options of this user, consent as the flags say. */
export async function teamWorldOf(ctx: CommandContext, flags: RestoreFlags = {}): Promise<TeamWorld> {
  const { marketplaceContext } = await import("./marketplace-list.js");
  const mctx = await marketplaceContext(ctx, { yes: Boolean(flags.yes) });
  const npm = await npmClient(ctx, { allowScripts: Boolean(flags.allowScripts) });
  return { ctx: mctx, npm };
}

/**
 * `ETEAM_GENERATED_TRACKED` when git tracks a file restore generates (design (b) `.xcsh/.gitignore`):
 * it holds paths of one machine, and a teammate's commit of it would undo this one's. Asked of git
 * read-only (`ls-files`); only a git work tree is checked. Nothing is changed in the repository:
 * the fix is the user's `git rm --cached`.
 */
async function assertGeneratedUntracked(root: string, world: TeamWorld, configDirName: string | undefined): Promise<void> {
  const { trackedGeneratedFiles } = await import("../teamset/host-write.js");
  const tracked = await trackedGeneratedFiles(root, teamPaths(root, configDirName), { env: world.ctx.env, timeoutMs: world.ctx.gitTimeoutMs });
  if (tracked.length === 0) return;
  const quoted = tracked.map((file) => (/^[\w./@-]+$/.test(file) ? file : `'${file.replaceAll("'", "'\\''")}'`));
  throw new XcshToolsError("ETEAM_GENERATED_TRACKED", `git tracks ${tracked.join(", ")}, which xcsh-tools generates for each machine from xcsh-team.json (a committed copy holds one machine's paths)`, {
    file: path.join(root, tracked[0]!),
    hint: `Stop tracking ${tracked.length > 1 ? "them (the files stay" : "it (the file stays"} on disk), commit, then run install again: git rm --cached ${quoted.join(" ")}`,
  });
}

/**
 * Restore the project's declared set on this machine and report it. Trust is asked (on a
 * terminal) or refused (`EUNTRUSTED_PROJECT`) before any project file is read; what the set's
 * plugins run is asked about once, for the whole set. With `change` (a `--scope project|local`
 * change, cli/team-write.ts): restore the edited files at `root` and write them in the restore's
 * own transaction, so a failed restore leaves them as they were.
 */
export async function restoreProject(ctx: CommandContext, flags: RestoreFlags = {}, planned?: RestoreOptions["planned"], change?: { root: string; edit: TeamEdit; migrating?: boolean }): Promise<RestoreReport> {
  const root = change?.root ?? teamRootOf(ctx);
  // A dry run asks nothing, trust included: an untrusted project is refused (the engine checks it too).
  if (flags.dryRun && !isProjectTrustedByUser(root, trustWorldOf(ctx.roots))) throw untrustedProjectError(root, "restore the project's plugin set");
  await assertScopeAllowed(ctx, "project", "restore the project's plugin set");
  const { restoreTeamSet } = await import("../teamset/index.js");
  const world = await teamWorldOf(ctx, flags);
  // A migration (cli/team-migrate.ts) prints the `git rm --cached` lines itself: the files it imports are the tracked ones.
  if (!change?.migrating) await assertGeneratedUntracked(root, world, ctx.roots.configDirName);
  const { batchApprover } = await import("./consent.js");
  return restoreTeamSet(root, {
    world,
    frozen: Boolean(flags.frozen),
    dryRun: Boolean(flags.dryRun),
    offline: Boolean(flags.offline),
    approveAll: batchApprover(ctx, { yes: Boolean(flags.yes) }),
    ...(ctx.roots.configDirName ? { configDirName: ctx.roots.configDirName } : {}),
    ...(planned ? { planned } : {}),
    ...(change ? { edit: change.edit } : {}),
  });
}

export { decidedBy, restoreLines, restoreResult } from "./restore-output.js";
