/**
 * The validate fixture corpus (test/fixtures/validate): every good fixture validates clean, and
 * every bad case reports its code on the right file at the right JSON path, with a hint. The
 * table is test/fixtures/validate/cases.json: {name, target, code, file, path, severity, options}.
 * Symlink cases are built at test time (git does not keep symlinks reliably).
 */
import { readFileSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validatePath, type ValidateReport } from "../../src/validate/index.js";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const FIXTURES = path.join(REPO, "test", "fixtures", "validate");
interface Case {
  name: string;
  target: string;
  code: string;
  file: string;
  path: string;
  severity: "error" | "warning";
  options?: { builtins?: string[] };
}
const CASES = JSON.parse(readFileSync(path.join(FIXTURES, "cases.json"), "utf8")) as Case[];

let world: TmpWorld;
beforeAll(async () => {
  await buildDist();
  world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
});
afterAll(async () => world?.cleanup());

// The module checker runs with its default timeouts: with a 3 s module timeout (1.8 s for an
// import) a good TypeScript fixture timed out as EIMPORT_TIMEOUT whenever other files ran at once
// on a 2-core machine. The three fixtures that end by a timeout wait it out in full (the infinite
// loop keeps a core busy all along), so they get HANG_TIMEOUT_MS instead of the default: its
// import and factory timeouts (0.6 and 0.3 of it) are ample for their one-line modules, and the
// module timer starts only once the child has started.
const HANG_TIMEOUT_MS = 6000;
const HANG_CODES = new Set(["EMODULE_TIMEOUT", "EIMPORT_TIMEOUT", "EFACTORY_TIMEOUT"]);
function run(target: string, extra: { builtins?: string[]; strict?: boolean; moduleTimeoutMs?: number } = {}): Promise<ValidateReport> {
  return validatePath(target, { cwd: REPO, home: world.home, xcshHome: world.xcshHome, ...extra });
}

function summary(report: ValidateReport): string {
  return JSON.stringify({ errors: report.errors.map((e) => [e.code, path.relative(REPO, e.file), e.path, e.message]), warnings: report.warnings.map((e) => [e.code, path.relative(REPO, e.file), e.path]) }, null, 1);
}

describe("good fixtures", () => {
  const good: [string, string[]][] = [
    ["good/tool.mjs", ["good_tool"]],
    ["good/multi.ts", ["multi_one", "multi_two"]],
    ["good/tools-folder", ["alpha", "beta"]],
    ["good/plugin-pi", ["pi_tool"]],
    ["good/marketplace", ["alpha_tool", "npm_based"]],
    ["good/claude-marketplace", []],
    ["good/plugin-json/.claude-plugin/plugin.json", []],
    ["good/state/installed_plugins.json", []],
    ["good/state/known_marketplaces.json", []],
    ["good/state/marketplaces.json", []],
    ["good/state/xcsh-plugins.lock.json", []],
    ["good/state/plugin-overrides.json", []],
    ["examples/hello-tool.ts", ["hello"]],
    ["examples/plugin-greet", ["greet", "farewell"]],
  ];
  it.concurrent.each(good)("%s is valid", async (target, tools) => {
    const full = target.startsWith("examples/") ? path.join(REPO, target) : path.join(FIXTURES, target);
    const report = await run(full, { strict: true });
    expect(report.errors, summary(report)).toEqual([]);
    expect(report.warnings, summary(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.tools.map((t) => t.name).sort()).toEqual([...tools].sort());
  });
});

describe("bad fixtures", () => {
  it("has at least 40 bad cases, each with a distinct name", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  it.concurrent.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const dir = path.join(FIXTURES, "bad", c.name);
    const report = await run(path.join(dir, c.target), { ...(HANG_CODES.has(c.code) ? { moduleTimeoutMs: HANG_TIMEOUT_MS } : {}), ...(c.options ?? {}) });
    const list = c.severity === "error" ? report.errors : report.warnings;
    const hit = list.find((issue) => issue.code === c.code);
    expect(hit, `expected ${c.severity} ${c.code}; got ${summary(report)}`).toBeDefined();
    expect(hit!.file).toBe(path.join(dir, c.file));
    expect(hit!.path).toBe(c.path);
    expect(hit!.message.length).toBeGreaterThan(10);
    expect(hit!.hint, "every finding says how to fix it").toBeTruthy();
    if (c.severity === "error") expect(report.ok).toBe(false);
    else {
      expect(report.errors, summary(report)).toEqual([]);
      expect(report.ok).toBe(true);
      const strict = await run(path.join(dir, c.target), { ...(c.options ?? {}), strict: true });
      expect(strict.ok).toBe(false);
    }
  });
});

