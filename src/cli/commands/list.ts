/**
 * `xcsh-tools list`: installed npm plugins — name, version, enabled, features, the spec they were
 * installed from, linked or not, the install scripts they declare — read the way the host reads
 * them, the project's `.xcsh/plugin-overrides.json` included (in a trusted project; in another
 * one the project's entries are "not loaded: project not trusted"). An interrupted command is
 * recovered first, so the list never shows a half-applied change. Each plugin also gets a line
 * of what it brings by kind ("2 skills, 1 command, 4 hooks, 1 MCP server") and the tokens it adds
 * to every session (src/components), and the list ends with the total.
 */
import type { Command } from "commander";
import { style } from "../output.js";
import { notLoadedLine, projectNotLoaded } from "../project-scope.js";
import { readStateView } from "../state-command.js";
import path from "node:path";
import type { CommandContext, CommandModule } from "../context.js";
import type { Who } from "../../manifest/team-set.js";
import type { StateView } from "../../plugins/state-change.js";

/** The word before a local source's path in a listed line (the path alone could be either). */
const LOCAL_KIND: Record<string, string> = { directory: "folder ", tarball: "tarball " };

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("list")
    .alias("ls")
    .description("list installed plugins (npm and marketplace): version, enabled, features, source")
    .option("--scope <scope>", "only marketplace plugins of this scope (user or project)")
    .action(async (flags: { scope?: string }, command: Command) => {
      const ctx = getContext(command);
      const [{ installedComponents, componentSummaryJson }, { summarizeComponents, countByKind, formatTokens }] = await Promise.all([import("../components-view.js"), import("../../components/summary.js")]);
      // Read after the engines' listings, which finish an interrupted command first.
      let reading: ReturnType<typeof installedComponents> | undefined;
      const components = () => (reading ??= installedComponents(ctx));
      // One line per plugin: what it brings by kind and what it adds to every session's context.
      type Installed = Awaited<ReturnType<typeof installedComponents>>;
      const describe = (p: Installed[number] | undefined) => {
        if (!p || p.problem) return undefined;
        const summary = summarizeComponents(p.components);
        const cost = p.cost.alwaysOn + p.cost.unknown > 0 ? ` · ${formatTokens(p.cost.alwaysOn)} tokens every session${p.cost.unknown ? ` (+${p.cost.unknown} unknown)` : ""}` : "";
        return { line: style(ctx.output, "dim", `components: ${summary}${cost}`), json: componentSummaryJson(p, summary, countByKind(p.components)) };
      };
      const mkt = await (await import("../marketplace-list.js")).listSection(ctx, flags, async (row) => describe((await components()).find((p) => p.root === row.installPath)));
      const { enabledState } = await import("../../plugins/state-change.js");
      // The project's overrides count as the host counts them: a plugin this project disables is
      // disabled here, whatever the user-level state says.
      const view = await readStateView(ctx);
      const installed: Installed = await components();
      // An untrusted project's installs and overrides are left out, unread: say so.
      const notLoaded = projectNotLoaded(ctx, [...mkt.notLoaded, ...(view.overrides.untrusted?.present ? [view.overrides.file] : [])]);
      // Who decided each plugin of the project's set (only in a trusted project: its files are read).
      const team = notLoaded === undefined && (await ctx.projectTrusted()) ? await teamRows(ctx, view) : [];
      const decided = new Map(team.map(({ row }) => [row.key, row.decidedBy]));
      // The user's own plugins a seed hides (the seed's copy loads): said on the item, never silent.
      const hidden = new Map((await (await import("../seeded.js")).hiddenBySeeds(ctx)).map((h) => [h.name, h]));
      // Each npm plugin's components, described once for its JSON item and its printed line.
      const componentLines = new Map<string, string>();
      const items = view.inventory.map((p) => {
        const { enabled, user, projectDisabled } = enabledState(view, p.name);
        const components = describe(installed.find((c) => c.rootKind === "npm" && c.seed === undefined && c.id === p.name));
        if (components) componentLines.set(p.name, components.line);
        return {
          name: p.name,
          version: p.version ?? null,
          enabled,
          user,
          projectDisabled,
          features: p.runtime?.enabledFeatures ?? null,
          spec: p.record?.spec ?? p.dependency,
          dependency: p.dependency,
          source: p.linked ? "link" : (p.record?.source ?? "registry"),
          linked: p.linked,
          ...(p.linked ? { linkTarget: p.linkTarget ?? null } : {}),
          scripts: p.scripts,
          scriptsRan: p.record?.scriptsRan ?? false,
          path: p.dir,
          ...(p.manifest?.description ? { description: p.manifest.description } : {}),
          ...(p.problem ? { problem: p.problem } : {}),
          ...(components ? { components: components.json } : {}),
          ...(decided.has(p.name) ? { decidedBy: decided.get(p.name) } : {}),
          ...(hidden.has(p.name) ? { hiddenBySeed: hidden.get(p.name)!.seed } : {}),
        };
      });
      // Plugins the seeds provide, used in place (a seed wins over the user's copy of a name).
      const seededLines: string[] = [];
      const seeded = installed.filter((p) => p.seed !== undefined).map((p) => {
        const components = describe(p);
        seededLines.push(`  ${style(ctx.output, "bold", p.name)}@${p.version ?? "?"}  from seed ${p.seed}`, ...(p.problem ? [`    ${style(ctx.output, "red", p.problem.code)}: ${p.problem.message}`] : components ? [`    ${components.line}`] : []));
        return { name: p.name, version: p.version ?? null, seed: p.seed!, path: p.root, ...(p.problem ? { problem: p.problem } : {}), ...(components ? { components: components.json } : {}) };
      });
      if (seededLines.length > 0) seededLines.unshift(style(ctx.output, "bold", "From plugin seeds (read-only, XCSH_PLUGIN_SEED_DIR):"));
      // A user's copy a seed hides loads nothing: the seed's copy is counted instead.
      const counted = installed.filter((p) => !p.problem && !p.hiddenBySeed && (p.rootKind !== "claude-cache") && (flags.scope === undefined || p.rootKind === "npm" || p.scope === flags.scope));
      const total = { alwaysOn: counted.reduce((n, p) => n + p.cost.alwaysOn, 0), alwaysOnForXcsh: counted.reduce((n, p) => n + p.cost.alwaysOnForXcsh, 0) };
      const totalLine = total.alwaysOn > 0 ? `Context: ${formatTokens(total.alwaysOn)} tokens added to every session by these plugins (${formatTokens(total.alwaysOnForXcsh)} by what xcsh loads); \`xcsh-tools show <plugin>\` has the details.` : undefined;
      // A policy file that cannot be used stops every change; the listing goes on and says so.
      const policy = (await import("../../core/policy.js")).loadManagedPolicy();
      const policyError = policy.state === "broken" ? { code: policy.error.code, message: policy.error.message } : undefined;
      if (ctx.output.json) {
        ctx.output.result({ plugins: items, ...(seeded.length > 0 ? { seeded } : {}), ...mkt.json, ...(team.length > 0 ? { teamSet: team.map(({ row }) => row) } : {}), contextTokens: total, ...(notLoaded ? { projectNotLoaded: notLoaded } : {}), ...(policyError ? { policyError } : {}) });
        return;
      }
      if (policyError) ctx.output.note(`warning: ${policyError.message} (${policyError.code}): no change can be made and no plugin is loaded until the administrator fixes it`);
      if (notLoaded) ctx.output.line(notLoadedLine(ctx, notLoaded));
      if (items.length === 0) {
        if (mkt.lines.length === 0 && seededLines.length === 0) ctx.output.line("No plugins installed. Install one with `xcsh-tools install <package>`.");
        for (const line of seededLines) ctx.output.line(line);
        for (const line of mkt.lines) ctx.output.line(line);
        for (const line of teamLines(ctx, team)) ctx.output.line(line);
        if (totalLine) ctx.output.line(totalLine);
        return;
      }
      for (const item of items) {
        const flags = [
          item.enabled ? style(ctx.output, "green", "enabled") : style(ctx.output, "dim", item.projectDisabled ? "disabled in this project" : "disabled"),
          `features: ${item.features === null ? "defaults" : item.features.length ? item.features.join(",") : "none"}`,
          item.linked ? `linked → ${item.linkTarget ?? "?"}` : `from ${LOCAL_KIND[item.source] ?? ""}${item.spec}`,
          ...(item.scripts.length ? [style(ctx.output, "yellow", `scripts: ${item.scripts.join(",")}${item.scriptsRan ? " (ran)" : " (not run)"}`)] : []),
        ];
        ctx.output.line(`${style(ctx.output, "bold", item.name)}@${item.version ?? "missing"}  ${flags.join("  ")}`);
        if (item.problem) ctx.output.line(`  ${style(ctx.output, "red", "problem")}: ${item.problem}`);
        const hides = hidden.get(item.name);
        if (hides) ctx.output.line(`  ${style(ctx.output, "yellow", `warning ${hides.code}`)}: ${hides.message}. ${hides.hint}`);
        const components = componentLines.get(item.name);
        if (components) ctx.output.line(`  ${components}`);
      }
      for (const line of seededLines) ctx.output.line(line);
      for (const line of mkt.lines) ctx.output.line(line);
      for (const line of teamLines(ctx, team)) ctx.output.line(line);
      if (totalLine) ctx.output.line(totalLine);
    });
};

