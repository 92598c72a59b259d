/**
 * The CLI's answer to "may this command use the project's code and settings?" (core/trust.ts).
 *
 * Asked once per command, before any project state is read. A trusted project (the user's record,
 * or the home folder) is used. An untrusted one that holds no project state needs no answer. An
 * untrusted one with project state: on a terminal (stdin and stdout TTYs, no `--json`) the
 * command asks once (y/N) and a yes is recorded as `xcsh-tools trust` would; anywhere else the
 * project is left out, and commands say so ("not loaded: project not trusted").
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { isPathBelow } from "../core/contain.js";
import { projectFolder, projectPaths, projectRegistryFile, projectRootOf, teamPaths, xcshPaths, type XcshRoots } from "../core/paths.js";
import { changeTrust, decideProjectTrustOf, trustWorldOf } from "../core/trust.js";
import { printable, type Output } from "./output.js";

/** The project files and folders whose presence makes a trust question worth asking. */
function projectStateFound(cwd: string, roots: XcshRoots, root: string | undefined): string[] {
  const p = projectPaths(cwd);
  const registry = projectRegistryFile(cwd, roots, root);
  const folder = projectFolder(cwd, roots, root);
  // A team declaration counts (a fresh clone has nothing else): `install` would restore its set.
  // Claude Code's own .claude/settings.json does not, or every Claude repository would ask.
  const team = teamPaths(folder, roots.configDirName);
  const files = [p.tools, p.claudeTools, p.codexTools, ...(registry ? [registry] : []), p.pluginOverrides, ...p.otherPluginOverrides, projectPaths(folder).marketplacesRegistry, team.declaration, team.lock];
  return [...new Set(files)].filter((f) => existsSync(f));
}

/** The terminal a trust question is asked on: both ends, so tests can drive it with fake TTYs. */
export interface TrustPromptStreams {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
}

/** The part of the command context (context.ts, which loads this module) that trust needs. */
export interface TrustAskingContext {
  cwd: string;
  roots: XcshRoots;
  output: Pick<Output, "json">;
}

/** Decide trust for the command's project; memoised by the context. */
export async function decideCommandTrust(ctx: TrustAskingContext, given?: TrustPromptStreams): Promise<boolean> {
  const world = trustWorldOf(ctx.roots);
  // About the project root found from cwd (core/paths.ts `projectFolder`), as discovery decides it.
  const root = projectRootOf(ctx.cwd, ctx.roots);
  const project = projectFolder(ctx.cwd, ctx.roots, root);
  if (decideProjectTrustOf(ctx.cwd, project, undefined, world) === true) return true;
  const found = projectStateFound(ctx.cwd, ctx.roots, root);
  if (found.length === 0) return false;
  if (ctx.output.json) return false;
  // The process streams only now: under Bun the first touch of one loads node:stream (cli/main.ts).
  const io = given ?? { stdin: process.stdin, stdout: process.stdout };
  if (!io.stdin.isTTY || !io.stdout.isTTY) return false;
  // The prompter (node:readline) loads only when a question is asked: `tools` runs this at every call.
  const { createPrompter } = await import("./prompt.js");
  const prompter = createPrompter(io.stdin, io.stdout);
  try {
    io.stdout.write(
      `${printable(`This project has its own xcsh state (${found.map((f) => (isPathBelow(f, project) ? path.relative(project, f) : f)).join(", ")}).`)}\n` +
        "Project files can add tools that run code and can change settings. Trust it only if you know who wrote it.\n",
    );
    const yes = await prompter.confirm(`Trust ${project}?`, false);
    if (yes) await changeTrust(project, true, { ...world, lockDir: xcshPaths(ctx.roots).ours });
    return yes && decideProjectTrustOf(ctx.cwd, project, undefined, world) === true;
  } finally {
    prompter.close();
  }
}
