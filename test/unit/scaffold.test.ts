/**
 * The pure parts of `xcsh-tools new`: name checks and suggestions (npm, plugin and LLM tool-name
 * rules), placeholder rendering (strict), dot-name renames, binary-safe copies, and that every
 * shipped template renders with known placeholders only.
 */
import { realpathSync } from "node:fs";
import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkProjectName, suggestProjectName, toToolName } from "../../src/scaffold/names.js";
import { decodeText, renderPath, renderTemplate, renderText } from "../../src/scaffold/render.js";
import { TEMPLATES, dependencyRanges, templateDir, xcshToolsDependency } from "../../src/scaffold/templates.js";
import { REPO_ROOT } from "../helpers/runtimes.js";
import { TOOL_NAME_PATTERN } from "../../src/host/tool-shape.js";
import { npmNameProblem } from "../../src/manifest/names.js";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe("checkProjectName", () => {
  it.each([
    ["git-status", { packageName: "git-status", bareName: "git-status", toolName: "git_status", title: "Git Status" }],
    ["@acme/xcsh-search", { packageName: "@acme/xcsh-search", bareName: "xcsh-search", toolName: "xcsh_search", title: "Xcsh Search" }],
    ["todo2.md-lint", { packageName: "todo2.md-lint", bareName: "todo2.md-lint", toolName: "todo2_md_lint", title: "Todo2 Md Lint" }],
  ])("accepts %s", (input, names) => {
    expect(checkProjectName(input)).toEqual({ ok: true, names });
  });

  it.each([
    ["MyTool", /capital letters/, "my-tool"],
    ["my tool", /URL-friendly|plugin name/, "my-tool"],
    ["_private", /cannot start with an underscore/, "private"],
    ["123-tool", /must start with a letter/, "tool"],
    ["my_tool", /plugin name/, "my-tool"],
    ["http", /core module/, "xcsh-http"],
    ["@Acme/Search", /capital letters/, "@acme/search"],
    ["", /empty/, "my-tool"],
    ["x".repeat(70), /at most 64/, "x".repeat(60)],
  ])("refuses %j and suggests a name that passes", (input, problem, suggestion) => {
    const checked = checkProjectName(input);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.problem).toMatch(problem);
    expect(checked.suggestion).toBe(suggestion);
    expect(checkProjectName(checked.suggestion).ok).toBe(true);
  });

  it("suggestions always pass every rule, and derived tool names are valid LLM names", () => {
    for (const input of ["Hello World!", "--x--", "ÜberTool", "a", "9", "@/x", "node_modules", "fooBarBaz"]) {
      const suggestion = suggestProjectName(input);
      const checked = checkProjectName(suggestion);
      expect(checked.ok, `${input} → ${suggestion}`).toBe(true);
      if (checked.ok) {
        expect(npmNameProblem(checked.names.packageName)).toBeUndefined();
        expect(checked.names.toolName).toMatch(TOOL_NAME_PATTERN);
      }
    }
    expect(toToolName("a-b.c")).toBe("a_b_c");
  });
});

