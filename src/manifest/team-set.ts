/**
 * The shared types of a team set (docs/design/team-sets.md (e)): what the declaration, Claude
 * Code's project settings and the personal files make together, with who decided each part. Every
 * work package codes against these; the merge is teamset/set.ts.
 */
import type { DeclaredFeatures, DeclaredSource } from "./team-declaration.js";
import type { LockSection } from "./team-lock.js";

/** Who decided, and in which file: the team (xcsh-team.json), Claude's project or local settings, the personal file, the user's own state. */
export interface Who {
  by: "team" | "claude" | "local" | "claude-local" | "user";
  file: string;
}

/** One plugin of the set. */
export interface SetPlugin {
  key: string;
  kind: "npm" | "marketplace";
  /** npm: the declared spec (absent: the `latest` dist-tag). */
  spec?: string;
  /** Marketplace plugins: the range the catalog's version must meet. */
  version?: string;
  /** Whether it loads on this machine: the committed files, then the personal choices. */
  enabled: boolean;
  /** Whether the committed files switch it on: the lock covers exactly these, the same on every machine. */
  teamEnabled: boolean;
  features?: DeclaredFeatures;
  settings?: Record<string, unknown>;
  /** Every file that said something about it, farthest first. */
  decided: Who[];
  /** The one that decided `enabled` (for "off — you (.xcsh/team.local.json)"). */
  enabledBy: Who;
}

/** The declared set with provenance. */
export interface EffectiveSet {
  root: string;
  marketplaces: Map<string, { source: DeclaredSource; from: Who }>;
  plugins: Map<string, SetPlugin>;
  /** Personal entries about plugins the set does not declare: ignored, reported. */
  ignored: { key: string; file: string; path: string }[];
}

/** How the lock stands against the set, per entry. */
export type SatisfactionState = "ok" | "missing" | "stale" | "extra";
export type Satisfaction = { section: LockSection; key: string; state: SatisfactionState; why?: string }[];

/**
 * The warnings of team sets (`doctor`, `tools`, `list`; docs/design/team-sets.md (e)): not errors,
 * nothing stops. One place for their codes so every command reports the same one.
 */
export const TEAM_WARNINGS = {
  /** The host rewrote the generated registry (e.g. `autoUpdate: auto`); `install` repairs it. */
  WTEAM_HOST_DRIFT: "WTEAM_HOST_DRIFT",
  /** The loaded npm version is not the one this project locks (another project's restore moved it). */
  WTEAM_NPM_VERSION: "WTEAM_NPM_VERSION",
  /** The project registry holds ids the set does not mention (kept as they are). */
  WTEAM_UNDECLARED: "WTEAM_UNDECLARED",
  /** `.xcsh/.gitignore` lacks lines for per-machine files (`doctor --fix` appends them). */
  WTEAM_GITIGNORE: "WTEAM_GITIGNORE",
  /** xcsh starts below the root: the host reads plugin-overrides.json at its start folder only. */
  WTEAM_OVERRIDES_CWD: "WTEAM_OVERRIDES_CWD",
  /** A nested config folder without a declaration hides the parent's set. */
  WTEAM_NESTED_ROOT: "WTEAM_NESTED_ROOT",
  /** A plugin of the set needs a secret the user has not set. */
  WTEAM_SECRET_MISSING: "WTEAM_SECRET_MISSING",
  /** The declaration or lock changed since the last restore: run `xcsh-tools install`. */
  WTEAM_NOT_RESTORED: "WTEAM_NOT_RESTORED",
} as const;
export type TeamWarning = keyof typeof TEAM_WARNINGS;
