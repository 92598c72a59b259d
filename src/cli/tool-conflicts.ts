/**
 * After `install` or `link` committed: the tool-name conflicts the new plugins take part in, as a
 * host would meet them at its next start. The answer is `listInstalledTools`'s (the boot index
 * the mutation just refreshed, so no plugin code runs here), whose errors follow the loader's
 * rules (host/tool-claims.ts: a built-in's name loses, else the first loaded wins): only `tools`
 * printed them before, so a user learnt of a conflict when a tool was missing in a session.
 */
import type { ToolLoadError } from "../core/contract.js";
import { errorMessage } from "../core/errors.js";
import { describeSource } from "../host/tool-claims.js";
import type { CommandContext } from "./context.js";

/** One conflict as `--json` reports it and the warning says it. */
export interface ToolConflict {
  tool: string;
  /** The tool the host skips: its file and plugin (absent for a tools folder's file). */
  skipped: { path: string; plugin?: string };
  /** What keeps the name: a built-in, or the tool loaded first. */
  kept: { builtIn: true } | { path: string; plugin?: string };
  message: string;
  hint: string;
}

/**
 * The conflicts that the plugins just installed or linked take part in (`plugins`: npm names, or
 * `name@marketplace` ids): `json`, what the command's `--json` document adds; `warn()` prints
 * them (stderr; nothing under `--json`).
 */
export async function toolConflictsAfter(ctx: CommandContext, plugins: readonly string[]): Promise<{ json: { toolConflicts?: ToolConflict[] }; warn(): void }> {
  let conflicts: ToolConflict[] = [];
  let unchecked: string | undefined;
  try {
    conflicts = await toolConflictsOf(ctx, plugins);
  } catch (error) {
    // The change is committed: a listing that fails is no failure of the command.
    unchecked = `warning: could not compare the new tools' names with the others (${errorMessage(error)}); \`xcsh-tools tools\` lists every conflict`;
  }
  return {
    json: conflicts.length > 0 ? { toolConflicts: conflicts } : {},
    warn() {
      if (unchecked) ctx.output.note(unchecked);
      for (const conflict of conflicts) {
        ctx.output.note(`warning: ${conflict.message}`);
        ctx.output.note(`  ${conflict.hint}`);
      }
    },
  };
}

/** The conflicts of the loader's listing for `cwd` that involve one of `plugins` (npm names or `name@marketplace`). */
async function toolConflictsOf(ctx: CommandContext, plugins: readonly string[]): Promise<ToolConflict[]> {
  if (plugins.length === 0) return [];
  const [{ listInstalledTools }, { DEFAULT_BUILTIN_TOOL_NAMES }] = await Promise.all([import("../boot/installed-tools.js"), import("../host/builtins.js")]);
  const settings = (await ctx.settings()).settings;
  // The trust record decides about the project's own tools, as at boot; nobody is asked here.
  const listed = await listInstalledTools({ cwd: ctx.cwd, ...ctx.roots, env: ctx.env, builtInToolNames: [...DEFAULT_BUILTIN_TOOL_NAMES, ...settings.builtInTools] });
  const mine = new Set(plugins);
  return listed.errors.flatMap((error) => {
    const winner = error.conflictsWith;
    if ((error.code !== "ECONFLICT" && error.code !== "ECONFLICT_BUILTIN") || !winner) return [];
    const loserIsNew = error.source?.plugin !== undefined && mine.has(error.source.plugin);
    const winnerIsNew = !("builtIn" in winner) && winner.source?.plugin !== undefined && mine.has(winner.source.plugin);
    return loserIsNew || winnerIsNew ? [describeConflict(error, winner)] : [];
  });
}

function describeConflict(error: ToolLoadError, winner: NonNullable<ToolLoadError["conflictsWith"]>): ToolConflict {
  const tool = error.toolName ?? "?";
  const skipped = { path: error.path, ...(error.source?.plugin ? { plugin: error.source.plugin } : {}) };
  const loser = `${describeSource(error.source)} (${error.path})`;
  if ("builtIn" in winner) {
    return {
      tool,
      skipped,
      kept: { builtIn: true },
      message: `tool "${tool}" of ${loser} has the name of a built-in tool: the built-in wins and the host skips this one`,
      hint: `Rename the tool in ${error.source?.plugin ? `plugin ${error.source.plugin}` : "its file"} (e.g. prefix it with the plugin's name).`,
    };
  }
  const kept = { path: winner.path, ...(winner.source?.plugin ? { plugin: winner.source.plugin } : {}) };
  const owners = [error.source?.plugin, winner.source?.plugin].filter((p): p is string => p !== undefined);
  return {
    tool,
    skipped,
    kept,
    message: `tool "${tool}" of ${loser} has the same name as the one of ${describeSource(winner.source)} (${winner.path}), which loads first: the host keeps that one and skips this one`,
    hint: owners.length > 0 ? `Keep one of the two: \`xcsh-tools disable ${owners[0]}\` or \`xcsh-tools uninstall ${owners[0]}\`${owners[1] ? ` (or the same for ${owners[1]})` : ""}, or ask the authors to rename the tool.` : "Keep one of the two tools, or rename one.",
  };
}
