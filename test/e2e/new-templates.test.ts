/**
 * `xcsh-tools new`, end to end, for every template: the built CLI renders it into a temp world,
 * the project gets a node_modules made of links into this checkout (xcsh-tools itself, vitest,
 * TypeBox, TypeScript: what `npm install` would bring, without the network), then its own
 * `npm test` (vitest + `xcsh-tools validate`) and `npm run typecheck` must pass, and the host's
 * `discoverAndLoadCustomTools` must load its tools with no error once it is installed the way
 * the install commands will leave it:
 *
 * - npm packages (plugin, streaming, render): what `xcsh-tools link .` will write —
 *   `<xcshHome>/plugins/node_modules/<name>` linked to the folder and a `dependencies` entry in
 *   `<xcshHome>/plugins/package.json` (link itself is not built yet);
 * - the marketplace: its plugin registered in `<xcshHome>/plugins/installed_plugins.json`, as a
 *   marketplace install does;
 * - the tool file: written straight into `<xcshHome>/agent/tools` with `--dir`.
 *
 * Also the CLI contract of `new`: exit codes and error codes, --json, --dry-run, --force, and
 * that without a TTY it never waits for input.
 */
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { mkdir, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliArgv, hermeticEnv, runCli, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT } from "../helpers/runtimes.js";
import { makeTmpWorld, writeTrustRecord, type TmpWorld } from "../helpers/tmp-home.js";

const BUILTINS = ["read", "bash", "edit", "write"];
type HostApi = typeof import("../../src/index.js");
let host: HostApi;
beforeAll(async () => {
  // The built library, as a host imports it.
  host = (await import(pathToFileURL(path.join(REPO_ROOT, "dist", "index.js")).href)) as HostApi;
});

const worlds: TmpWorld[] = [];
afterAll(async () => {
  await Promise.all(worlds.map((w) => w.cleanup()));
});
async function world(): Promise<TmpWorld> {
  const w = await makeTmpWorld("xcsh-tools-new-");
  worlds.push(w);
  return w;
}

/** node_modules for a rendered project, linked to this checkout: no registry involved. */
async function installAgainstCheckout(dir: string): Promise<void> {
  const pkg = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")) as { devDependencies?: Record<string, string> };
  const nm = path.join(dir, "node_modules");
  await mkdir(path.join(nm, ".bin"), { recursive: true });
  for (const name of Object.keys(pkg.devDependencies ?? {})) {
    const target = name === "xcsh-tools" ? REPO_ROOT : path.join(REPO_ROOT, "node_modules", name);
    await mkdir(path.dirname(path.join(nm, name)), { recursive: true });
    await symlink(target, path.join(nm, name), "dir");
  }
  const bins: Record<string, string> = { vitest: "../vitest/vitest.mjs", "xcsh-tools": "../xcsh-tools/bin/xcsh-tools.js", tsc: "../typescript/bin/tsc" };
  for (const [bin, target] of Object.entries(bins)) await symlink(target, path.join(nm, ".bin", bin));
}

async function npm(w: TmpWorld, dir: string, script: string) {
  return runProcess("npm", [script === "test" ? "test" : "run", ...(script === "test" ? [] : [script])], {
    cwd: dir,
    env: hermeticEnv(w.home, { npm_config_offline: "true" }),
    timeoutMs: 120_000,
  });
}

async function newProject(w: TmpWorld, args: string[]) {
  const result = await runCli(["new", ...args, "--json"], { cwd: w.cwd, home: w.home });
  expect({ code: result.code, stderr: result.stderr }, result.stdout).toEqual({ code: 0, stderr: "" });
  return result.json<{ created: string; template: string; files: string[]; nextSteps: string[] }>();
}

async function validate(w: TmpWorld, target: string) {
  const result = await runCli(["validate", target, "--json"], { cwd: w.cwd, home: w.home, timeoutMs: 60_000 });
  return { code: result.code, report: result.json<{ ok: boolean; errors: unknown[]; tools: { name: string }[] }>() };
}

/** A CLI step of the printed next steps, run in `dir` offline; it must succeed. */
async function cliStep(w: TmpWorld, dir: string, args: string[]) {
  const result = await runCli([...args, "--json"], { cwd: dir, home: w.home, env: { npm_config_offline: "true" }, timeoutMs: 120_000 });
  expect({ code: result.code, stderr: result.stderr }, result.stdout).toEqual({ code: 0, stderr: "" });
  return result.json();
}

