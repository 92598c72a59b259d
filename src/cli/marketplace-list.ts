/**
 * The marketplace part of `list`: installed marketplace plugins and Claude Code's installs that
 * apply here. Kept apart from commands/marketplace.ts so that `list`, the command run most,
 * loads the registries' readers only, not what adding, installing and updating need (sources,
 * npm's options, validation, the component readers).
 */
import { projectFolder, xcshPaths } from "../core/paths.js";
import { isRecord } from "../manifest/result.js";
import type { MarketplaceContext, Scope } from "../marketplace/context.js";
import { usageError } from "./command-errors.js";
import type { CommandContext } from "./context.js";
import { style } from "./output.js";
import { mutationWorld } from "./plugin-world.js";
import { npmClient } from "./plugin-command.js";

/** The marketplace engine's world for reading: no npm options, nobody to ask for consent. */
export async function listContext(ctx: CommandContext): Promise<MarketplaceContext> {
  const world = await mutationWorld(ctx);
  const settings = (await ctx.settings()).settings;
  return {
    ...world,
    // Project marketplace state lives at the project root found from cwd, as the host's CLI keeps it (core/paths.ts).
    cwd: projectFolder(ctx.cwd, ctx.roots),
    typedFrom: ctx.cwd,
    projectTrusted: await ctx.projectTrusted(),
    gitTimeoutMs: settings.timeouts.gitMs,
    fetchTimeoutMs: settings.timeouts.fetchMs,
  };
}

/** The marketplace engine's world for this command: the listing's, with npm's options and the consent prompt. */
export async function marketplaceContext(ctx: CommandContext, consent?: { yes?: boolean }): Promise<MarketplaceContext> {
  const base = await listContext(ctx);
  const { npmOptions } = await import("../plugins/npm-client.js");
  let npm: Record<string, unknown> | undefined;
  try {
    npm = npmOptions(await npmClient(ctx));
  } catch (error) {
    // A broken .npmrc only matters to npm sources: report it there, not for git or folder catalogs.
    npm = undefined;
    ctx.output.note(`warning: npm configuration not loaded (${(error as Error).message}); npm plugin sources will use the default registry`);
  }
  return {
    ...base,
    ...(npm ? { npmOptions: npm } : {}),
    ...(consent ? { approveExecutables: (await import("./consent.js")).executableApprover(ctx, consent) } : {}),
  };
}

/** `--scope` value, checked. */
export function parseScope(value: string | undefined): Scope | undefined {
  if (value === undefined) return undefined;
  if (value === "user" || value === "project") return value;
  throw usageError(`--scope must be user or project, not "${value}"`);
}

