/**
 * `xcsh-tools marketplace add|remove|update|list|discover|search|import-claude`, and the bridge
 * the shared commands (install, uninstall, enable, disable, update, outdated, list) use to hand
 * `name@marketplace` plugins to the marketplace engine (`dispatch…` below). A spec is a
 * marketplace plugin when it is `name@marketplace` with that marketplace registered (or the id
 * installed); scoped names and `pkg@<version|range>` always stay npm (the host's CLI classifies them so).
 * Any other `name@x` is `EUNKNOWN_MARKETPLACE`; `npm:name@x` is the npm dist-tag `x`.
 */
import path from "node:path";
import type { Command } from "commander";
import { XcshToolsError, errorSummary } from "../../core/errors.js";
import { npa, semver } from "../../core/npm-spec.js";
import { didYouMean } from "../../core/suggest.js";
import { MAX_SPEC_LENGTH } from "../../plugins/spec.js";
import { mayNameMarketplacePlugin } from "../../manifest/installed-plugins.js";
import type { ClaudeMarketplaceRow, MarketplaceContext, MarketplaceUpdateReport, OfferedPlugin, PlanItem, PluginChangeReport } from "../../marketplace/index.js";
import type { CommandContext } from "../context.js";
import { style } from "../output.js";
import { npmClient, planLine } from "../plugin-command.js";
import { ReportedFailure, usageError } from "../command-errors.js";
import { claudeInstalledPlugins, marketplaceContext, parseScope } from "../marketplace-list.js";

export { marketplaceContext };
import { assertScopeAllowed, notLoadedLine, projectNotLoaded, type ProjectNotLoaded } from "../project-scope.js";
import type { CommandModule } from "../context.js";

/** The lines of a list of plan items and failures, their reasons aligned. */
function itemLines(ctx: CommandContext, items: readonly PlanItem[], failed: PluginChangeReport["failed"], withHints: boolean): string[] {
  const whatOf = (id: string, scope: string | undefined) => `${id}${scope ? ` (${scope})` : ""}`;
  const width = Math.max(0, ...items.map((i) => whatOf(i.id, i.scope).length), ...failed.map((f) => whatOf(f.id, f.scope).length));
  return [
    ...items.map((item) => planLine(ctx, item.op, whatOf(item.id, item.scope), item.reason, width)),
    ...failed.map((f) => planLine(ctx, "FAILED", whatOf(f.id, f.scope), `${f.error.code}: ${f.error.message}${withHints && f.error.hint ? ` — ${f.error.hint}` : ""}`, width)),
  ];
}

/** At most `max` names, then how many more: a catalog may offer thousands (`--json` has them all). */
export function summarizeNames(names: readonly string[], max = 5): string {
  return names.length > max ? `${names.slice(0, max).join(", ")} and ${names.length - max} more` : names.join(", ");
}

/** Print a plugin change report; fails (exit 1) when some plugin failed. */
function reportPluginChange(ctx: CommandContext, report: PluginChangeReport, done: string, extra: Record<string, unknown> = {}): void {
  if (ctx.output.json) {
    ctx.output.result({ ok: report.failed.length === 0, ...report, ...extra });
  } else {
    if (report.dryRun) ctx.output.line(style(ctx.output, "bold", "Plan (dry run: nothing was written)"));
    for (const line of itemLines(ctx, report.items, report.failed, true)) ctx.output.line(line);
    for (const dir of report.cacheRemoved) ctx.output.line(style(ctx.output, "dim", `  cache ${report.dryRun ? "would be removed" : "removed"}: ${dir}`));
    for (const dir of report.cacheKept) ctx.output.line(style(ctx.output, "dim", `  cache kept: ${dir}`));
    for (const w of report.warnings) ctx.output.note(`warning: ${w}`);
    if (!report.dryRun) {
      const changed = report.items.filter((i) => i.op !== "NOOP");
      ctx.output.line(changed.length > 0 ? `${done} ${changed.map((i) => i.id).join(", ")}` : "Nothing to do.");
    }
  }
  if (report.failed.length > 0) throw new ReportedFailure(1);
}

