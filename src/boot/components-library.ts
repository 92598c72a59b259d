/**
 * `listInstalledComponents(options)`: for hosts, everything installed plugins bring besides
 * tools — skills, commands, agents, hooks, MCP/LSP servers, output styles, monitors, bin/ — with
 * what each runs, whether xcsh loads it and its context cost, in one call that imports no plugin
 * code. Both halves come from the boot index: the inventory from its component views
 * (boot/components.ts: a fresh view is a read and a `stat` per input, without the YAML or schema
 * libraries), tools' names and costs from its module records (asked without validating, so
 * nothing is imported even in a child). Without a fresh view the plugin folders are scanned and
 * the view written (unless `write: false`). Project-scope installs are project code: they are
 * left out of an untrusted project (trust decided as for tools: `projectTrust`, else the user's
 * record). Plugins the seeds provide (`XCSH_PLUGIN_SEED_DIR` of `env`) follow, each with its `seed`.
 */
import path from "node:path";
import { resolveRoots, type XcshRoots } from "../core/paths.js";
import { loadPolicyIfPresent, policyJudge } from "./policy-filter.js";
import { decideProjectTrust, trustCommand, trustWorldOf, type ProjectTrustOption } from "../core/trust.js";
import { realPathOrNearest } from "../core/contain.js";
import { withSeededComponents, type InstalledPluginComponents } from "../components/installed.js";

/** Options of `listInstalledComponents`. */
export interface ListInstalledComponentsOptions {
  /** Project folder; default `process.cwd()`. */
  cwd?: string;
  home?: string;
  xcshHome?: string;
  env?: NodeJS.ProcessEnv;
  /** Whether the project may bring code (see `discoverAndLoadCustomTools`). */
  projectTrust?: ProjectTrustOption;
  /** When false, an inventory or tool view rebuilt for this answer is not written to the boot index. */
  write?: boolean;
}

/** What `listInstalledComponents` returns. */
export interface InstalledComponentsList {
  cwd: string;
  plugins: InstalledPluginComponents[];
  /** When the project was not trusted: its installs were not read. */
  untrusted?: { project: string; trustCommand: string };
  /**
   * Plugins the organization policy refuses (docs/fleets-policy.md): left out of `plugins`, so a
   * host runs none of their hooks or servers; each with the policy's code and why.
   */
  refused?: { id: string; code: string; reason: string }[];
  /** Whether the inventory came from a fresh boot index (no plugin folder read), and if not why. */
  index: { fresh: boolean; reason: string; written: boolean };
}

/** Every installed plugin's components, without importing plugin code. */
export async function listInstalledComponents(options: ListInstalledComponentsOptions = {}): Promise<InstalledComponentsList> {
  const roots = resolveRoots(options);
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const projectTrusted = await decideProjectTrust(cwd, options.projectTrust, trustWorldOf(roots));
  let tools: { name: string; description?: string; parameters?: unknown; file: string }[] | undefined;
  const [{ listInstalledTools }, { installedComponentsIndexed }] = await Promise.all([import("./installed-tools.js"), import("./components.js")]);
  try {
    tools = (await listInstalledTools({ cwd, projectTrust: projectTrusted, home: roots.home, xcshHome: roots.xcshHome, ...(options.env ? { env: options.env } : {}), validate: false, ...(options.write === false ? { write: false } : {}) })).tools;
  } catch {
    tools = undefined;
  }
  const answer = await installedComponentsIndexed({ roots, cwd, projectTrusted, ...(options.write === false ? { write: false } : {}) });
  // The seeds' plugins too (`seed` on each), read in place as `list` reads them: a host runs their hooks and servers.
  const judged = await refusedByPolicy(await withSeededComponents(answer.plugins, roots, tools), roots, cwd);
  const plugins = judged.kept;
  return { cwd, plugins, ...(judged.refused.length > 0 ? { refused: judged.refused } : {}), ...(projectTrusted ? {} : { untrusted: { project: realPathOrNearest(cwd), trustCommand: trustCommand(cwd) } }), index: answer.index };
}

/** The discovery provider whose records hold a plugin root's source (boot/policy-filter.ts judges by it). */
const PROVIDER_OF_ROOT: Record<string, string> = { npm: "npm", "xcsh-marketplace": "xcsh-plugins", "claude-cache": "claude-plugins" };

/** `plugins` without those the organization policy refuses, and those with why. */
async function refusedByPolicy(plugins: InstalledPluginComponents[], roots: XcshRoots, cwd: string): Promise<{ kept: InstalledPluginComponents[]; refused: { id: string; code: string; reason: string }[] }> {
  const loaded = await loadPolicyIfPresent();
  if (loaded.state === "none") return { kept: plugins, refused: [] };
  const judge = await policyJudge(loaded, roots, cwd);
  const refused: { id: string; code: string; reason: string }[] = [];
  const kept = plugins.filter((p) => {
    const verdict = judge(PROVIDER_OF_ROOT[p.rootKind] ?? p.rootKind, p.id, p.seed);
    if (verdict) refused.push({ id: p.id, ...verdict });
    return verdict === undefined;
  });
  return { kept, refused };
}
