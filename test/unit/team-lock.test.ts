/**
 * `xcsh-team.lock.json` (src/manifest/team-lock.ts) and `.xcsh/team.local.json`
 * (src/manifest/team-local.ts): a newer version, hand edits, hostile values and conflict markers
 * are refused with code, file, JSON path and fix.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { teamPaths } from "../../src/core/paths.js";
import { readTeamLocal } from "../../src/manifest/team-local.js";
import { readTeamLock, type TeamLock } from "../../src/manifest/team-lock.js";
import { refusedBy } from "../helpers/team-fixtures.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-team-lock-");

const SHA = "4b1e".padEnd(40, "0");
const HASH = `tree1-sha256:${"5d41".padEnd(64, "0")}`;
const SRI = "sha512-AAAA";

const LOCK: TeamLock = {
  lockfileVersion: 1,
  marketplaces: {
    "acme-tools": { commit: SHA, source: { source: "github", repo: "acme/xcsh-marketplace", ref: "v3" } },
    "in-repo": { source: { source: "directory", path: "./tools/marketplace" } },
  },
  marketplacePlugins: {
    "lint-helper@acme-tools": { version: "2.1.3", from: { kind: "relative", path: "plugins/lint-helper" }, hash: HASH },
    "reviewer@in-repo": { version: "0.3.0", from: { kind: "github", repo: "acme/reviewer", commit: SHA }, hash: HASH },
  },
  npm: {
    "@acme/xcsh-db": { version: "2.0.1", from: { kind: "git", url: "https://git.acme.dev/xcsh-db.git", commit: SHA }, integrity: SRI, dependencies: {} },
    "@acme/xcsh-search": { version: "1.4.2", integrity: SRI, dependencies: { "lru-cache@10.2.0": SRI, "undici@6.19.2": SRI } },
  },
};

function write(doc: unknown): string {
  const file = teamPaths(w.cwd).lock;
  writeFileSync(file, typeof doc === "string" ? doc : `${JSON.stringify(doc, null, 2)}\n`);
  return file;
}

function refused(read: (file: string) => unknown, file: string): XcshToolsError {
  const e = refusedBy(() => read(file), file);
  expect(e.exitCode).toBe(2);
  return e;
}

const edit = (mutate: (lock: any) => void) => {
  const lock = structuredClone(LOCK) as any;
  mutate(lock);
  return lock;
};

describe("xcsh-team.lock.json", () => {
  it("reads a valid lock", () => {
    expect(readTeamLock(write(LOCK))).toEqual(LOCK);
  });

  it("a newer lockfileVersion is ETEAM_LOCK_VERSION, asking to upgrade", () => {
    const e = refused(readTeamLock, write({ ...LOCK, lockfileVersion: 2 }));
    expect([e.code, e.path]).toEqual(["ETEAM_LOCK_VERSION", "/lockfileVersion"]);
    expect(e.hint).toContain("upgrade xcsh-tools");
  });

  describe("hand edits (ETEAM_LOCK_INVALID)", () => {
    it.each([
      ["a hash that is not tree1", (l: any) => (l.marketplacePlugins["reviewer@in-repo"].hash = "sha256:abc"), "/marketplacePlugins/reviewer@in-repo/hash"],
      ["a short commit", (l: any) => (l.marketplaces["acme-tools"].commit = "4b1e"), "/marketplaces/acme-tools/commit"],
      ["a range instead of a version", (l: any) => (l.npm["@acme/xcsh-search"].version = "^1.4.2"), "/npm/@acme~1xcsh-search/version"],
      ["an integrity that is not SRI", (l: any) => (l.npm["@acme/xcsh-search"].integrity = "md5-xyz"), "/npm/@acme~1xcsh-search/integrity"],
      ["a dependency without version", (l: any) => (l.npm["@acme/xcsh-search"].dependencies = { "lru-cache": SRI }), "/npm/@acme~1xcsh-search/dependencies/lru-cache"],
      ["an unknown key", (l: any) => (l.npm["@acme/xcsh-search"].installedAt = "2026-01-01T00:00:00Z"), "/npm/@acme~1xcsh-search/installedAt"],
      ["a missing section", (l: any) => delete l.npm, "/npm"],
      ["lockfileVersion 0", (l: any) => (l.lockfileVersion = 0), "/lockfileVersion"],
      ["an npm name among marketplace plugins", (l: any) => (l.marketplacePlugins["@acme/x"] = l.marketplacePlugins["reviewer@in-repo"]), "/marketplacePlugins/@acme~1x"],
    ])("%s", (_what, mutate, at) => {
      const e = refused(readTeamLock, write(edit(mutate)));
      expect([e.code, e.path]).toEqual(["ETEAM_LOCK_INVALID", at]);
      expect(e.hint).toContain("xcsh-tools install");
    });
    it("not JSON", () => {
      expect(refused(readTeamLock, write('{"lockfileVersion": 1,')).code).toBe("ETEAM_LOCK_INVALID");
    });
  });

  describe("hostile values that would reach git or the disk", () => {
    it.each([
      [(l: any) => (l.marketplacePlugins["lint-helper@acme-tools"].from.path = "../../../.ssh"), "EENTRY_ESCAPE", "/marketplacePlugins/lint-helper@acme-tools/from/path"],
      [(l: any) => (l.marketplacePlugins["lint-helper@acme-tools"].from = { kind: "git", url: "ext::sh -c x", commit: SHA }), "EGIT_URL", "/marketplacePlugins/lint-helper@acme-tools/from/url"],
      [(l: any) => (l.npm["@acme/xcsh-db"].from.url = "--upload-pack=x"), "EGIT_URL", "/npm/@acme~1xcsh-db/from/url"],
      [(l: any) => (l.marketplaces["in-repo"].source.path = "/home/alice/mkt"), "ETEAM_MACHINE_PATH", "/marketplaces/in-repo/source/path"],
      [(l: any) => (l.marketplacePlugins["reviewer@in-repo"].from = { kind: "archive", url: "file:///etc/passwd", sha256: "0".repeat(64) }), "ESOURCE_URL", "/marketplacePlugins/reviewer@in-repo/from/url"],
    ])("%#: %s", (mutate, code, at) => {
      const e = refused(readTeamLock, write(edit(mutate)));
      expect([e.code, e.path]).toEqual([code, at]);
    });
  });

  it("conflict markers are ETEAM_CONFLICT_MARKERS, the hint says install merges it", () => {
    const text = `${JSON.stringify(LOCK, null, 2)}\n`.replace('  "npm": {', '<<<<<<< HEAD\n  "npm": {\n=======\n  "npm": {\n>>>>>>> feat-b');
    const e = refused(readTeamLock, write(text));
    expect(e.code).toBe("ETEAM_CONFLICT_MARKERS");
    expect(e.path).toMatch(/^line \d+$/);
    expect(e.hint).toContain("xcsh-tools install");
  });
});

describe(".xcsh/team.local.json", () => {
  const file = () => {
    const f = teamPaths(w.cwd).local;
    mkdirSync(path.dirname(f), { recursive: true });
    return f;
  };
  it("reads personal choices, unknown keys kept", () => {
    const f = file();
    const doc = { version: 1, note: "mine", plugins: { "@acme/xcsh-search": { enabled: false }, "@acme/xcsh-db": { features: [] } } };
    writeFileSync(f, JSON.stringify(doc));
    expect(readTeamLocal(f)).toEqual(doc);
  });
  it.each([
    [{ version: 1, plugins: { "@acme/x": { enabled: 0 } } }, "ETEAM_DECLARATION_INVALID", "/plugins/@acme~1x/enabled"],
    [{ version: 1, plugins: { "NOT A NAME": {} } }, "ETEAM_DECLARATION_INVALID", "/plugins/NOT A NAME"],
    ["<<<<<<< HEAD\n{}\n=======\n{}\n>>>>>>> x\n", "ETEAM_CONFLICT_MARKERS", "line 1"],
  ])("%j", (doc, code, at) => {
    const f = file();
    writeFileSync(f, typeof doc === "string" ? doc : JSON.stringify(doc));
    const e = refused(readTeamLocal, f);
    expect([e.code, e.path]).toEqual([code, at]);
  });
});
