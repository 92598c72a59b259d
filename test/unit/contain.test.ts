/**
 * core/contain.ts, the one containment helper: a table of names that the old copies answered
 * differently (`..foo` is inside, `..` and `../x` are not), trailing slashes, symlinked parents,
 * paths that do not exist yet and `/proc/self/root/...`.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confinePath, insideAnyOf, isPathBelow, isPathInside, isRealPathBelow, isRealPathInside, realPathOrNearest, relativePathClimbsOut } from "../../src/core/contain.js";
import { isXcshToolsError } from "../../src/core/errors.js";

describe("isPathInside / isPathBelow (lexical)", () => {
  const parent = "/a/b";
  const table: [string, boolean, boolean][] = [
    // child, inside, strictly below
    ["/a/b", true, false],
    ["/a/b/", true, false],
    ["/a/b/c", true, true],
    ["/a/b/c/", true, true],
    ["/a/b/..foo", true, true],
    ["/a/b/..foo/x", true, true],
    ["/a/b/...", true, true],
    ["/a/b/.", true, false],
    ["/a/b/..", false, false],
    ["/a/b/../x", false, false],
    ["/a/b/c/../../x", false, false],
    ["/a/b/c/..", true, false],
    ["/a/bc", false, false],
    ["/a/b..", false, false],
    ["/a", false, false],
    ["/", false, false],
    ["/x/a/b", false, false],
  ];
  it.each(table)("%s in /a/b: inside %s, below %s", (child, inside, below) => {
    expect(isPathInside(child, parent)).toBe(inside);
    expect(isPathInside(child, `${parent}/`)).toBe(inside);
    expect(isPathBelow(child, parent)).toBe(below);
  });

  it.each(table)("insideAnyOf gives isPathInside's answer for %s (one folder, several, the root)", (child) => {
    expect(insideAnyOf([parent])(child)).toBe(isPathInside(child, parent));
    expect(insideAnyOf([`${parent}/`, "/elsewhere"])(child)).toBe(isPathInside(child, parent));
    expect(insideAnyOf(["/x", parent])(child)).toBe(isPathInside(child, "/x") || isPathInside(child, parent));
    expect(insideAnyOf(["/"])(child)).toBe(true);
    expect(insideAnyOf([])(child)).toBe(false);
  });

  it("insideAnyOf: paths not in normal form take the full check", () => {
    for (const child of ["/a//b/c", "/a/b//c", "/a/./b/c", "/a/x/../b/c", "/a/b/c/..", "/a/b/../b", "a/b", "/a/b/c/./"]) {
      expect(insideAnyOf(["/a/b"])(child), child).toBe(isPathInside(child, "/a/b"));
    }
  });

  it("resolves relative paths against the cwd on both sides", () => {
    expect(isPathInside("x/y", "x")).toBe(true);
    expect(isPathInside("../x", ".")).toBe(false);
    expect(isPathInside("..x", ".")).toBe(true);
  });
});

describe("relativePathClimbsOut (a relative path as written in a manifest, catalog or tarball)", () => {
  const table: [string, boolean][] = [
    ["./tools/a.ts", false],
    ["tools", false],
    [".", false],
    ["..foo/x", false],
    ["a/../b", false],
    ["..", true],
    ["../x", true],
    ["./a/../../x", true],
    ["a\\..\\..\\x", true],
    ["..\\x", true],
  ];
  for (const [relative, climbs] of table) {
    it(`${JSON.stringify(relative)}: ${climbs ? "climbs out" : "stays"}`, () => {
      expect(relativePathClimbsOut(relative)).toBe(climbs);
    });
  }
});

describe("real paths", () => {
  let root: string;
  let cache: string;
  let victim: string;
  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), "xcsh-contain-")));
    cache = path.join(root, "cache");
    victim = path.join(root, "victim");
    await mkdir(path.join(cache, "real"), { recursive: true });
    await mkdir(victim, { recursive: true });
    await writeFile(path.join(victim, "secret"), "x");
    await symlink(victim, path.join(cache, "link-out"));
    await symlink(path.join(cache, "real"), path.join(cache, "link-in"));
    await symlink(cache, path.join(root, "cache-alias"));
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("a symlink inside the folder that leads out is outside", () => {
    expect(isPathInside(path.join(cache, "link-out", "secret"), cache)).toBe(true);
    expect(isRealPathInside(path.join(cache, "link-out", "secret"), cache)).toBe(false);
    expect(isRealPathInside(path.join(cache, "link-out"), cache)).toBe(false);
  });

  it("a symlink that stays inside is inside", () => {
    expect(isRealPathInside(path.join(cache, "link-in"), cache)).toBe(true);
  });

  it("isRealPathBelow: strictly below once resolved, never the folder itself (what may be deleted)", () => {
    expect(isRealPathBelow(path.join(cache, "link-in"), cache)).toBe(true);
    expect(isRealPathBelow(path.join(cache, "link-out"), cache)).toBe(false);
    expect(isRealPathBelow(path.join(root, "cache-alias"), cache)).toBe(false);
    expect(isRealPathBelow(path.join(root, "cache-alias", "real"), cache)).toBe(true);
  });

  it("a symlinked parent is resolved on both sides", () => {
    expect(isRealPathInside(path.join(root, "cache-alias", "real"), cache)).toBe(true);
    expect(isRealPathInside(path.join(cache, "real"), path.join(root, "cache-alias"))).toBe(true);
    expect(isRealPathInside(path.join(root, "cache-alias", "link-out"), path.join(root, "cache-alias"))).toBe(false);
  });

  it("a child that does not exist is judged by its nearest existing ancestor", () => {
    expect(realPathOrNearest(path.join(cache, "link-out", "new", "deeper"))).toBe(path.join(victim, "new", "deeper"));
    expect(isRealPathInside(path.join(cache, "missing", "x"), cache)).toBe(true);
    expect(isRealPathInside(path.join(cache, "link-out", "missing"), cache)).toBe(false);
    expect(isRealPathInside(path.join(cache, "missing", "..", "..", "victim"), cache)).toBe(false);
  });

  it.skipIf(!existsSync("/proc/self/root"))("/proc/self/root/... resolves to the real folder", () => {
    const viaProc = path.join("/proc/self/root", victim);
    expect(isPathInside(viaProc, cache)).toBe(false);
    expect(isRealPathInside(viaProc, cache)).toBe(false);
    expect(isRealPathInside(path.join("/proc/self/root", cache, "real"), cache)).toBe(true);
  });

  it("confinePath returns the real path, or throws EPATH_OUTSIDE naming file and field", () => {
    expect(confinePath(path.join(root, "cache-alias", "real"), cache, { what: "install path" })).toBe(path.join(cache, "real"));
    let thrown: unknown;
    try {
      confinePath(path.join(cache, "link-out"), cache, { what: "install path", file: "/x/installed_plugins.json", field: "/plugins/a@b/0/installPath" });
    } catch (error) {
      thrown = error;
    }
    expect(isXcshToolsError(thrown, "EPATH_OUTSIDE")).toBe(true);
    expect((thrown as Error).message).toContain("/x/installed_plugins.json");
    expect((thrown as Error).message).toContain("/plugins/a@b/0/installPath");
    expect((thrown as Error).message).toContain(victim);
  });

  it("strictlyBelow refuses the folder itself (a deletion never takes the whole place)", () => {
    expect(() => confinePath(cache, cache, { what: "folder to delete" }, { strictlyBelow: true })).toThrow(/the folder/);
    expect(() => confinePath(`${cache}/`, cache, { what: "folder to delete" }, { strictlyBelow: true })).toThrow(/EPATH_OUTSIDE|the folder/);
    expect(() => confinePath(path.join(cache, "real", ".."), cache, { what: "folder to delete" }, { strictlyBelow: true })).toThrow();
    expect(confinePath(path.join(cache, "..foo"), cache, { what: "folder to delete" }, { strictlyBelow: true })).toBe(path.join(cache, "..foo"));
  });
});