describe("symlinks and hostile modules", () => {
  it("a tools entry that is a symlink leaving the package is EENTRY_ESCAPE", async () => {
    const pkg = path.join(world.root, "sym-entry");
    await world.write("outside/evil.mjs", "export default () => ({})\n");
    await world.write("sym-entry/package.json", { name: "sym-entry", version: "1.0.0", xcsh: { tools: "./tools/evil.mjs" } });
    await mkdir(path.join(pkg, "tools"), { recursive: true });
    await symlink(path.join(world.root, "outside", "evil.mjs"), path.join(pkg, "tools", "evil.mjs"));
    const report = await run(pkg);
    const hit = report.errors.find((e) => e.code === "EENTRY_ESCAPE");
    expect(hit, summary(report)).toMatchObject({ file: path.join(pkg, "package.json"), path: "/xcsh/tools" });
    expect(report.modules).toBe(0);
  });

  it("a module inside a tools folder that links out of the package is EENTRY_ESCAPE, its siblings load", async () => {
    const pkg = path.join(world.root, "sym-folder");
    await world.write("outside2/evil.mjs", "export default () => ({})\n");
    await world.write("sym-folder/package.json", { name: "sym-folder", version: "1.0.0", xcsh: { tools: "./tools" } });
    await world.write("sym-folder/tools/ok.mjs", readFileSync(path.join(FIXTURES, "good", "tool.mjs"), "utf8"));
    await symlink(path.join(world.root, "outside2", "evil.mjs"), path.join(pkg, "tools", "evil.mjs"));
    const report = await run(pkg);
    expect(report.errors.find((e) => e.code === "EENTRY_ESCAPE"), summary(report)).toMatchObject({ file: path.join(pkg, "package.json"), path: "/xcsh/tools" });
    expect(report.tools.map((t) => t.name)).toEqual(["good_tool"]);
  });

  it("a dangling symlink in a tools folder is EENTRY_NOT_FOUND", async () => {
    const dir = path.join(world.root, "dangling");
    await world.write("dangling/ok.mjs", readFileSync(path.join(FIXTURES, "good", "tool.mjs"), "utf8"));
    await symlink(path.join(world.root, "nowhere.mjs"), path.join(dir, "gone.mjs"));
    const report = await run(dir);
    expect(report.errors.find((e) => e.code === "EENTRY_NOT_FOUND"), summary(report)).toMatchObject({ file: dir, path: "" });
  });

  it("a catalog's relative source that links out of the repository is EENTRY_ESCAPE", async () => {
    const repo = path.join(world.root, "sym-market");
    await world.write("sym-market/.xcsh-plugin/marketplace.json", { name: "m", owner: { name: "o" }, plugins: [{ name: "p", source: "./plugins/p" }] });
    await world.write("elsewhere/p/tools/t.mjs", "export default () => ({})\n");
    await mkdir(path.join(repo, "plugins"), { recursive: true });
    await symlink(path.join(world.root, "elsewhere", "p"), path.join(repo, "plugins", "p"));
    const report = await run(repo);
    expect(report.errors.find((e) => e.code === "EENTRY_ESCAPE"), summary(report)).toMatchObject({ file: path.join(repo, ".xcsh-plugin", "marketplace.json"), path: "/plugins/0/source" });
  });

  it("after a module exits or hangs, the remaining modules are still checked in a fresh child", async () => {
    const dir = path.join(world.root, "hostile");
    const good = readFileSync(path.join(FIXTURES, "good", "tool.mjs"), "utf8");
    await world.write("hostile/a_exit.mjs", "export default function () { process.exit(7); }\n");
    await world.write("hostile/b_ok.mjs", good.replace('"good_tool"', '"after_exit"'));
    await world.write("hostile/c_loop.mjs", "export default function () { for (;;) {} }\n");
    await world.write("hostile/d_ok.mjs", good.replace('"good_tool"', '"after_loop"'));
    await writeFile(path.join(dir, "e_throw.mjs"), "throw new Error('top-level boom');\n");
    // c_loop waits the timeout out; 3 s leaves the others room on a loaded 2-core machine (1.5 s did not).
    const report = await validatePath(dir, { cwd: REPO, home: world.home, xcshHome: world.xcshHome, moduleTimeoutMs: 3000 });
    const codes = Object.fromEntries(report.errors.map((e) => [path.basename(e.file), e.code]));
    expect(codes, summary(report)).toEqual({ "a_exit.mjs": "EMODULE_EXIT", "c_loop.mjs": "EMODULE_TIMEOUT", "e_throw.mjs": "EIMPORT" });
    expect(report.tools.map((t) => t.name)).toEqual(["after_exit", "after_loop"]);
    expect(report.errors.find((e) => e.code === "EMODULE_EXIT")!.message).toContain("code 7");
  });

  it("a target that does not exist is a usage error (exit 2)", async () => {
    await expect(run(path.join(world.root, "no-such-thing"))).rejects.toMatchObject({ code: "ETARGET_NOT_FOUND", exitCode: 2 });
  });

  it("an empty folder is a usage error (exit 2)", async () => {
    await mkdir(path.join(world.root, "empty"), { recursive: true });
    await expect(run(path.join(world.root, "empty"))).rejects.toMatchObject({ code: "ETARGET_UNKNOWN", exitCode: 2 });
  });
});
