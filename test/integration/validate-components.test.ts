import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validatePath } from "../../src/validate/index.js";
import { writeBrokenPlugin, writeFullPlugin } from "../helpers/component-fixtures.js";

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), "xt-vcomp-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("validate: plugin components", () => {
  it("a valid plugin with every kind passes and reports its components", async () => {
    const root = path.join(tmp(), "p");
    writeFullPlugin(root);
    const report = await validatePath(root, { cwd: root, staticOnly: true });
    expect(report.errors).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.components.map((c) => c.kind)).toEqual(expect.arrayContaining(["skill", "command", "agent", "hook", "mcp-server", "lsp-server", "output-style", "bin", "monitor"]));
    expect(report.components.every((c) => c.plugin === "kitchen-sink")).toBe(true);
  });

  it("a folder without plugin.json or tools/ but with skills is a plugin folder", async () => {
    const root = path.join(tmp(), "skills-only");
    mkdirSync(path.join(root, "skills", "a"), { recursive: true });
    writeFileSync(path.join(root, "skills", "a", "SKILL.md"), "---\ndescription: does a\n---\nbody\n");
    const report = await validatePath(root, { cwd: root, staticOnly: true });
    expect(report.target.kind).toBe("plugin-folder");
    expect(report.ok).toBe(true);
    expect(report.components.map((c) => `${c.kind}:${c.name}`)).toEqual(["skill:a"]);
  });

  it("a broken plugin fails with coded errors, each path said once", async () => {
    const base = tmp();
    const root = path.join(base, "p");
    writeBrokenPlugin(root, path.join(base, "outside"));
    const report = await validatePath(root, { cwd: root, staticOnly: true });
    expect(report.ok).toBe(false);
    const codes = new Set(report.errors.map((e) => e.code));
    // The broken PreToolUse hooks stay errors: Claude Code refuses a guard that cannot load.
    for (const code of ["EENTRY_ESCAPE", "EHOOK_TYPE", "EREQUIRED"]) expect(codes).toContain(code);
    // Claude Code 2.1.332 passes these (it names skills by folder and reads an unclosed
    // frontmatter as none): warnings, as test/fixtures/conformance records it.
    const warned = new Set(report.warnings.map((w) => w.code));
    for (const code of ["EFRONTMATTER", "EDUPLICATE_COMPONENT"]) expect(warned).toContain(code);
    expect(report.warnings.map((w) => w.code)).toContain("EHOOK_EVENT");
    // A hook naming a missing script: a warning (Claude Code installs it; the hook fails when it runs).
    expect(report.warnings.map((w) => w.code)).toContain("EENTRY_NOT_FOUND");
    // /agents and /commands/0 of plugin.json are reported by the manifest checks only.
    const manifestFile = path.join(root, ".claude-plugin", "plugin.json");
    const onManifest = report.errors.filter((e) => e.file === manifestFile).map((e) => e.path);
    expect(onManifest.filter((p) => p === "/agents")).toHaveLength(1);
  });

  it("the install gate takes what Claude Code takes: component problems are warnings, escapes stay errors", async () => {
    const base = tmp();
    const root = path.join(base, "p");
    writeBrokenPlugin(root, path.join(base, "outside"));
    const report = await validatePath(root, { cwd: root, staticOnly: true, componentProblems: "warning" });
    const codes = new Set(report.errors.map((e) => e.code));
    expect(codes.has("EFRONTMATTER")).toBe(false);
    expect(codes.has("EENTRY_ESCAPE")).toBe(true);
    expect(report.warnings.map((w) => w.code)).toContain("EFRONTMATTER");
  });
});
