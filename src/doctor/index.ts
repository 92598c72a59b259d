/**
 * `doctor`: every check of the plugins world in one report, and `--fix` for what can be
 * repaired safely.
 *
 * Diagnosis reads only — no lock, no recovery, no cache: doctor without `--fix` writes nothing
 * (a pending journal is reported, not recovered). Each area runs on its own; one that throws
 * becomes a failed check of that area, never a crash. With `--fix`, the repairs run (fix.ts),
 * then the whole diagnosis runs again: a problem whose id is gone or ok is `fixed`, one that
 * remains says why it could not be fixed, and the exit status follows what remains.
 * `--fix --dry-run` says what each repair would do and writes nothing.
 */
import { checkBoot, rebuildBoot } from "./checks-boot.js";
import { checkSeeds } from "./checks-seeds.js";
import { checkConflicts } from "./checks-tools.js";
import { checkComponents } from "./checks-components.js";
import { checkHostParity } from "./checks-host.js";
import { checkMarketplaces, checkOverrides } from "./checks-marketplace.js";
import { checkPlugins } from "./checks-plugins.js";
import { checkSettings, checkTransactions, failedCheck } from "./checks-state.js";
import { checkTeamSet, type NpmView } from "./team.js";
import { checkPolicy } from "./checks-policy.js";
import { repairState, repairTransactions, type FixFailures, type FixWorld } from "./fix.js";
import { DOCTOR_AREAS, type DoctorArea, type DoctorCheck, type DoctorReport, type Finding, type SettingRow } from "./types.js";
import { AreaFindings, type DoctorWorld } from "./world.js";

export type { DoctorCheck, DoctorReport, SettingRow, Finding } from "./types.js";
export type { DoctorWorld } from "./world.js";
export type { FixWorld } from "./fix.js";

/** The findings of every area, in area order, and our settings with their origins. */
export interface Diagnosis {
  findings: Finding[];
  settings: SettingRow[];
}

async function guarded(area: DoctorArea, run: () => Promise<AreaFindings | AreaFindings[]>): Promise<AreaFindings[]> {
  try {
    const out = await run();
    return Array.isArray(out) ? out : [out];
  } catch (error) {
    const failed = new AreaFindings(area);
    failed.problem(area.replace(/ /g, "-"), "error", `the check itself failed: ${failedCheck(error)}`, { hint: "Run again with --debug and report it: this is probably a bug of xcsh-tools.", manual: "the check did not run" });
    return [failed];
  }
}

/** Run every check; reads only. */
export async function diagnose(world: DoctorWorld): Promise<Diagnosis> {
  const settings = await checkSettings(world);
  const loaded = settings.loaded?.settings;
  const areas: AreaFindings[] = [settings.area];
  areas.push(...(await guarded("transactions", () => checkTransactions(world))));
  let inventory: Awaited<ReturnType<typeof checkPlugins>>["inventory"] | undefined;
  let npm: NpmView | undefined;
  areas.push(
    ...(await guarded("plugins", async () => {
      const d = await checkPlugins(world.roots);
      inventory = d.state ? d.inventory : undefined;
      npm = { inventory: d.inventory, state: d.state };
      return [d.folder, d.plugins, d.lockfile];
    })),
  );
  const moduleTimeoutMs = world.moduleTimeoutMs ?? loaded?.timeouts.importMs;
  areas.push(...(await guarded("conflicts", () => checkConflicts({ ...world, ...(moduleTimeoutMs ? { moduleTimeoutMs } : {}) }, { builtins: loaded?.builtInTools ?? [], disabledProviders: loaded?.disabledProviders ?? [] }))));
  areas.push(...(await guarded("components", () => checkComponents(world, { contextWarnTokens: loaded?.contextWarnTokens ?? 20_000 }))));
  areas.push(...(await guarded("marketplace", () => checkMarketplaces(world))));
  areas.push(...(await guarded("overrides", () => checkOverrides(world, inventory))));
  areas.push(...(await guarded("host parity", () => checkHostParity(world, inventory))));
  areas.push(...(await guarded("team set", () => checkTeamSet(world, npm))));
  areas.push(...(await guarded("seeds", () => checkSeeds(world))));
  areas.push(...(await guarded("policy", async () => checkPolicy(world, inventory))));
  areas.push(...(await guarded("boot index", () => checkBoot(world))));
  const findings = areas.flatMap((a) => a.findings);
  findings.sort((a, b) => DOCTOR_AREAS.indexOf(a.area) - DOCTOR_AREAS.indexOf(b.area));
  return { findings, settings: settings.rows };
}

