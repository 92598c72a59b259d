/**
 * The boot index (src/boot): whether a host starting in the project would get its tools from
 * the index without scanning, and if not why. Checked without changing anything; `--fix`
 * rebuilds it with `refreshBootIndex` under the plugins lock. A stale index is a warning: the
 * host still works, it only scans (and validates) again at its next start.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { checkBootIndex, refreshBootIndex } from "../boot/index.js";
import { withLock } from "../core/lock.js";
import { xcshPaths } from "../core/paths.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

/** "boot index: fresh" or "stale (reason)". */
export async function checkBoot(world: DoctorWorld): Promise<AreaFindings> {
  const area = new AreaFindings("boot index");
  const options = { ...world.roots, env: world.env };
  const all = await checkBootIndex(options);
  const here = all.fresh ? await checkBootIndex({ ...options, cwd: world.cwd }) : all;
  const repair = { hint: "Run `xcsh-tools doctor --fix` (or any install) to rebuild it; the host rebuilds it at its next start otherwise.", repair: { kind: "boot-rebuild" as const }, repairText: "rebuild the boot index" };
  const paths = xcshPaths(world.roots);
  // Nothing was ever installed here (our own folder may hold only the trust record): no index
  // is the normal state, not a stale one.
  const installedAnything = [paths.pluginsPackageJson, paths.installedPlugins, paths.runtimeLock, paths.pluginsNodeModules].some((p) => existsSync(p));
  if (all.state === "missing" && !installedAnything) {
    area.ok("boot-index", `boot index: none yet (nothing was installed in ${paths.plugins}; the first install or host start writes it)`);
  } else if (!all.fresh) {
    area.problem("boot-index", "warn", `boot index: stale (${all.reason})${all.state === "missing" ? "" : ` — ${all.file}`}`, repair);
  } else if (!here.fresh && here.state !== "no-view") {
    area.problem("boot-index", "warn", `boot index: stale (${here.reason})`, repair);
  } else {
    let note = here.state === "no-view" ? `; no entry yet for ${path.resolve(world.cwd)} (made at the first start there)` : "";
    // The records only serve `tools`, which validates the entries again: worth saying, not a problem.
    if (all.modulesProblem) note += `; module records ignored: ${all.modulesProblem}`;
    area.ok("boot-index", `boot index: fresh (${all.views} view${all.views === 1 ? "" : "s"}, ${all.modules} module record${all.modules === 1 ? "" : "s"})${note}`);
  }
  return area;
}

/** Rebuild the index for the project and every kept view, under the plugins lock. */
export async function rebuildBoot(world: DoctorWorld, lockWaitMs?: number): Promise<void> {
  await withLock(xcshPaths(world.roots).ours, () => refreshBootIndex({ ...world.roots, env: world.env, cwd: world.cwd }), {
    label: "doctor --fix (boot index)",
    ...(lockWaitMs !== undefined ? { waitMs: lockWaitMs } : {}),
  });
}
