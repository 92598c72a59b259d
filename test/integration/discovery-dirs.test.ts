/**
 * Discovery of the plain-folder sources (native, Claude, Codex) and of configured paths: what a
 * tools directory contributes, in which order, and what is reported instead of imported.
 */
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { discoverToolPaths } from "../../src/discovery/index.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { errorSummary, rel, summarize, writeTool } from "./discovery-fixtures.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-test-", { trustProject: true });

const opts = () => ({ home: w.home, xcshHome: w.xcshHome, env: {} });

describe("directory providers", () => {
  it("scans every folder source at project level before user level, in SPEC order", async () => {
    await writeTool(w, "project/.xcsh/tools/p-native.ts", "p-native");
    await writeTool(w, "home/.xcsh/agent/tools/u-native.ts", "u-native");
    await writeTool(w, "project/.claude/tools/p-claude.js", "p-claude");
    await writeTool(w, "home/.claude/tools/u-claude.mjs", "u-claude");
    await writeTool(w, "project/.codex/tools/p-codex.ts", "p-codex");
    await writeTool(w, "home/.codex/tools/u-codex.js", "u-codex");

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual([
      "native/project: project/.xcsh/tools/p-native.ts",
      "native/user: home/.xcsh/agent/tools/u-native.ts",
      "claude/project: project/.claude/tools/p-claude.js",
      "claude/user: home/.claude/tools/u-claude.mjs",
      "codex/project: project/.codex/tools/p-codex.ts",
      "codex/user: home/.codex/tools/u-codex.js",
    ]);
    expect(result.errors).toEqual([]);
    expect(result.paths[0]?.source).toEqual({ provider: "native", providerName: "xcsh", level: "project" });
    expect(result.paths[3]?.source).toEqual({ provider: "claude", providerName: "Claude", level: "user" });
    expect(result.paths[5]?.source).toEqual({ provider: "codex", providerName: "Codex", level: "user" });
    for (const p of result.paths) expect(path.isAbsolute(p.path)).toBe(true);
  });

  it("finds nothing and reports nothing in an empty world", async () => {
    const result = await discoverToolPaths([], w.cwd, opts());
    expect(result).toEqual({ paths: [], errors: [], metadata: [], ignored: [] });
  });

  it("uses $XCSH_HOME from the injected env when no xcshHome is given", async () => {
    const alt = path.join(w.root, "alt-xcsh");
    await writeTool(w, "alt-xcsh/agent/tools/alt.ts", "alt");
    await writeTool(w, "home/.xcsh/agent/tools/default.ts", "default");
    const result = await discoverToolPaths([], w.cwd, { home: w.home, env: { XCSH_HOME: alt } });
    expect(summarize(w, result)).toEqual(["native/user: alt-xcsh/agent/tools/alt.ts"]);
  });

  it("sorts entries by name, takes folder tools by index.ts then index.js then index.mjs, and never recurses", async () => {
    const dir = "project/.xcsh/tools";
    await writeTool(w, `${dir}/b.ts`, "b");
    await writeTool(w, `${dir}/a.js`, "a");
    await writeTool(w, `${dir}/C.mjs`, "C");
    await writeTool(w, `${dir}/folder-ts/index.ts`, "folder-ts");
    await writeTool(w, `${dir}/folder-ts/index.js`, "folder-ts-build");
    await writeTool(w, `${dir}/folder-js/index.js`, "folder-js");
    await writeTool(w, `${dir}/folder-mjs/index.mjs`, "folder-mjs");
    await writeTool(w, `${dir}/folder-js/helper.ts`, "helper");
    await writeTool(w, `${dir}/nested/deeper/x.ts`, "deep");
    await writeTool(w, `${dir}/.hidden.ts`, "hidden");
    await writeTool(w, `${dir}/.hidden-dir/index.ts`, "hidden-dir");
    await writeTool(w, `${dir}/node_modules/dep/index.ts`, "dep");
    await w.write(`${dir}/types.d.ts`, "export {};\n");

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual([
      "native/project: project/.xcsh/tools/C.mjs",
      "native/project: project/.xcsh/tools/a.js",
      "native/project: project/.xcsh/tools/b.ts",
      "native/project: project/.xcsh/tools/folder-js/index.js",
      "native/project: project/.xcsh/tools/folder-mjs/index.mjs",
      "native/project: project/.xcsh/tools/folder-ts/index.ts",
    ]);
    expect(result.ignored.map((i) => rel(w, i.path))).toEqual(["project/.xcsh/tools/nested", "project/.xcsh/tools/types.d.ts"]);
    expect(result.errors).toEqual([]);
  });

  it("reports .md and .json files as metadata, never as paths, and stray files as ignored, not errors", async () => {
    const dir = "project/.xcsh/tools";
    await writeTool(w, `${dir}/foo.ts`, "foo");
    await w.write(`${dir}/foo.md`, "---\nname: foo\n---\n");
    await w.write(`${dir}/foo.json`, { name: "foo" });
    await w.write(`${dir}/README.MD`, "# tools\n");
    await w.write(`${dir}/notes.txt`, "notes\n");
    await w.write(`${dir}/run.sh`, "#!/bin/sh\n");
    await w.write(`${dir}/script.py`, "print(1)\n");
    await w.write("home/.xcsh/agent/tools/user.json", { name: "user" });

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual(["native/project: project/.xcsh/tools/foo.ts"]);
    expect(result.paths.some((p) => /\.(md|json)$/i.test(p.path))).toBe(false);
    expect(result.metadata.map((m) => [rel(w, m.path), m.kind, m.source.level])).toEqual([
      ["project/.xcsh/tools/README.MD", "md", "project"],
      ["project/.xcsh/tools/foo.json", "json", "project"],
      ["project/.xcsh/tools/foo.md", "md", "project"],
      ["home/.xcsh/agent/tools/user.json", "json", "user"],
    ]);
    expect(result.ignored.map((i) => rel(w, i.path))).toEqual([
      "project/.xcsh/tools/notes.txt",
      "project/.xcsh/tools/run.sh",
      "project/.xcsh/tools/script.py",
    ]);
    expect(result.errors).toEqual([]);
  });

  it("follows symlinked tools and reports a dangling link as EENTRY_NOT_FOUND", async () => {
    const target = await writeTool(w, "elsewhere/shared.ts", "shared");
    await mkdir(path.join(w.cwd, ".xcsh/tools"), { recursive: true });
    await symlink(target, path.join(w.cwd, ".xcsh/tools/linked.ts"));
    await symlink(path.join(w.root, "missing.ts"), path.join(w.cwd, ".xcsh/tools/dangling.ts"));

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual(["native/project: project/.xcsh/tools/linked.ts"]);
    expect(errorSummary(w, result)).toEqual(["EENTRY_NOT_FOUND project/.xcsh/tools/dangling.ts"]);
    expect(result.errors[0]?.source).toEqual({ provider: "native", providerName: "xcsh", level: "project" });
  });

  it("reports a tools path that is a file as ETOOLS_DIR and still scans the other sources", async () => {
    await w.write("project/.xcsh/tools", "not a folder\n");
    await writeTool(w, "home/.claude/tools/c.ts", "c");
    const result = await discoverToolPaths([], w.cwd, opts());
    expect(errorSummary(w, result)).toEqual(["ETOOLS_DIR project/.xcsh/tools"]);
    expect(summarize(w, result)).toEqual(["claude/user: home/.claude/tools/c.ts"]);
  });

  it("scans a folder once, as the user level, when cwd is the home folder", async () => {
    await writeTool(w, "home/.claude/tools/c.ts", "c");
    await writeTool(w, "home/.xcsh/tools/project-native.ts", "project-native");
    await writeTool(w, "home/.xcsh/agent/tools/user-native.ts", "user-native");
    const result = await discoverToolPaths([], w.home, opts());
    expect(summarize(w, result)).toEqual([
      "native/project: home/.xcsh/tools/project-native.ts",
      "native/user: home/.xcsh/agent/tools/user-native.ts",
      "claude/user: home/.claude/tools/c.ts",
    ]);
  });

  it("runs only the selected providers", async () => {
    await writeTool(w, "project/.xcsh/tools/n.ts", "n");
    await writeTool(w, "home/.claude/tools/c.ts", "c");
    await writeTool(w, "home/.codex/tools/x.ts", "x");

    const only = await discoverToolPaths([], w.cwd, { ...opts(), providers: ["codex", "native"] });
    expect(summarize(w, only)).toEqual(["native/project: project/.xcsh/tools/n.ts", "codex/user: home/.codex/tools/x.ts"]);

    const without = await discoverToolPaths([], w.cwd, { ...opts(), disabledProviders: ["native"] });
    expect(summarize(w, without)).toEqual(["claude/user: home/.claude/tools/c.ts", "codex/user: home/.codex/tools/x.ts"]);
  });
});

