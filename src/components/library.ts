/**
 * `listInstalledComponents(options)`: for hosts, everything installed plugins bring besides
 * tools — skills, commands, agents, hooks, MCP/LSP servers, output styles, monitors, bin/ — with
 * what each runs, whether xcsh loads it and its context cost, in one call that imports no plugin
 * code. Tools are named and priced from the boot index (asked without validating, so nothing is
 * imported even in a child); the other components are read from the plugin folders, which are
 * small documents. Project-scope installs are project code: they are left out of an untrusted
 * project (trust decided as for tools: `projectTrust`, else the user's record).
 */
import path from "node:path";
import { resolveRoots } from "../core/paths.js";
import { decideProjectTrust, trustCommand, trustWorldOf, type ProjectTrustOption } from "../core/trust.js";
import { realPathOrNearest } from "../core/contain.js";
import { collectInstalledComponents, type InstalledPluginComponents } from "./installed.js";

/** Options of `listInstalledComponents`. */
export interface ListInstalledComponentsOptions {
  /** Project folder; default `process.cwd()`. */
  cwd?: string;
  home?: string;
  xcshHome?: string;
  env?: NodeJS.ProcessEnv;
  /** Whether the project may bring code (see `discoverAndLoadCustomTools`). */
  projectTrust?: ProjectTrustOption;
}

/** What `listInstalledComponents` returns. */
export interface InstalledComponentsList {
  cwd: string;
  plugins: InstalledPluginComponents[];
  /** When the project was not trusted: its installs were not read. */
  untrusted?: { project: string; trustCommand: string };
}

/** Every installed plugin's components, without importing plugin code. */
export async function listInstalledComponents(options: ListInstalledComponentsOptions = {}): Promise<InstalledComponentsList> {
  const roots = resolveRoots(options);
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const projectTrusted = await decideProjectTrust(cwd, options.projectTrust, trustWorldOf(roots));
  let tools: { name: string; description?: string; parameters?: unknown; file: string }[] | undefined;
  try {
    const { listInstalledTools } = await import("../boot/index.js");
    tools = (await listInstalledTools({ cwd, projectTrust: projectTrusted, home: roots.home, xcshHome: roots.xcshHome, ...(options.env ? { env: options.env } : {}), validate: false })).tools;
  } catch {
    tools = undefined;
  }
  const plugins = await collectInstalledComponents({ roots, cwd, projectTrusted, ...(tools ? { tools } : {}) });
  return { cwd, plugins, ...(projectTrusted ? {} : { untrusted: { project: realPathOrNearest(cwd), trustCommand: trustCommand(cwd) } }) };
}
