/**
 * The one name a user types for `xcsh-tools new` becomes several names, and each must satisfy
 * someone else's rules: the npm package name (npm's rules for new packages), the plugin and
 * marketplace name (the host's kebab-case segment), and the tool name the LLM calls
 * (`^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`, written snake_case here because every model API accepts
 * it). We refuse a name that breaks any of them and suggest one that satisfies all, the way
 * create-vite offers `toValidPackageName`, so a user never finds out at publish time or when the
 * model rejects the tool.
 */
import { nameSegmentProblem, npmNameProblem, toolNameProblem } from "../manifest/names.js";

/** The names a template is rendered with. */
export interface ScaffoldNames {
  /** The npm package name, as typed (`@acme/xcsh-search`, `git-status`). */
  packageName: string;
  /** The package name without its scope: plugin, marketplace and folder name. */
  bareName: string;
  /** snake_case tool name for the LLM (`xcsh_search`). */
  toolName: string;
  /** Human label (`Xcsh Search`). */
  title: string;
}

export type NameCheck = { ok: true; names: ScaffoldNames } | { ok: false; problem: string; suggestion: string };

/** The snake_case tool name of a (valid) package name's bare part. */
export function toToolName(bareName: string): string {
  return bareName
    .replace(/[^a-zA-Z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .toLowerCase()
    .slice(0, 64);
}

function toTitle(bareName: string): string {
  return bareName
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(" ");
}

/** Check `input` against every rule; on failure, say which and suggest a name that passes. */
export function checkProjectName(name: string): NameCheck {
  const problem = nameProblem(name);
  if (problem) return { ok: false, problem, suggestion: suggestProjectName(name) };
  const bareName = bareOf(name);
  return { ok: true, names: { packageName: name, bareName, toolName: toToolName(bareName), title: toTitle(bareName) } };
}

/** A package name without its scope. */
function bareOf(name: string): string {
  return name.startsWith("@") ? name.slice(name.indexOf("/") + 1) : name;
}

function nameProblem(name: string): string | undefined {
  const npm = npmNameProblem(name);
  if (npm) return `"${name}" is not a valid npm package name: ${npm}`;
  const bare = bareOf(name);
  const segment = nameSegmentProblem(bare);
  if (segment) return `"${bare}" is not a valid plugin name: ${segment}`;
  const tool = toToolName(bare);
  const toolProblem = toolNameProblem(tool);
  if (toolProblem) return `"${bare}" gives the tool name "${tool}", which an LLM rejects: ${toolProblem}`;
  if (!/^[a-z]/.test(bare)) return `"${bare}" must start with a letter (it names the tool the model calls)`;
  return undefined;
}

/** A name close to `input` that passes `checkProjectName` (kebab-case, starts with a letter). */
export function suggestProjectName(input: string): string {
  let scope = "";
  let bare = input.trim();
  const scoped = /^@([^/]*)\/(.*)$/.exec(bare);
  if (scoped) {
    const cleanScope = kebab(scoped[1]!);
    scope = cleanScope ? `@${cleanScope}/` : "";
    bare = scoped[2]!;
  }
  let fixed = kebab(bare).slice(0, 60).replace(/-+$/, "");
  if (!fixed) fixed = "my-tool";
  if (npmNameProblem(fixed)) fixed = `xcsh-${fixed}`;
  const candidate = `${scope}${fixed}`;
  return nameProblem(candidate) ? fixed : candidate;
}

function kebab(text: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1-$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .replace(/-+$/, "");
}
