/**
 * The CLI program's bundle (scripts/bundle-cli.mjs, chosen by src/cli/main.ts): one module that
 * imports nothing of ours but the entry's command-name.js; a process runs from the bundle or from
 * the separate modules, never both; `tools` and help run from the separate modules; a bundle older
 * than tsc's output is not used; and the separate modules alone install and list exactly as the
 * bundle does. Which of our modules a process reads is logged by a resolve hook in each process.
 */
import { cp, mkdir, readdir, readFile, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { nonBuiltinImports, ownDependencies, packageOf } from "../helpers/bundle-imports.js";
import { hermeticEnv, runProcess, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const BUNDLE = path.join(REPO, "dist", "cli", "program.bundle.js");
const EXAMPLE_PLUGIN = path.join(REPO, "examples", "plugin-greet");

let w: TmpWorld;
beforeAll(buildDist, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld();
});
afterEach(async () => w?.cleanup());

/**
 * Run the CLI of the package at `pkg` (the repository, or a copy) with a resolve hook logging, per
 * process, every module it resolves; returns the result and, per process, the files of `pkg`'s
 * dist/ (relative to it) that it resolved.
 */
async function runLogged(pkg: string, args: string[], home = w.home): Promise<{ r: ProcessResult; perProcess: string[][] }> {
  const logs = await makeLogFolder();
  const hooks = path.join(logs, "..", "log-hooks.mjs");
  await writeFile(hooks, `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(logs)} + "/" + process.pid, result.url + "\\n");\n  return result;\n}\n`);
  const register = path.join(logs, "..", "register.mjs");
  await writeFile(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  const r = await runProcess(process.execPath, [path.join(pkg, "bin", "xcsh-tools.js"), ...args], { cwd: w.cwd, env: hermeticEnv(home, { NODE_OPTIONS: `--import=${pathToFileURL(register).href}` }), timeoutMs: 60_000 });
  const dist = `${pathToFileURL(path.join(pkg, "dist")).href}/`;
  const perProcess = await Promise.all(
    (await readdir(logs)).map(async (pid) =>
      [...new Set((await readFile(path.join(logs, pid), "utf8")).split("\n").filter((url) => url.startsWith(dist)))].map((url) => url.slice(dist.length)).sort(),
    ),
  );
  return { r, perProcess };
}

let logFolders = 0;
async function makeLogFolder(): Promise<string> {
  const folder = path.join(w.root, `logs-${++logFolders}`, "resolved");
  await mkdir(folder, { recursive: true });
  return folder;
}

/** The CLI's own process among the logs: the one that read our program. */
function cliProcess(perProcess: string[][]): string[] {
  const found = perProcess.filter((files) => files.includes("cli/main.js"));
  expect(found).toHaveLength(1);
  return found[0]!;
}

/** A copy of the built package (bin, dist, package.json; node_modules linked), optionally without the bundle. */
async function copyPackage(withBundle: boolean): Promise<string> {
  const pkg = path.join(w.root, withBundle ? "pkg-bundled" : "pkg-separate");
  await mkdir(pkg);
  await cp(path.join(REPO, "bin"), path.join(pkg, "bin"), { recursive: true });
  await cp(path.join(REPO, "dist"), path.join(pkg, "dist"), { recursive: true, preserveTimestamps: true, filter: (source) => withBundle || source !== BUNDLE });
  await cp(path.join(REPO, "package.json"), path.join(pkg, "package.json"));
  await symlink(path.join(REPO, "node_modules"), path.join(pkg, "node_modules"), "junction");
  return pkg;
}

/** `list --json` of a world, its own folders replaced by placeholders. */
function normalizedList(r: ProcessResult, home: string): unknown {
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.split(home).join("<home>"));
}

describe("the CLI program's bundle (scripts/bundle-cli.mjs)", () => {
  it("is one module: it imports only Node built-ins, our dependencies and the entry's command-name.js", async () => {
    const text = await readFile(BUNDLE, "utf8");
    expect(text.startsWith("// Bundled by scripts/bundle-cli.mjs")).toBe(true);
    const outside = nonBuiltinImports(text);
    const dependencies = ownDependencies();
    expect(outside.filter((s) => s !== "./command-name.js" && !dependencies.has(packageOf(s)))).toEqual([]);
    expect(outside).toContain("./command-name.js");
  });

  it("runs an install and a list: the CLI process reads no module of ours but the entry, command-name.js and the bundle", { timeout: 90_000 }, async () => {
    const install = await runLogged(REPO, ["install", EXAMPLE_PLUGIN]);
    expect(install.r.code, install.r.stderr).toBe(0);
    expect(cliProcess(install.perProcess)).toEqual(["cli/command-name.js", "cli/main.js", "cli/program.bundle.js"]);
    // The validation child is a process of its own, from its own bundle.
    expect(install.perProcess.find((files) => files.includes("validate/child.js"))).toEqual(["validate/child.js"]);
    const list = await runLogged(REPO, ["list", "--json"]);
    expect(list.r.json().plugins.map((p: { name: string }) => p.name)).toEqual(["@example/xcsh-greet"]);
    expect(cliProcess(list.perProcess)).toEqual(["cli/command-name.js", "cli/main.js", "cli/program.bundle.js"]);
  });

  it("leaves `tools` and help to the separate modules", { timeout: 60_000 }, async () => {
    for (const args of [["tools", "--json"], ["--help"]]) {
      const { r, perProcess } = await runLogged(REPO, args);
      expect(r.code, r.stderr).toBe(0);
      const files = cliProcess(perProcess);
      expect(files).toContain("cli/program.js");
      expect(files).not.toContain("cli/program.bundle.js");
    }
  });

  it("is not used when it is older than tsc's output (a plain tsc ran after the build)", { timeout: 60_000 }, async () => {
    const pkg = await copyPackage(true);
    const program = await stat(path.join(pkg, "dist", "cli", "program.js"));
    const earlier = new Date(program.mtimeMs - 3_600_000);
    await utimes(path.join(pkg, "dist", "cli", "program.bundle.js"), earlier, earlier);
    const { r, perProcess } = await runLogged(pkg, ["list", "--json"]);
    expect(r.json()).toEqual({ plugins: [], contextTokens: { alwaysOn: 0, alwaysOnForXcsh: 0 } });
    const files = cliProcess(perProcess);
    expect(files).toContain("cli/program.js");
    expect(files).not.toContain("cli/program.bundle.js");
  });

  it("is the same program as the separate modules: without it, an install and a list give the same answers", { timeout: 120_000 }, async () => {
    const separate = await copyPackage(false);
    const homes = { bundled: path.join(w.root, "home-bundled"), separate: path.join(w.root, "home-separate") };
    const lists: Record<string, unknown> = {};
    for (const [build, pkg] of [["bundled", REPO], ["separate", separate]] as const) {
      await mkdir(homes[build]);
      const install = await runLogged(pkg, ["install", `${EXAMPLE_PLUGIN}[*]`], homes[build]);
      expect(install.r.code, install.r.stderr).toBe(0);
      const files = cliProcess(install.perProcess);
      expect(files.includes("cli/program.bundle.js")).toBe(build === "bundled");
      lists[build] = normalizedList((await runLogged(pkg, ["list", "--json"], homes[build])).r, homes[build]);
    }
    expect(lists.separate).toEqual(lists.bundled);
    await rm(separate, { recursive: true, force: true });
  });
});