/** One plugin of the project's set and who decided whether it loads here. */
interface TeamRow {
  key: string;
  kind: "npm" | "marketplace";
  enabled: boolean;
  decidedBy: Who["by"];
  /** The file that decided, relative to the project root (the user's runtime lock: absolute). */
  file: string;
}

/** The project's set with who decided each plugin's state: the personal choices over the committed files (teamset/set.ts). */
async function teamRows(ctx: CommandContext, view: StateView): Promise<{ row: TeamRow; said: string }[]> {
  const { projectRootOf } = await import("../../core/paths.js");
  const root = projectRootOf(ctx.cwd, ctx.roots);
  if (root === undefined) return [];
  const { loadTeamSet } = await import("../../teamset/index.js");
  // npm plugins this user switched off everywhere (runtime lock `enabled: false`) stay off in the set too.
  const userDisabled = new Map(Object.entries(view.state.runtimeLock?.plugins ?? {}).filter(([, e]) => e?.enabled === false).map(([name]) => [name, view.state.paths.runtimeLock]));
  let set: ReturnType<typeof loadTeamSet>;
  try {
    set = loadTeamSet(root, { ...(ctx.roots.configDirName ? { configDirName: ctx.roots.configDirName } : {}), userDisabled });
  } catch (error) {
    // A broken set file is `install`'s and `validate`'s error to report; the listing of what is installed goes on.
    ctx.output.note(`warning: the project's plugin set was not read: ${(error as Error).message}`);
    return [];
  }
  if (!set) return [];
  const { decidedBy } = await import("../team-restore.js");
  return [...set.plugins.values()].map((p) => {
    const rel = path.relative(root, p.enabledBy.file);
    const row: TeamRow = { key: p.key, kind: p.kind, enabled: p.enabled, decidedBy: p.enabledBy.by, file: rel.startsWith("..") || path.isAbsolute(rel) ? p.enabledBy.file : rel };
    // Said as the restore says an opt-out: `you (.xcsh/team.local.json)`.
    return { row, said: decidedBy(root, p.enabledBy) };
  });
}

/** The "decided by" lines: `old@acme  off — you (.xcsh/team.local.json)`. */
function teamLines(ctx: CommandContext, rows: readonly { row: TeamRow; said: string }[]): string[] {
  if (rows.length === 0) return [];
  const width = Math.max(...rows.map(({ row }) => row.key.length));
  return [
    style(ctx.output, "bold", "Project set (decided by):"),
    ...rows.map(({ row, said }) => `  ${row.key.padEnd(width)}  ${row.enabled ? style(ctx.output, "green", "on") : style(ctx.output, "dim", "off")} — ${said}`),
  ];
}
