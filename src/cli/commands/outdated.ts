/**
 * `xcsh-tools outdated [name...]`: current / wanted / latest of installed registry plugins, as
 * npm shows them. A registry that cannot be reached is `EREGISTRY` (exit 1), never "up to date".
 * Exit 0 whether or not something is outdated (the JSON says which).
 */
import type { Command } from "commander";
import { mutationWorld } from "../plugin-world.js";
import { npmClient, withProgress } from "../plugin-command.js";
import { style } from "../output.js";
import type { CommandContext, CommandModule } from "../context.js";
import { notLoadedLine, projectNotLoaded, type ProjectNotLoaded } from "../project-scope.js";
import type { TeamOutdatedRow } from "../../teamset/index.js";

/** A commit as a table shows it (12 characters); versions as they are. */
export function shortState(state: string | null | undefined): string | undefined {
  if (state === undefined) return undefined;
  if (state === null) return undefined;
  return /^[0-9a-f]{40}$/.test(state) ? state.slice(0, 12) : state.startsWith("sha256:") ? state.slice(0, 19) : state;
}

/**
 * The rows of the project's set (team/outdated.ts), when the project declares one: of a trusted
 * project only; of an untrusted one the set's files, left unread.
 */
async function teamSection(ctx: CommandContext): Promise<{ rows: TeamOutdatedRow[]; notLoaded: string[] }> {
  const team = await import("../team-restore.js");
  const root = team.declaredRootOf(ctx);
  if (root === undefined) return { rows: [], notLoaded: [] };
  if (!(await ctx.projectTrusted())) {
    const { teamPaths } = await import("../../core/paths.js");
    const { existsSync } = await import("node:fs");
    const paths = teamPaths(root, ctx.roots.configDirName);
    return { rows: [], notLoaded: [paths.declaration, paths.lock, paths.claudeSettings].filter((file) => existsSync(file)) };
  }
  const { teamOutdated } = await import("../../teamset/index.js");
  const world = await team.teamWorldOf(ctx);
  const rows = await withProgress(ctx, "Checking the project's set", () => teamOutdated(root, { world, ...(ctx.roots.configDirName ? { configDirName: ctx.roots.configDirName } : {}) }));
  return { rows, notLoaded: [] };
}

/** One "not loaded" report for the marketplace engine's project files and the set's. */
function mergeNotLoaded(ctx: CommandContext, mkt: { json: { projectNotLoaded?: ProjectNotLoaded }; lines: string[] }, files: string[]): void {
  const had = mkt.json.projectNotLoaded;
  const merged = projectNotLoaded(ctx, [...(had?.files ?? []), ...files])!;
  const at = had ? mkt.lines.indexOf(notLoadedLine(ctx, had)) : -1;
  if (at >= 0) mkt.lines.splice(at, 1);
  mkt.json.projectNotLoaded = merged;
  mkt.lines.push(notLoadedLine(ctx, merged));
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("outdated [name...]")
    .description("show current, wanted (within the saved range) and latest versions of installed plugins")
    .action(async (names: string[], _flags: unknown, command: Command) => {
      const ctx = getContext(command);
      const team = await teamSection(ctx);
      // Named plugins the set declares are its rows (against the lock); the other names go on as before.
      const setRows = names.length === 0 ? team.rows : team.rows.filter((r) => r.section !== "marketplaces" && names.includes(r.key));
      const others = names.filter((name) => !setRows.some((r) => r.key === name));
      const onlySet = names.length > 0 && others.length === 0;
      const setIds = new Set(team.rows.filter((r) => r.section === "marketplacePlugins").map((r) => r.key));
      const mkt = onlySet ? { handled: false, json: {}, lines: [] } : await (await import("./marketplace.js")).outdatedSection(ctx, others, setIds);
      if (mkt.handled) return;
      if (team.notLoaded.length > 0) mergeNotLoaded(ctx, mkt, team.notLoaded);
      const { parsePackageName } = await import("../../plugins/spec.js");
      const wanted = others.map(parsePackageName);
      const { readStateForQuery } = await import("../../plugins/mutation.js");
      const { loadInventory } = await import("../../plugins/inventory.js");
      const { checkOutdated } = await import("../../plugins/outdated.js");
      const { notInstalled } = await import("../../plugins/plan.js");
      const world = await mutationWorld(ctx);
      const client = await npmClient(ctx);
      const rows = onlySet ? [] : await withProgress(ctx, "Checking the registry", async () => {
        const inventory = await loadInventory(await readStateForQuery(world));
        for (const name of wanted) {
          if (!inventory.some((p) => p.name === name)) throw notInstalled(name, inventory);
        }
        const targets = wanted.length > 0 ? inventory.filter((p) => wanted.includes(p.name)) : inventory;
        // The organization policy of each recorded source before its registry is asked, as `update` does.
        (await import("../../plugins/resolve.js")).assertInstalledAllowed(targets, client, "outdated");
        return checkOutdated(targets, client);
      });
      if (ctx.output.json) {
        ctx.output.result({ ...mkt.json, plugins: Object.fromEntries(rows.map((r) => [r.name, { current: r.current ?? null, wanted: r.wanted, latest: r.latest, dependency: r.dependency, source: r.source, outdated: r.outdated }])), ...(setRows.length > 0 ? { set: setRows.map((r) => ({ set: true, ...r })) } : {}) });
        return;
      }
      if (rows.length === 0 && setRows.length === 0) {
        ctx.output.line(mkt.lines.length ? "No npm plugins installed." : "No plugins installed.");
        for (const line of mkt.lines) ctx.output.line(line);
        return;
      }
      // The Set column only when the project declares a set: the user's table stays as it was elsewhere.
      const withSet = setRows.length > 0;
      const body = [
        ...rows.map((r) => ({ cells: [r.name, r.current ?? "missing", r.wanted ?? "-", r.latest ?? "-", r.dependency, ...(withSet ? [""] : [])], outdated: r.outdated })),
        ...setRows.map((r) => ({ cells: [r.section === "marketplaces" ? `${r.key} (marketplace)` : r.key, shortState(r.locked) ?? "missing", shortState(r.wanted) ?? "-", shortState(r.latest) ?? "-", r.declared ?? "-", "set"], outdated: r.outdated })),
      ];
      const table = [["Package", "Current", "Wanted", "Latest", "Saved", ...(withSet ? ["Set"] : [])], ...body.map((r) => r.cells)];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      table.forEach((row, i) => {
        const text = row.map((cell, j) => cell.padEnd(widths[j]!)).join("  ").trimEnd();
        ctx.output.line(i === 0 ? style(ctx.output, "bold", text) : body[i - 1]!.outdated ? style(ctx.output, "yellow", text) : text);
      });
      for (const r of setRows) if (r.note) ctx.output.line(style(ctx.output, "yellow", `${r.key}: ${r.note}`));
      for (const line of mkt.lines) ctx.output.line(line);
    });
};
