/**
 * `listInstalledTools`: what a host would load at boot, each tool's name, description and
 * parameters from the module records, without importing plugin code in this process.
 */
import path from "node:path";
import { DEFAULT_BUILTIN_TOOL_NAMES } from "../host/builtins.js";
import type { ToolLoadError, ToolSource, UntrustedProjectReport } from "../core/contract.js";
import { prepareModules, validateMissing } from "./module-records.js";
import { applyManagedPolicy } from "./policy-filter.js";
import { findView, loadIndex, upsertView, writeIndex } from "./store.js";
import { scanView, viewChange, viewPathOutside } from "./views.js";
import { decideTrust, keyOf, worldOf, type BootIndexOptions } from "./world.js";

const simulate = () => import("./simulate.js");

/** One tool `listInstalledTools` reports. */
export interface InstalledTool {
  name: string;
  label?: string;
  description?: string;
  /** The parameter schema as JSON, as the tool declared it when validated. */
  parameters?: unknown;
  /** The file the host imports. */
  file: string;
  /** The path as discovered. */
  path: string;
  source?: ToolSource;
}

/** What `listInstalledTools` returns. */
export interface InstalledToolsList {
  cwd: string;
  tools: InstalledTool[];
  /** Discovery errors, then load errors, as `discoverAndLoadCustomTools` orders them. */
  errors: ToolLoadError[];
  /** When the project was not trusted: what it had that was left out (not loaded, not validated). */
  untrusted?: UntrustedProjectReport;
  index: {
    /** True when the answer needed no scan and no plugin code. */
    fresh: boolean;
    reason: string;
    /** Tool entries imported in the validation child for this answer. */
    validated: number;
    written: boolean;
  };
}

/** Options of `listInstalledTools`. */
export interface ListInstalledToolsOptions extends BootIndexOptions {
  /** Built-in names to check conflicts against; default the host's (host/builtins.ts). */
  builtInToolNames?: readonly string[];
  /** When false, entries without a record are not validated (never imports plugin code). */
  validate?: boolean;
  /**
   * `api.pi` for the factories (`tools --pi`): a module path (relative to `cwd`) or package name.
   * Every entry is validated again with it, and those records are not kept.
   */
  piModule?: string;
  /** When false, a rebuilt view is not written back (`doctor` without `--fix` writes nothing). */
  write?: boolean;
}

/**
 * What a host would load at boot from `cwd` — each tool's name, description, parameters, file
 * and source, and every error — without importing plugin code in this process. With a fresh
 * index nothing is scanned or imported at all; otherwise the view is rebuilt and entries without
 * a record are validated in a child process (see the header).
 */
export async function listInstalledTools(options: ListInstalledToolsOptions = {}): Promise<InstalledToolsList> {
  const world = worldOf(options);
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const key = keyOf(world, options.configuredPaths ?? [], cwd, options, await decideTrust(world, cwd, options.projectTrust));
  const loaded = await loadIndex(world, true);
  const index = loaded.index;
  let view = findView(index, key);
  let reason = view ? ((await viewChange(view)) ?? viewPathOutside(world, key, view) ?? "fresh") : (loaded.reason ?? "no entry for this project folder and configured paths");
  let dirty = false;
  let unchanged = reason === "fresh";
  if (reason !== "fresh" || !view) {
    const scanned = await scanView(world, key);
    view = scanned.view;
    unchanged = scanned.consistent;
    if (scanned.consistent) {
      upsertView(index, view);
      dirty = true;
    }
  }
  // The organization policy before any validation: a refused plugin's code is never imported, even in the child.
  const allowed = await applyManagedPolicy(await prepareModules(view, index, unchanged), (m) => m.entry, world.roots, cwd);
  const modules = allowed.kept;
  if (options.piModule !== undefined) for (const module of modules) delete module.record;
  const unvalidated = modules.filter((m) => !m.record).length;
  if (reason === "fresh" && unvalidated > 0) reason = `${unvalidated} tool entr${unvalidated === 1 ? "y was" : "ies were"} never validated`;
  let validated = 0;
  if (options.validate !== false && unvalidated > 0) {
    validated = await validateMissing(world, cwd, modules, index, options.piModule);
    if (validated > 0) dirty = true;
  }
  let written = false;
  if (dirty && options.write !== false) {
    try {
      await writeIndex(world, index, true);
      written = true;
    } catch {
      // The answer stands; the next call scans again.
    }
  }
  const simulated = (await simulate()).simulateLoad(modules, options.builtInToolNames ?? DEFAULT_BUILTIN_TOOL_NAMES);
  return {
    cwd,
    tools: simulated.tools.map((tool) => ({
      name: tool.name,
      ...(tool.label !== undefined ? { label: tool.label } : {}),
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters !== undefined ? { parameters: tool.parameters } : {}),
      file: tool.resolvedPath,
      path: tool.path,
      ...(tool.source ? { source: tool.source } : {}),
    })),
    errors: [...view.errors, ...allowed.errors, ...simulated.errors],
    ...(view.untrusted ? { untrusted: view.untrusted } : {}),
    index: { fresh: reason === "fresh", reason, validated, written },
  };
}
