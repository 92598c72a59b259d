/**
 * Migration to a team set (docs/design/team-sets.md (b) "Migration"): a repository that committed
 * the host's per-machine project files before team sets (a project marketplace, a project install)
 * gets them imported into xcsh-team.json by its first `--scope project` change, which prints what
 * it imported and the `git rm --cached` lines for the generated files git tracks (never running
 * them). A legacy marketplace outside the repository cannot be imported: ETEAM_MACHINE_PATH,
 * nothing written.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import { projectCli } from "../helpers/project-cli.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";

vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  await buildDist();
});

let w: TmpWorld;
worldPerTest((x) => (w = x), "xcsh-team-migrate-");

const { git, cli, ok } = projectCli(() => w);

/** A directory marketplace `mkt` with plugins `x` and `old` at `dir` (relative to the world's root). */
async function writeMarketplace(dir: string): Promise<string> {
  await w.write(path.join(dir, catalogPath()), catalog("mkt", [
    { name: "x", source: "./plugins/x", version: "1.0.0" },
    { name: "old", source: "./plugins/old", version: "0.1.0" },
  ]));
  await w.write(path.join(dir, "plugins/x/.xcsh-plugin/plugin.json"), { name: "x", version: "1.0.0", description: "x" });
  await w.write(path.join(dir, "plugins/old/.xcsh-plugin/plugin.json"), { name: "old", version: "0.1.0", description: "old" });
  return path.join(w.root, dir);
}

/** The project as it was before team sets: project scope used outside git, then everything committed. */
async function legacyProject(marketplace: string): Promise<void> {
  await ok(["trust"]);
  await ok(["marketplace", "add", marketplace, "--scope", "project"]);
  await ok(["install", "x@mkt", "--scope", "project", "--yes"]);
  await git(["init", "-q", "-b", "main"]);
  await git(["add", "-A"]);
  await git(["commit", "-q", "-m", "project scope, the old way"]);
}

describe("the first --scope project change imports the legacy project state", () => {
  it("marketplaces.json (a folder inside the root → relative directory), the registry's ids at their version; prints the import and the git rm --cached lines", async () => {
    await writeMarketplace("project/tools/mkt");
    await legacyProject("./tools/mkt");
    expect(await git(["ls-files", ".xcsh"])).toContain(".xcsh/plugins/installed_plugins.json");

    const r = await ok(["disable", "old@mkt", "--scope", "project"]);
    expect(r.stdout).toContain("Imported the project's existing plugin state into xcsh-team.json:");
    expect(r.stdout).toContain("marketplace mkt (local");
    expect(r.stdout).toContain("plugin x@mkt 1.0.0");
    expect(r.stdout).toContain("git rm -r --cached -- .xcsh/plugins/installed_plugins.json");
    expect(r.stdout).toContain("git rm -r --cached -- .xcsh/marketplaces.json");
    const declaration = JSON.parse(await readFile(path.join(w.cwd, "xcsh-team.json"), "utf8"));
    expect(declaration).toEqual({
      version: 1,
      marketplaces: { mkt: { source: { source: "directory", path: "./tools/mkt" } } },
      plugins: { "old@mkt": { enabled: false }, "x@mkt": { version: "1.0.0" } },
    });
    // We print the git commands; the user's repository is theirs to change.
    expect(await git(["ls-files", ".xcsh"])).toContain(".xcsh/plugins/installed_plugins.json");
    const lock = JSON.parse(await readFile(path.join(w.cwd, "xcsh-team.lock.json"), "utf8"));
    expect(Object.keys(lock.marketplacePlugins)).toEqual(["x@mkt"]);

    // The user runs the printed lines; a second change finds the declaration: nothing is imported again.
    for (const line of r.stdout.split("\n").filter((l) => l.trim().startsWith("git rm"))) await git(line.trim().split(" ").slice(1));
    expect(await git(["ls-files", ".xcsh"])).toBe("");
    const again = await ok(["enable", "old@mkt", "--scope", "project"]);
    expect(again.stdout).not.toContain("Imported");
  });

  it("the overrides of npm plugins this user has (at the range they saved); others' names are left out", async () => {
    await writeMarketplace("project/tools/mkt");
    await ok(["trust"]);
    // The user has `mine` (saved as ^1.2.0); the committed overrides also name `theirs`, which this user does not have.
    await w.write(path.join(w.xcshHome, "plugins/package.json"), { name: "xcsh-plugins", private: true, dependencies: { mine: "^1.2.0" } });
    await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), { disabled: ["mine", "theirs"] });
    await git(["init", "-q", "-b", "main"]);
    await git(["add", "-A"]);
    await git(["commit", "-q", "-m", "overrides, the old way"]);

    const r = await ok(["marketplace", "add", "./tools/mkt", "--scope", "project"]);
    expect(r.stdout).toContain("npm plugin mine (from .xcsh/plugin-overrides.json)");
    expect(r.stdout).not.toContain("theirs");
    expect(r.stdout).toContain("git rm -r --cached -- .xcsh/plugin-overrides.json");
    expect(JSON.parse(await readFile(path.join(w.cwd, "xcsh-team.json"), "utf8"))).toEqual({
      version: 1,
      marketplaces: { mkt: { source: { source: "directory", path: "./tools/mkt" } } },
      plugins: { mine: { spec: "^1.2.0", enabled: false } },
    });
    // Generated again from the set: the plugin the project switches off stays off here.
    expect(JSON.parse(await readFile(path.join(w.cwd, ".xcsh/plugin-overrides.json"), "utf8"))).toEqual({ disabled: ["mine"] });
  });

  it("a legacy marketplace outside the repository: ETEAM_MACHINE_PATH naming xcsh-team.json, nothing written", async () => {
    const outside = await writeMarketplace("elsewhere/mkt");
    await legacyProject(outside);
    const before = await snapshotTree(w.cwd, { exclude: [".git"] });
    const r = await cli(["disable", "old@mkt", "--scope", "project"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ETEAM_MACHINE_PATH");
    expect(r.stderr).toContain("xcsh-team.json");
    expect(await snapshotTree(w.cwd, { exclude: [".git"] })).toEqual(before);
  });
});
