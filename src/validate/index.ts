/**
 * `validatePath`: check a tool, a tools folder, a plugin package, a marketplace repository or a
 * plugin.json the way the host will load it. Static checks first (documents, names, declared
 * paths on disk), then every tool module is imported in ONE child process (see module-check.ts)
 * and every returned tool is checked (tool-checks.ts). Engines report, never print: the CLI
 * renders the report.
 */
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import { xcshPaths } from "../core/paths.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import { DEFAULT_BUILTIN_TOOL_NAMES } from "../host/builtins.js";
import { detectTarget } from "./detect.js";
import { checkModules } from "./module-check.js";
import { ValidateRun } from "./run.js";
import { checkOutcomes } from "./tool-checks.js";
import {
  checkCatalogFile,
  checkMarketplace,
  checkPluginFolder,
  checkPluginJsonFile,
  checkPluginPackage,
  checkPluginsPackageJson,
  checkStateFile,
  checkToolsFolder,
  readJson,
} from "./static-checks.js";
import type { TargetKind, ValidateReport } from "./types.js";

export type { ValidateIssue, ValidateReport, TargetKind } from "./types.js";
export { userPaths, type UserPaths } from "./display.js";
export { userConfigUse, type UserConfigUse } from "./host-differences.js";

export interface ValidatePathOptions {
  cwd: string;
  /** Extra built-in names (`--builtins a,b`), added to `DEFAULT_BUILTIN_TOOL_NAMES`. */
  builtins?: readonly string[];
  /** Warnings count as errors. */
  strict?: boolean;
  /** Skip importing modules (static checks only). */
  staticOnly?: boolean;
  /** The user's home and xcsh root (for the transpile cache). */
  home?: string;
  xcshHome?: string;
  moduleTimeoutMs?: number;
  /** `api.pi` for the factories (`--pi`): a module path (relative to `cwd`) or package name. */
  piModule?: string;
  /**
   * Check the target as this kind instead of detecting it (the marketplace engine validates a
   * cached plugin as a plugin folder, the way discovery loads it, even when it has a package.json).
   */
  as?: TargetKind;
  /**
   * How problems of a plugin's skills, commands, agents, hooks and servers count: errors (the
   * default, for authors) or warnings (the install gate: Claude Code installs such plugins and
   * skips the broken component). A path that leaves the plugin is an error either way.
   */
  componentProblems?: "error" | "warning";
}

/**
 * A validation split where the target's code first runs: `report` holds the static checks (no
 * module imported; `tools` empty), `importModules` imports the tool modules in the checker child
 * and returns the whole report. The install gates call it only after consent, a dry run never.
 */
export interface StagedValidation {
  report: ValidateReport;
  importModules(): Promise<ValidateReport>;
}

/** Validate what is at `target` (relative to `cwd`). Throws only for usage errors (exit 2). */
export async function validatePath(target: string, options: ValidatePathOptions): Promise<ValidateReport> {
  const staged = await validateInStages(target, options);
  return options.staticOnly || staged.report.modules === 0 ? staged.report : staged.importModules();
}

/** The static checks of `target` now; the import of its tool modules when the caller asks (see `StagedValidation`). */
export async function validateInStages(target: string, options: ValidatePathOptions): Promise<StagedValidation> {
  const started = Date.now();
  const absolute = path.resolve(options.cwd, target);
  // Detection also refuses a missing target (ETARGET_NOT_FOUND), so it runs even with `as`.
  const found = await detectTarget(absolute, target);
  const detected = options.as ? { kind: options.as, path: absolute } : found;
  const run = new ValidateRun();
  if (options.componentProblems) run.componentProblems = options.componentProblems;
  await checkStatically(run, detected);
  const reportOf = (tools: ValidateReport["tools"]): ValidateReport => ({
    ok: run.errors.length === 0 && (!options.strict || run.warnings.length === 0),
    target: { path: detected.path, kind: detected.kind, given: target },
    errors: [...run.errors],
    warnings: [...run.warnings],
    tools,
    components: run.components,
    files: [...run.files],
    modules: run.modules.length,
    durationMs: Date.now() - started,
  });
  let imported: Promise<ValidateReport> | undefined;
  return {
    report: reportOf([]),
    importModules: () => (imported ??= checkToolModules(run, options, resolutionRootOf(detected)).then(reportOf)),
  };
}

/**
 * The folder a plugin's or marketplace's bare imports may resolve in (module-check.ts
 * `confineTo`): the folder the user named, or the one a named manifest belongs to, never the
 * folders above it (a temp folder's parent is anyone's to write). Loose tools (a tool file, a
 * tools folder, a state file's plugins) resolve as the host resolves them: no fence.
 */
