/**
 * `xcsh-tools show <plugin>`: everything one installed plugin brings — tools, skills, commands,
 * agents, hooks, MCP and LSP servers, output styles, monitors, bin/ executables — each with its
 * description, file, what it runs (command, arguments, environment names, `${CLAUDE_PLUGIN_ROOT}`
 * resolved), whether xcsh loads it, and its context cost in tokens (characters / 4: see
 * src/components/cost.ts). `<plugin>` is `name@marketplace`, a marketplace plugin's name or an
 * npm plugin's package name; a name installed from several places lists each.
 */
import path from "node:path";
import type { Command } from "commander";
import { XcshToolsError } from "../../core/errors.js";
import { style, type Output } from "../output.js";
import type { CommandModule } from "../context.js";
import type { InstalledPluginComponents } from "../../components/installed.js";
import type { Component, ComponentKind } from "../../components/types.js";

const ROOT_WORDS = { "xcsh-marketplace": "xcsh marketplace", "claude-cache": "Claude Code plugin cache", npm: "npm plugin" } as const;

function tokens(n: number | null): string {
  return n === null ? "?" : `~${n}`;
}

function componentLines(output: Output, root: string, c: Component): string[] {
  const rel = path.relative(root, c.file) || path.basename(c.file);
  const details = [
    ...(c.hookType ? [c.hookType] : []),
    ...(c.transport ? [c.transport] : []),
    ...(c.timeout !== undefined ? [`timeout ${c.timeout}s`] : []),
    `${tokens(c.cost.alwaysOn)} always · ${tokens(c.cost.onInvoke)} on invoke`,
  ];
  const from = c.filedAs ? ` (${c.kind} file)` : c.declaredName ? ` (name: ${c.declaredName})` : "";
  const lines = [`  ${style(output, "bold", c.name)}${from}  ${details.join("  ")}  ${c.loadedByXcsh ? style(output, "green", "loaded by xcsh") : style(output, "dim", c.piOnly ? "pi only, not loaded by xcsh" : "not used by xcsh")}`];
  if (c.description) lines.push(`    ${c.description.split("\n")[0]}`);
  if (c.exec) {
    lines.push(`    ${style(output, "yellow", "runs")}: ${[c.exec.command, ...c.exec.args].join(" ")}${c.exec.shell ? " (shell)" : ""}`);
    if (c.exec.env.length) lines.push(`    env: ${c.exec.env.join(", ")}`);
    if (c.exec.cwd) lines.push(`    cwd: ${c.exec.cwd}`);
  }
  if (c.url) lines.push(`    url: ${c.url}${c.headers?.length ? `  headers: ${c.headers.join(", ")}` : ""}`);
  lines.push(`    ${style(output, "dim", `${rel}${c.pointer ? ` ${c.pointer}` : ""}${c.note ? ` · ${c.note}` : ""}`)}`);
  return lines;
}

/** The summary helpers show needs (loaded lazily: src/components/summary.ts). */
type Summary = Pick<typeof import("../../components/summary.js"), "summarizeComponents" | "filedKind" | "countByKind">;

/** The readable form of one plugin: components under the kind Claude Code files them by (commands among skills). */
export function renderPluginComponents(output: Output, p: InstalledPluginComponents, summary: Summary, kinds: readonly ComponentKind[], words: Record<string, readonly [string, string]>): string[] {
  const lines = [`${style(output, "bold", p.id)}${p.version ? ` ${p.version}` : ""}  ${ROOT_WORDS[p.rootKind]} · ${p.scope}${p.seed ? ` · from the read-only seed ${p.seed}` : ""}${p.enabled ? "" : " · disabled"}`, `  ${style(output, "dim", p.root)}`];
  if (p.problem) {
    lines.push(`  ${style(output, "red", p.problem.code)}: ${p.problem.message}`);
    return lines;
  }
  lines.push(`Components: ${summary.summarizeComponents(p.components)}`);
  lines.push(
    `Context: ${tokens(p.cost.alwaysOn)} tokens added to every session (${tokens(p.cost.alwaysOnForXcsh)} by what xcsh loads)${p.cost.unknown ? `, plus what ${p.cost.unknown} MCP server/unvalidated tool${p.cost.unknown === 1 ? "" : "s"} list at run time` : ""}; ${tokens(p.cost.onInvoke)} more if every skill, command and agent is invoked once`,
  );
  for (const kind of kinds) {
    const of = p.components.filter((c) => summary.filedKind(c) === kind);
    if (of.length === 0) continue;
    const counted = summary.countByKind(of)[kind] ?? of.length;
    // Hooks count per event (as Claude Code counts them); each handler is still listed with what it runs.
    const handlers = kind === "hook" && counted !== of.length ? ` events, ${of.length} handlers` : "";
    lines.push("", style(output, "bold", `${words[kind]![1]![0]!.toUpperCase()}${words[kind]![1]!.slice(1)} (${counted}${handlers})`));
    for (const c of of) lines.push(...componentLines(output, p.root, c));
  }
  const issues = [...p.errors.map((e) => ["error", e] as const), ...p.warnings.map((w) => ["warning", w] as const)];
  if (issues.length) {
    lines.push("", style(output, "yellow", `Problems (${issues.length}):`));
    for (const [level, i] of issues) lines.push(`  ${level} ${i.code} ${path.relative(p.root, i.file) || "."}${i.path ? ` ${i.path}` : ""}: ${i.message}`);
  }
  return lines;
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("show <plugin>")
    .description("list every component an installed plugin brings: skills, commands, agents, hooks, MCP/LSP servers, what they run and their context cost")
    .action(async (query: string, _flags: unknown, command: Command) => {
      const ctx = getContext(command);
      const [{ installedComponents }, { findInstalledPlugin }, summary, { COMPONENT_KINDS, KIND_WORDS }] = await Promise.all([
        import("../components-view.js"),
        import("../../components/installed.js"),
        import("../../components/summary.js"),
        import("../../components/types.js"),
      ]);
      const installed = await installedComponents(ctx);
      const found = findInstalledPlugin(installed, query);
      if (found.length === 0) {
        const { didYouMean } = await import("../../core/suggest.js");
        throw new XcshToolsError("ENOT_INSTALLED", `${query} is not an installed plugin`, { hint: `${didYouMean(query, installed.map((p) => p.id))}\`xcsh-tools list\` shows the installed plugins; name one as name@marketplace or by its npm package name.` });
      }
      if (ctx.output.json) {
        ctx.output.result({ plugins: found.map((p) => ({ ...p, summary: summary.summarizeComponents(p.components), inventory: summary.claudeInventory(p.components) })) });
        return;
      }
      found.forEach((p, i) => {
        if (i > 0) ctx.output.line();
        for (const line of renderPluginComponents(ctx.output, p, summary, COMPONENT_KINDS, KIND_WORDS)) ctx.output.line(line);
      });
    });
};
