/**
 * core/state-places.ts: one place per kind of recorded path, and the journal's rule.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confineCatalogPath, confineJournalPath, confineStatePath, isInPlace, placeOf, xcshHomeOfOurs } from "../../src/core/state-places.js";

let root: string;
let roots: { home: string; xcshHome: string };
beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), "xcsh-places-")));
  roots = { home: path.join(root, "home"), xcshHome: path.join(root, "home", ".xcsh") };
  await mkdir(path.join(roots.xcshHome, "plugins", "cache", "plugins"), { recursive: true });
  await mkdir(path.join(roots.xcshHome, "plugins", "cache", "marketplaces"), { recursive: true });
  await mkdir(path.join(root, "victim"), { recursive: true });
  await symlink(path.join(root, "victim"), path.join(roots.xcshHome, "plugins", "cache", "marketplaces", "evil"));
  await mkdir(path.join(root, "team", ".xcsh"), { recursive: true });
  await mkdir(path.join(root, "team", "sub"), { recursive: true });
  await symlink(path.join(root, "victim"), path.join(root, "team", "link"));
  // A first restore of a repository that has only a declaration: no .xcsh yet.
  await mkdir(path.join(root, "decl-only"), { recursive: true });
  await writeFile(path.join(root, "decl-only", "xcsh-team.json"), "{}\n");
  await mkdir(path.join(root, "claude-only", ".claude"), { recursive: true });
  await writeFile(path.join(root, "claude-only", ".claude", "settings.json"), "{}\n");
  await mkdir(path.join(root, "claude-empty", ".claude"), { recursive: true });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("places", () => {
  it("each kind has one folder", () => {
    expect(placeOf("xcsh-install", { roots })).toBe(path.join(roots.xcshHome, "plugins", "cache", "plugins"));
    expect(placeOf("claude-install", { roots })).toBe(path.join(roots.home, ".claude", "plugins"));
    expect(placeOf("claude-marketplace", { roots })).toBe(path.join(roots.home, ".claude", "plugins"));
    expect(placeOf("user-catalog", { roots })).toBe(path.join(roots.xcshHome, "plugins", "cache", "marketplaces"));
    expect(placeOf("project-catalog", { roots, cwd: "/p" })).toBe(path.join("/p", ".xcsh", "cache", "marketplaces"));
    expect(placeOf("npm-plugin", { roots })).toBe(path.join(roots.xcshHome, "plugins", "node_modules"));
  });

  it("a recorded path must be absolute and strictly below its place", () => {
    const cache = placeOf("xcsh-install", { roots });
    expect(isInPlace("xcsh-install", path.join(cache, "m___p___1.0.0-abc"), { roots })).toBe(true);
    expect(isInPlace("xcsh-install", cache, { roots })).toBe(false);
    expect(isInPlace("xcsh-install", "m___p___1.0.0", { roots })).toBe(false);
    expect(isInPlace("xcsh-install", `${cache}/../../../../victim`, { roots })).toBe(false);
    expect(() => confineStatePath("xcsh-install", path.join(root, "victim"), { roots }, { file: "/f.json", field: "/plugins/a@b/0/installPath" })).toThrow(/EPATH_OUTSIDE|outside/);
  });

  it("a catalog path is exactly <cache>/<name>/marketplace.json, after symlinks", () => {
    const cache = placeOf("user-catalog", { roots });
    expect(confineCatalogPath(path.join(cache, "good", "marketplace.json"), "good", "user-catalog", cache, {})).toBe(path.join(cache, "good", "marketplace.json"));
    expect(() => confineCatalogPath(path.join(cache, "other", "marketplace.json"), "good", "user-catalog", cache, {})).toThrow();
    expect(() => confineCatalogPath(path.join(cache, "good", "x.json"), "good", "user-catalog", cache, {})).toThrow();
    expect(() => confineCatalogPath(path.join(cache, "evil", "marketplace.json"), "evil", "user-catalog", cache, {})).toThrow();
    expect(() => confineCatalogPath("relative/marketplace.json", "good", "user-catalog", cache, {})).toThrow();
  });
});

describe("journaled paths", () => {
  it("the xcsh root is two levels above our folder", () => {
    expect(xcshHomeOfOurs(path.join(roots.xcshHome, "plugins", ".xcsh-tools"))).toBe(roots.xcshHome);
  });

  const table: [string, () => string, boolean][] = [
    ["a file of ours", () => path.join(roots.xcshHome, "plugins", "package.json"), true],
    ["the xcsh root itself", () => roots.xcshHome, false],
    ["a project's registry (folder not created yet)", () => path.join(root, "project", ".xcsh", "plugins", "installed_plugins.json"), true],
    ["a project's marketplaces.json", () => path.join(root, "project", ".xcsh", "marketplaces.json"), true],
    ["a project's overrides", () => path.join(root, "project", ".xcsh", "plugin-overrides.json"), true],
    ["a project's tools (never journaled)", () => path.join(root, "project", ".xcsh", "tools"), false],
    ["a project's .xcsh itself", () => path.join(root, "project", ".xcsh"), false],
    ["the victim", () => path.join(root, "victim"), false],
    ["`..` out of the root", () => `${roots.xcshHome}/../../victim`, false],
    ["through a symlink in the cache", () => path.join(roots.xcshHome, "plugins", "cache", "marketplaces", "evil", "x"), false],
    ["a relative path", () => "plugins/package.json", false],
    ["a project's .xcsh/.gitignore (written once by a team restore)", () => path.join(root, "team", ".xcsh", ".gitignore"), true],
    ["a team lock beside a .xcsh folder", () => path.join(root, "team", "xcsh-team.lock.json"), true],
    ["a team lock's name in a folder without .xcsh", () => path.join(root, "victim", "xcsh-team.lock.json"), false],
    ["the declaration beside a .xcsh folder (a --scope project change writes it in the restore's journal)", () => path.join(root, "team", "xcsh-team.json"), true],
    ["another file beside a .xcsh folder", () => path.join(root, "team", "package.json"), false],
    ["the declaration's name in a folder without .xcsh", () => path.join(root, "victim", "xcsh-team.json"), false],
    ["the declaration through a symlink to a folder without .xcsh", () => path.join(root, "team", "link", "xcsh-team.json"), false],
    ["a project's personal file (.xcsh/team.local.json)", () => path.join(root, "team", ".xcsh", "team.local.json"), true],
    ["the personal file's name outside a .xcsh folder", () => path.join(root, "team", "team.local.json"), false],
    ["a team lock's name below a .xcsh folder's sibling", () => path.join(root, "team", "sub", "xcsh-team.lock.json"), false],
    ["a team lock through a symlink to a folder without .xcsh", () => path.join(root, "team", "link", "xcsh-team.lock.json"), false],
    ["a team lock beside only an xcsh-team.json (a first restore: no .xcsh yet)", () => path.join(root, "decl-only", "xcsh-team.lock.json"), true],
    ["a team lock beside only a .claude/settings.json", () => path.join(root, "claude-only", "xcsh-team.lock.json"), true],
    ["another file beside an xcsh-team.json", () => path.join(root, "decl-only", "xcsh-team.json"), false],
    ["a team lock's name beside a .claude folder with no settings.json", () => path.join(root, "claude-empty", "xcsh-team.lock.json"), false],
    ["a team lock's name below a folder with an xcsh-team.json", () => path.join(root, "decl-only", "sub", "xcsh-team.lock.json"), false],
  ];
  it.each(table)("%s", (_what, p, allowed) => {
    const check = () => confineJournalPath(p(), roots.xcshHome, { file: "intent.json", field: "entries/0/path" });
    if (allowed) expect(check).not.toThrow();
    else expect(check).toThrow();
  });
});
