/**
 * `~/.xcsh/plugins/package.json`: the npm project that holds installed plugins. Its
 * `dependencies` are the source of truth for which plugins exist.
 */
import { Type, type Static } from "./typebox.js";
import { isRegistryVersionSpec, npa } from "../core/npm-spec.js";
import { npmGitSpecProblem, sourceArgHint } from "../core/source-args.js";
import { npmNameProblem } from "./names.js";
import { IssueCollector, pointer, type ValidationResult } from "./result.js";
import { checkSchema } from "./schema-check.js";

export const PluginsPackageJsonSchema = Type.Object({
  name: Type.Optional(Type.String()),
  private: Type.Optional(Type.Boolean()),
  dependencies: Type.Optional(Type.Record(Type.String(), Type.String())),
});
export type PluginsPackageJson = Static<typeof PluginsPackageJsonSchema>;

/** The file the host creates when none exists. */
export const EMPTY_PLUGINS_PACKAGE_JSON: PluginsPackageJson = { name: "xcsh-plugins", private: true, dependencies: {} };

/** How the git specs of a plugins package.json are judged. */
export interface PluginsPackageOptions {
  /**
   * Whether the dependency `name` may be a local repository (`git+file://…`, a path): only one the
   * user typed, which the caller knows from our install record. Default: none may.
   */
  localGit?: (name: string) => boolean;
}

/**
 * Strict check: shape, each dependency a valid package name with a spec npm understands, and each
 * git spec by core/source-args.ts's rules (`npmGitSpecProblem`). The file is read back from state
 * and arborist hands its specs to git: a hand edit must not smuggle an option-shaped URL or ref,
 * a remote helper, or a clone of a repository on the user's disk into a command.
 */
export function validatePluginsPackageJson(value: unknown, options: PluginsPackageOptions = {}): ValidationResult<PluginsPackageJson> {
  const out = new IssueCollector();
  const shape = checkSchema(PluginsPackageJsonSchema, value);
  out.absorb(shape);
  if (!shape.ok) return out.result(value as PluginsPackageJson);
  if (shape.value.private !== true) {
    out.warn({ path: "/private", code: "ENOT_PRIVATE", message: '/private: should be true so the plugins folder can never be published', expected: "true", found: String(shape.value.private), hint: 'Set "private": true.' });
  }
  for (const [name, spec] of Object.entries(shape.value.dependencies ?? {})) {
    const issue = dependencySpecIssue(name, spec, pointer("", "dependencies", name), options);
    if (issue) out.error(issue);
  }
  return out.result(shape.value);
}

/**
 * What is wrong with one dependency `name: spec` of the plugins package.json, found at `at`: the
 * name, whether npm understands the spec, and a git spec by core/source-args.ts's rules. Also
 * the check of a spec read back from elsewhere in state for the same use (the dependency `unlink`
 * restores), so that every spec arborist is handed passes the same gate. `remedy` ends the hint
 * of a refused git spec: what the user does about a spec they did not write, where it was found.
 */
export function dependencySpecIssue(
  name: string,
  spec: string,
  at: string,
  options: PluginsPackageOptions = {},
  remedy = "If you did not write this spec, remove the dependency from the file by hand, then install the plugin again.",
): { path: string; code: string; message: string; found: string; hint: string } | undefined {
  const problem = npmNameProblem(name);
  if (problem) return { path: at, code: "EPACKAGE_NAME", message: `${at}: "${name}" is not an npm package name: ${problem}`, found: JSON.stringify(name), hint: "Remove the dependency and reinstall the plugin." };
  // What npm writes for a registry install: npa's answer is known (a registry range, no git).
  if (isRegistryVersionSpec(spec)) return undefined;
  let parsed: ReturnType<typeof npa.resolve>;
  try {
    parsed = npa.resolve(name, spec, "/");
  } catch (error) {
    return { path: at, code: "ESPEC", message: `${at}: "${spec}" is not a spec npm understands: ${(error as Error).message}`, found: JSON.stringify(spec), hint: "Use a version range, a tag, a tarball, a folder (file:) or a git URL." };
  }
  if (parsed.type !== "git") return undefined;
  const git = npmGitSpecProblem(parsed, { allowLocal: options.localGit?.(name) === true });
  return git ? { path: at, code: git.code, message: `${at}: ${git.problem}`, found: JSON.stringify(spec), hint: `${sourceArgHint(git.code)} Nothing was fetched. ${remedy}` } : undefined;
}