function toCheck(finding: Finding, extra: Partial<DoctorCheck> = {}): DoctorCheck {
  return {
    id: finding.id,
    area: finding.area,
    status: finding.status,
    message: finding.message,
    ...(finding.hint !== undefined && finding.status !== "ok" ? { hint: finding.hint } : {}),
    ...extra,
  };
}

/** The report of a plain run, or of `--fix --dry-run` (`wouldFix`). */
function plainReport(diagnosis: Diagnosis, options: { wouldFix: boolean }): DoctorReport {
  const checks = diagnosis.findings.map((f) => {
    if (!options.wouldFix || f.status === "ok") return toCheck(f);
    const hint = f.repair ? `would fix: ${f.repairText ?? f.repair.kind}` : `cannot fix automatically: ${f.manual ?? "no automatic repair"}. ${f.hint ?? ""}`.trim();
    return toCheck(f, { hint });
  });
  return { ok: !diagnosis.findings.some((f) => f.status === "error"), checks, settings: diagnosis.settings };
}

/** Options of `runDoctor`. */
export interface RunDoctorOptions {
  fix?: boolean;
  dryRun?: boolean;
  /** Required with `fix` (and not a dry run). */
  fixWorld?: FixWorld;
}

/** Diagnose, and with `fix` repair and diagnose again. */
export async function runDoctor(world: DoctorWorld, options: RunDoctorOptions = {}): Promise<DoctorReport> {
  const before = await diagnose(world);
  if (!options.fix || options.dryRun) return plainReport(before, { wouldFix: Boolean(options.fix) });
  if (!options.fixWorld) throw new Error("runDoctor: fix needs a fixWorld");
  const given = options.fixWorld;
  const fixWorld: FixWorld = { ...given, rebuildBootIndex: given.rebuildBootIndex ?? (() => rebuildBoot(world, given.mutation.lockWaitMs)) };
  const problems = before.findings.filter((f) => f.status !== "ok");
  const failures: FixFailures = new Map();
  if (problems.some((f) => f.repair)) {
    let current = problems;
    if (await repairTransactions(problems, fixWorld, failures)) {
      // Recovery may have changed the plugins folder: repair what is wrong now, not before.
      current = (await diagnose(world)).findings.filter((f) => f.status !== "ok");
    }
    await repairState(current, fixWorld, failures);
  }
  const after = await diagnose(world);
  const afterById = new Map(after.findings.map((f) => [f.id, f]));
  const beforeIds = new Set(before.findings.map((f) => f.id));
  const checks: DoctorCheck[] = before.findings.map((f) => {
    if (f.status === "ok") return toCheck(afterById.get(f.id) ?? f);
    const now = afterById.get(f.id);
    if (!now || now.status === "ok") return toCheck(f, { hint: "fixed", fixed: true });
    const why = (f.repair ? failures.get(f.repair.kind) : undefined) ?? (f.repair ? "the problem is still there after the repair" : (f.manual ?? "no automatic repair"));
    return toCheck(now, { hint: `could not fix: ${why}${now.hint ? `. ${now.hint}` : ""}`, fixed: false });
  });
  for (const f of after.findings) if (!beforeIds.has(f.id) && f.status !== "ok") checks.push(toCheck(f));
  checks.sort((a, b) => DOCTOR_AREAS.indexOf(a.area) - DOCTOR_AREAS.indexOf(b.area));
  return { ok: !after.findings.some((f) => f.status === "error"), checks, settings: after.settings };
}
