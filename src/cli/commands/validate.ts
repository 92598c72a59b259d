/**
 * `xcsh-tools validate [path]`: check a tool, tools folder, plugin package, marketplace
 * repository or plugin.json the way the host will load it. Exit 0 valid (warnings allowed unless
 * --strict), 1 invalid, 2 usage (bad flags, nothing at the path).
 */
import type { Command } from "commander";
import type { ValidateIssue, ValidateReport } from "../../validate/index.js";
import { userPaths } from "../../validate/display.js";
import type { CommandContext } from "../context.js";
import { style, type Output } from "../output.js";
import { ReportedFailure, usageError } from "../command-errors.js";
import type { CommandModule } from "../context.js";
import { summarizeComponents } from "../../components/summary.js";

/** The readable report: findings grouped by file, errors before warnings, each with its fix. */
export function renderValidateReport(report: ValidateReport, output: Pick<Output, "color">, cwd: string): string[] {
  const shown = userPaths(report.target.given, cwd);
  const rel = shown.file;
  const lines: string[] = [];
  const byFile = new Map<string, { errors: ValidateIssue[]; warnings: ValidateIssue[] }>();
  for (const [list, key] of [[report.errors, "errors"], [report.warnings, "warnings"]] as const) {
    for (const issue of list) {
      const group = byFile.get(issue.file) ?? { errors: [], warnings: [] };
      group[key].push(issue);
      byFile.set(issue.file, group);
    }
  }
  for (const [file, group] of byFile) {
    lines.push(style(output, "bold", rel(file)));
    for (const [issues, label, color] of [[group.errors, "error", "red"], [group.warnings, "warning", "yellow"]] as const) {
      for (const issue of issues) {
        const where = issue.path ? ` ${style(output, "cyan", issue.path)}` : "";
        // Messages of documents start with the path already; do not print it twice.
        const message = shown.text(issue.path && issue.message.startsWith(`${issue.path}: `) ? issue.message.slice(issue.path.length + 2) : issue.message);
        lines.push(`  ${style(output, color, label)} ${issue.code}${where}: ${message}`);
        if (issue.hint) lines.push(`    ${style(output, "dim", `fix: ${shown.text(issue.hint)}`)}`);
      }
    }
    lines.push("");
  }
  if (report.tools.length > 0) {
    lines.push(style(output, "bold", "Tools"));
    for (const tool of report.tools) lines.push(`  ${tool.name}  ${style(output, "dim", rel(tool.file))}`);
    lines.push("");
  }
  if (report.components.length > 0) {
    lines.push(`${style(output, "bold", "Components")}  ${summarizeComponents(report.components)}`);
    for (const c of report.components) {
      const run = c.exec ? `  runs: ${[c.exec.command, ...c.exec.args].join(" ")}` : "";
      lines.push(`  ${c.kind} ${c.name}  ${style(output, "dim", `${c.loadedByXcsh ? "loaded by xcsh" : c.piOnly ? "pi only, not loaded by xcsh" : "not used by xcsh"} · ${rel(c.file)}`)}${run}`);
    }
    lines.push("");
  }
  const counts = `${report.errors.length} error${report.errors.length === 1 ? "" : "s"}, ${report.warnings.length} warning${report.warnings.length === 1 ? "" : "s"}`;
  const what = `${report.target.kind} ${rel(report.target.path)}: ${report.tools.length} tool${report.tools.length === 1 ? "" : "s"} from ${report.modules} module${report.modules === 1 ? "" : "s"}`;
  lines.push(report.ok ? `${style(output, "green", "✓ valid")} ${what} (${counts}, ${report.durationMs} ms)` : `${style(output, "red", "✗ invalid")} ${what} (${counts}, ${report.durationMs} ms)`);
  return lines;
}

/** The `--json` document. */
export function validateReportJson(report: ValidateReport) {
  const issue = (i: ValidateIssue) => ({ file: i.file, path: i.path, code: i.code, message: i.message, ...(i.hint ? { hint: i.hint } : {}), ...(i.expected ? { expected: i.expected } : {}), ...(i.found ? { found: i.found } : {}) });
  return {
    ok: report.ok,
    target: report.target,
    errors: report.errors.map(issue),
    warnings: report.warnings.map(issue),
    tools: report.tools,
    components: report.components,
    durationMs: report.durationMs,
  };
}

export const register: CommandModule["register"] = (program, getContext) => {
    program
      .command("validate [path]")
      .description("check a tool, tools folder, plugin package, marketplace or plugin.json the way the host loads it")
      .option("--builtins <names>", "extra built-in tool names, comma-separated (added to the host's defaults)")
      .option("--strict", "treat warnings as errors")
      .option("--timeout <ms>", "time one module may take to import and build its tools (default 15000)")
      .option("--static", "only static checks: do not import tool modules")
      .option("--pi <module>", "the module whose exports factories get as api.pi (default: @f5-sales-demo/xcsh where the tool's folder resolves it)")
      .action(async (target: string | undefined, flags: { builtins?: string; strict?: boolean; timeout?: string; static?: boolean; pi?: string }, command: Command) => {
        const ctx: CommandContext = getContext(command);
        let moduleTimeoutMs: number | undefined;
        if (flags.timeout !== undefined) {
          moduleTimeoutMs = Number(flags.timeout);
          if (!Number.isInteger(moduleTimeoutMs) || moduleTimeoutMs <= 0) throw usageError(`--timeout must be a positive number of milliseconds, got "${flags.timeout}"`, "Pass e.g. --timeout 5000.");
        }
        const builtins = flags.builtins?.split(",").map((s) => s.trim()).filter(Boolean) ?? [];
        if (flags.pi !== undefined) (await import("../../host/host-exports.js")).assertHostExportsModule(flags.pi, ctx.cwd);
        const { validatePath } = await import("../../validate/index.js");
        const report = await validatePath(target ?? ".", {
          cwd: ctx.cwd,
          builtins,
          strict: Boolean(flags.strict),
          staticOnly: Boolean(flags.static),
          home: ctx.roots.home,
          xcshHome: ctx.roots.xcshHome,
          ...(flags.pi !== undefined ? { piModule: flags.pi } : {}),
          ...(moduleTimeoutMs !== undefined ? { moduleTimeoutMs } : {}),
        });
        if (ctx.output.json) ctx.output.result(validateReportJson(report));
        else for (const line of renderValidateReport(report, ctx.output, ctx.cwd)) ctx.output.line(line);
        if (!report.ok) throw new ReportedFailure(1);
      });
};
