/**
 * Install specs: what a user may type after `xcsh-tools install`.
 *
 * The grammar is npm's own (npm-package-arg), after the host's feature brackets are taken off:
 * the host splits at the LAST `[` and the last `]`, so
 * `@acme/x@1.2.3[web,cache]` is the npm spec `@acme/x@1.2.3` with features `web, cache`,
 * `pkg[*]` is every feature, `pkg[]` none, and no brackets means "the defaults" (or, on a
 * reinstall, whatever the user had chosen). Text after `]` is an error here (the host drops it
 * silently).
 *
 * Kinds accepted: registry names (bare, version, range, dist-tag; scoped or not), tarball files,
 * tarball URLs, local folders and git URLs — each maps to one of our `SourceKind`s. Refused with
 * `ESPEC` (exit 2) and a hint: npm aliases (`x@npm:y`: the folder name would not be the package
 * name the host keys its state by), unknown protocols, control characters, and shell
 * metacharacters in names and URLs (we never use a shell, but a spec like `x;rm -rf ~` is a
 * mistake, or worse, and the host refuses it too).
 *
 * `npm:<spec>` says "this is an npm registry spec" explicitly: `npm:name@beta` is the dist-tag
 * `beta`, which a bare `name@beta` is not (that is a marketplace plugin, or `EUNKNOWN_MARKETPLACE`:
 * cli/commands/marketplace.ts). Git specs are checked by core/source-args.ts before pacote (which
 * runs git itself) sees them: the URL, the host's owner/repo, the committish and the semver range.
 */
import type { Result as NpaResult } from "npm-package-arg";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { looksLikePlainPackageName, npa } from "../core/npm-spec.js";
import { npmGitSpecProblem, sourceArgError } from "../core/source-args.js";
import { NPM_NAME_MAX, npmNameProblem } from "../manifest/names.js";
import type { SourceKind } from "./state.js";

/** The feature selection of a spec: `null` none given, `"*"` all, else exactly these. */
export type FeatureSelection = null | "*" | string[];

export interface InstallSpec {
  /** What the user typed. */
  raw: string;
  /** The npm spec (brackets removed). */
  npmSpec: string;
  features: FeatureSelection;
  source: Exclude<SourceKind, "link">;
  /** The package name when the spec names it (registry specs). */
  name: string | undefined;
  /** npm-package-arg's view. */
  parsed: NpaResult;
}

/**
 * The spec as our record keeps it and `list` shows it: a folder or a tarball by its absolute path
 * (npm resolved it against the folder the command ran in: `../my-plugin` typed there means nothing
 * when read later, from elsewhere), any other spec as typed.
 */
export function recordedSpec(spec: InstallSpec): string {
  return (spec.source === "directory" || spec.source === "tarball") && typeof spec.parsed.fetchSpec === "string" ? spec.parsed.fetchSpec : spec.npmSpec;
}

function specError(raw: string, message: string, hint: string, cause?: unknown): XcshToolsError {
  return new XcshToolsError("ESPEC", `Invalid install spec "${raw}": ${message}`, { hint, exitCode: 2, ...(cause ? { cause } : {}) });
}

const HINT =
  "Use a package name (`@acme/xcsh-search`, `name@1.2.3`, `name@^1`, `name@next`), a tarball (`./x.tgz` or an https URL), a folder (`./my-plugin`) or a git URL (`git+https://…`), optionally with features: `name[a,b]`, `name[*]`, `name[]`.";

/** Split `pkg[a,b]` into the npm spec and the features, by the host's last-`[` rule. */
export function splitFeatures(raw: string): { npmSpec: string; features: FeatureSelection } {
  const open = raw.lastIndexOf("[");
  const close = raw.lastIndexOf("]");
  if (open < 0 || close < 0 || close < open) return { npmSpec: raw, features: null };
  if (raw.slice(close + 1).trim() !== "") {
    throw specError(raw, `unexpected text after "]": "${raw.slice(close + 1)}"`, "Put the feature list last: `name@1.2.3[a,b]`.");
  }
  const inner = raw.slice(open + 1, close).trim();
  const npmSpec = raw.slice(0, open);
  if (inner === "*") return { npmSpec, features: "*" };
  if (inner === "") return { npmSpec, features: [] };
  return { npmSpec, features: [...new Set(inner.split(",").map((f) => f.trim()).filter(Boolean))] };
}

/**
 * No real spec is longer (a git URL with a token and a sha is a few hundred characters); a
 * 10k-character "name" would otherwise go to the registry as a 414 and come back as EREGISTRY.
 */
