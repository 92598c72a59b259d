/**
 * `xcsh-tools new`, as an engine: plan, then apply. `planNewProject` checks the
 * name, finds the template, renders every file in memory and lists what it would overwrite;
 * nothing is written, so `--dry-run` is the plan printed and the CLI can ask before overwriting.
 * `applyNewProject` writes the plan. A project that goes into a folder that does not exist yet
 * is written into a hidden sibling first and renamed into place, so a failure half-way leaves no
 * half-made project under the name the user asked for.
 */
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { nameSegmentProblem } from "../manifest/names.js";
import { checkProjectName, type ScaffoldNames } from "./names.js";
import { renderTemplate, type RenderedFile } from "./render.js";
import { DEFAULT_TEMPLATE, TEMPLATES, dependencyRanges, findTemplate, templateDir, type TargetTrust, type TemplateInfo } from "./templates.js";

export { DEFAULT_TEMPLATE, TEMPLATES, findTemplate, type TemplateInfo } from "./templates.js";
export { checkProjectName, type ScaffoldNames } from "./names.js";

/** What the user asked for. */
export interface NewProjectRequest {
  name: string;
  /** Default `plugin`. */
  template?: string;
  /** Target folder, relative to `cwd`; default the template's (the bare name, or `.xcsh/tools`). */
  dir?: string;
  description?: string;
  cwd: string;
  /**
   * Whether the user trusts the project at this folder (the CLI asks the trust record). A tool
   * written into an untrusted project's tools folder gets `xcsh-tools trust` in its next steps;
   * without this answer every project counts as untrusted, as on a new user's machine.
   */
  isProjectTrusted?: (projectDir: string) => boolean;
}

/** Everything `new` will do, computed without writing. */
export interface NewProjectPlan {
  template: TemplateInfo;
  names: ScaffoldNames;
  vars: Readonly<Record<string, string>>;
  /** Absolute target folder. */
  dir: string;
  /** The target as the user should type it in `cd` (relative to cwd when inside it). */
  displayDir: string;
  files: RenderedFile[];
  /** Why writing would clobber something: files that exist, or a non-empty project folder. */
  conflicts: string[];
  /** Whether the target folder exists already. */
  targetExists: boolean;
  nextSteps: string[];
}

/** Check, render and look at the target; throws `ENAME_INVALID` / `ETEMPLATE_UNKNOWN` (exit 2). */
export async function planNewProject(request: NewProjectRequest): Promise<NewProjectPlan> {
  const templateName = request.template ?? DEFAULT_TEMPLATE;
  const template = findTemplate(templateName);
  if (!template) {
    throw new XcshToolsError("ETEMPLATE_UNKNOWN", `There is no template "${templateName}"`, {
      hint: `Use one of: ${TEMPLATES.map((t) => t.name).join(", ")} (e.g. --template ${DEFAULT_TEMPLATE}).`,
      exitCode: 2,
    });
  }
  const checked = checkProjectName(request.name);
  if (!checked.ok) {
    throw new XcshToolsError("ENAME_INVALID", checked.problem, {
      hint: `Use "${checked.suggestion}": xcsh-tools new ${checked.suggestion}${templateName === DEFAULT_TEMPLATE ? "" : ` --template ${templateName}`}`,
      exitCode: 2,
    });
  }
  const names = checked.names;
  const extra = template.extraVars?.(names) ?? {};
  const pluginProblem = extra.pluginName !== undefined ? nameSegmentProblem(extra.pluginName) : undefined;
  if (pluginProblem) throw new XcshToolsError("ENAME_INVALID", `"${request.name}" makes the plugin name "${extra.pluginName}", which is invalid: ${pluginProblem}`, { hint: "Use a shorter name.", exitCode: 2 });
  const vars: Record<string, string> = {
    name: names.packageName,
    packageName: names.packageName,
    bareName: names.bareName,
    toolName: names.toolName,
    title: names.title,
    description: request.description?.trim() || template.defaultDescription(names),
    ...dependencyRanges(),
    ...extra,
  };
  // Descriptions land inside JSON strings and TS string literals: keep them one safe line.
  vars.description = vars.description!.replace(/[\r\n]+/g, " ").replace(/["\\`$]/g, "");
  const dir = path.resolve(request.cwd, request.dir ?? template.defaultDir(names));
  const displayDir = asTyped(request.cwd, dir);
  const files = await renderTemplate(templateDir(template.name), vars);

  const info = await stat(dir).catch(() => undefined);
  if (info && !info.isDirectory()) {
    throw new XcshToolsError("ETARGET_NOT_DIR", `${dir} exists and is not a folder`, { hint: "Pass another --dir.", exitCode: 2 });
  }
  const conflicts: string[] = [];
  if (info) {
    if (template.kind === "project") {
      const entries = (await readdir(dir)).filter((e) => e !== ".git");
      if (entries.length > 0) conflicts.push(`${dir} is not empty (${entries.slice(0, 5).join(", ")}${entries.length > 5 ? ", ..." : ""})`);
    } else {
      for (const file of files) {
        if (await stat(path.join(dir, file.path)).catch(() => undefined)) conflicts.push(`${path.join(dir, file.path)} exists`);
      }
    }
  }
  return {
    template,
    names,
    vars,
    dir,
    displayDir,
    files,
    conflicts,
    targetExists: Boolean(info),
    nextSteps: template.nextSteps(displayDir, names, vars, targetTrust(request, dir)),
  };
}

/**
 * The project a tools folder belongs to when the target is `<project>/.xcsh/tools` and the user
 * has not trusted that project: discovery reads a project's `.xcsh/tools` only once it is trusted.
 */
function targetTrust(request: NewProjectRequest, dir: string): TargetTrust {
  if (path.basename(dir) !== "tools" || path.basename(path.dirname(dir)) !== ".xcsh") return {};
  const project = path.dirname(path.dirname(dir));
  if (request.isProjectTrusted?.(project) === true) return {};
  return { untrustedProject: asTyped(request.cwd, project) };
}

/** A folder as the user should type it from `cwd`: relative when inside it (`.` for cwd), else absolute. */
function asTyped(cwd: string, dir: string): string {
  const relative = path.relative(cwd, dir);
  return relative === "" ? "." : relative.startsWith("..") || path.isAbsolute(relative) ? dir : relative.split(path.sep).join("/");
}

/** The coded refusal for a plan with conflicts (exit 2), or undefined when there are none. */
export function targetConflictError(plan: NewProjectPlan): XcshToolsError | undefined {
  if (plan.conflicts.length === 0) return undefined;
  return new XcshToolsError("ETARGET_NOT_EMPTY", `Refusing to write ${plan.template.name} into ${plan.dir}: ${plan.conflicts.join("; ")}`, {
    hint: "Pick another --dir, or pass --force to overwrite the template's files (other files are kept).",
    file: plan.dir,
    exitCode: 2,
  });
}

/** Write the plan's files. Overwrites the template's own files; never deletes anything else. */
export async function applyNewProject(plan: NewProjectPlan): Promise<void> {
  if (plan.template.kind === "project" && !plan.targetExists) {
    const parent = path.dirname(plan.dir);
    await mkdir(parent, { recursive: true });
    const staging = path.join(parent, `.${path.basename(plan.dir)}.xcsh-tools-new-${process.pid}`);
    try {
      await writeFiles(staging, plan.files);
      await rename(staging, plan.dir);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
    return;
  }
  await writeFiles(plan.dir, plan.files);
}

async function writeFiles(root: string, files: RenderedFile[]): Promise<void> {
  for (const file of files) {
    const target = path.join(root, ...file.path.split("/"));
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, file.content);
  }
}
