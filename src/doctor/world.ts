/**
 * The world `doctor` looks at, injected whole (roots, project folder, environment, the settings
 * flags of the command line), and the small helpers every area's checks share.
 */
import type { XcshRoots } from "../core/paths.js";
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
