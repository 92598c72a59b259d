/**
 * What `doctor` reports: checks grouped by area, each ok / warn / error with a message and, for
 * a problem, a hint (how to fix it by hand) and, internally, the repair `--fix` would make. The
 * repair is data, not a closure: `--fix --dry-run` prints it, and the fixer recomputes the
 * actual change from the state it reads under the lock (the diagnosis may be stale by then).
 */

/** ok: healthy; warn: works but worth fixing (exit 0); error: broken (exit 1 unless fixed). */
export type CheckStatus = "ok" | "warn" | "error";

/** The areas, in report order. */
export const DOCTOR_AREAS = ["policy", "settings", "transactions", "plugins folder", "plugins", "lockfile", "conflicts", "components", "marketplace", "overrides", "host parity", "team set", "seeds", "boot index"] as const;
export type DoctorArea = (typeof DOCTOR_AREAS)[number];

/** One check as the report and `--json` show it. */
export interface DoctorCheck {
  /** Stable id (`plugin:<name>:runtime`, `orphan:node_modules:<name>`…): the same problem has the same id before and after a fix. */
  id: string;
  area: DoctorArea;
  status: CheckStatus;
  message: string;
  hint?: string;
  /** Under `--fix`: whether the problem is gone. */
  fixed?: boolean;
}

/** A repair `--fix` knows how to make. */
export type Repair =
  /** Finish or undo the interrupted transaction (the recovery every command runs). */
  | { kind: "recover-journal" }
  /** Remove the lock of a holder that is dead (same host, pid gone). */
  | { kind: "remove-dead-lock"; pid: number }
  /** Rebuild node_modules from package.json + package-lock.json with npm's installer; `reinstall` folders are fetched again. */
  | { kind: "reify"; reinstall: string[] }
  /** Rewrite the runtime lock / our record (runtime-repair.ts decides how, under the lock). */
  | { kind: "runtime" }
  /** Remove a cache folder no registry references. */
  | { kind: "remove-cache"; path: string }
  /** Rebuild the boot index. */
  | { kind: "boot-rebuild" }
  /** Append the lines a team set's `.xcsh/.gitignore` lacks (doctor/team.ts); the others stay. */
  | { kind: "gitignore-append"; file: string };

/** A check with what `--fix` would do (`repair`) or why it cannot (`manual`). */
export interface Finding extends DoctorCheck {
  repair?: Repair;
  /** For a problem `--fix` leaves: why, said as "could not fix: <manual>". */
  manual?: string;
  /** What the repair does, in words ("reinstall x from the lockfile"). */
  repairText?: string;
}

/** One of our settings with where its value came from. */
export interface SettingRow {
  key: string;
  value: unknown;
  origin: string;
  /** The variable or flag, for `env` and `flag` origins. */
  via?: string;
}

/** The whole report (`--json` document). */
export interface DoctorReport {
  ok: boolean;
  checks: DoctorCheck[];
  settings: SettingRow[];
}