/** `xcsh-tools link .` in the project, as the next steps say; `name` is then a linked plugin. */
async function linkPlugin(w: TmpWorld, name: string, dir: string): Promise<void> {
  await cliStep(w, dir, ["link", "."]);
  const pkg = JSON.parse(await readFile(path.join(w.xcshHome, "plugins", "package.json"), "utf8"));
  expect(pkg.dependencies[name]).toBe(`file:${dir}`);
}

async function loadedToolNames(w: TmpWorld) {
  const result = await host.discoverAndLoadCustomTools([], w.cwd, BUILTINS, undefined, { home: w.home, xcshHome: w.xcshHome });
  expect(result.errors).toEqual([]);
  return result.tools.map((t) => ({ name: t.tool.name, provider: t.source?.provider }));
}

async function passesItsOwnChecks(w: TmpWorld, dir: string, expectedTools: string[]) {
  await installAgainstCheckout(dir);
  const test = await npm(w, dir, "test");
  expect(test.code, `${test.stdout}\n${test.stderr}`).toBe(0);
  expect(test.stdout).toMatch(/Tests\s+\d+ passed/);
  expect(test.stdout).toContain("✓ valid");
  const typecheck = await npm(w, dir, "typecheck");
  expect(typecheck.code, `${typecheck.stdout}\n${typecheck.stderr}`).toBe(0);
  const { code, report } = await validate(w, dir);
  expect({ code, errors: report.errors }).toEqual({ code: 0, errors: [] });
  expect(report.tools.map((t) => t.name).sort()).toEqual([...expectedTools].sort());
}

