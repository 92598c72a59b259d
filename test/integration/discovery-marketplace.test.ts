/**
 * Discovery of marketplace plugins: Claude Code's registry (read only, scope and projectPath
 * respected) and xcsh's user and project registries (project shadows user per id).
 */
import { mkdir, readdir, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { discoverToolPaths } from "../../src/discovery/index.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { errorSummary, installEntry, rel, summarize, writeTool } from "./discovery-fixtures.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-test-", { trustProject: true });

const opts = (providers: ("claude-plugins" | "xcsh-plugins")[]) => ({ home: w.home, xcshHome: w.xcshHome, env: {}, providers });

/** A plugin folder under `<root>/<where>` with the given tool files in `tools/`. */
async function plugin(where: string, tools: Record<string, string>): Promise<string> {
  const dir = path.join(w.root, where);
  await mkdir(dir, { recursive: true });
  for (const [file, name] of Object.entries(tools)) await writeTool(w, path.join(dir, "tools", file), name);
  return dir;
}

describe("claude-plugins", () => {
  const registry = () => path.join(w.home, ".claude/plugins/installed_plugins.json");

  it("reads tools/ of user entries and of project entries whose projectPath contains cwd, project first", async () => {
    const userA = await plugin("home/.claude/plugins/cache/mkt/a/1.0.0", { "a.ts": "a" });
    const projB = await plugin("home/.claude/plugins/cache/mkt/b/2.0.0", { "b.js": "b" });
    const elsewhere = await plugin("home/.claude/plugins/cache/mkt/c/1.0.0", { "c.ts": "c" });
    const localD = await plugin("home/.claude/plugins/cache/mkt/d/1.0.0", { "d.ts": "d" });
    const noPath = await plugin("home/.claude/plugins/cache/mkt/e/1.0.0", { "e.ts": "e" });
    const sub = path.join(w.cwd, "packages/app");
    await mkdir(sub, { recursive: true });
    await w.write(registry(), {
      version: 2,
      plugins: {
        "a@mkt": [installEntry(userA)],
        "b@mkt": [installEntry(projB, { scope: "project", projectPath: w.cwd })],
        "c@mkt": [installEntry(elsewhere, { scope: "project", projectPath: path.join(w.root, "other-project") })],
        "d@mkt": [installEntry(localD, { scope: "local", projectPath: w.cwd })],
        "e@mkt": [installEntry(noPath, { scope: "project" })],
      },
    });

    const atRoot = await discoverToolPaths([], w.cwd, opts(["claude-plugins"]));
    expect(summarize(w, atRoot)).toEqual([
      "claude-plugins/project/b@mkt: home/.claude/plugins/cache/mkt/b/2.0.0/tools/b.js",
      "claude-plugins/project/d@mkt: home/.claude/plugins/cache/mkt/d/1.0.0/tools/d.ts",
      "claude-plugins/user/a@mkt: home/.claude/plugins/cache/mkt/a/1.0.0/tools/a.ts",
    ]);
    expect(atRoot.errors).toEqual([]);
    expect(atRoot.paths[0]?.source).toEqual({
      provider: "claude-plugins",
      providerName: "Claude Code Marketplace",
      level: "project",
      plugin: "b@mkt",
    });

    // A subfolder of the project is inside projectPath too.
    const inSub = await discoverToolPaths([], sub, opts(["claude-plugins"]));
    expect(summarize(w, inSub).map((s) => s.split(":")[0])).toEqual([
      "claude-plugins/project/b@mkt",
      "claude-plugins/project/d@mkt",
      "claude-plugins/user/a@mkt",
    ]);

    // A sibling folder whose name starts like the project is not inside it.
    const sibling = path.join(w.root, "project-other");
    await mkdir(sibling);
    const outside = await discoverToolPaths([], sibling, opts(["claude-plugins"]));
    expect(summarize(w, outside).map((s) => s.split(":")[0])).toEqual(["claude-plugins/user/a@mkt"]);
  });

  it("uses all entries of an id, and lets an applicable project entry shadow the user entries", async () => {
    const v1 = await plugin("home/.claude/plugins/cache/p/1.0.0", { "p.ts": "p" });
    const v2 = await plugin("home/.claude/plugins/cache/p/2.0.0", { "p.ts": "p" });
    const q1 = await plugin("home/.claude/plugins/cache/q/1.0.0", { "q1.ts": "q1" });
    const q2 = await plugin("home/.claude/plugins/cache/q/2.0.0", { "q2.ts": "q2" });
    await w.write(registry(), {
      version: 2,
      plugins: {
        // Stale project install for another project first, then the user install (claude-code#54310).
        "p@mkt": [
          installEntry(v1, { scope: "project", projectPath: path.join(w.root, "elsewhere") }),
          installEntry(v2),
        ],
        // A project pin for this project shadows the user's version.
        "q@mkt": [installEntry(q2), installEntry(q1, { scope: "project", projectPath: w.cwd }), installEntry(q1, { scope: "project", projectPath: w.cwd })],
      },
    });

    const result = await discoverToolPaths([], w.cwd, opts(["claude-plugins"]));
    expect(summarize(w, result)).toEqual([
      "claude-plugins/project/q@mkt: home/.claude/plugins/cache/q/1.0.0/tools/q1.ts",
      "claude-plugins/user/p@mkt: home/.claude/plugins/cache/p/2.0.0/tools/p.ts",
    ]);
  });

  it("reports a missing installPath folder, a bad entry and a bad id, and keeps the good plugins", async () => {
    const good = await plugin("home/.claude/plugins/cache/good", { "good.ts": "good" });
    await w.write(registry(), {
      version: 2,
      plugins: {
        "gone@mkt": [installEntry(path.join(w.root, "home/.claude/plugins/cache/gone"))],
        "noinstall@mkt": [{ scope: "user", version: "1.0.0" }],
        "no-at-sign": [installEntry(good)],
        "notarray@mkt": { installPath: good },
        "good@mkt": [installEntry(good)],
      },
    });

    const result = await discoverToolPaths([], w.cwd, opts(["claude-plugins"]));

    expect(summarize(w, result)).toEqual(["claude-plugins/user/good@mkt: home/.claude/plugins/cache/good/tools/good.ts"]);
    // Problems of the registry file are reported as it is read, then those of each plugin root.
    expect(errorSummary(w, result)).toEqual([
      "ESTATE_ENTRY home/.claude/plugins/installed_plugins.json",
      "EPLUGIN_ID home/.claude/plugins/installed_plugins.json",
      "ESTATE_ENTRY home/.claude/plugins/installed_plugins.json",
      "EPLUGIN_NOT_FOUND home/.claude/plugins/cache/gone",
    ]);
    expect(result.errors[3]?.source).toEqual({
      provider: "claude-plugins",
      providerName: "Claude Code Marketplace",
      level: "user",
      plugin: "gone@mkt",
    });
    expect(result.errors[0]?.error).toContain("/plugins/noinstall@mkt/0/installPath");
    expect(result.errors[1]?.error).toContain('"no-at-sign"');
    expect(result.errors[2]?.error).toContain("/plugins/notarray@mkt");
  });

  it("turns a malformed registry into one ESTATE_FILE record, never a crash, and never writes ~/.claude", async () => {
    await w.write(registry(), "{ not json");
    await writeTool(w, "project/.xcsh/tools/n.ts", "n");
    const before = await readdir(path.join(w.home, ".claude/plugins"));

    const result = await discoverToolPaths([], w.cwd, { home: w.home, xcshHome: w.xcshHome, env: {} });

    expect(errorSummary(w, result)).toEqual(["ESTATE_FILE home/.claude/plugins/installed_plugins.json"]);
    expect(result.errors[0]?.error).toMatch(/not valid JSON/);
    expect(summarize(w, result)).toEqual(["native/project: project/.xcsh/tools/n.ts"]);
    expect(await readdir(path.join(w.home, ".claude/plugins"))).toEqual(before);

    await w.write(registry(), { version: "2", plugins: [] });
    const shape = await discoverToolPaths([], w.cwd, opts(["claude-plugins"]));
    expect(errorSummary(w, shape)).toEqual(["ESTATE_FILE home/.claude/plugins/installed_plugins.json"]);
    expect(shape.errors[0]?.error).toContain("/version");
  });

  it("reports tools symlinked out of the plugin folder as EENTRY_ESCAPE", async () => {
    const root = await plugin("home/.claude/plugins/cache/sly", { "fine.ts": "fine" });
    const outside = await writeTool(w, "outside/evil.ts", "evil");
    await symlink(outside, path.join(root, "tools/evil.ts"));
    await w.write(registry(), { version: 2, plugins: { "sly@mkt": [installEntry(root)] } });

    const result = await discoverToolPaths([], w.cwd, opts(["claude-plugins"]));
    expect(summarize(w, result)).toEqual(["claude-plugins/user/sly@mkt: home/.claude/plugins/cache/sly/tools/fine.ts"]);
    expect(errorSummary(w, result)).toEqual(["EENTRY_ESCAPE home/.claude/plugins/cache/sly/tools/evil.ts"]);
  });
});

describe("xcsh-plugins", () => {
  const userRegistry = () => path.join(w.xcshHome, "plugins/installed_plugins.json");
  const projectRegistry = () => path.join(w.cwd, ".xcsh/plugins/installed_plugins.json");

  it("reads the project registry first; project entries shadow user entries of the same id", async () => {
    const userOnly = await plugin("home/.xcsh/plugins/cache/plugins/mkt___u___1.0.0", { "u.ts": "u" });
    const sharedUser = await plugin("home/.xcsh/plugins/cache/plugins/mkt___s___1.0.0", { "s-old.ts": "s" });
    const sharedProject = await plugin("home/.xcsh/plugins/cache/plugins/mkt___s___2.0.0", { "s-new.ts": "s" });
    const offUser = await plugin("home/.xcsh/plugins/cache/plugins/mkt___off___1.0.0", { "off.ts": "off" });
    const projOnly = await plugin("home/.xcsh/plugins/cache/plugins/mkt___p___1.0.0", { "p.js": "p" });
    const disabledUser = await plugin("home/.xcsh/plugins/cache/plugins/mkt___d___1.0.0", { "d.ts": "d" });
    await w.write(userRegistry(), {
      version: 2,
      plugins: {
        "u@mkt": [installEntry(userOnly)],
        "s@mkt": [installEntry(sharedUser)],
        "off@mkt": [installEntry(offUser)],
        "d@mkt": [installEntry(disabledUser, { enabled: false })],
      },
    });
    await w.write(projectRegistry(), {
      version: 2,
      plugins: {
        "p@mkt": [installEntry(projOnly, { scope: "user" })],
        "s@mkt": [installEntry(sharedProject, { scope: "project" })],
        "off@mkt": [installEntry(offUser, { scope: "project", enabled: false })],
      },
    });

    const result = await discoverToolPaths([], w.cwd, opts(["xcsh-plugins"]));

    expect(summarize(w, result)).toEqual([
      "xcsh-plugins/project/p@mkt: home/.xcsh/plugins/cache/plugins/mkt___p___1.0.0/tools/p.js",
      "xcsh-plugins/project/s@mkt: home/.xcsh/plugins/cache/plugins/mkt___s___2.0.0/tools/s-new.ts",
      "xcsh-plugins/user/u@mkt: home/.xcsh/plugins/cache/plugins/mkt___u___1.0.0/tools/u.ts",
    ]);
    expect(result.errors).toEqual([]);
    expect(result.paths[2]?.source).toEqual({ provider: "xcsh-plugins", providerName: "xcsh Marketplace", level: "user", plugin: "u@mkt" });
  });

  it("reports bad ids, missing install folders and a malformed project registry; the user registry still loads", async () => {
    const ok = await plugin("home/.xcsh/plugins/cache/plugins/ok", { "ok.ts": "ok" });
    await w.write(userRegistry(), {
      version: 2,
      plugins: {
        nomarketplace: [installEntry(ok)],
        "@mkt": [installEntry(ok)],
        "missing@mkt": [installEntry(path.join(w.root, "home/.xcsh/plugins/cache/plugins/missing"))],
        "ok@mkt": [installEntry(ok), installEntry(ok)],
      },
    });
    await w.write(projectRegistry(), { version: 2, plugins: null });

    const result = await discoverToolPaths([], w.cwd, opts(["xcsh-plugins"]));

    expect(summarize(w, result)).toEqual(["xcsh-plugins/user/ok@mkt: home/.xcsh/plugins/cache/plugins/ok/tools/ok.ts"]);
    expect(errorSummary(w, result)).toEqual([
      "ESTATE_FILE project/.xcsh/plugins/installed_plugins.json",
      "EPLUGIN_ID home/.xcsh/plugins/installed_plugins.json",
      "EPLUGIN_ID home/.xcsh/plugins/installed_plugins.json",
      "EPLUGIN_NOT_FOUND home/.xcsh/plugins/cache/plugins/missing",
    ]);
    expect(result.errors[0]?.source?.level).toBe("project");
    expect(result.errors[0]?.error).toContain("/plugins");
  });

  it("puts metadata of plugin tool folders in metadata, with the plugin as source", async () => {
    const root = await plugin("home/.xcsh/plugins/cache/plugins/meta", { "m.ts": "m" });
    await w.write(path.join(root, "tools/m.md"), "# m\n");
    await w.write(userRegistry(), { version: 2, plugins: { "meta@mkt": [installEntry(root)] } });
    const result = await discoverToolPaths([], w.cwd, opts(["xcsh-plugins"]));
    expect(summarize(w, result)).toEqual(["xcsh-plugins/user/meta@mkt: home/.xcsh/plugins/cache/plugins/meta/tools/m.ts"]);
    expect(result.metadata.map((m) => [rel(w, m.path), m.source.plugin])).toEqual([["home/.xcsh/plugins/cache/plugins/meta/tools/m.md", "meta@mkt"]]);
  });
});