function resolutionRootOf(detected: { kind: TargetKind; path: string }): string | undefined {
  if (detected.kind === "plugin-package" || detected.kind === "plugin-folder" || detected.kind === "marketplace") return detected.path;
  if (detected.kind !== "plugin-json" && detected.kind !== "marketplace-catalog") return undefined;
  const dir = path.dirname(detected.path);
  return path.basename(dir) === ".xcsh-plugin" || path.basename(dir) === ".claude-plugin" ? path.dirname(dir) : undefined;
}

/** The static checks of each kind of target; the modules to import are collected in `run`. */
async function checkStatically(run: ValidateRun, detected: { kind: TargetKind; path: string }): Promise<void> {
  switch (detected.kind) {
    case "plugin-json":
      await checkPluginJsonFile(run, detected.path);
      return;
    case "marketplace-catalog": {
      const folder = path.basename(path.dirname(detected.path));
      if (folder === ".xcsh-plugin" || folder === ".claude-plugin") await checkMarketplace(run, path.dirname(path.dirname(detected.path)));
      else await checkCatalogFile(run, detected.path, "xcsh");
      return;
    }
    case "plugin-package":
      return checkPackage(run, detected.path);
    case "plugin-folder":
      return checkPluginFolder(run, detected.path);
    case "marketplace":
      return checkMarketplace(run, detected.path);
    case "state-file":
      return checkStateFile(run, detected.path);
    case "tools-folder":
      await checkToolsFolder(run, detected.path, detected.path);
      if (run.modules.length === 0 && run.errors.length === 0) {
        throw new XcshToolsError("ETARGET_UNKNOWN", `${detected.path} holds nothing to validate`, {
          file: detected.path,
          hint: "Expected a tool module (.ts/.js/.mjs), a package.json with an xcsh manifest, .xcsh-plugin/ or .claude-plugin/ (marketplace.json or plugin.json).",
          exitCode: 2,
        });
      }
      return;
    case "tool-file":
      return checkToolFile(run, detected.path);
  }
}

/** A plugin package, or the plugins folder's own package.json (`xcsh-plugins`, no manifest). */
async function checkPackage(run: ValidateRun, dir: string): Promise<void> {
  const file = path.join(dir, "package.json");
  const pkg = readJsonOrUndefined(file);
  if (pkg && typeof pkg === "object" && (pkg as { name?: unknown }).name === "xcsh-plugins" && !("xcsh" in pkg) && !("pi" in pkg)) {
    const read = await readJson(file, run);
    if (read) await checkPluginsPackageJson(run, file, read.value);
  } else await checkPluginPackage(run, dir);
}

function checkToolFile(run: ValidateRun, file: string): void {
  const ext = path.extname(file).toLowerCase();
  if ([".ts", ".js", ".mjs", ".mts", ".cjs", ".cts"].includes(ext) && !file.endsWith(".d.ts")) run.addModule(file, file);
  else
    run.error(file, {
      path: "",
      code: "ENOT_A_MODULE",
      message: `${path.basename(file)} is not a tool module${ext === ".md" || ext === ".json" ? ": .md and .json files are metadata, never executable modules" : ""}`,
      hint: "A tool is a .ts, .js or .mjs module whose default export is a factory.",
    });
}

/** Import every collected module in one child and check the tools they return. */
async function checkToolModules(run: ValidateRun, options: ValidatePathOptions, root: string | undefined): Promise<ValidateReport["tools"]> {
  const roots = options.xcshHome ? xcshPaths({ home: options.home ?? "", xcshHome: options.xcshHome }) : undefined;
  const outcomes = await checkModules(
    run.modules.map((m) => m.file),
    {
      cwd: options.cwd,
      ...(root !== undefined ? { confineTo: [root] } : {}),
      staticModules: run.modules.filter((m) => m.staticTools).map((m) => m.file),
      ...(options.moduleTimeoutMs !== undefined ? { moduleTimeoutMs: options.moduleTimeoutMs } : {}),
      ...(options.home ? { home: options.home } : {}),
      ...(options.xcshHome ? { xcshHome: options.xcshHome } : {}),
      ...(roots ? { cacheDir: roots.transpileCache } : {}),
      // Resolved by the child from `cwd`, as `--pi` was checked (host/host-exports.ts).
      ...(options.piModule !== undefined ? { piModule: options.piModule } : {}),
    },
  );
  const builtins = new Set([...DEFAULT_BUILTIN_TOOL_NAMES, ...(options.builtins ?? [])]);
  return checkOutcomes(run, run.modules, outcomes, builtins);
}
