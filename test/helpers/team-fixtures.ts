/**
 * Fixtures of team-set unit tests: the design's example declaration and lock
 * (docs/design/team-sets.md (b)) and a set built from them without touching the disk.
 */
import { expect } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import type { ClaudeTeamSettings } from "../../src/manifest/claude-team-settings.js";
import type { TeamDeclaration } from "../../src/manifest/team-declaration.js";
import type { TeamLock } from "../../src/manifest/team-lock.js";
import { buildEffectiveSet, type SetInputs } from "../../src/teamset/index.js";

export const ROOT = "/work/project";
export const DECLARATION_FILE = `${ROOT}/xcsh-team.json`;
export const CLAUDE_FILE = `${ROOT}/.claude/settings.json`;
export const LOCAL_FILE = `${ROOT}/.xcsh/team.local.json`;

export const sha = (seed: string) => seed.padEnd(40, "0");
export const treeHash = (seed: string) => `tree1-sha256:${seed.padEnd(64, "0")}`;
export const SRI = "sha512-AAAA";

export function declaration(): TeamDeclaration {
  return {
    version: 1,
    marketplaces: {
      "acme-tools": { source: { source: "github", repo: "acme/xcsh-marketplace", ref: "v3" } },
      "in-repo": { source: { source: "directory", path: "./tools/marketplace" } },
      pinned: { source: { source: "git", url: "https://git.acme.dev/mkt.git", sha: sha("9f2c") } },
    },
    plugins: {
      "@acme/xcsh-db": { spec: "git+https://git.acme.dev/xcsh-db.git#v2.0.1", features: "*" },
      "@acme/xcsh-search": { spec: "^1.4.0", features: ["web"], settings: { limit: 20 } },
      "lint-helper@acme-tools": { version: "^2.1.0" },
      "old-thing@acme-tools": { enabled: false },
      "reviewer@in-repo": {},
    },
  };
}

/** The lock that satisfies `declaration()`. */
export function lock(): TeamLock {
  return {
    lockfileVersion: 1,
    marketplaces: {
      "acme-tools": { commit: sha("4b1e"), source: { source: "github", repo: "acme/xcsh-marketplace", ref: "v3" } },
      "in-repo": { source: { source: "directory", path: "./tools/marketplace" } },
      pinned: { commit: sha("9f2c"), source: { source: "git", url: "https://git.acme.dev/mkt.git", sha: sha("9f2c") } },
    },
    marketplacePlugins: {
      "lint-helper@acme-tools": { version: "2.1.3", from: { kind: "relative", path: "plugins/lint-helper" }, hash: treeHash("5d41") },
      "reviewer@in-repo": { version: "0.3.0", from: { kind: "github", repo: "acme/reviewer", commit: sha("77aa") }, hash: treeHash("aa") },
    },
    npm: {
      "@acme/xcsh-db": { version: "2.0.1", from: { kind: "git", url: "https://git.acme.dev/xcsh-db.git", commit: sha("aa01") }, integrity: SRI, dependencies: {} },
      "@acme/xcsh-search": { version: "1.4.2", integrity: SRI, dependencies: { "lru-cache@10.2.0": SRI, "undici@6.19.2": SRI } },
    },
  };
}

export function claudeSettings(marketplaces: Record<string, unknown> = {}, enabled: Record<string, boolean> = {}, file = CLAUDE_FILE): ClaudeTeamSettings {
  return { file, marketplaces: new Map(Object.entries(marketplaces)) as ClaudeTeamSettings["marketplaces"], enabledPlugins: new Map(Object.entries(enabled)) };
}

/** The set of `declaration()` (or `doc`), with any other inputs. */
export function setOf(doc: TeamDeclaration = declaration(), more: Partial<SetInputs> = {}) {
  return buildEffectiveSet({ root: ROOT, declaration: { file: DECLARATION_FILE, doc }, ...more });
}

/** The coded error `run` throws, checked to carry a hint (and to name `file` when given). */
export function refusedBy(run: () => unknown, file?: string): XcshToolsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(XcshToolsError);
    const e = error as XcshToolsError;
    expect(e.hint, "every refusal says how to fix it").toBeTruthy();
    if (file !== undefined) {
      expect(e.file).toBe(file);
      expect(e.message).toContain(file);
    }
    return e;
  }
  throw new Error("accepted");
}