/**
 * An argument `name@x` where `x` is neither an added marketplace nor an npm version or range:
 * `EUNKNOWN_MARKETPLACE`, never silently an npm dist-tag (`npm:name@x` says that explicitly).
 * `name@latest` stays npm's `latest` (what a bare `name` means anyway); scoped names are npm.
 */
function unknownMarketplace(spec: string, marketplaces: ReadonlySet<string>): XcshToolsError | undefined {
  // A spec the npm parser refuses anyway is left to its own error (ESPEC), which says more.
  if (spec.startsWith("npm:") || spec.startsWith("@") || spec.length > MAX_SPEC_LENGTH) return undefined;
  const bare = spec.replace(/\[[^\]]*\]$/, "");
  const at = bare.lastIndexOf("@");
  if (at <= 0) return undefined;
  const name = bare.slice(0, at);
  const market = bare.slice(at + 1);
  if (market === "" || market === "latest" || market.includes("/") || market.includes(":")) return undefined;
  if (semver.valid(market) || semver.validRange(market)) return undefined;
  // Only what npm would read as `name@<dist-tag>`; URLs, paths and git specs carry their own syntax.
  let type: string | undefined;
  try {
    type = npa(bare).type;
  } catch {
    type = undefined;
  }
  if (type !== "tag") return undefined;
  const known = [...marketplaces].sort();
  return new XcshToolsError("EUNKNOWN_MARKETPLACE", `"${spec}": "${market}" is not an added marketplace${known.length > 0 ? ` (added: ${known.join(", ")})` : " (none is added)"}, and not an npm version or range`, {
    hint: `${didYouMean(market, known)}Add the marketplace first (xcsh-tools marketplace add <source>, then \`xcsh-tools marketplace list\`), or, for the npm dist-tag "${market}", write npm:${name}@${market}.`,
    exitCode: 2,
  });
}

/**
 * `ECLAUDE_PLUGIN` when one of `ids` is installed by Claude Code and not by xcsh-tools: changing
 * it is Claude Code's business (its own settings switch it; xcsh-tools never writes ~/.claude),
 * and the message says so instead of "not installed" or "unknown marketplace".
 */
async function refuseClaudeOnly(mctx: MarketplaceContext, ids: readonly string[], verb: string, ours: ReadonlySet<string>): Promise<void> {
  const claude = await claudeInstalledPlugins(mctx);
  const id = ids.find((i) => Object.hasOwn(claude, i) && !ours.has(i));
  if (id === undefined) return;
  const market = id.slice(id.lastIndexOf("@") + 1);
  const how =
    verb === "enable" || verb === "disable"
      ? `Run \`claude plugin ${verb} ${id}\`, or set "enabledPlugins": {"${id}": ${verb === "enable"}} in ~/.claude/settings.json: xcsh-tools and the host follow it.`
      : `Run \`claude plugin ${verb} ${id}\`.`;
  throw new XcshToolsError("ECLAUDE_PLUGIN", `${id} is installed by Claude Code (~/.claude/plugins/installed_plugins.json), not by xcsh-tools: it is Claude Code's to ${verb}`, {
    hint: `${how} To manage it with xcsh-tools instead: \`xcsh-tools marketplace import-claude ${market}\`, then \`xcsh-tools install ${id}\`.`,
  });
}

/**
 * An npm-side "not installed" (`ENOT_INSTALLED`) or "not found" (`ENOT_FOUND`) for a bare name
 * that is a marketplace plugin here: the same error, with "did you mean `name@market`". For
 * install the candidates are the plugins added marketplaces offer; otherwise the installed ids.
 */
