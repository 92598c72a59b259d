/**
 * The loader's key for a module (its real path), joined by hand when the entry's path is already
 * resolved (host/module-key.ts `isResolvedPath`): a lazy boot asks for a thousand entries, so it
 * skips `path.resolve`'s and `path.join`'s walk over every character when the path has nothing to
 * resolve. Hostile: every form `path.resolve` would change is not taken as resolved, and the key
 * is the real path whatever the form of the entry's path (links, `.`, `..`, `//`).
 */
import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isResolvedPath, locateModule } from "../../src/host/module-key.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-module-key-");

describe("isResolvedPath: the shortcut is taken only when path.resolve would change nothing", () => {
  const paths = [
    "/a/b.mjs",
    "/a/.hidden/b.mjs",
    "/a/b..c/x.mjs",
    "/a/...x/y.mjs",
    "/a/.../y.mjs",
    "/a/b.",
    "/a//b.mjs",
    "//a/b.mjs",
    "/a/./b.mjs",
    "/a/../b.mjs",
    "/a/b/",
    "/a/b/.",
    "/a/b/..",
    "/./a",
    "/../a",
    "/",
    "a/b.mjs",
    "./a/b.mjs",
    "",
  ];
  for (const p of paths) {
    it(`${JSON.stringify(p)}: ${path.isAbsolute(p) && path.resolve(p) === p && p !== "/" ? "resolved" : "not resolved"}`, () => {
      expect(isResolvedPath(p)).toBe(path.isAbsolute(p) && path.resolve(p) === p && p !== "/");
    });
  }
});

describe("locateModule: the key is the real path, however the entry's path is written", () => {
  it("for plain, linked, dotted and doubled-slash forms of the same files, as realpath gives it", async () => {
    const real = path.join(w.root, "real", "tools");
    await mkdir(real, { recursive: true });
    await writeFile(path.join(real, "a.mjs"), "export default () => ({})\n");
    await symlink(path.join(w.root, "real"), path.join(w.root, "linked"));
    const expected = path.join(await realpath(real), "a.mjs");
    const forms = [
      path.join(real, "a.mjs"),
      path.join(w.root, "linked", "tools", "a.mjs"),
      `${w.root}/real/./tools/a.mjs`,
      `${w.root}/real/tools/../tools/a.mjs`,
      `${w.root}/real//tools/a.mjs`,
      `${w.root}/linked/tools/./a.mjs`,
    ];
    for (const form of forms) {
      // With and without a boot's word that the path is a regular file (the lazy boot's `regular`).
      for (const regular of [undefined, new Set([form])]) {
        const { file, key } = locateModule(form, new Map(), regular);
        expect(key, form).toBe(expected);
        expect(file, form).toBe(form);
      }
    }
    // One map of real folders across all of them, as the loader keeps it for a whole load.
    const folders = new Map<string, string>();
    expect(forms.map((form) => locateModule(form, folders).key)).toEqual(forms.map(() => expected));
  });
});
