/**
 * `xcsh-tools outdated [name...]`: current / wanted / latest of installed registry plugins, as
 * npm shows them. A registry that cannot be reached is `EREGISTRY` (exit 1), never "up to date".
 * Exit 0 whether or not something is outdated (the JSON says which).
 */
import type { Command } from "commander";
import { mutationWorld } from "../plugin-world.js";
import { npmClient, withProgress } from "../plugin-command.js";
import { style } from "../output.js";
import type { CommandModule } from "../context.js";

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("outdated [name...]")
    .description("show current, wanted (within the saved range) and latest versions of installed plugins")
    .action(async (names: string[], _flags: unknown, command: Command) => {
      const ctx = getContext(command);
      const mkt = await (await import("./marketplace.js")).outdatedSection(ctx, names);
      if (mkt.handled) return;
      const { parsePackageName } = await import("../../plugins/spec.js");
      const wanted = names.map(parsePackageName);
      const { readStateForQuery } = await import("../../plugins/mutation.js");
      const { loadInventory } = await import("../../plugins/inventory.js");
      const { checkOutdated } = await import("../../plugins/outdated.js");
      const { notInstalled } = await import("../../plugins/plan.js");
      const world = await mutationWorld(ctx);
      const client = await npmClient(ctx);
      const rows = await withProgress(ctx, "Checking the registry", async () => {
        const inventory = await loadInventory(await readStateForQuery(world));
        for (const name of wanted) {
          if (!inventory.some((p) => p.name === name)) throw notInstalled(name, inventory);
        }
        return checkOutdated(wanted.length > 0 ? inventory.filter((p) => wanted.includes(p.name)) : inventory, client);
      });
      if (ctx.output.json) {
        ctx.output.result({ ...mkt.json, plugins: Object.fromEntries(rows.map((r) => [r.name, { current: r.current ?? null, wanted: r.wanted, latest: r.latest, dependency: r.dependency, source: r.source, outdated: r.outdated }])) });
        return;
      }
      if (rows.length === 0) {
        ctx.output.line(mkt.lines.length ? "No npm plugins installed." : "No plugins installed.");
        for (const line of mkt.lines) ctx.output.line(line);
        return;
      }
      const table = [["Package", "Current", "Wanted", "Latest", "Saved"], ...rows.map((r) => [r.name, r.current ?? "missing", r.wanted ?? "-", r.latest ?? "-", r.dependency])];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      table.forEach((row, i) => {
        const text = row.map((cell, j) => cell.padEnd(widths[j]!)).join("  ").trimEnd();
        ctx.output.line(i === 0 ? style(ctx.output, "bold", text) : rows[i - 1]!.outdated ? style(ctx.output, "yellow", text) : text);
      });
      for (const line of mkt.lines) ctx.output.line(line);
    });
};
