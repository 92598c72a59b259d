/**
 * What `list`, `show` and `tools` say about installed plugins' components: the one place the CLI
 * gathers them (the boot index's inventory, boot/components.ts, or a scan by
 * src/components/installed.ts), named and priced with the tools the boot index already knows.
 * No plugin code is imported: the index is asked with `validate: false`, so a tool entry never
 * validated keeps its file name and an unknown cost.
 */
import type { CommandContext } from "./context.js";
import type { InstalledPluginComponents } from "../components/installed.js";

/** Installed plugins with their components, in the trust decision of this project. */
export async function installedComponents(ctx: CommandContext, options: { namedTools?: boolean; skipRoot?: (root: string) => boolean } = {}): Promise<InstalledPluginComponents[]> {
  const projectTrusted = await ctx.projectTrusted();
  let tools: { name: string; description?: string; parameters?: unknown; file: string }[] | undefined;
  if (options.namedTools !== false) {
    try {
      const { listInstalledTools } = await import("../boot/installed-tools.js");
      const listed = await listInstalledTools({ cwd: ctx.cwd, projectTrust: projectTrusted, home: ctx.roots.home, xcshHome: ctx.roots.xcshHome, env: ctx.env, validate: false });
      tools = listed.tools;
    } catch {
      // Names and costs of tools are a bonus: without the index, tools keep their file names.
      tools = undefined;
    }
  }
  // The inventory from the boot index when fresh (no YAML, no plugin folder read), else a scan
  // that writes it; tools named at answer time with the records of this moment.
  const [{ installedComponentsIndexed }, { withKnownTools, withSeededComponents }] = await Promise.all([import("../boot/components.js"), import("../components/installed.js")]);
  const answer = await installedComponentsIndexed({ roots: ctx.roots, cwd: ctx.cwd, projectTrusted, ...(options.skipRoot ? { skipRoot: options.skipRoot } : {}) });
  // Seeded plugins after the user's, read in place (never in the index: a seed is not the user's state).
  return options.skipRoot ? withKnownTools(answer.plugins, tools) : withSeededComponents(answer.plugins, ctx.roots, tools);
}

/** The short JSON form `list` carries per plugin; `piOnly` counts, among `counts`, a pi package's own components, which xcsh does not load. */
export function componentSummaryJson(p: InstalledPluginComponents, summary: string, counts: Record<string, number>) {
  const piOnly: Record<string, number> = {};
  for (const c of p.components) if (c.piOnly) piOnly[c.kind] = (piOnly[c.kind] ?? 0) + 1;
  return { summary, counts, ...(Object.keys(piOnly).length ? { piOnly } : {}), tokens: { alwaysOn: p.cost.alwaysOn, alwaysOnForXcsh: p.cost.alwaysOnForXcsh, onInvoke: p.cost.onInvoke, unknown: p.cost.unknown } };
}