describe("xcsh-tools new: every template renders, installs offline, passes its own npm test and loads", () => {
  it("plugin: two tools, one behind the optional feature", { timeout: 180_000 }, async () => {
    const w = await world();
    const out = await newProject(w, ["acme-notes", "--template", "plugin", "--description", "Notes for the agent"]);
    const dir = path.join(w.cwd, "acme-notes");
    expect(out).toEqual({
      created: dir,
      template: "plugin",
      files: [".gitignore", "README.md", "features/acme_notes_count.ts", "package.json", "test/acme_notes.test.ts", "tools/acme_notes.ts", "tsconfig.json", "vitest.config.ts"],
      nextSteps: ["cd acme-notes", "npm install", "npm test", "xcsh-tools link ."],
    });
    const pkg = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8"));
    const ours = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8"));
    expect(pkg.name).toBe("acme-notes");
    expect(pkg.description).toBe("Notes for the agent");
    // The CLI runs from this checkout, not from a registry install: the dependency names the folder.
    expect(pkg.devDependencies["xcsh-tools"]).toBe(`file:${realpathSync(REPO_ROOT)}`);
    expect(pkg.peerDependencies["@sinclair/typebox"]).toBe("^0.34.0");
    expect(pkg.devDependencies.vitest.replace(/^\D+/, "").split(".")[0]).toBe(ours.devDependencies.vitest.replace(/^\D+/, "").split(".")[0]);
    expect(pkg.scripts.test).toBe("vitest run && xcsh-tools validate");
    expect(Object.keys(pkg.xcsh.settings)).toEqual(["maxResults", "pattern"]);

    await passesItsOwnChecks(w, dir, ["acme_notes", "acme_notes_count"]);
    await linkPlugin(w, "acme-notes", dir);
    expect(await loadedToolNames(w)).toEqual([{ name: "acme_notes", provider: "npm" }]);
    await cliStep(w, dir, ["features", "acme-notes", "--enable", "count"]);
    expect((await loadedToolNames(w)).map((t) => t.name)).toEqual(["acme_notes", "acme_notes_count"]);
  });

  for (const template of ["streaming", "render"] as const) {
    it(`${template}: a plugin package whose tool loads after link`, { timeout: 180_000 }, async () => {
      const w = await world();
      const out = await newProject(w, [`@acme/${template}-kit`, "-t", template]);
      const dir = path.join(w.cwd, `${template}-kit`);
      expect(out.created).toBe(dir);
      expect(out.files).toEqual([".gitignore", "README.md", "package.json", `test/${template}_kit.test.ts`, `tools/${template}_kit.ts`, "tsconfig.json", "vitest.config.ts"]);
      await passesItsOwnChecks(w, dir, [`${template}_kit`]);
      await linkPlugin(w, `@acme/${template}-kit`, dir);
      expect(await loadedToolNames(w)).toEqual([{ name: `${template}_kit`, provider: "npm" }]);
    });
  }

  it("marketplace: both catalogs and the plugin validate, and the installed plugin's tools load", { timeout: 180_000 }, async () => {
    const w = await world();
    const out = await newProject(w, ["acme-market", "--template", "marketplace"]);
    const dir = path.join(w.cwd, "acme-market");
    expect(out.files).toEqual([
      ".claude-plugin/marketplace.json",
      ".gitignore",
      ".xcsh-plugin/marketplace.json",
      "README.md",
      "package.json",
      "plugins/acme-market-plugin/.claude-plugin/plugin.json",
      "plugins/acme-market-plugin/.xcsh-plugin/plugin.json",
      "plugins/acme-market-plugin/README.md",
      "plugins/acme-market-plugin/tools/acme_market.ts",
      "test/acme_market.test.ts",
      "tsconfig.json",
      "vitest.config.ts",
    ]);
    expect(out.nextSteps.slice(-2)).toEqual(["xcsh-tools marketplace add .", "xcsh-tools install acme-market-plugin@acme-market"]);
    await passesItsOwnChecks(w, dir, ["acme_market"]);
    for (const file of [".claude-plugin/marketplace.json", "plugins/acme-market-plugin/.claude-plugin/plugin.json"]) {
      const { code, report } = await validate(w, path.join(dir, file));
      expect({ file, code, errors: report.errors }).toEqual({ file, code: 0, errors: [] });
    }
    await cliStep(w, dir, ["marketplace", "add", "."]);
    await cliStep(w, dir, ["install", "acme-market-plugin@acme-market"]);
    expect(await loadedToolNames(w)).toEqual([{ name: "acme_market", provider: "xcsh-plugins" }]);
  });

  it("tool: one file written into ~/.xcsh/agent/tools, valid, loaded and runnable", { timeout: 120_000 }, async () => {
    const w = await world();
    const toolsDir = path.join(w.xcshHome, "agent", "tools");
    const out = await newProject(w, ["list-files", "--template", "tool", "--dir", toolsDir]);
    expect(out).toEqual({
      created: toolsDir,
      template: "tool",
      files: ["list_files.ts"],
      nextSteps: [`xcsh-tools validate ${toolsDir}/list_files.ts`, "xcsh-tools tools"],
    });
    const { code, report } = await validate(w, path.join(toolsDir, "list_files.ts"));
    expect({ code, errors: report.errors, tools: report.tools.map((t) => t.name) }).toEqual({ code: 0, errors: [], tools: ["list_files"] });
    expect(await loadedToolNames(w)).toEqual([{ name: "list_files", provider: "native" }]);
    // And it runs through the harness with a real exec, listing the project.
    const testing = (await import(pathToFileURL(path.join(REPO_ROOT, "dist", "testing.js")).href)) as typeof import("../../src/testing.js");
    await writeFile(path.join(w.cwd, "a.txt"), "a");
    const harness = testing.createToolHarness({ cwd: w.cwd, exec: "real", cacheDir: path.join(w.root, "cache") });
    const run = await harness.runTool(await harness.loadTool(path.join(toolsDir, "list_files.ts")), {});
    expect(run.text).toBe("a.txt");
    // The default target is the project's .xcsh/tools, next to tools already there.
    await w.write(path.join(w.cwd, ".xcsh", "tools", "other.ts"), "export default () => [];\n");
    expect((await newProject(w, ["second", "-t", "tool"])).created).toBe(path.join(w.cwd, ".xcsh", "tools"));
    expect((await readdir(path.join(w.cwd, ".xcsh", "tools"))).sort()).toEqual(["other.ts", "second.ts"]);
  });
});