export const MAX_SPEC_LENGTH = 2048;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const SHELL_META = /[;&|`$(){}<>\\'"]/;

/** The prefix that makes a spec explicitly an npm registry spec (`npm:name@tag`). */
export const NPM_PREFIX = "npm:";

/** `npm:x` → `x`; anything else unchanged. */
export function stripNpmPrefix(spec: string): string {
  return spec.startsWith(NPM_PREFIX) ? spec.slice(NPM_PREFIX.length) : spec;
}

/** Check a parsed git spec again right before pacote (and so git) sees it. */
export function assertGitSpec(spec: InstallSpec): void {
  if (spec.parsed.type !== "git") return;
  // Typed on the command line: a local repository (git+file://) is the user's own choice.
  const found = npmGitSpecProblem(spec.parsed, { allowLocal: true });
  if (found) throw sourceArgError(found, `Invalid install spec "${spec.raw.length > 200 ? `${spec.raw.slice(0, 200)}…` : spec.raw}"`);
}

/** Parse one install spec; `cwd` resolves relative folders and tarballs. Throws `ESPEC` (exit 2). */
export function parseInstallSpec(raw: string, cwd: string): InstallSpec {
  const explicitNpm = raw.trim().startsWith(NPM_PREFIX);
  const text = explicitNpm ? raw.trim().slice(NPM_PREFIX.length) : raw.trim();
  if (text === "") throw specError(raw, "it is empty", HINT);
  if (text.length > MAX_SPEC_LENGTH) throw specError(`${text.slice(0, 64)}…`, `it has ${text.length} characters (at most ${MAX_SPEC_LENGTH})`, HINT);
  if (CONTROL.test(text)) throw specError(raw, "it contains control characters", HINT);
  const { npmSpec, features } = splitFeatures(text);
  if (npmSpec === "") throw specError(raw, "there is no package before the feature list", HINT);
  if (Array.isArray(features)) {
    const bad = features.find((f) => !/^[a-zA-Z0-9_][a-zA-Z0-9._-]*$/.test(f));
    if (bad !== undefined) throw specError(raw, `"${bad}" is not a feature name`, "Feature names are letters, digits, `_`, `.` and `-`: `name[web,cache]`.");
  }
  let parsed: NpaResult;
  try {
    parsed = npa(npmSpec, cwd);
  } catch (error) {
    throw specError(raw, errorMessage(error), HINT, error);
  }
  const looksLocal = parsed.type === "file" || parsed.type === "directory";
  // Ranges legitimately hold `<`, `>` and spaces; names and URLs never hold shell syntax.
  const checked = looksLocal ? "" : parsed.type === "range" || parsed.type === "version" || parsed.type === "tag" ? (parsed.name ?? "") : npmSpec;
  if (SHELL_META.test(checked)) throw specError(raw, "it contains shell metacharacters", HINT);
  if ((parsed.type === "range" || parsed.type === "version" || parsed.type === "tag") && parsed.name) {
    // npm accepts old names with capitals; only the length is enforced beyond npa's own rules.
    const problem = parsed.name.length > NPM_NAME_MAX ? npmNameProblem(parsed.name) : undefined;
    if (problem) throw specError(`${text.slice(0, 64)}…`, `the package name is invalid: ${problem}`, HINT);
  }
  if (explicitNpm && parsed.type !== "range" && parsed.type !== "version" && parsed.type !== "tag") {
    throw specError(raw, `"${NPM_PREFIX}" takes a registry spec (name, name@version, name@range, name@tag), not a ${String(parsed.type)} spec`, HINT);
  }
  if ((parsed.type === "range" || parsed.type === "version" || parsed.type === "tag") && typeof parsed.rawSpec === "string" && parsed.rawSpec.trimStart().startsWith("-")) {
    throw specError(raw, `the version or tag "${parsed.rawSpec}" starts with "-"`, HINT);
  }
  switch (parsed.type) {
    case "range":
    case "version":
    case "tag":
      return { raw, npmSpec, features, source: "registry", name: parsed.name ?? undefined, parsed };
    case "file":
      return { raw, npmSpec, features, source: "tarball", name: undefined, parsed };
    case "directory":
      return { raw, npmSpec, features, source: "directory", name: undefined, parsed };
    case "remote":
      if (!/^https?:\/\//i.test(npmSpec)) throw specError(raw, "only http(s) tarball URLs are supported", HINT);
      return { raw, npmSpec, features, source: "remote", name: undefined, parsed };
    case "git": {
      const spec: InstallSpec = { raw, npmSpec, features, source: "git", name: undefined, parsed };
      assertGitSpec(spec);
      return spec;
    }
    case "alias":
      throw specError(raw, "npm aliases (`name@npm:other`) are not supported for plugins", "Install the real package name: the host keys a plugin's state by its package name.");
    default:
      throw specError(raw, `unsupported kind of spec (${String(parsed.type)})`, HINT);
  }
}

/** A bare package name given to uninstall/update/unlink… (`npm:` allowed): validated, or `EUSAGE`. */
export function parsePackageName(given: string): string {
  const raw = stripNpmPrefix(given);
  if (raw.length > NPM_NAME_MAX) {
    throw new XcshToolsError("EUSAGE", `"${raw.slice(0, 64)}…" is not a package name: it has ${raw.length} characters (at most ${NPM_NAME_MAX})`, { exitCode: 2, hint: "Give the plugin's package name as `xcsh-tools list` shows it." });
  }
  // Asked first, as npa's first call costs more than the rest of a state change's reading.
  if (looksLikePlainPackageName(raw) && npmNameProblem(raw) === undefined) return raw;
  let parsed: NpaResult | undefined;
  try {
    parsed = npa(raw);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !parsed.name || parsed.name !== raw || (parsed.type !== "range" && parsed.type !== "tag") || parsed.rawSpec !== "*") {
    throw new XcshToolsError("EUSAGE", `"${raw}" is not a package name`, { exitCode: 2, hint: "Give the plugin's package name as `xcsh-tools list` shows it, e.g. `@acme/xcsh-search` (no version)." });
  }
  return parsed.name;
}
