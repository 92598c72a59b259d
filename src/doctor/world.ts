/**
 * The world `doctor` looks at, injected whole (roots, project folder, environment, the settings
 * flags of the command line), and the small helpers every area's checks share.
 */
import { isXcshToolsError } from "../core/errors.js";
import type { XcshRoots } from "../core/paths.js";
import { readJsonFile } from "../manifest/json-file.js";
import type { ValidationIssue, ValidationResult } from "../manifest/result.js";
import type { XcshToolsSettingsFile } from "../manifest/xcsh-tools-settings.js";
import type { DoctorArea, Finding } from "./types.js";

/** Everything the checks read from outside. */
export interface DoctorWorld {
  roots: XcshRoots;
  /** The project folder (`--cwd`). */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Settings given on the command line (`--registry`). */
  settingsFlags?: XcshToolsSettingsFile;
  /** Last folder of the project settings search (tests); default the file-system root. */
  stopDir?: string;
  /**
   * Whether the project's own state (settings file, marketplaces, installs, plugin-overrides.json)
   * may be read: when not, those are reported as not loaded, unread. Default: not trusted.
   */
  projectTrusted?: boolean;
  /** Time one tool module may take to load in the conflict check. */
  moduleTimeoutMs?: number;
}

/** Collects the findings of one area. */
export class AreaFindings {
  readonly findings: Finding[] = [];
  constructor(readonly area: DoctorArea) {}

  ok(id: string, message: string): void {
    this.findings.push({ id, area: this.area, status: "ok", message });
  }

  problem(id: string, status: "warn" | "error", message: string, fix: Pick<Finding, "hint" | "repair" | "manual" | "repairText"> = {}): void {
    this.findings.push({ id, area: this.area, status, message, ...fix });
  }

  /** True when no problem was recorded. */
  get healthy(): boolean {
    return this.findings.every((f) => f.status === "ok");
  }
}

/** A file as a check reads it: missing, unusable (why, and how to fix it), or valid with the check's warnings. */
export type Read<T> = { status: "missing" } | { status: "bad"; message: string; hint: string } | { status: "ok"; value: T & Record<string, unknown>; warnings: ValidationIssue[] };

/** Read `file` and check it with `validate`, never throwing for what the file holds. */
export async function readDoc<T>(file: string, validate: (v: unknown) => ValidationResult<T>): Promise<Read<T>> {
  let raw: unknown;
  try {
    raw = await readJsonFile(file);
  } catch (error) {
    if (!isXcshToolsError(error)) throw error;
    return { status: "bad", message: error.message, hint: error.hint ?? `Fix ${file}.` };
  }
  if (raw === undefined) return { status: "missing" };
  const result = validate(raw);
  if (!result.ok) {
    const first = result.issues[0]!;
    const more = result.issues.length > 1 ? ` (and ${result.issues.length - 1} more)` : "";
    return { status: "bad", message: `${file}: ${first.message}${more}`, hint: first.hint ?? `Fix ${first.path || "the file"} in ${file}.` };
  }
  return { status: "ok", value: raw as T & Record<string, unknown>, warnings: result.warnings };
}
