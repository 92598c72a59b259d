/**
 * Validating the plugins an install brings, the way `xcsh-tools validate <plugin>` does (static
 * checks of the package and its manifest, then every tool module imported and its tools checked
 * in a child process) — but all plugins of one command in ONE child process.
 *
 * Why not `validatePath` per plugin: each call starts its own child (a Node start plus jiti), so
 * an install's time grew with every plugin it brought. The static checks stay
 * per plugin (each report names its plugin); only the module import is batched. A module that
 * hangs or crashes the child is still attributed to its file by checkModules.
 */
import path from "node:path";
import { linkedFolderSignature, recordedLinkedOutcome, rememberValidated } from "../boot/prevalidated.js";
import { DEFAULT_BUILTIN_TOOL_NAMES } from "../host/builtins.js";
import { ValidateRun } from "../validate/run.js";
import { checkPluginPackage } from "../validate/static-checks.js";
import { checkOutcomes } from "../validate/tool-checks.js";
import type { ValidateIssue } from "../validate/types.js";

/** The findings for one plugin. */
export interface PluginValidation {
  name: string;
  dir: string;
  errors: ValidateIssue[];
  tools: string[];
}

export interface ValidatePluginsOptions {
  cwd: string;
  home: string;
  /** xcsh root for the child's transpile cache (a scratch folder: validation writes nothing live). */
  xcshHome: string;
  cacheDir: string;
  builtins?: readonly string[];
  moduleTimeoutMs?: number;
  /** The folders the tools' bare imports may resolve in (the staged plugins folder, linked folders). */
  confineTo: readonly string[];
  /**
   * Plugins linked to a folder of the user's (name → folder), and the boot index's records file:
   * a module `link` validated before, in the same folder still unchanged, is not imported again.
   */
  linked?: { folders: ReadonlyMap<string, string>; bootModules: string };
}

/** Validate each `{name, dir}`; never throws for a bad plugin (see `errors`). */
export async function validatePlugins(plugins: readonly { name: string; dir: string }[], options: ValidatePluginsOptions): Promise<PluginValidation[]> {
  const runs = await Promise.all(
    plugins.map(async (plugin) => {
      const run = new ValidateRun();
      await checkPluginPackage(run, plugin.dir);
      return { plugin, run };
    }),
  );
  const files = runs.flatMap(({ run }) => run.modules.map((m) => m.file));
  // A linked folder's signature, taken before anything imports from it (prevalidated.ts).
  // (undefined: a linked folder without one; the refresh still recalls its outcomes, no later link reuses them).
  const signatures = new Map<string, string | undefined>();
  // Where the link puts each module below the plugins folder (`<name>/<path in the plugin>`): a
  // link written by hand is checked at the folder's own path, which names no node_modules.
  const places = new Map<string, string>();
  for (const { plugin, run } of runs) {
    const folder = options.linked?.folders.get(plugin.name);
    const signature = folder === undefined || run.modules.length === 0 ? undefined : await linkedFolderSignature(folder);
    if (folder === undefined) continue;
    for (const m of run.modules) {
      signatures.set(m.file, signature);
      const inPlugin = path.relative(plugin.dir, m.file);
      if (inPlugin !== "" && !inPlugin.startsWith("..") && !path.isAbsolute(inPlugin)) places.set(m.file, path.join(plugin.name, inPlugin));
    }
  }
  const recorded = files.map((file) => {
    const signature = signatures.get(file);
    return signature === undefined ? undefined : recordedLinkedOutcome(options.linked!.bootModules, file, signature);
  });
  const toCheck = files.filter((_, i) => recorded[i] === undefined);
  const checked =
    toCheck.length === 0
      ? []
      : // Loaded only for a child: a link whose records answer (an unchanged folder) starts none.
        await (await import("../validate/module-check.js")).checkModules(toCheck, {
          cwd: options.cwd,
          home: options.home,
          xcshHome: options.xcshHome,
          cacheDir: options.cacheDir,
          confineTo: options.confineTo,
          ...(options.moduleTimeoutMs !== undefined ? { moduleTimeoutMs: options.moduleTimeoutMs } : {}),
        });
  const outcomes = recorded.map((outcome) => outcome ?? checked.shift()!);
  // The boot-index refresh after the commit reuses these instead of importing the files again.
  await rememberValidated(outcomes, signatures, places);
  const builtins = new Set([...DEFAULT_BUILTIN_TOOL_NAMES, ...(options.builtins ?? [])]);
  let offset = 0;
  return runs.map(({ plugin, run }) => {
    const mine = outcomes.slice(offset, offset + run.modules.length);
    offset += run.modules.length;
    const tools = run.modules.length > 0 ? checkOutcomes(run, run.modules, mine, builtins) : [];
    return { name: plugin.name, dir: plugin.dir, errors: [...run.errors], tools: tools.map((t) => t.name) };
  });
}
