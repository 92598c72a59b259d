/**
 * `ESEEDED` for commands that would change a plugin a read-only seed provides (`uninstall`,
 * `update`, user-scope `enable`/`disable`): checked before anything is planned, so nothing is
 * written. A plugin the user also installed themselves is theirs to change (the seed's copy still
 * wins at load: docs/design/fleets.md).
 */
import { xcshPaths } from "../core/paths.js";
import type { CommandContext } from "./context.js";

export async function refuseSeeded(ctx: CommandContext, names: readonly string[], verb: string): Promise<void> {
  const seeds = ctx.roots.seedDirs ?? [];
  if (seeds.length === 0) return;
  const { assertNotSeeded, userPluginNames } = await import("../manifest/seed.js");
  // No plugins of the user's own: every seeded name is the seed's.
  const own = new Set(userPluginNames(xcshPaths(ctx.roots).pluginsPackageJson));
  assertNotSeeded(seeds, names, (name) => own.has(name), verb);
}

/** The user's own plugins a seed hides (manifest/seed.ts `hiddenUserCopies`); none without seeds. */
export async function hiddenBySeeds(ctx: Pick<CommandContext, "roots">): Promise<import("../manifest/seed.js").HiddenUserCopy[]> {
  const seeds = ctx.roots.seedDirs ?? [];
  if (seeds.length === 0) return [];
  const { hiddenUserCopies } = await import("../manifest/seed.js");
  return hiddenUserCopies(seeds, xcshPaths(ctx.roots).pluginsPackageJson);
}