export async function withMarketplaceSuggestion(ctx: CommandContext, error: unknown, names: readonly string[], verb: string): Promise<unknown> {
  if (!(error instanceof XcshToolsError) || (error.code !== "ENOT_INSTALLED" && error.code !== "ENOT_FOUND")) return error;
  const bare = names.filter((n) => /^[a-z0-9][a-z0-9._-]*$/.test(n));
  if (bare.length === 0) return error;
  let candidates: string[];
  try {
    const mctx = await marketplaceContext(ctx);
    const engine = await import("../../marketplace/index.js");
    const ids = verb === "install" ? (await engine.discoverPlugins(mctx)).map((p) => p.id) : [...(await engine.loadMarketplaceTargets(mctx)).installedIds];
    candidates = [...new Set(ids)].filter((id) => bare.some((n) => id.startsWith(`${n}@`) && error.message.includes(n))).sort();
  } catch {
    return error; // a broken marketplace state must not hide the original error
  }
  if (candidates.length === 0) return error;
  const list = candidates.map((c) => `\`${c}\``).join(" or ");
  const where = verb === "install" ? "offered by an added marketplace" : "installed from a marketplace";
  return new XcshToolsError(error.code, `${error.message} (did you mean ${list}? ${candidates.length === 1 ? "it is" : "they are"} ${where})`, {
    hint: `Marketplace plugins are named plugin@marketplace: xcsh-tools ${verb} ${candidates[0]}.`,
    exitCode: error.exitCode,
    cause: error,
    ...(error.file ? { file: error.file } : {}),
  });
}

/** The marketplace ones among `specs`; usage error when marketplace and npm specs are mixed. */
async function marketplaceSpecs(mctx: MarketplaceContext, specs: string[], scope: string | undefined, verb: string): Promise<boolean> {
  let ours: string[] = [];
  // Plain and scoped npm names (most installs) never load the marketplace modules or their state.
  if (specs.some((s) => !s.startsWith("npm:") && mayNameMarketplacePlugin(s))) {
    const { loadMarketplaceTargets, isMarketplaceTarget } = await import("../../marketplace/index.js");
    const targets = await loadMarketplaceTargets(mctx);
    ours = specs.filter((s) => !s.startsWith("npm:") && isMarketplaceTarget(s, targets));
    // An id only Claude Code installed: say so, rather than "not installed" or "unknown marketplace".
    if (verb !== "install" && verb !== "outdated") await refuseClaudeOnly(mctx, specs, verb, targets.installedIds);
    for (const spec of specs) {
      if (ours.includes(spec)) continue;
      const unknown = unknownMarketplace(spec, targets.marketplaces);
      if (unknown) throw unknown;
    }
  }
  if (ours.length === 0) {
    // npm plugins take --scope for enable and disable too (the project's overrides file).
    if (scope !== undefined && verb !== "enable" && verb !== "disable") throw usageError(`--scope applies to marketplace plugins (name@marketplace); ${specs.join(", ")} ${specs.length === 1 ? "is an npm plugin" : "are npm plugins"}`, "npm plugins are installed for the user; drop --scope.");
    return false;
  }
  if (ours.length !== specs.length) {
    const npm = specs.filter((s) => !ours.includes(s));
    throw usageError(`Cannot ${verb} marketplace plugins (${ours.join(", ")}) and npm plugins (${npm.join(", ")}) in one command`, `Run two commands: xcsh-tools ${verb} ${ours.join(" ")}, then xcsh-tools ${verb} ${npm.join(" ")}.`);
  }
  return true;
}

/** What each shared command reports when it changed something. */
const DONE = { install: "Installed", uninstall: "Removed", enable: "Enabled", disable: "Disabled", update: "Updated" } as const;

/**
 * Shared `install`, `uninstall`, `enable`, `disable` and `update <names>`: handles the specs when
 * they are all name@marketplace and reports the change; false otherwise (npm specs).
 */
