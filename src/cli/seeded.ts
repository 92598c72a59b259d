/**
 * `ESEEDED` for commands that would change a plugin a read-only seed provides (`uninstall`,
 * `update`, user-scope `enable`/`disable`): checked before anything is planned, so nothing is
 * written. A plugin the user also installed themselves is theirs to change (the seed's copy still
 * wins at load: docs/design/fleets.md).
 */
import { readFileSync } from "node:fs";
import { xcshPaths } from "../core/paths.js";
import type { CommandContext } from "./context.js";

export async function refuseSeeded(ctx: CommandContext, names: readonly string[], verb: string): Promise<void> {
  const seeds = ctx.roots.seedDirs ?? [];
  if (seeds.length === 0) return;
  let deps: Record<string, unknown> = {};
  try {
    deps = (JSON.parse(readFileSync(xcshPaths(ctx.roots).pluginsPackageJson, "utf8")) as { dependencies?: Record<string, unknown> }).dependencies ?? {};
  } catch {
    // No plugins of the user's own: every seeded name is the seed's.
  }
  const { assertNotSeeded } = await import("../manifest/seed.js");
  assertNotSeeded(seeds, names, (name) => Object.hasOwn(deps, name), verb);
}