describe("rendering", () => {
  it("fills placeholders, tolerating spaces, and refuses unknown ones", () => {
    expect(renderText("{{name}} / {{ toolName }}", { name: "n", toolName: "t" })).toBe("n / t");
    expect(() => renderText("{{nmae}}", { name: "n" }, "README.md")).toThrow(expect.objectContaining({ code: "ETEMPLATE_PLACEHOLDER", message: expect.stringContaining("README.md uses {{nmae}}") }));
    expect(renderText("a {single} b", {})).toBe("a {single} b");
  });

  it("renames stored dot-names and fills placeholders in paths", () => {
    expect(renderPath("_gitignore", {})).toBe(".gitignore");
    expect(renderPath("_claude-plugin/plugin.json", {})).toBe(".claude-plugin/plugin.json");
    expect(renderPath("plugins/{{p}}/_xcsh-plugin/plugin.json", { p: "x" })).toBe("plugins/x/.xcsh-plugin/plugin.json");
    expect(renderPath("tools/_helpers.ts", {})).toBe("tools/_helpers.ts");
    expect(() => renderPath("{{p}}/x", { p: ".." })).toThrow(expect.objectContaining({ code: "ETEMPLATE_PLACEHOLDER" }));
  });

  it("copies binary files byte for byte and renders text", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-render-"));
    dirs.push(dir);
    const binary = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x7b, 0x7b, 0x6e, 0x7d, 0x7d, 0xff]);
    const latin1 = Buffer.from([0x7b, 0x7b, 0xe9, 0x7d, 0x7d]); // not UTF-8
    await mkdir(path.join(dir, "assets"));
    await writeFile(path.join(dir, "assets", "logo.png"), binary);
    await writeFile(path.join(dir, "assets", "old.txt"), latin1);
    await writeFile(path.join(dir, "{{n}}.md"), "# {{n}} ✓\n");
    const files = await renderTemplate(dir, { n: "demo" });
    expect(files.map((f) => f.path)).toEqual(["assets/logo.png", "assets/old.txt", "demo.md"]);
    expect(files[0]!.content.equals(binary)).toBe(true);
    expect(files[1]!.content.equals(latin1)).toBe(true);
    expect(files[2]!.content.toString("utf8")).toBe("# demo ✓\n");
    expect(decodeText(binary)).toBeUndefined();
  });

  it("the dependency on xcsh-tools: the registry version from a node_modules install, else the folder it runs from", async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-dep-"));
    try {
      for (const dir of ["node_modules/xcsh-tools", "lib/node_modules/@x/xcsh-tools", "clone/xcsh-tools"]) await mkdir(path.join(root, dir), { recursive: true });
      const real = realpathSync(root);
      expect(xcshToolsDependency(path.join(root, "node_modules", "xcsh-tools"), "1.2.3")).toBe("^1.2.3");
      expect(xcshToolsDependency(path.join(root, "lib", "node_modules", "@x", "xcsh-tools"), "1.2.3")).toBe("^1.2.3");
      expect(xcshToolsDependency(path.join(root, "clone", "xcsh-tools"), "1.2.3")).toBe(`file:${path.join(real, "clone", "xcsh-tools")}`);
      // A global link (`npm link`, `npm install -g .`) leads back to the clone: the folder.
      await symlink(path.join(root, "clone", "xcsh-tools"), path.join(root, "lib", "node_modules", "linked"));
      expect(xcshToolsDependency(path.join(root, "lib", "node_modules", "linked"), "1.2.3")).toBe(`file:${path.join(real, "clone", "xcsh-tools")}`);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("every shipped template renders with known placeholders only and pins our majors", async () => {
    const names = checkProjectName("@acme/demo-kit");
    if (!names.ok) throw new Error("bad fixture name");
    const ranges = dependencyRanges();
    // Run from this checkout (no node_modules around it): the folder itself.
    expect(ranges.xcshToolsRange).toBe(`file:${realpathSync(REPO_ROOT)}`);
    expect(ranges.vitestRange).toMatch(/^\^4\./);
    expect(ranges.typeboxRange).toBe("^0.34.0");
    for (const template of TEMPLATES) {
      const vars = { name: "@acme/demo-kit", ...names.names, description: "d", ...ranges, ...(template.extraVars?.(names.names) ?? {}) };
      const files = await renderTemplate(templateDir(template.name), vars);
      expect(files.length, template.name).toBeGreaterThan(0);
      for (const file of files) {
        expect(file.path, template.name).not.toMatch(/\{\{|^_|\/_(gitignore|npmrc|xcsh-plugin|claude-plugin)/);
        expect(file.content.toString("utf8"), `${template.name}/${file.path}`).not.toMatch(/\{\{/);
        if (file.path.endsWith(".json")) expect(() => JSON.parse(file.content.toString("utf8")), `${template.name}/${file.path}`).not.toThrow();
      }
    }
  });
});