export async function dispatchChange(ctx: CommandContext, verb: keyof typeof DONE, specs: string[], flags: { scope?: string; dryRun?: boolean; yes?: boolean }): Promise<boolean> {
  await assertScopeAllowed(ctx, flags.scope, `${verb === "install" ? "install plugins into the project" : `${verb} the project's plugins`} (--scope project)`);
  if (verb === "update" && specs.length === 0) return false;
  // Installs and updates may bring new things to run: they ask first (or take --yes).
  const mctx = await marketplaceContext(ctx, verb === "install" || verb === "update" ? { yes: Boolean(flags.yes) } : undefined);
  if (!(await marketplaceSpecs(mctx, specs, flags.scope, verb))) return false;
  const engine = await import("../../marketplace/index.js");
  const scope = parseScope(flags.scope);
  const options = { ...(scope ? { scope } : {}), dryRun: Boolean(flags.dryRun) };
  const report =
    verb === "install" ? await engine.installFromMarketplace(mctx, specs, options)
    : verb === "uninstall" ? await engine.uninstallMarketplacePlugin(mctx, specs, options)
    : verb === "update" ? await engine.updateMarketplacePlugins(mctx, specs, options)
    : await engine.setMarketplacePluginEnabled(mctx, specs, verb === "enable", options);
  // Tool names the new plugins share with built-ins or other tools: said now, not at a session.
  const brought = verb === "install" && !report.dryRun ? report.items.filter((i) => i.op === "ADD" || i.op === "CHANGE").map((i) => i.id) : [];
  const conflicts = await (await import("../tool-conflicts.js")).toolConflictsAfter(ctx, brought);
  try {
    reportPluginChange(ctx, report, DONE[verb], conflicts.json);
  } finally {
    conflicts.warn();
  }
  return true;
}

/**
 * `update` without names: after the npm plugins, the marketplace plugins (`userOnly`: the user's
 * only, in a project whose set's lock decides its own). Returns the JSON to
 * merge into the command's document, the human lines to print after the npm ones, and whether
 * the command must exit 1 (a plugin failed).
 */
export async function updateAllMarketplacePlugins(ctx: CommandContext, flags: { dryRun?: boolean; yes?: boolean; userOnly?: boolean }): Promise<{ json: { marketplacePlugins?: PluginChangeReport }; lines: string[]; failed: boolean; changed: string[] }> {
  const mctx = await marketplaceContext(ctx, { yes: Boolean(flags.yes) });
  const { updateMarketplacePlugins } = await import("../../marketplace/index.js");
  const report = await updateMarketplacePlugins(mctx, undefined, { dryRun: Boolean(flags.dryRun), ...(flags.userOnly ? { scope: "user" as const } : {}) });
  const lines: string[] = [];
  if (report.items.length > 0 || report.failed.length > 0) {
    lines.push(style(ctx.output, "bold", "Marketplace plugins:"));
    lines.push(...itemLines(ctx, report.items, report.failed, false));
  }
  // Only when there is something: the npm-only document stays exactly what it was.
  const changed = report.items.filter((i) => i.op !== "NOOP").map((i) => `${i.id}${i.to?.version ? ` ${i.to.version}` : ""}`);
  return { json: report.items.length + report.failed.length > 0 ? { marketplacePlugins: report } : {}, lines, failed: report.failed.length > 0, changed };
}

/**
 * Shared `outdated`. Named marketplace plugins: printed here (`handled`). No names: the rows of
 * every marketplace plugin (but the project's that its set, `setIds`, declares), as JSON to merge
 * and lines to print after the npm table.
 */
export async function outdatedSection(ctx: CommandContext, names: string[], setIds: ReadonlySet<string> = new Set()): Promise<{ handled: boolean; json: { marketplacePlugins?: unknown[]; projectNotLoaded?: ProjectNotLoaded }; lines: string[] }> {
  const mctx = await marketplaceContext(ctx);
  const { outdatedMarketplacePlugins, projectFilesNotLoaded } = await import("../../marketplace/index.js");
  if (names.length > 0 && !(await marketplaceSpecs(mctx, names, undefined, "outdated"))) return { handled: false, json: {}, lines: [] };
  // A project entry the project's set declares is the set's row (outdated.ts), checked against its lock, not here.
  const rows = (await outdatedMarketplacePlugins(mctx, names.length > 0 ? names : undefined)).filter((row) => !(row.scope === "project" && setIds.has(row.id)));
  const notLoaded = projectNotLoaded(ctx, projectFilesNotLoaded(mctx));
  const lines: string[] = [];
  if (rows.length > 0) {
    lines.push(style(ctx.output, "bold", "Marketplace plugins:"));
    for (const row of rows) {
      const latest = row.latest?.version ?? row.latest?.gitCommitSha?.slice(0, 12) ?? row.latest?.contentHash ?? "?";
      const mark = row.error ? style(ctx.output, "red", "?") : row.outdated ? style(ctx.output, "yellow", "↑") : style(ctx.output, "dim", "=");
      lines.push(`${mark} ${row.id} (${row.scope})  ${row.current.version} → ${latest}  ${style(ctx.output, "dim", row.reason)}`);
    }
  }
  if (notLoaded) lines.push(notLoadedLine(ctx, notLoaded));
  const json = { ...(rows.length > 0 || names.length > 0 ? { marketplacePlugins: rows } : {}), ...(notLoaded ? { projectNotLoaded: notLoaded } : {}) };
  if (names.length > 0) {
    if (ctx.output.json) ctx.output.result(json);
    else for (const line of lines) ctx.output.line(line);
  }
  return { handled: names.length > 0, json, lines };
}

type GetContext = (command: Command) => CommandContext;

export const register: CommandModule["register"] = (program, getContext) => {
  const mkt = program.command("marketplace").description("manage plugin marketplaces (xcsh and Claude Code catalogs)");
  registerAdd(mkt, getContext);
  registerRemove(mkt, getContext);
  registerUpdate(mkt, getContext);
  registerList(mkt, getContext);
  registerDiscoverAndSearch(mkt, getContext);
  registerImportClaude(mkt, getContext);
};

/**
 * What a subcommand that takes `--scope` and `--dry-run` needs: its context (refused early when
 * `--scope project` names a project that is not trusted), the engine, and the options every such
 * engine call takes.
 */
async function scopedContext(getContext: GetContext, command: Command, flags: { scope?: string; dryRun?: boolean }, doing: string) {
  const ctx = getContext(command);
  const scope = parseScope(flags.scope);
  await assertScopeAllowed(ctx, scope, doing);
  const engine = await import("../../marketplace/index.js");
  return { ctx, engine, options: { ...(scope ? { scope } : {}), dryRun: Boolean(flags.dryRun) } };
}

function registerAdd(mkt: Command, getContext: GetContext): void {
  mkt
    .command("add <source>")
    .description("add a marketplace: ./folder, git URL (https, ssh, file://), owner/repo (GitHub), or https://…/marketplace.json")
    .option("--name <name>", "register it under this name instead of the catalog's")
    .option("--scope <scope>", "user (default) or project (in a repository: declared in xcsh-team.json; a folder must be inside the repository)")
    .option("--dry-run", "fetch and check; write nothing")
    .option("-y, --yes", "accept what the project's set runs without asking (a project change restores the set)")
    .action(async (source: string, flags: { name?: string; scope?: string; dryRun?: boolean; yes?: boolean }, command: Command) => {
      const { ctx, engine, options } = await scopedContext(getContext, command, flags, "add a marketplace to the project (--scope project)");
      const root = flags.scope === "project" ? (await import("../team-write.js")).teamWriteRoot(ctx) : undefined;
      if (root !== undefined) return addToSet(ctx, root, source, flags);
      const report = await engine.addMarketplace(await marketplaceContext(ctx), source, { ...(flags.name ? { name: flags.name } : {}), ...options });
      if (ctx.output.json) return ctx.output.result({ ok: true, ...report });
      for (const w of report.warnings) ctx.output.note(`warning: ${w}`);
      const missing = report.missingSources ?? [];
      ctx.output.line(`${report.dryRun ? "Would add" : "Added"} marketplace ${style(ctx.output, "bold", report.name)} (${report.scope}, ${report.entry.sourceType} ${report.entry.sourceUri}) with ${report.plugins.length} plugin${report.plugins.length === 1 ? "" : "s"}${report.plugins.length ? `: ${summarizeNames(report.plugins)}` : ""}${missing.length ? `; ${missing.length} of them cannot be installed (source folder missing, ESOURCE_NOT_FOUND): ${summarizeNames(missing)}` : ""}`);
      if (report.plugins.length > 5) ctx.output.line(`See them all with \`xcsh-tools marketplace discover ${report.name}\` (or --json).`);
    });
}

function registerRemove(mkt: Command, getContext: GetContext): void {
  mkt
    .command("remove <name>")
    .description("remove a marketplace and uninstall the plugins installed from it (as Claude Code does)")
    .option("--scope <scope>", "user or project (default: where it is; in a repository, project takes it out of xcsh-team.json)")
    .option("--dry-run", "print what would be removed; write nothing")
    .option("-y, --yes", "accept what the rest of the project's set runs without asking (a project change restores the set)")
    .action(async (name: string, flags: { scope?: string; dryRun?: boolean; yes?: boolean }, command: Command) => {
      const { ctx, engine, options } = await scopedContext(getContext, command, flags, "remove a project marketplace (--scope project)");
      const root = flags.scope === "project" ? (await import("../team-write.js")).teamWriteRoot(ctx) : undefined;
      if (root !== undefined) {
        const { changeDeclaration } = await import("../team-write.js");
        return changeDeclaration(ctx, root, "remove a project marketplace (--scope project)", flags, () => [{ op: "marketplace-remove", name }]);
      }
      const report = await engine.removeMarketplace(await marketplaceContext(ctx), name, options);
      if (ctx.output.json) return ctx.output.result({ ok: true, ...report });
      for (const w of report.warnings) ctx.output.note(`warning: ${w}`);
      ctx.output.line(`${report.dryRun ? "Would remove" : "Removed"} marketplace ${report.name} (${report.scope})`);
      if (report.uninstalled?.length) ctx.output.line(`${report.dryRun ? "Would uninstall" : "Uninstalled"} its plugins with it: ${report.uninstalled.join(", ")}`);
      if (report.stillInstalled?.length) ctx.output.line(`Still installed (a project marketplace of that name serves them): ${report.stillInstalled.join(", ")}`);
    });
}

/**
 * `marketplace add <source> --scope project` where the set is written: the source as a committed
 * file can hold it (a folder inside the repository → a relative `directory` source, outside it →
 * `ETEAM_MACHINE_PATH`; git URLs and owner/repo as typed), under the catalog's own name, then the
 * project restored (cli/team-write.ts).
 */
async function addToSet(ctx: CommandContext, root: string, source: string, flags: { name?: string; dryRun?: boolean; yes?: boolean }): Promise<void> {
  const { changeDeclaration } = await import("../team-write.js");
  const { declaredSourceOf } = await import("../../teamset/index.js");
  await changeDeclaration(ctx, root, "add a marketplace to the project (--scope project)", flags, async (state) => {
    const engine = await import("../../marketplace/index.js");
    const mctx = await marketplaceContext(ctx);
    const spec = engine.parseCatalogSource(source, mctx);
    const declared = declaredSourceOf(spec, root, state.paths.declaration);
    let name = flags.name;
    if (name === undefined) {
      const { xcshPaths } = await import("../../core/paths.js");
      const scratch = await engine.makeScratch("team-add", path.join(xcshPaths(ctx.roots).ours, "tmp"));
      try {
        name = await engine.catalogNameOf(mctx, spec, scratch.dir);
      } finally {
        await scratch.dispose();
      }
    }
    return [{ op: "marketplace-add", name, source: declared }];
  });
}

function registerUpdate(mkt: Command, getContext: GetContext): void {
  mkt
    .command("update [name]")
    .description("re-fetch one marketplace's catalog, or all of them")
    .option("--scope <scope>", "only marketplaces of this scope")
    .option("--dry-run", "fetch and compare; write nothing")
    .action(async (name: string | undefined, flags: { scope?: string; dryRun?: boolean }, command: Command) => {
      const { ctx, engine, options } = await scopedContext(getContext, command, flags, "update the project's marketplaces (--scope project)");
      const report = await engine.updateMarketplaces(await marketplaceContext(ctx), name, options);
      if (ctx.output.json) ctx.output.result({ ok: report.failed === 0, ...report });
      else printUpdateReport(ctx, report, Boolean(flags.dryRun));
      if (report.failed > 0) throw new ReportedFailure(1);
    });
}

function printUpdateReport(ctx: CommandContext, report: MarketplaceUpdateReport, dryRun: boolean): void {
  if (report.results.length === 0) ctx.output.line("No marketplaces registered.");
  for (const r of report.results) {
    if (r.op === "FAILED") {
      ctx.output.line(planLine(ctx, "FAILED", `${r.name} (${r.scope})`, `${r.error.code}: ${r.error.message}`));
      if (r.error.hint) ctx.output.line(`  Try this: ${r.error.hint}`);
      continue;
    }
    const c = r.changes;
    const summary = c ? [c.added.length ? `added ${summarizeNames(c.added)}` : "", c.removed.length ? `removed ${summarizeNames(c.removed)}` : "", c.changed.length ? `changed ${summarizeNames(c.changed.map((x) => `${x.name}${x.from || x.to ? ` ${x.from ?? "?"} → ${x.to ?? "?"}` : ""}`))}` : ""].filter(Boolean).join("; ") : "";
    // A catalog fetched again with nothing new is no change, whatever the engine's op says.
    ctx.output.line(summary ? planLine(ctx, r.op, `${r.name} (${r.scope})`, summary) : planLine(ctx, "NOOP", `${r.name} (${r.scope})`, "unchanged"));
    for (const w of r.warnings) ctx.output.note(`warning: ${w}`);
  }
  if (!dryRun && report.results.some((r) => r.op === "CHANGE" && r.changes && r.changes.added.length + r.changes.removed.length + r.changes.changed.length > 0)) ctx.output.line("Run `xcsh-tools outdated` to see plugin updates, `xcsh-tools update` to apply them.");
}

function registerList(mkt: Command, getContext: GetContext): void {
  mkt
    .command("list")
    .description("list registered marketplaces (--claude: Claude Code's)")
    .option("--claude", "show the marketplaces in ~/.claude/plugins/known_marketplaces.json (read only)")
    .action(async (flags: { claude?: boolean }, command: Command) => {
      const ctx = getContext(command);
      const engine = await import("../../marketplace/index.js");
      const mctx = await marketplaceContext(ctx);
      if (flags.claude) return printClaudeMarketplaces(ctx, await engine.listClaudeMarketplaces(mctx));
      const rows = await engine.listMarketplaces(mctx);
      const notLoaded = projectNotLoaded(ctx, engine.projectFilesNotLoaded(mctx));
      if (ctx.output.json) return ctx.output.result({ marketplaces: rows, ...(notLoaded ? { projectNotLoaded: notLoaded } : {}) });
      if (notLoaded) ctx.output.line(notLoadedLine(ctx, notLoaded));
      if (rows.length === 0) return ctx.output.line("No marketplaces. Add one with `xcsh-tools marketplace add <source>`.");
      for (const r of rows) {
        const extra = [r.scope, `${r.sourceType} ${r.sourceUri}`, r.plugins !== undefined ? `${r.plugins} plugin(s)` : style(ctx.output, "red", r.problem ?? "catalog unreadable"), `updated ${r.updatedAt}`, ...(r.shadowedBy ? ["shadowed by the project marketplace"] : [])];
        ctx.output.line(`${style(ctx.output, "bold", r.name)}  ${style(ctx.output, "dim", extra.join("  "))}`);
      }
    });
}

function printClaudeMarketplaces(ctx: CommandContext, rows: ClaudeMarketplaceRow[]): void {
  if (ctx.output.json) return ctx.output.result({ marketplaces: rows });
  if (rows.length === 0) return ctx.output.line("Claude Code knows no marketplaces (~/.claude/plugins/known_marketplaces.json).");
  for (const r of rows) {
    const state = r.registered ? style(ctx.output, "dim", "in xcsh") : r.importable ? style(ctx.output, "green", "importable") : style(ctx.output, "yellow", r.problem ?? "not importable");
    ctx.output.line(`${style(ctx.output, "bold", r.name)}  ${r.source.source} ${String(r.source.repo ?? r.source.url ?? r.source.path ?? "")}  ${state}`);
  }
}

function printOfferedPlugins(ctx: CommandContext, rows: OfferedPlugin[], empty: string): void {
  if (ctx.output.json) return ctx.output.result({ plugins: rows });
  if (rows.length === 0) return ctx.output.line(empty);
  for (const p of rows) {
    const installed = p.installed.length ? style(ctx.output, "green", `installed (${p.installed.join(", ")})`) : "";
    ctx.output.line(`${style(ctx.output, "bold", p.id)}${p.version ? ` ${p.version}` : ""}  ${installed}`);
    if (p.description) ctx.output.line(`  ${p.description}`);
  }
}

function registerDiscoverAndSearch(mkt: Command, getContext: GetContext): void {
  mkt
    .command("discover [name]")
    .description("list the plugins a marketplace offers (all marketplaces without a name)")
    .action(async (name: string | undefined, _flags: unknown, command: Command) => {
      const ctx = getContext(command);
      const { discoverPlugins } = await import("../../marketplace/index.js");
      printOfferedPlugins(ctx, await discoverPlugins(await marketplaceContext(ctx), name), "No plugins offered.");
    });

  mkt
    .command("search <query...>")
    .description("search plugins by name, description, keywords, tags and category")
    .action(async (query: string[], _flags: unknown, command: Command) => {
      const ctx = getContext(command);
      // An empty query would match every plugin: that is `marketplace discover`, not a search.
      if (query.join(" ").trim() === "") throw usageError("marketplace search needs a word to look for", "e.g. xcsh-tools marketplace search format; `xcsh-tools marketplace discover` lists every plugin.");
      const { searchPlugins } = await import("../../marketplace/index.js");
      printOfferedPlugins(ctx, await searchPlugins(await marketplaceContext(ctx), query.join(" ")), `No plugin matches "${query.join(" ")}".`);
    });
}

function registerImportClaude(mkt: Command, getContext: GetContext): void {
  mkt
    .command("import-claude [name...]")
    .description("add Claude Code's marketplaces to xcsh (~/.claude is only read)")
    .option("--scope <scope>", "user (default) or project")
    .option("--dry-run", "check what Claude Code has on disk; fetch nothing, write nothing")
    .action(async (names: string[], flags: { scope?: string; dryRun?: boolean }, command: Command) => {
      const { ctx, engine, options } = await scopedContext(getContext, command, flags, "add marketplaces to the project (--scope project)");
      let rows;
      try {
        rows = await engine.importClaudeMarketplaces(await marketplaceContext(ctx), { ...(names.length ? { names } : {}), ...options });
      } catch (error) {
        if (ctx.output.json) {
          ctx.output.result({ ok: false, error: errorSummary(error) });
          throw new ReportedFailure(1);
        }
        throw error;
      }
      const failed = rows.filter((r) => r.status === "failed").length;
      if (ctx.output.json) ctx.output.result({ ok: failed === 0, marketplaces: rows });
      else {
        if (rows.length === 0) ctx.output.line("Claude Code knows no marketplaces to import.");
        for (const r of rows) ctx.output.line(`${r.status.padEnd(9)} ${r.name}${r.source ? `  ${r.source}` : ""}${r.from ? `  (read from Claude Code's copy ${r.from})` : ""}${r.reason ? `  (${r.reason})` : ""}${r.error ? `  ${r.error.code}: ${r.error.message}` : ""}`);
      }
      if (failed > 0) throw new ReportedFailure(1);
    });
}
