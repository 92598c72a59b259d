/**
 * Plugin seeds (`XCSH_PLUGIN_SEED_DIR`, docs/design/fleets.md): each seed checked in full — its
 * manifest, every plugin it lists present at its version and with the files it was built with
 * (the `tree1` hash, which the boot path does not compute). Reads only: a seed is never written,
 * so nothing here is `--fix`'s; the fix is rebuilding the seed.
 */
import { xcshPaths } from "../core/paths.js";
import { hiddenUserCopies } from "../manifest/seed.js";
import { verifySeed } from "../teamset/seed.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

export async function checkSeeds(world: DoctorWorld): Promise<AreaFindings> {
  const area = new AreaFindings("seeds");
  for (const dir of world.roots.seedDirs ?? []) {
    const { manifest, problems } = await verifySeed(dir);
    for (const problem of problems) area.problem(`seed:${dir}:${problem.path ?? ""}`, "error", `${problem.code}: ${problem.message}`, { ...(problem.hint ? { hint: problem.hint } : {}), manual: "a seed is read-only: rebuild it" });
    if (manifest && problems.length === 0) {
      const n = Object.keys(manifest.plugins).length;
      area.ok(`seed:${dir}`, `seed ${dir}: ${n} plugin${n === 1 ? "" : "s"}, intact (format ${manifest.seedFormat}, from ${manifest.from.kind === "lock" ? `${manifest.from.file} sha256 ${manifest.from.sha256.slice(0, 12)}` : manifest.from.specs.join(" ")})`);
    }
  }
  for (const hidden of hiddenUserCopies(world.roots.seedDirs ?? [], xcshPaths(world.roots).pluginsPackageJson)) {
    area.problem(`seed-hides:${hidden.name}`, "warn", `${hidden.code}: ${hidden.message}`, { hint: hidden.hint, manual: "a seed is read-only: uninstall your copy or rebuild the seed" });
  }
  return area;
}
