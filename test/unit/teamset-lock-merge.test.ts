/**
 * A lock a merge left conflicted (src/teamset/lock-format.ts): the conflicted text is made by git
 * itself (`git merge-file`, with and without diff3 base sections). Split from markers, a side is
 * what git would write resolving every hunk for that side (`--ours`/`--theirs`), and an entry both
 * branches changed goes to the resolver; given the exact locks of both branches (git's index
 * stages), the merge keeps per entry the side that satisfies the declaration.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import type { TeamLock } from "../../src/manifest/team-lock.js";
import { formatLock, isSatisfied, mergeLockSides, parseConflictedLock, satisfies, splitConflictSides } from "../../src/teamset/index.js";
import { SRI, declaration, lock, setOf, sha, treeHash } from "../helpers/team-fixtures.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "xcsh-lock-merge-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What git writes for a three-way merge of the locks (`git merge-file -p`); exits 1 on conflicts. */
function gitMerge(base: TeamLock, ours: TeamLock, theirs: TeamLock, style: "merge" | "diff3" | "ours" | "theirs" = "merge"): string {
  const files = { ours: path.join(dir, "ours"), base: path.join(dir, "base"), theirs: path.join(dir, "theirs") };
  writeFileSync(files.ours, formatLock(ours));
  writeFileSync(files.base, formatLock(base));
  writeFileSync(files.theirs, formatLock(theirs));
  try {
    return execFileSync("git", ["merge-file", "-p", ...(style === "merge" ? [] : [`--${style}`]), "-L", "HEAD", "-L", "base", "-L", "feat-b", files.ours, files.base, files.theirs], { encoding: "utf8" });
  } catch (error) {
    const e = error as { status?: number; stdout?: string };
    if (e.status !== undefined && e.status > 0 && e.stdout) return e.stdout;
    throw error;
  }
}

/** Branch A adds @acme/p3; branch B updates @acme/xcsh-search to 1.5.0 (declared ^1.5.0). */
function branches() {
  const base = lock();
  const ours = lock();
  ours.npm["@acme/p3"] = { version: "3.0.0", integrity: SRI, dependencies: {} };
  ours.npm["@acme/xcsh-search"]!.dependencies["undici@6.19.3"] = SRI;
  const theirs = lock();
  theirs.npm["@acme/xcsh-search"] = { version: "1.5.0", integrity: "sha512-BBBB", dependencies: { "lru-cache@10.2.0": SRI, "undici@6.20.0": SRI } };
  const doc = declaration();
  doc.plugins!["@acme/p3"] = { spec: "^3.0.0" };
  doc.plugins!["@acme/xcsh-search"] = { spec: "^1.5.0", features: ["web"], settings: { limit: 20 } };
  return { base, ours, theirs, doc };
}

