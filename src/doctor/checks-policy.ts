/**
 * The organization policy (core/policy.ts) as `doctor` shows it: where it came from, what it
 * decides, whether it is usable (a broken one stops every change), and the plugins it requires
 * that are not installed. Install and restore do not add required plugins by themselves (the
 * policy names no source to fetch them from and nobody consented): doctor says how to.
 */
import { loadManagedPolicy, type ManagedPolicy, type PolicyRule } from "../core/policy.js";
import { xcshPaths } from "../core/paths.js";
import { readJsonOrUndefined } from "../manifest/json-file.js";
import type { InstalledPlugin } from "../plugins/inventory.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

/** The policy's findings; `inventory` is the npm plugins installed (undefined when unreadable). */
export function checkPolicy(world: DoctorWorld, inventory: InstalledPlugin[] | undefined): AreaFindings {
  const area = new AreaFindings("policy");
  const loaded = loadManagedPolicy();
  if (loaded.state === "none") {
    area.ok("policy", `no organization policy (${loaded.file} does not exist)`);
    return area;
  }
  if (loaded.state === "broken") {
    area.problem("policy", "error", `${loaded.error.code}: ${loaded.error.message}`, { hint: loaded.error.hint, manual: "only the machine's administrator can change the policy file" });
    return area;
  }
  area.ok("policy", `organization policy in effect, from ${loaded.file}: ${describePolicy(loaded.policy)}`);
  const installed = new Set([...(inventory ?? []).map((p) => p.name), ...marketplaceIds(world)]);
  for (const required of loaded.policy.plugins?.required ?? []) {
    const present = installed.has(required) || [...installed].some((id) => id.lastIndexOf("@") > 0 && id.slice(0, id.lastIndexOf("@")) === required);
    if (!present) {
      area.problem(`policy-required-${required}`, "error", `${required} is required by the organization policy (${loaded.file} /plugins/required) but is not installed`, {
        hint: `Install it: xcsh-tools install ${required}`,
        manual: "installing runs the consent step, which doctor --fix does not answer for you",
      });
    }
  }
  return area;
}

/** The ids in the user's marketplace install registry. */
function marketplaceIds(world: DoctorWorld): string[] {
  try {
    const doc = readJsonOrUndefined(xcshPaths(world.roots).installedPlugins) as { plugins?: Record<string, unknown> } | undefined;
    return Object.keys(doc?.plugins ?? {});
  } catch {
    return [];
  }
}

const rules = (list: readonly PolicyRule[] | undefined) => (list ?? []).map((rule) => Object.entries(rule).map(([k, v]) => `${k} ${v}`).join("")).join(", ");

/** The policy in one line: what it allows, blocks, requires and forbids. */
export function describePolicy(policy: ManagedPolicy): string {
  const parts: string[] = [];
  for (const section of ["marketplaces", "plugins"] as const) {
    const s = policy[section];
    if (s?.allow) parts.push(`${section} allowed only from ${s.allow.length ? rules(s.allow) : "nowhere"}`);
    if (s?.block?.length) parts.push(`${section} blocked from ${rules(s.block)}`);
  }
  if (policy.plugins?.required?.length) parts.push(`required: ${policy.plugins.required.join(", ")}`);
  if (policy.plugins?.forbidden?.length) parts.push(`forbidden: ${policy.plugins.forbidden.join(", ")}`);
  if (policy.allowScripts === false) parts.push("install scripts never run");
  if (policy.projectMarketplaces === false) parts.push("projects may not add marketplaces");
  return parts.length ? parts.join("; ") : "no restriction";
}