describe("configured paths", () => {
  it("resolves relative paths against cwd and expands ~, in the given order, at project level", async () => {
    await writeTool(w, "project/rel/tool.ts", "rel");
    await writeTool(w, "home/mine/tilde.js", "tilde");
    const abs = await writeTool(w, "abs/abs.mjs", "abs");
    await writeTool(w, "project/folder/index.js", "folder");
    await writeTool(w, "home/dir-of-tools/one.ts", "one");
    await writeTool(w, "home/dir-of-tools/two.js", "two");
    await w.write("home/dir-of-tools/two.md", "# two\n");

    const result = await discoverToolPaths(
      ["./rel/tool.ts", "~/mine/tilde.js", abs, "folder", "~/dir-of-tools"],
      w.cwd,
      opts(),
    );

    expect(summarize(w, result)).toEqual([
      "config/project: project/rel/tool.ts",
      "config/project: home/mine/tilde.js",
      "config/project: abs/abs.mjs",
      "config/project: project/folder/index.js",
      "config/project: home/dir-of-tools/one.ts",
      "config/project: home/dir-of-tools/two.js",
    ]);
    expect(result.paths[0]?.source).toEqual({ provider: "config", providerName: "Config", level: "project" });
    expect(result.metadata.map((m) => rel(w, m.path))).toEqual(["home/dir-of-tools/two.md"]);
    expect(result.errors).toEqual([]);
  });

  it("comes after every other source", async () => {
    await writeTool(w, "project/cfg.ts", "cfg");
    await writeTool(w, "home/.codex/tools/x.ts", "x");
    const result = await discoverToolPaths(["cfg.ts"], w.cwd, opts());
    expect(summarize(w, result)).toEqual(["codex/user: home/.codex/tools/x.ts", "config/project: project/cfg.ts"]);
  });

  it("reports a missing path as EENTRY_NOT_FOUND and a metadata or script file as ENOT_A_MODULE", async () => {
    await w.write("project/tool.md", "# not code\n");
    await w.write("project/tool.sh", "#!/bin/sh\n");
    await writeTool(w, "project/ok.ts", "ok");

    await mkdir(path.join(w.cwd, "empty"));
    await w.write("project/docs-only/about.md", "# about\n");

    const result = await discoverToolPaths(["missing.ts", "tool.md", "tool.sh", "ok.ts", "empty", "docs-only"], w.cwd, opts());

    expect(summarize(w, result)).toEqual(["config/project: project/ok.ts"]);
    expect(errorSummary(w, result)).toEqual([
      "EENTRY_NOT_FOUND project/missing.ts",
      "ENOT_A_MODULE project/tool.md",
      "ENOT_A_MODULE project/tool.sh",
      "ENOT_A_MODULE project/empty",
      "ENOT_A_MODULE project/docs-only",
    ]);
    expect(result.metadata.map((m) => rel(w, m.path))).toEqual(["project/docs-only/about.md"]);
    expect(result.errors[1]?.error).toMatch(/metadata/);
  });
});