describe("conflicted lock", () => {
  it.each(["merge", "diff3"] as const)("git's %s markers split into the two sides git would write resolving each hunk for one side", (style) => {
    const { base, ours, theirs } = branches();
    const text = gitMerge(base, ours, theirs, style);
    expect(text).toMatch(/^<<<<<<< HEAD$/m);
    const sides = splitConflictSides(text)!;
    expect(sides.ours).toBe(gitMerge(base, ours, theirs, "ours"));
    expect(sides.theirs).toBe(gitMerge(base, ours, theirs, "theirs"));
    const parsed = parseConflictedLock(text)!;
    expect(parsed.ours.npm["@acme/p3"]).toEqual(ours.npm["@acme/p3"]);
  });

  it("no markers: nothing to split", () => {
    expect(splitConflictSides(formatLock(lock()))).toBeUndefined();
  });

  it.each([
    ["a hunk never closed", "{\n<<<<<<< HEAD\n\"a\": 1\n=======\n\"a\": 2\n}\n", "line 7"],
    ["a separator outside a hunk", "{\n=======\n}\n", "line 2"],
    ["an end without start", "{\n>>>>>>> x\n}\n", "line 2"],
  ])("malformed markers (%s) are ETEAM_CONFLICT_MARKERS with the line", (_what, text, line) => {
    try {
      splitConflictSides(text, "/p/xcsh-team.lock.json");
      throw new Error("accepted");
    } catch (error) {
      const e = error as XcshToolsError;
      expect(e).toBeInstanceOf(XcshToolsError);
      expect([e.code, e.file, e.path]).toEqual(["ETEAM_CONFLICT_MARKERS", "/p/xcsh-team.lock.json", line]);
    }
  });

  it("sides split from markers: an entry both branches changed may mix their lines, so the resolver re-resolves it", () => {
    const { base, ours, theirs, doc } = branches();
    const sides = parseConflictedLock(gitMerge(base, ours, theirs))!;
    // What makes the split sides untrustworthy: git took theirs' version line into both sides.
    expect(sides.ours.npm["@acme/xcsh-search"]).toMatchObject({ version: "1.5.0", integrity: "sha512-BBBB" });
    expect(sides.ours.npm["@acme/xcsh-search"]?.dependencies).toHaveProperty(["undici@6.19.3"]);
    const set = setOf(doc);
    const { lock: merged, unresolved } = mergeLockSides(sides.ours, sides.theirs, set);
    expect(unresolved).toEqual([{ section: "npm", key: "@acme/xcsh-search", state: "missing", why: "changed on both sides of the merge" }]);
    expect(Object.hasOwn(merged.npm, "@acme/xcsh-search")).toBe(false);
    expect(merged.npm["@acme/p3"]).toEqual(ours.npm["@acme/p3"]);
    expect(merged.marketplaces).toEqual(lock().marketplaces);
  });

  it("exact sides (git's index stages): each entry from the side that satisfies the merged declaration; the result satisfies it and is stable", () => {
    const { ours, theirs, doc } = branches();
    const set = setOf(doc);
    const { lock: merged, choices, unresolved } = mergeLockSides(ours, theirs, set, { exact: true });
    expect(unresolved).toEqual([]);
    expect(merged.npm["@acme/p3"]?.version).toBe("3.0.0");
    expect(merged.npm["@acme/xcsh-search"]).toEqual(theirs.npm["@acme/xcsh-search"]);
    expect(choices.filter((c) => c.took !== "both")).toEqual([
      { section: "npm", key: "@acme/p3", took: "ours" },
      { section: "npm", key: "@acme/xcsh-search", took: "theirs" },
    ]);
    expect(isSatisfied(satisfies(set, merged))).toBe(true);
    // Merging the merged lock with itself changes nothing: a second install is a no-op.
    expect(formatLock(mergeLockSides(merged, merged, set, { exact: true }).lock)).toBe(formatLock(merged));
  });

  it("both sides satisfy: the one restored here wins; else ours", () => {
    const { ours, theirs } = branches();
    const doc = declaration();
    doc.plugins!["@acme/xcsh-search"] = { spec: "^1.4.0" };
    const set = setOf(doc);
    expect(mergeLockSides(ours, theirs, set, { exact: true }).lock.npm["@acme/xcsh-search"]?.version).toBe("1.4.2");
    const restored = mergeLockSides(ours, theirs, set, { exact: true, isRestored: (_s, _k, entry) => (entry as { version?: string }).version === "1.5.0" });
    expect(restored.lock.npm["@acme/xcsh-search"]?.version).toBe("1.5.0");
  });

  it("neither side satisfies: left for the resolver as stale; entries the set dropped are dropped", () => {
    const { ours, theirs } = branches();
    const doc = declaration();
    doc.plugins!["@acme/xcsh-search"] = { spec: "^2.0.0" };
    const { lock: merged, unresolved } = mergeLockSides(ours, theirs, setOf(doc), { exact: true });
    expect(unresolved.map((u) => [u.section, u.key, u.state])).toEqual([["npm", "@acme/xcsh-search", "stale"]]);
    // @acme/p3 is no longer declared: dropped.
    expect(Object.hasOwn(merged.npm, "@acme/p3")).toBe(false);
  });

  it("a catalog-relative plugin follows the side its marketplace was taken from (its hash holds only at that commit)", () => {
    const ours = lock();
    const theirs = lock();
    // B moved the catalog to a new commit and re-locked lint-helper from it; both versions meet ^2.1.0.
    theirs.marketplaces["acme-tools"]!.commit = sha("5555");
    theirs.marketplacePlugins["lint-helper@acme-tools"] = { version: "2.2.0", from: { kind: "relative", path: "plugins/lint-helper" }, hash: treeHash("6666") };
    // A re-locked lint-helper too (another hash at the old commit).
    ours.marketplacePlugins["lint-helper@acme-tools"] = { version: "2.1.4", from: { kind: "relative", path: "plugins/lint-helper" }, hash: treeHash("7777") };
    const set = setOf();
    // The restored copy here is A's plugin, but the marketplace was taken from B: the plugin must follow B.
    const merged = mergeLockSides(ours, theirs, set, { exact: true, isRestored: (section, _k, entry) => section === "marketplaces" ? (entry as { commit?: string }).commit === sha("5555") : (entry as { version?: string }).version === "2.1.4" }).lock;
    expect(merged.marketplaces["acme-tools"]?.commit).toBe(sha("5555"));
    expect(merged.marketplacePlugins["lint-helper@acme-tools"]?.version).toBe("2.2.0");
  });

  it("the file on disk round-trips through the merge into canonical bytes", () => {
    const { base, ours, theirs, doc } = branches();
    const file = path.join(dir, "xcsh-team.lock.json");
    writeFileSync(file, gitMerge(base, ours, theirs));
    const sides = parseConflictedLock(readFileSync(file, "utf8"), file)!;
    const bytes = formatLock(mergeLockSides(sides.ours, sides.theirs, setOf(doc)).lock);
    expect(bytes).not.toMatch(/^(<{7}|={7}|>{7})/m);
    expect(formatLock(JSON.parse(bytes))).toBe(bytes);
  });
});
