/**
 * The templates `xcsh-tools new` knows, and what differs between them beyond their files: where
 * they go by default, what a user does next, and which extra names they need. The files
 * themselves are plain folders in `templates/<name>/` (rendered by render.ts), so a template is
 * edited as the project it produces, not as strings in code.
 */
import { readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { semver } from "../core/npm-spec.js";
import type { ScaffoldNames } from "./names.js";

export interface TemplateInfo {
  name: string;
  /** One line for `--help` and the prompt. */
  summary: string;
  /** `file`: files dropped into an existing folder (a tools folder); `project`: a new folder. */
  kind: "file" | "project";
  /** The default `--dir`, relative to cwd. */
  defaultDir(names: ScaffoldNames): string;
  /** The description used when none is given. */
  defaultDescription(names: ScaffoldNames): string;
  /** Extra placeholders of this template. */
  extraVars?(names: ScaffoldNames): Record<string, string>;
  /** What to run next; `dir` is the target as the user should type it. */
  nextSteps(dir: string, names: ScaffoldNames, vars: Readonly<Record<string, string>>, where: TargetTrust): string[];
}

/** Whether the files land in a project the user has not trusted yet (its tools would not load). */
export interface TargetTrust {
  /** The untrusted project as the user should type it after `xcsh-tools trust` (`.` for cwd). */
  untrustedProject?: string;
}

/** What a new package's author runs next: into its folder, install, test, then `then`. */
const stepsIn = (dir: string, ...then: string[]) => [...(dir === "." ? [] : [`cd ${quoteArg(dir)}`]), "npm install", "npm test", ...then];

/** A template that makes an npm plugin package in a new folder named after the package. */
const packageTemplate = (name: string, summary: string, defaultDescription: TemplateInfo["defaultDescription"]): TemplateInfo => ({
  name,
  summary,
  kind: "project",
  defaultDir: (n) => n.bareName,
  defaultDescription,
  nextSteps: (dir) => stepsIn(dir, "xcsh-tools link ."),
});

/** Every template, in the order the prompt offers them. */
export const TEMPLATES: readonly TemplateInfo[] = [
  packageTemplate("plugin", "an npm plugin package: two tools, an optional feature, settings, a README and tests", (n) => `${n.title}: custom tools for the xcsh coding agent`),
  {
    name: "tool",
    summary: "one TypeScript tool file for .xcsh/tools (or ~/.xcsh/agent/tools)",
    kind: "file",
    defaultDir: () => ".xcsh/tools",
    defaultDescription: (n) => `${n.title}: describe what the tool does, for the model`,
    nextSteps: (dir, n, _vars, where) => [
      `xcsh-tools validate ${quoteArg(`${dir}/${n.toolName}.ts`)}`,
      // Without it, `tools` and the host leave the new tool out ("not loaded: project not trusted").
      ...(where.untrustedProject === undefined ? [] : [`xcsh-tools trust${where.untrustedProject === "." ? "" : ` ${quoteArg(where.untrustedProject)}`}   # a project's own tools load only once you trust it`]),
      "xcsh-tools tools",
    ],
  },
  packageTemplate("streaming", "a tool that streams progress, cancels its subprocesses and restores state per session", () => "Run npm scripts one after another, streaming progress"),
  packageTemplate("render", "a tool with its own renderCall / renderResult for the TUI", () => "Show a checklist with its own TUI rendering"),
  {
    name: "marketplace",
    summary: "a marketplace repository with one plugin, for xcsh and Claude Code",
    kind: "project",
    defaultDir: (n) => n.bareName,
    defaultDescription: (n) => `${n.title}: a marketplace of xcsh tools`,
    extraVars: (n) => ({ pluginName: `${n.bareName}-plugin` }),
    nextSteps: (dir, _n, vars) => stepsIn(dir, "xcsh-tools marketplace add .", `xcsh-tools install ${vars.pluginName}@${vars.bareName}`),
  },
];

export const DEFAULT_TEMPLATE = "plugin";

/** The template called `name`, if any. */
export function findTemplate(name: string): TemplateInfo | undefined {
  return TEMPLATES.find((t) => t.name === name);
}

/** The folder of a template's files (next to dist/ in the package, next to src/ in a checkout). */
export function templateDir(name: string): string {
  return fileURLToPath(new URL(`../../templates/${name}/`, import.meta.url));
}

interface OwnPackage {
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

let own: OwnPackage | undefined;
function ownPackage(): OwnPackage {
  own ??= JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as OwnPackage;
  return own;
}

/** `^<lowest version of our range>` (or `^<major>.<minor>.0` with `minorOnly`). */
function caretOf(range: string | undefined, fallback: string, minorOnly = false): string {
  const min = range ? semver.minVersion(range) : null;
  if (!min) return fallback;
  return minorOnly ? `^${min.major}.${min.minor}.0` : `^${min.version}`;
}

/**
 * The dependency on xcsh-tools a scaffolded package gets, so that its `npm install` finds the
 * xcsh-tools that made it, offline too: `^<version>` when the running copy was installed by a
 * package manager (it lives in a `node_modules` folder: npm, npx's cache, a global install from a
 * registry), else `file:<the folder it runs from>` (a clone, `npm link` or `npm install -g .`,
 * whose version no registry has). `packageRoot` is the folder of our package.json.
 */
export function xcshToolsDependency(packageRoot: string, version: string): string {
  let real = packageRoot;
  try {
    real = realpathSync(packageRoot);
  } catch {
    // A root we cannot resolve is used as it is.
  }
  const parent = path.dirname(real);
  const inNodeModules = path.basename(parent) === "node_modules" || (path.basename(parent).startsWith("@") && path.basename(path.dirname(parent)) === "node_modules");
  return inNodeModules ? `^${version}` : `file:${real}`;
}

/** Versions the rendered package.json files pin: ours (see `xcshToolsDependency`), and the majors we test with. */
export function dependencyRanges(): Record<string, string> {
  const pkg = ownPackage();
  return {
    xcshToolsRange: xcshToolsDependency(fileURLToPath(new URL("../../", import.meta.url)), pkg.version),
    vitestRange: caretOf(pkg.devDependencies?.vitest, "^4.1.0"),
    typescriptRange: caretOf(pkg.devDependencies?.typescript, "^5.9.0"),
    typeboxRange: caretOf(pkg.dependencies?.["@sinclair/typebox"], "^0.34.0", true),
  };
}

/** Quote a path for a POSIX shell when it needs it. */
export function quoteArg(arg: string): string {
  return /^[A-Za-z0-9_./~@:+-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
