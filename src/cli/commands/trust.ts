/**
 * `xcsh-tools trust [path]`, `untrust [path]` and `trust --list`: the user's record of the
 * projects whose own code and settings may be used (core/trust.ts). The record lives in the
 * user's state, never in a project, keyed by each project's real path: a symlinked folder is
 * trusted as the folder it leads to, and trusting a folder trusts the folders below it. The path
 * defaults to the project root found from `--cwd` (its nearest folder with `.xcsh/` or `.git`,
 * as the host finds it; else `--cwd`); it must be an existing folder (`untrust` also takes a recorded path whose
 * folder is gone). Nothing is scanned or loaded: the boot index notices the new record by itself.
 */
import { statSync } from "node:fs";
import type { Command } from "commander";
import { realPathOrNearest } from "../../core/contain.js";
import { projectFolder as rootOf, resolveUserPath, xcshPaths } from "../../core/paths.js";
import { changeTrust, readTrustRecord, trustingEntry, trustWorldOf } from "../../core/trust.js";
import type { CommandContext } from "../context.js";
import { style } from "../output.js";
import { usageError } from "../command-errors.js";
import type { CommandModule } from "../context.js";

function trustWorld(ctx: CommandContext) {
  return { ...trustWorldOf(ctx.roots), lockDir: xcshPaths(ctx.roots).ours };
}

/** The folder `given` names (default `--cwd`), or a usage error; `recorded` lets `untrust` name a vanished one. */
function projectFolder(ctx: CommandContext, given: string | undefined, recorded?: (real: string) => boolean): string {
  // Without a path: the project root found from `--cwd` (core/paths.ts), which trust is decided about.
  const folder = given === undefined ? rootOf(ctx.cwd, ctx.roots) : resolveUserPath(given, ctx.cwd, ctx.roots.home);
  const info = statSync(folder, { throwIfNoEntry: false });
  if (info?.isDirectory()) return folder;
  if (!info && recorded?.(realPathOrNearest(folder))) return folder;
  throw usageError(
    info ? `${folder} is not a folder` : `${folder} does not exist`,
    "Name a project folder (default: the current directory, or --cwd).",
  );
}

async function trust(ctx: CommandContext, given: string | undefined): Promise<void> {
  const world = trustWorld(ctx);
  const folder = projectFolder(ctx, given);
  const change = await changeTrust(folder, true, world);
  const { output } = ctx;
  if (output.json) {
    output.result({ project: change.path, trusted: true, changed: change.changed, file: world.trustFile });
    return;
  }
  output.line(change.changed ? `Trusted ${change.path}` : `${change.path} was already trusted`);
  if (change.changed) output.note("Its tools, marketplace installs and plugin overrides are now used by xcsh-tools and the hosts that follow your record.");
}

async function untrust(ctx: CommandContext, given: string | undefined): Promise<void> {
  const world = trustWorld(ctx);
  const { record, problem } = readTrustRecord(world.trustFile);
  const folder = projectFolder(ctx, given, (real) => record.projects.some((p) => p.path === real));
  const change = await changeTrust(folder, false, world);
  // Still trusted through a folder above it, or because it is the home folder.
  const after = readTrustRecord(world.trustFile).record;
  const through = trustingEntry(after, change.path)?.path ?? (change.path === realPathOrNearest(ctx.roots.home) ? change.path : undefined);
  const { output } = ctx;
  if (output.json) {
    output.result({ project: change.path, trusted: through !== undefined, changed: change.changed, ...(through ? { trustedThrough: through } : {}), file: world.trustFile });
    return;
  }
  output.line(change.changed ? `No longer trusted: ${change.path}` : `${change.path} was not in the trust record`);
  if (problem) output.note(`warning: ${problem}; it was left as it is, and trusts no project until it is fixed.`);
  if (through === change.path) output.note("note: your home folder is always trusted (its files are your own).");
  else if (through) output.note(`note: it is still trusted through ${through}; run \`xcsh-tools untrust ${through}\` to stop that.`);
}

async function list(ctx: CommandContext): Promise<void> {
  const world = trustWorld(ctx);
  const { record, problem } = readTrustRecord(world.trustFile);
  const projects = record.projects.map((p) => ({ path: p.path, trustedAt: p.trustedAt, exists: statSync(p.path, { throwIfNoEntry: false })?.isDirectory() === true }));
  const { output } = ctx;
  if (output.json) {
    output.result({ file: world.trustFile, projects, ...(problem ? { problem } : {}) });
    return;
  }
  if (problem) output.note(`warning: ${problem}; no project is trusted until it is fixed (\`xcsh-tools trust <path>\` writes a new record).`);
  if (projects.length === 0) output.line("No trusted projects. (Your home folder is always trusted.)");
  for (const p of projects) output.line(`${p.path}  ${style(output, "dim", [p.trustedAt ? `since ${p.trustedAt}` : "", p.exists ? "" : "(folder missing)"].filter(Boolean).join(" "))}`.trimEnd());
}

async function trustOrList(ctx: CommandContext, given: string | undefined, flags: { list?: boolean }): Promise<void> {
  if (!flags.list) return trust(ctx, given);
  if (given !== undefined) throw usageError("trust --list takes no path", "Run `xcsh-tools trust --list` alone.");
  await list(ctx);
}

const TRUST_OPTIONS = [{ flags: "--list", description: "list the trusted projects" }];

export const register: CommandModule["register"] = (program, getContext) => {
  const trusting = program.command("trust [path]").description("trust a project: its own tools, marketplace installs and settings may be used (default: --cwd)");
  for (const { flags, description } of TRUST_OPTIONS) trusting.option(flags, description);
  trusting.action(async (given: string | undefined, flags: { list?: boolean }, command: Command) => trustOrList(getContext(command), given, flags));
  program
    .command("untrust [path]")
    .description("stop trusting a project: its own tools and settings are left out again (default: --cwd)")
    .action(async (given: string | undefined, _flags: unknown, command: Command) => {
      await untrust(getContext(command), given);
    });
};

// `[path]`: with or without it.
export const plain: CommandModule["plain"] = [0, 1].flatMap((operands) => [
  { path: ["trust"], options: TRUST_OPTIONS, operands, run: (ctx: CommandContext, [given]: string[], flags: Record<string, unknown>) => trustOrList(ctx, given, flags) },
  { path: ["untrust"], options: [], operands, run: (ctx: CommandContext, [given]: string[]) => untrust(ctx, given) },
]);
