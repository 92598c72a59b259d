/**
 * What commands say and refuse about an untrusted project (cli/project-trust.ts decides trust):
 *
 * - A command that would write project-scope state (`--scope project`) fails with
 *   `EUNTRUSTED_PROJECT` before it reads or writes anything of the project.
 * - A command that shows state leaves the project's entries out, unread, and says so:
 *   "not loaded: project not trusted", with the command that trusts it; `--json` carries the same
 *   as `projectNotLoaded: {reason, project, files, trust}`.
 *
 * The engines enforce the same rules themselves (their state loaders take the decision); this is
 * only how the CLI asks early and reports.
 */
import path from "node:path";
import { isPathBelow } from "../core/contain.js";
import { projectFolder } from "../core/paths.js";
import { trustCommand, untrustedProjectError } from "../core/trust.js";
import type { CommandContext } from "./context.js";
import { style } from "./output.js";

/** The reason every report gives for project entries left out. */
export const NOT_LOADED_REASON = "not loaded: project not trusted";

/** The `--json` form of project entries left out. */
export interface ProjectNotLoaded {
  reason: typeof NOT_LOADED_REASON;
  project: string;
  /** The project's files that exist and were not read. */
  files: string[];
  /** The command that trusts the project. */
  trust: string;
}

/** `EUNTRUSTED_PROJECT` unless `scope` is not project or the project is trusted (asked once, on a TTY). */
export async function assertScopeAllowed(ctx: CommandContext, scope: string | undefined, doing: string): Promise<void> {
  if (scope !== "project") return;
  if (await ctx.projectTrusted()) return;
  throw untrustedProjectError(projectFolder(ctx.cwd, ctx.roots), doing);
}

/** The report of project files left unread, or undefined when there are none. */
export function projectNotLoaded(ctx: Pick<CommandContext, "cwd" | "roots">, files: readonly string[]): ProjectNotLoaded | undefined {
  const unique = [...new Set(files)];
  if (unique.length === 0) return undefined;
  // Trust is about the project root found from cwd (core/paths.ts `projectFolder`).
  const project = projectFolder(ctx.cwd, ctx.roots);
  return { reason: NOT_LOADED_REASON, project, files: unique, trust: trustCommand(project) };
}

/** The human line of `notLoaded` (for stdout, with the listing). */
export function notLoadedLine(ctx: CommandContext, notLoaded: ProjectNotLoaded): string {
  const names = notLoaded.files.map((f) => (isPathBelow(f, notLoaded.project) ? path.relative(notLoaded.project, f) : f)).join(", ");
  return style(ctx.output, "yellow", `Project entries (${names}) ${NOT_LOADED_REASON}; to use them: ${notLoaded.trust}`);
}
