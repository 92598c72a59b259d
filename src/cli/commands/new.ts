/**
 * `xcsh-tools new [name]`: scaffold a tool, plugin or marketplace from `templates/`. Flags and
 * defaults decide everything; on a terminal (stdin and stdout TTYs, no --yes, no --json) the
 * command asks for what the flags left open and before overwriting. Exit 2 for a bad name, an
 * unknown template or a non-empty target, each with a hint (the fixed name, the templates, --force).
 */
import type { Command } from "commander";
import { XcshToolsError } from "../../core/errors.js";
import type { NewProjectPlan } from "../../scaffold/index.js";
import type { CommandContext } from "../context.js";
import { style, type Output } from "../output.js";
import { canPrompt, createPrompter, type Prompter } from "../prompt.js";
import type { CommandModule } from "../context.js";

export interface NewFlags {
  template?: string;
  dir?: string;
  description?: string;
  force?: boolean;
  yes?: boolean;
  dryRun?: boolean;
}

/** The request after flags, defaults and (on a terminal) answers; exported for tests. */
export async function resolveNewRequest(
  nameArg: string | undefined,
  flags: NewFlags,
  cwd: string,
  prompter: Prompter | undefined,
): Promise<{ name: string; template: string; dir?: string; description?: string; cwd: string }> {
  const scaffold = await import("../../scaffold/index.js");
  let name = nameArg;
  if (name === undefined || name === "") {
    if (!prompter) {
      throw new XcshToolsError("ENAME_MISSING", "Which name? `xcsh-tools new` needs a name when it cannot ask", {
        hint: "Run e.g. xcsh-tools new my-tools --template plugin",
        exitCode: 2,
      });
    }
    name = await prompter.text("Name (npm package name; the tool name is derived from it)", "my-tools");
  }
  // On a terminal a bad name is asked again with the fixed one as the default.
  for (let checked = scaffold.checkProjectName(name); !checked.ok && prompter; checked = scaffold.checkProjectName(name)) {
    name = await prompter.text(`${checked.problem}. Name`, checked.suggestion);
  }
  let template = flags.template;
  if (template === undefined && prompter) {
    template = await prompter.choose(
      "Template",
      scaffold.TEMPLATES.map((t) => ({ value: t.name, label: t.summary })),
      scaffold.DEFAULT_TEMPLATE,
    );
  }
  let description = flags.description;
  const info = scaffold.findTemplate(template ?? scaffold.DEFAULT_TEMPLATE);
  const checked = scaffold.checkProjectName(name);
  if (description === undefined && prompter && info && checked.ok) {
    description = await prompter.text("Description", info.defaultDescription(checked.names));
  }
  return {
    name,
    template: template ?? scaffold.DEFAULT_TEMPLATE,
    ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
    ...(description !== undefined ? { description } : {}),
    cwd,
  };
}

function report(output: Output, plan: NewProjectPlan, dryRun: boolean): void {
  const files = plan.files.map((f) => f.path).sort();
  if (output.json) {
    output.result({ created: plan.dir, template: plan.template.name, files, nextSteps: plan.nextSteps, ...(dryRun ? { dryRun: true } : {}) });
    return;
  }
  const count = `${files.length} file${files.length === 1 ? "" : "s"}`;
  const verb = dryRun ? "Would create" : "Created";
  output.line(`${verb} ${style(output, "bold", plan.names.packageName)} from the ${plan.template.name} template in ${plan.displayDir} (${count})${dryRun ? ", nothing written (--dry-run)" : ""}:`);
  for (const file of files) output.line(`  ${file}`);
  output.line();
  output.line(style(output, "bold", "Next steps:"));
  for (const step of plan.nextSteps) output.line(`  ${step}`);
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("new [name]")
    .description("create a tool, plugin or marketplace from a template (tool, plugin, streaming, render, marketplace)")
    .option("-t, --template <template>", "tool | plugin | streaming | render | marketplace (default: plugin)")
    .option("--dir <dir>", "where to write it (default: ./<name>; .xcsh/tools for --template tool)")
    .option("--description <text>", "one line describing it (package.json, README, tool)")
    .option("--force", "write into a non-empty folder, overwriting the template's files (others are kept)")
    .option("-y, --yes", "never ask: take flags and defaults")
    .option("--dry-run", "list the files it would write, write nothing")
    .action(async (nameArg: string | undefined, flags: NewFlags, command: Command) => {
      const ctx: CommandContext = getContext(command);
      const interactive = !flags.yes && !ctx.output.json && canPrompt(process.stdin, process.stdout);
      const prompter = interactive ? createPrompter(process.stdin, process.stdout) : undefined;
      try {
        const scaffold = await import("../../scaffold/index.js");
        const request = await resolveNewRequest(nameArg, flags, ctx.cwd, prompter);
        const { isProjectTrustedByUser, trustWorldOf } = await import("../../core/trust.js");
        const plan = await scaffold.planNewProject({ ...request, isProjectTrusted: (project) => isProjectTrustedByUser(project, trustWorldOf(ctx.roots)) });
        const conflict = scaffold.targetConflictError(plan);
        if (conflict && !flags.force && !flags.dryRun) {
          const overwrite = prompter ? await prompter.confirm(`${plan.conflicts.join("; ")}. Overwrite the template's files?`, false) : false;
          if (!overwrite) throw conflict;
        }
        if (conflict && flags.dryRun && !flags.force) ctx.output.note(`warning: ${conflict.message} (--force would overwrite)`);
        if (!flags.dryRun) await scaffold.applyNewProject(plan);
        report(ctx.output, plan, Boolean(flags.dryRun));
      } finally {
        prompter?.close();
      }
    });
};