describe("xcsh-tools new --template tool in a project: the next steps as a new user follows them", () => {
  /** Run printed next steps as written (comments dropped), in cwd; every one must succeed. */
  async function follow(w: TmpWorld, steps: string[]) {
    for (const step of steps) {
      const [bin, ...args] = step.replace(/\s+#.*$/, "").split(/\s+/);
      expect(bin, step).toBe("xcsh-tools");
      await cliStep(w, w.cwd, args);
    }
  }
  const toolNames = async (w: TmpWorld) => (await cliStep(w, w.cwd, ["tools"])) as { tools: { name: string }[] };

  it("an untrusted project: trust comes before tools, and only then is the tool listed", { timeout: 60_000 }, async () => {
    const w = await world();
    const out = await newProject(w, ["hello-there", "-t", "tool"]);
    expect(out.nextSteps).toEqual(["xcsh-tools validate .xcsh/tools/hello_there.ts", "xcsh-tools trust   # a project's own tools load only once you trust it", "xcsh-tools tools"]);
    // Skipping the trust step leaves the tool out, which is why the step is there.
    expect((await toolNames(w)).tools.map((t) => t.name)).not.toContain("hello_there");
    await follow(w, out.nextSteps);
    expect((await toolNames(w)).tools.map((t) => t.name)).toContain("hello_there");
  });

  it("a project below cwd is named in the trust step; a trusted project and the user's folder need none", { timeout: 60_000 }, async () => {
    const w = await world();
    const below = await newProject(w, ["deep-tool", "-t", "tool", "--dir", "sub dir/.xcsh/tools"]);
    expect(below.nextSteps).toContain("xcsh-tools trust 'sub dir'   # a project's own tools load only once you trust it");
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    expect((await newProject(w, ["trusted-tool", "-t", "tool"])).nextSteps).toEqual(["xcsh-tools validate .xcsh/tools/trusted_tool.ts", "xcsh-tools tools"]);
    // The home folder is the user's own, trusted without a record (core/trust.ts).
    expect((await newProject(w, ["home-tool", "-t", "tool", "--dir", path.join(w.home, ".xcsh", "tools")])).nextSteps.join("\n")).not.toContain("trust");
  });
});

describe("xcsh-tools new: the command's contract", () => {
  it("a bad name is exit 2 ENAME_INVALID with the fixed name as hint; an unknown template ETEMPLATE_UNKNOWN", async () => {
    const w = await world();
    const bad = await runCli(["new", "My_Tool", "--json"], { cwd: w.cwd, home: w.home });
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: "ENAME_INVALID", hint: 'Use "my-tool": xcsh-tools new my-tool' });
    const human = await runCli(["new", "123abc"], { cwd: w.cwd, home: w.home });
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("Code: ENAME_INVALID");
    expect(human.stderr).toContain("xcsh-tools new abc");
    const unknown = await runCli(["new", "ok-name", "-t", "nope", "--json"], { cwd: w.cwd, home: w.home });
    expect(unknown.code).toBe(2);
    expect(unknown.json().error).toMatchObject({ code: "ETEMPLATE_UNKNOWN", hint: expect.stringContaining("plugin, tool, streaming, render, marketplace") });
    expect(await readdir(w.cwd)).toEqual([]);
  });

  it("refuses a non-empty target (exit 2 ETARGET_NOT_EMPTY) unless --force, which keeps other files", async () => {
    const w = await world();
    await w.write(path.join(w.cwd, "kit", "notes.txt"), "mine");
    const refused = await runCli(["new", "kit", "--json"], { cwd: w.cwd, home: w.home });
    expect(refused.code).toBe(2);
    expect(refused.json().error).toMatchObject({ code: "ETARGET_NOT_EMPTY", hint: expect.stringContaining("--force") });
    expect(await readdir(path.join(w.cwd, "kit"))).toEqual(["notes.txt"]);
    const forced = await runCli(["new", "kit", "--force"], { cwd: w.cwd, home: w.home });
    expect(forced.code).toBe(0);
    expect(await readFile(path.join(w.cwd, "kit", "notes.txt"), "utf8")).toBe("mine");
    expect((await readdir(path.join(w.cwd, "kit"))).sort()).toEqual([".gitignore", "README.md", "features", "notes.txt", "package.json", "test", "tools", "tsconfig.json", "vitest.config.ts"]);
  });

  it("--dry-run lists the files and next steps and writes nothing", async () => {
    const w = await world();
    const result = await runCli(["new", "dry-kit", "--dry-run"], { cwd: w.cwd, home: w.home });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Would create dry-kit from the plugin template in dry-kit (8 files), nothing written (--dry-run):");
    expect(result.stdout).toContain("  tools/dry_kit.ts");
    expect(result.stdout).toContain("Next steps:\n  cd dry-kit\n  npm install\n  npm test\n  xcsh-tools link .");
    const json = await runCli(["new", "dry-kit", "--dry-run", "--json"], { cwd: w.cwd, home: w.home });
    expect(json.json()).toMatchObject({ created: path.join(w.cwd, "dry-kit"), template: "plugin", dryRun: true });
    expect(await readdir(w.cwd)).toEqual([]);
  });

  it("without a TTY it never waits for input: stdin left open, a missing name fails at once", { timeout: 20_000 }, async () => {
    const w = await world();
    const child = spawn(process.execPath, cliArgv(w.home, ["new"]), { cwd: w.cwd, env: hermeticEnv(w.home), stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(null);
      }, 10_000);
      child.on("close", (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    child.stdin.destroy();
    expect({ code, stderr }).toEqual({ code: 2, stderr: expect.stringContaining("Code: ENAME_MISSING") });
  });
});
