/**
 * End to end: a host calls `discoverAndLoadCustomTools` with tools in every location of SPEC §2
 * and gets exactly the expected tools, in order, and exactly the expected errors.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { installEntry, rel, writeTool } from "./discovery-fixtures.js";

// The loader's jiti instance is per process and keeps the first transpile-cache folder it is
// given, so the worlds of this file share one cache folder that outlives each of them.
let cacheDir: string;
beforeAll(async () => {
  cacheDir = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-discovery-cache-"));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-test-", { trustProject: true });

const BUILT_INS = ["read", "bash", "edit", "write"];

async function populateEveryLocation(): Promise<void> {
  // 1. native
  await writeTool(w, "project/.xcsh/tools/proj_native.ts", "proj_native");
  await writeTool(w, "project/.xcsh/tools/shadowed.ts", "shadowed");
  await writeTool(w, "project/.xcsh/tools/folder_tool/index.ts", "folder_tool");
  await w.write("project/.xcsh/tools/notes.md", "# metadata, never imported\n");
  await w.write("project/.xcsh/tools/proj_native.json", "{ this would not even import }");
  await writeTool(w, "home/.xcsh/agent/tools/user_native.js", "user_native");
  await writeTool(w, "home/.xcsh/agent/tools/shadowed.js", "shadowed");
  await writeTool(w, "home/.xcsh/agent/tools/bash.ts", "bash");
  await w.write("home/.xcsh/agent/tools/README.txt", "stray\n");
  // 2. Claude
  await writeTool(w, "project/.claude/tools/proj_claude.mjs", "proj_claude");
  await writeTool(w, "home/.claude/tools/user_claude.ts", "user_claude");
  // 3. Codex
  await writeTool(w, "project/.codex/tools/proj_codex.js", "proj_codex");
  await writeTool(w, "home/.codex/tools/dup.ts", "dup");
  // 4. Claude Code marketplace
  const cpUser = path.join(w.home, ".claude/plugins/cache/mkt/cp-user/1.0.0");
  const cpProj = path.join(w.home, ".claude/plugins/cache/mkt/cp-proj/1.0.0");
  await writeTool(w, path.join(cpUser, "tools/cp_user.ts"), "cp_user");
  await writeTool(w, path.join(cpProj, "tools/cp_proj.js"), "cp_proj");
  await w.write(path.join(w.home, ".claude/plugins/installed_plugins.json"), {
    version: 2,
    plugins: {
      "cp-user@mkt": [installEntry(cpUser)],
      "cp-proj@mkt": [installEntry(cpProj, { scope: "project", projectPath: w.cwd })],
      "cp-gone@mkt": [installEntry(path.join(w.home, ".claude/plugins/cache/mkt/cp-gone/1.0.0"))],
    },
  });
  // 5. xcsh marketplace
  const cache = path.join(w.xcshHome, "plugins/cache/plugins");
  await writeTool(w, path.join(cache, "mkt___xp-user___1.0.0/tools/xp_user/index.js"), "xp_user");
  await writeTool(w, path.join(cache, "mkt___xp-proj___1.0.0/tools/xp_proj.ts"), "xp_proj");
  await w.write(path.join(w.xcshHome, "plugins/installed_plugins.json"), {
    version: 2,
    plugins: { "xp-user@mkt": [installEntry(path.join(cache, "mkt___xp-user___1.0.0"))] },
  });
  await w.write(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), {
    version: 2,
    plugins: { "xp-proj@mkt": [installEntry(path.join(cache, "mkt___xp-proj___1.0.0"), { scope: "project" })] },
  });
  // 6. npm
  const nm = path.join(w.xcshHome, "plugins/node_modules");
  await w.write(path.join(w.xcshHome, "plugins/package.json"), {
    name: "xcsh-plugins",
    private: true,
    dependencies: { "npm-a": "^1.0.0", "npm-off": "^1.0.0" },
  });
  await w.write(path.join(nm, "npm-a/package.json"), {
    name: "npm-a",
    version: "1.0.0",
    xcsh: {
      tools: ["./tools/npm_base.ts", "./tools/missing.ts"],
      features: {
        web: { default: true, tools: ["./tools/npm_web.js", "./tools/dup.js"] },
        extra: { default: false, tools: ["./tools/npm_extra.ts"] },
      },
    },
  });
  await writeTool(w, path.join(nm, "npm-a/tools/npm_base.ts"), "npm_base");
  await writeTool(w, path.join(nm, "npm-a/tools/npm_web.js"), "npm_web");
  await writeTool(w, path.join(nm, "npm-a/tools/dup.js"), "dup");
  await writeTool(w, path.join(nm, "npm-a/tools/npm_extra.ts"), "npm_extra");
  await w.write(path.join(nm, "npm-off/package.json"), { name: "npm-off", version: "1.0.0", xcsh: { tools: "./off.ts" } });
  await writeTool(w, path.join(nm, "npm-off/off.ts"), "npm_off");
  await w.write(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), {
    plugins: {
      "npm-a": { version: "1.0.0", enabledFeatures: null, enabled: true },
      "npm-off": { version: "1.0.0", enabledFeatures: null, enabled: false },
    },
    settings: {},
  });
  // 7. configured paths
  await writeTool(w, "project/cfg/cfg_tool.ts", "cfg_tool");
  await writeTool(w, "home/cfg_home.js", "cfg_home");
}

describe("discoverAndLoadCustomTools", () => {
  it("loads a tool from every location, in order, with exactly the expected errors", async () => {
    await populateEveryLocation();

    const result = await discoverAndLoadCustomTools(["./cfg/cfg_tool.ts", "~/cfg_home.js"], w.cwd, BUILT_INS, undefined, {
      home: w.home,
      xcshHome: w.xcshHome,
      env: {},
      cacheDir,
    });

    expect(result.tools.map((t) => t.tool.name)).toEqual([
      "folder_tool",
      "proj_native",
      "shadowed",
      "user_native",
      "proj_claude",
      "user_claude",
      "proj_codex",
      "dup",
      "cp_proj",
      "cp_user",
      "xp_proj",
      "xp_user",
      "npm_base",
      "npm_web",
      "cfg_tool",
      "cfg_home",
    ]);
    expect(result.tools.map((t) => `${t.source?.provider}/${t.source?.level}`)).toEqual([
      "native/project",
      "native/project",
      "native/project",
      "native/user",
      "claude/project",
      "claude/user",
      "codex/project",
      "codex/user",
      "claude-plugins/project",
      "claude-plugins/user",
      "xcsh-plugins/project",
      "xcsh-plugins/user",
      "npm/user",
      "npm/user",
      "config/project",
      "config/project",
    ]);
    expect(result.tools.find((t) => t.tool.name === "npm_base")?.source?.plugin).toBe("npm-a");
    expect(result.tools.find((t) => t.tool.name === "cp_proj")?.source?.plugin).toBe("cp-proj@mkt");

    // Discovery errors first, then load errors in load order.
    expect(result.errors.map((e) => `${e.code} ${rel(w, e.path)}`)).toEqual([
      "EPLUGIN_NOT_FOUND home/.claude/plugins/cache/mkt/cp-gone/1.0.0",
      "EENTRY_NOT_FOUND home/.xcsh/plugins/node_modules/npm-a/tools/missing.ts",
      "ECONFLICT_BUILTIN home/.xcsh/agent/tools/bash.ts",
      "ECONFLICT home/.xcsh/agent/tools/shadowed.js",
      "ECONFLICT home/.xcsh/plugins/node_modules/npm-a/tools/dup.js",
    ]);
    const [, , builtIn, shadowed, dup] = result.errors;
    expect(builtIn?.conflictsWith).toEqual({ builtIn: true });
    expect(shadowed?.conflictsWith).toEqual({
      path: path.join(w.cwd, ".xcsh/tools/shadowed.ts"),
      source: { provider: "native", providerName: "xcsh", level: "project" },
    });
    expect(dup?.toolName).toBe("dup");
    expect(dup?.source).toEqual({ provider: "npm", providerName: "npm Plugin", level: "user", plugin: "npm-a" });
    expect(dup?.conflictsWith).toEqual({
      path: path.join(w.home, ".codex/tools/dup.ts"),
      source: { provider: "codex", providerName: "Codex", level: "user" },
    });
    // The message names both sides.
    expect(dup?.error).toContain(".codex/tools/dup.ts");
    expect(dup?.error).toContain("npm-a");

    // Metadata and stray files are never imported, so they are not load errors either.
    expect(result.errors.some((e) => /\.(md|json|txt)$/.test(e.path))).toBe(false);
    expect(typeof result.setUIContext).toBe("function");
  });

  it("respects providers and disabledProviders", async () => {
    await populateEveryLocation();
    const opts = { home: w.home, xcshHome: w.xcshHome, env: {}, cacheDir };

    const onlyCodex = await discoverAndLoadCustomTools([], w.cwd, BUILT_INS, undefined, { ...opts, providers: ["codex"] });
    expect(onlyCodex.tools.map((t) => t.tool.name)).toEqual(["proj_codex", "dup"]);
    expect(onlyCodex.errors).toEqual([]);

    const noNative = await discoverAndLoadCustomTools(["./cfg/cfg_tool.ts"], w.cwd, BUILT_INS, undefined, {
      ...opts,
      disabledProviders: ["native", "claude-plugins", "npm"],
    });
    expect(noNative.tools.map((t) => t.tool.name)).toEqual([
      "proj_claude",
      "user_claude",
      "proj_codex",
      "dup",
      "xp_proj",
      "xp_user",
      "cfg_tool",
    ]);
    expect(noNative.errors).toEqual([]);
  });

  it("still loads every other source when state files are corrupt", async () => {
    await populateEveryLocation();
    await w.write(path.join(w.home, ".claude/plugins/installed_plugins.json"), "{");
    await w.write(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), "[1,");
    await w.write(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), { version: 2, plugins: "nope" });

    const result = await discoverAndLoadCustomTools([], w.cwd, BUILT_INS, undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, cacheDir });

    expect(result.tools.map((t) => t.tool.name)).toEqual([
      "folder_tool",
      "proj_native",
      "shadowed",
      "user_native",
      "proj_claude",
      "user_claude",
      "proj_codex",
      "dup",
      "xp_user",
    ]);
    expect(result.errors.map((e) => `${e.code} ${rel(w, e.path)}`)).toEqual([
      "ESTATE_FILE home/.claude/plugins/installed_plugins.json",
      "ESTATE_FILE project/.xcsh/plugins/installed_plugins.json",
      "ESTATE_FILE home/.xcsh/plugins/xcsh-plugins.lock.json",
      "ECONFLICT_BUILTIN home/.xcsh/agent/tools/bash.ts",
      "ECONFLICT home/.xcsh/agent/tools/shadowed.js",
    ]);
  });
});