/** Shared `list`: the marketplace plugins, as JSON to merge and lines to print after the npm ones. */
export async function listSection(
  ctx: CommandContext,
  flags: { scope?: string } = {},
  /** A line (and JSON) about each row's components, from `list`. */
  componentsOf?: (row: { id: string; installPath: string }) => Promise<{ line: string; json: unknown } | undefined>,
): Promise<{ json: { marketplacePlugins?: unknown[] }; lines: string[]; notLoaded: string[] }> {
  const mctx = await listContext(ctx);
  const [{ listMarketplacePlugins }, { projectFilesNotLoaded }] = await Promise.all([import("../marketplace/installed-list.js"), import("../marketplace/state.js")]);
  const scope = parseScope(flags.scope);
  const listed = await listMarketplacePlugins(mctx, scope ? { scope } : {});
  // An off entry of the set points at an empty folder: it has no components to describe.
  const described = await Promise.all(listed.map(async (row) => ({ row, components: row.offBySet ? undefined : await componentsOf?.(row) })));
  const rows = described.map(({ row, components }) => (components ? { ...row, components: components.json } : row));
  const lines: string[] = [];
  if (rows.length > 0) {
    lines.push(style(ctx.output, "bold", "Marketplace plugins:"));
    for (const { row } of described) {
      const bits = [
        row.offBySet ? style(ctx.output, "dim", "off (the project's set)") : row.enabled ? style(ctx.output, "green", "enabled") : style(ctx.output, "dim", "disabled"),
        row.scope,
        ...(row.gitCommitSha ? [`commit ${row.gitCommitSha.slice(0, 12)}`] : []),
        ...(row.shadowedBy ? [style(ctx.output, "dim", "shadowed by the project install")] : []),
        ...(row.missing ? [style(ctx.output, "red", `missing: ${row.installPath}`)] : []),
        ...(row.problem ? [style(ctx.output, "red", `${row.problem.code}: ${row.problem.message}`)] : []),
      ];
      lines.push(`${style(ctx.output, "bold", row.id)} ${row.version}  ${bits.join("  ")}`);
      const components = described.find((d) => d.row === row)?.components;
      if (components) lines.push(`  ${components.line}`);
    }
  }
  const claude = await claudePluginRows(ctx, mctx);
  if (claude.rows.length > 0) {
    lines.push(style(ctx.output, "bold", "Claude Code plugins (installed and switched by Claude Code; read only):"));
    for (const row of claude.rows) {
      const state = row.enabled ? style(ctx.output, "green", "enabled") : style(ctx.output, "dim", `disabled (${row.decidedBy})`);
      lines.push(`${style(ctx.output, "bold", row.id)} ${row.version}  ${state}  ${row.scope}`);
    }
  }
  for (const problem of claude.problems) ctx.output.note(`warning: ${problem}`);
  return {
    json: { ...(rows.length > 0 ? { marketplacePlugins: rows } : {}), ...(claude.rows.length > 0 ? { claudePlugins: claude.rows } : {}) },
    lines,
    notLoaded: [...(scope === "user" ? [] : projectFilesNotLoaded(mctx)), ...claude.notLoaded],
  };
}

/** The `plugins` of Claude Code's `installed_plugins.json`, read loosely (its file, only read): empty when absent or unreadable. */
export async function claudeInstalledPlugins(mctx: MarketplaceContext): Promise<Record<string, unknown>> {
  const { readJsonOrUndefined } = await import("../manifest/json-file.js");
  const raw = readJsonOrUndefined(xcshPaths(mctx.roots).claudeInstalledPlugins);
  return isRecord(raw) && isRecord(raw.plugins) ? raw.plugins : {};
}

/** A plugin of Claude Code's cache as `list` shows it. */
interface ClaudePluginRow {
  id: string;
  version: string;
  scope: string;
  /** Whether Claude Code's settings let it load here (`enabledPlugins`, nearest layer wins). */
  enabled: boolean;
  /** The settings file that switched it off. */
  decidedBy?: string;
  installPath: string;
}

/**
 * Claude Code's installs that apply at `cwd` (components/installed-roots.ts, the reading `tools`
 * does), with what its `enabledPlugins` say (the reading discovery does), so `list` and `tools` agree.
 */
async function claudePluginRows(ctx: CommandContext, mctx: MarketplaceContext): Promise<{ rows: ClaudePluginRow[]; problems: string[]; notLoaded: string[] }> {
  const { claudeRegistryRows } = await import("../components/installed-roots.js");
  const installed = claudeRegistryRows({ roots: mctx.roots, cwd: ctx.cwd, projectTrusted: mctx.projectTrusted === true });
  if (installed.length === 0) return { rows: [], problems: [], notLoaded: [] };
  const { readClaudeEnablement } = await import("../discovery/providers/claude-plugins.js");
  const problems: string[] = [];
  const notLoaded: string[] = [];
  const enablement = await readClaudeEnablement({ home: mctx.roots.home, cwd: ctx.cwd, projectTrusted: mctx.projectTrusted === true }, {
    addError: (e) => problems.push(`${e.code}: ${e.error}`),
    addSkipped: (s) => notLoaded.push(s.path),
    addPath: () => undefined,
    addMetadata: () => undefined,
    addIgnored: () => undefined,
  });
  const rows = installed.map(({ id, version, scope, installPath }): ClaudePluginRow => {
    const decided = enablement.get(id);
    return { id, version: version ?? "?", scope, enabled: decided?.enabled !== false, ...(decided?.enabled === false ? { decidedBy: decided.file } : {}), installPath };
  });
  return { rows, problems, notLoaded };
}
