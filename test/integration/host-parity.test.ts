/**
 * The host parity table (issue #29). One row per scenario: the state on disk, what the xcsh host
 * (f5-sales-demo/xcsh at 3226372) loads — taken from reading its code, cited as file:line below
 * `packages/coding-agent/src/` (or `packages/utils/src/`) — and what we report. Rows of the first
 * part follow the host; rows of the second part differ on purpose and must carry a warning code
 * of their own in `validate` or `doctor` naming the host's behaviour. Runs against the real host
 * are kept outside the repository.
 */
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { findProjectRoot, projectFolder, resolveRoots, xcshPaths } from "../../src/core/paths.js";
import { discoverToolPaths } from "../../src/discovery/index.js";
import { diagnose } from "../../src/doctor/index.js";
import { createToolHarness } from "../../src/testing.js";
import { validatePath } from "../../src/validate/index.js";
import { describeUserConfigUse, userConfigUse } from "../../src/validate/host-differences.js";
import { buildEffectiveSet, renderHostFiles } from "../../src/teamset/index.js";
import { runCli } from "../helpers/run-cli.js";
import { writeTrustRecord, type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { installEntry, rel, writeTool } from "./discovery-fixtures.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-parity-", { trustProject: true });

const TODO = path.resolve("test/fixtures/host-parity/todo-tool.ts");

/** Tool paths discovered, relative to the world root, with provider and level. */
async function discover(cwd: string, options: Record<string, unknown> = {}): Promise<string[]> {
  const result = await discoverToolPaths([], cwd, { home: w.home, xcshHome: w.xcshHome, env: {}, ...options });
  return result.paths.map((p) => `${p.source.provider}/${p.source.level}: ${rel(w, p.path)}`);
}

/** A marketplace plugin in the user's plugin cache with tool files, and its registry entry. */
async function marketplacePlugin(name: string, tools: Record<string, string>, extra: Record<string, unknown> = {}, xcshHome = w.xcshHome): Promise<Record<string, unknown>> {
  const dir = path.join(xcshHome, "plugins/cache/plugins/mkt", name, "1.0.0");
  await mkdir(dir, { recursive: true });
  for (const [file, content] of Object.entries(tools)) {
    if (/\.(ts|js)$/.test(file)) await writeTool(w, path.join(dir, "tools", file), content);
    else await w.write(path.join(dir, "tools", file), content);
  }
  return installEntry(dir, extra);
}

async function registry(file: string, plugins: Record<string, Record<string, unknown>[]>): Promise<void> {
  await w.write(file, { version: 2, plugins });
}

/** npm plugins under `pluginsDir` with one tool module each (`<name>.ts`). */
async function npmPlugins(pluginsDir: string, names: string[], manifest: (name: string) => Record<string, unknown> = (n) => ({ tools: `./${n}.ts` })): Promise<void> {
  await w.write(path.join(pluginsDir, "package.json"), { name: "xcsh-plugins", private: true, dependencies: Object.fromEntries(names.map((n) => [n, "^1.0.0"])) });
  for (const name of names) {
    const at = path.join(pluginsDir, "node_modules", name);
    await w.write(path.join(at, "package.json"), { name, version: "1.0.0", xcsh: manifest(name) });
    await writeTool(w, path.join(at, `${name}.ts`), name);
  }
}

describe("host parity: where the host is right and we follow", () => {
  /*
   * On disk: proj/.xcsh/plugins/installed_plugins.json lists plugin p@mkt; cwd is proj/sub.
   * Host: resolveActiveProjectRegistryPath walks up from cwd to the nearest folder with .xcsh/
   *   (discovery/helpers.ts:678-695) and listXcshPluginRoots reads that registry
   *   (helpers.ts:748, :799-836): p's tools load, at project level.
   * Ours: the same (core/paths.ts findProjectRoot; discovery/providers/xcsh-plugins.ts).
   */
  it("project root walk-up: run from proj/sub, the project's marketplace plugins load", async () => {
    const sub = path.join(w.cwd, "packages/app");
    await mkdir(sub, { recursive: true });
    await registry(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), { "p@mkt": [await marketplacePlugin("p", { "p.ts": "p" }, { scope: "project" })] });
    expect(await discover(sub, { providers: ["xcsh-plugins"] })).toEqual(["xcsh-plugins/project: home/.xcsh/plugins/cache/plugins/mkt/p/1.0.0/tools/p.ts"]);
    expect(findProjectRoot(sub, w.home)).toBe(w.cwd);
  });

  /*
   * On disk: proj/.git only (no .xcsh/ anywhere); cwd proj/sub.
   * Host: pass 2 anchors the project at the git root (helpers.ts:697-709); with no registry file
   *   there it loads nothing of the project, and its CLI writes project installs there
   *   (helpers.ts:725-733, cli/plugin-cli.ts:200).
   * Ours: projectFolder is the git root (CLI project scope, trust decision).
   */
  it("project root walk-up: a .git folder anchors the project when no .xcsh/ is found", async () => {
    const sub = path.join(w.cwd, "src");
    await mkdir(path.join(w.cwd, ".git"), { recursive: true });
    await mkdir(sub, { recursive: true });
    expect(findProjectRoot(sub, w.home)).toBe(w.cwd);
    expect(projectFolder(sub, resolveRoots({ home: w.home, xcshHome: w.xcshHome }))).toBe(w.cwd);
    // The nearest .xcsh/ wins over a .git further down (pass 1 before pass 2).
    await mkdir(path.join(w.cwd, "src/.git"), { recursive: true });
    await mkdir(path.join(w.cwd, ".xcsh"), { recursive: true });
    expect(findProjectRoot(sub, w.home)).toBe(w.cwd);
  });

  /*
   * On disk: home/.xcsh/plugins/installed_plugins.json (the user's); cwd home/work.
   * Host: both walks stop before os.homedir() (helpers.ts:681-683, :699): home is never a
   *   project, so the user's registry is read once, at user level (helpers.ts:759, :802).
   * Ours: the same.
   */
  it("home itself is not a project: from a folder below home the user's registry is read once, as user", async () => {
    const work = path.join(w.home, "work");
    await mkdir(work, { recursive: true });
    await registry(path.join(w.xcshHome, "plugins/installed_plugins.json"), { "u@mkt": [await marketplacePlugin("u", { "u.ts": "u" })] });
    expect(findProjectRoot(work, w.home)).toBeUndefined();
    expect(findProjectRoot(w.home, w.home)).toBeUndefined();
    expect(await discover(work, { providers: ["xcsh-plugins"] })).toEqual(["xcsh-plugins/user: home/.xcsh/plugins/cache/plugins/mkt/u/1.0.0/tools/u.ts"]);
  });

  /*
   * Trust (ours; the host has no workspace trust): the decision is about the project root found.
   * On disk: the trust record names proj/sub only; proj/.xcsh/plugins/installed_plugins.json.
   * Ours: the root proj is not trusted, so its registry is left out unread and reported with
   *   the command that trusts proj.
   */
  it("the trust decision is about the project root found, not the folder the command runs in", async () => {
    const sub = path.join(w.cwd, "sub");
    await mkdir(sub, { recursive: true });
    await writeTrustRecord(w.xcshHome, [sub]);
    await registry(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), { "p@mkt": [await marketplacePlugin("p", { "p.ts": "p" })] });
    const result = await discoverToolPaths([], sub, { home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["xcsh-plugins"] });
    expect(result.paths).toEqual([]);
    expect(result.untrusted?.project).toBe(w.cwd);
    expect(result.untrusted?.trustCommand).toBe(`xcsh-tools trust ${w.cwd}`);
    expect(result.untrusted?.skipped.map((s) => rel(w, s.path))).toEqual(["project/.xcsh/plugins/installed_plugins.json"]);
  });

  /*
   * On disk: home/.xcsh-dev/plugins/{package.json,node_modules/a}; PI_CONFIG_DIR=.xcsh-dev.
   * Host: getConfigDirName() is PI_CONFIG_DIR (packages/utils/src/dirs.ts:106-107) and the config
   *   root is home/PI_CONFIG_DIR (dirs.ts:140); plugins are below it (dirs.ts:253-255).
   * Ours: resolveRoots reads PI_CONFIG_DIR; the project marker is that name too (helpers.ts:685).
   */
  it("PI_CONFIG_DIR renames the config folder, for the user's plugins and the project marker", async () => {
    const dev = path.join(w.home, ".xcsh-dev");
    await npmPlugins(path.join(dev, "plugins"), ["a"]);
    const env = { PI_CONFIG_DIR: ".xcsh-dev" };
    const result = await discoverToolPaths([], w.cwd, { home: w.home, env, providers: ["npm"] });
    expect(result.paths.map((p) => rel(w, p.path))).toEqual(["home/.xcsh-dev/plugins/node_modules/a/a.ts"]);
    const roots = resolveRoots({ home: w.home, env });
    await mkdir(path.join(w.cwd, ".xcsh-dev"), { recursive: true });
    expect(findProjectRoot(path.join(w.cwd), w.home, roots.configDirName)).toBe(w.cwd);
  });

  /*
   * On disk: $XDG_DATA_HOME/xcsh exists, npm plugins in $XDG_DATA_HOME/xcsh/plugins.
   * Host: on Linux and macOS with the default agent folder, getPluginsDir() is
   *   $XDG_DATA_HOME/xcsh/plugins when $XDG_DATA_HOME/xcsh exists (dirs.ts:151-171, :253-255);
   *   npm plugins load from there (extensibility/plugins/loader.ts:54-63).
   * Ours: the same folder for discovery, CLI writes, doctor and boot (xcshPaths().plugins).
   */
  it("$XDG_DATA_HOME/xcsh, when it exists, holds the plugins folder (Linux, macOS)", async () => {
    const data = path.join(w.root, "xdg-data");
    await npmPlugins(path.join(data, "xcsh/plugins"), ["x"]);
    const env = { XDG_DATA_HOME: data };
    const result = await discoverToolPaths([], w.cwd, { home: w.home, env, providers: ["npm"] });
    expect(result.paths.map((p) => rel(w, p.path))).toEqual(["xdg-data/xcsh/plugins/node_modules/x/x.ts"]);
    expect(xcshPaths(resolveRoots({ home: w.home, env, platform: "linux" })).runtimeLock).toBe(path.join(data, "xcsh/plugins/xcsh-plugins.lock.json"));
    // Not on Windows, not when the folder does not exist, not with another agent folder (dirs.ts:151).
    expect(resolveRoots({ home: w.home, env, platform: "win32" }).pluginsDir).toBeUndefined();
    expect(resolveRoots({ home: w.home, env: { XDG_DATA_HOME: path.join(w.root, "none") }, platform: "linux" }).pluginsDir).toBeUndefined();
    expect(resolveRoots({ home: w.home, env: { ...env, PI_CODING_AGENT_DIR: path.join(w.root, "agent") }, platform: "linux" }).pluginsDir).toBeUndefined();
  });

  /*
   * On disk: user tools in /x/agent/tools; PI_CODING_AGENT_DIR=/x/agent.
   * Host: the agent folder is PI_CODING_AGENT_DIR (dirs.ts:139-143, :206); user tools are
   *   <agent>/tools (dirs.ts:361-363).
   * Ours: the same.
   */
  it("PI_CODING_AGENT_DIR moves the agent folder and its user tools", async () => {
    const agent = path.join(w.root, "agent");
    await writeTool(w, path.join(agent, "tools/mine.ts"), "mine");
    const result = await discoverToolPaths([], w.cwd, { home: w.home, env: { PI_CODING_AGENT_DIR: agent }, providers: ["native"] });
    expect(result.paths.map((p) => rel(w, p.path))).toEqual(["agent/tools/mine.ts"]);
  });

  /*
   * Env values are user input. The host joins PI_CONFIG_DIR to home and resolves a relative
   * PI_CODING_AGENT_DIR / XDG_DATA_HOME against its cwd (dirs.ts:143, :156): folders that change
   * per project. Ours: EENV_PATH, exit 2, naming the variable.
   */
  it("odd values of PI_CONFIG_DIR, PI_CODING_AGENT_DIR, XDG_DATA_HOME are EENV_PATH", () => {
    const bad: Record<string, string>[] = [
      { PI_CONFIG_DIR: "/etc" },
      { PI_CONFIG_DIR: "../elsewhere" },
      { PI_CONFIG_DIR: "~/.x" },
      { PI_CODING_AGENT_DIR: "relative/agent" },
      { XDG_DATA_HOME: "data" },
    ];
    for (const env of bad) {
      let caught: unknown;
      try {
        resolveRoots({ home: w.home, env, platform: "linux" });
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(env)).toBeInstanceOf(XcshToolsError);
      expect((caught as XcshToolsError).code).toBe("EENV_PATH");
      expect((caught as XcshToolsError).exitCode).toBe(2);
      expect((caught as XcshToolsError).message).toContain(Object.keys(env)[0]!);
    }
    expect(resolveRoots({ home: w.home, env: { PI_CONFIG_DIR: "" } }).xcshHome).toBe(path.join(w.home, ".xcsh"));
  });

  /*
   * On disk: npm plugins a, b; proj/.codex/plugin-overrides.json {"disabled": ["a"]}, and in a
   * second step proj/.xcsh/plugin-overrides.json {"disabled": ["b"]}.
   * Host: loadProjectOverrides reads .xcsh, .codex, .gemini plugin-overrides.json in that order
   *   and uses the first (config.ts:18-22, :264-267, :318-322; extensibility/plugins/loader.ts:33-43, :99-102).
   * Ours: the same order, in trusted projects only.
   */
  it(".codex/ and .gemini/ plugin-overrides.json apply when .xcsh/ has none", async () => {
    await npmPlugins(path.join(w.xcshHome, "plugins"), ["a", "b"]);
    await w.write(path.join(w.cwd, ".codex/plugin-overrides.json"), { disabled: ["a"] });
    expect(await discover(w.cwd, { providers: ["npm"] })).toEqual(["npm/user: home/.xcsh/plugins/node_modules/b/b.ts"]);
    await w.write(path.join(w.cwd, ".gemini/plugin-overrides.json"), { disabled: ["b"] });
    expect(await discover(w.cwd, { providers: ["npm"] })).toEqual(["npm/user: home/.xcsh/plugins/node_modules/b/b.ts"]);
    await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), { disabled: ["b"] });
    expect(await discover(w.cwd, { providers: ["npm"] })).toEqual(["npm/user: home/.xcsh/plugins/node_modules/a/a.ts"]);
    // Untrusted: none of them is read (ours; the host has no workspace trust).
    const untrusted = await discoverToolPaths([], w.cwd, { home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["npm"], projectTrust: false });
    expect(untrusted.paths.map((p) => rel(w, p.path))).toEqual(["home/.xcsh/plugins/node_modules/a/a.ts", "home/.xcsh/plugins/node_modules/b/b.ts"]);
    expect(untrusted.untrusted?.skipped.map((s) => rel(w, s.path))).toEqual(["project/.xcsh/plugin-overrides.json", "project/.codex/plugin-overrides.json", "project/.gemini/plugin-overrides.json"]);
  });

  /*
   * On disk: xcsh-plugins.lock.json {"plugins": {"a": {"version": "1.0.0"}}} (no `enabled`).
   * Host: `if (runtimeState && !runtimeState.enabled) continue` (extensibility/plugins/loader.ts:92-97):
   *   disabled. A plugin without an entry is enabled.
   * Ours: the same (manifest/runtime-lock.ts runtimeEnabled).
   */
  it("a runtime-lock entry without `enabled` is disabled", async () => {
    await npmPlugins(path.join(w.xcshHome, "plugins"), ["a", "b"]);
    await w.write(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), { plugins: { a: { version: "1.0.0" } }, settings: {} });
    expect(await discover(w.cwd, { providers: ["npm"] })).toEqual(["npm/user: home/.xcsh/plugins/node_modules/b/b.ts"]);
  });

  /*
   * On disk: a tool written like the host's example todo tool, reading api.pi.StringEnum.
   * Host: hands every factory its own exports as api.pi (extensibility/custom-tools/loader.ts:87-106;
   *   examples/custom-tools/todo/index.ts:26-34): it loads.
   * Ours: with the host's exports (the harness's `pi`, validate/tools `--pi <module>`, or the
   *   host package where the project resolves it) it loads; with none, EHOST_EXPORTS saying so.
   */
  it("api.pi: a factory using api.pi.StringEnum loads with the host's exports, and says so without them", async () => {
    const stub = await w.write("stand-in-host/index.mjs", 'export function StringEnum(values) { return { type: "string", enum: [...values] }; }\n');

    const bare = createToolHarness({ cwd: w.cwd });
    const failure = await bare.loadTool(TODO).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(XcshToolsError);
    expect((failure as XcshToolsError).code).toBe("EHOST_EXPORTS");
    expect((failure as XcshToolsError).message).toContain("api.pi.StringEnum");
    expect((failure as XcshToolsError).message).toContain("no host exports were available");

    const withHost = createToolHarness({ cwd: w.cwd, pi: { ...(await import(stub)) } });
    const todo = await withHost.loadTool(TODO);
    expect(todo.name).toBe("todo");
    expect((todo.parameters as unknown as { properties: { action: unknown } }).properties.action).toEqual({ type: "string", enum: ["list", "add", "toggle", "clear"] });

    const without = await validatePath(TODO, { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome });
    expect(without.errors.map((e) => e.code)).toEqual(["EHOST_EXPORTS"]);
    const withPi = await validatePath(TODO, { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, piModule: stub });
    expect(withPi.errors).toEqual([]);
    expect(withPi.tools.map((t) => t.name)).toEqual(["todo"]);

    // The host package, where the tool's own folder resolves it, is used without --pi.
    await w.write(path.join(w.cwd, "node_modules/@f5-sales-demo/xcsh/package.json"), { name: "@f5-sales-demo/xcsh", type: "module", main: "index.mjs" });
    await writeFile(path.join(w.cwd, "node_modules/@f5-sales-demo/xcsh/index.mjs"), 'export { StringEnum } from "../../../../stand-in-host/index.mjs";\n');
    const inProject = await w.write(path.join(w.cwd, "tools/todo.ts"), await readFile(TODO, "utf8"));
    const resolved = await validatePath(inProject, { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome });
    expect(resolved.errors).toEqual([]);
    // ...but never from the project folder as such: a tool elsewhere checked from this folder does
    // not import what the project's node_modules holds (an untrusted repository fills it).
    const elsewhere = await validatePath(TODO, { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome });
    expect(elsewhere.errors.map((e) => e.code)).toEqual(["EHOST_EXPORTS"]);
  }, 60_000);
});

describe("host parity: the CLI uses the same folders", () => {
  /*
   * The CLI's project scope is the project root found from cwd, as the host's CLI keeps it
   * (helpers.ts:725-733, cli/plugin-cli.ts:200): `list` from proj/sub shows proj's installs.
   */
  it("list from a subfolder shows the project root's marketplace installs", async () => {
    const sub = path.join(w.cwd, "sub");
    await mkdir(sub, { recursive: true });
    await registry(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), { "p@mkt": [await marketplacePlugin("p", { "p.ts": "p" }, { scope: "project" })] });
    const out = await runCli(["list", "--json"], { cwd: sub, home: w.home, xcshHome: w.xcshHome });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('"p@mkt"');
  }, 60_000);

  /*
   * `tools --pi <module>`: factories get the module's exports as api.pi; without it (and no host
   * package resolving from the project) a factory failing on api.pi is EHOST_EXPORTS.
   */
  it("tools --pi hands factories a stand-in for the host's exports", async () => {
    await w.write(path.join(w.cwd, ".xcsh/tools/todo.ts"), await (await import("node:fs/promises")).readFile(TODO, "utf8"));
    await w.write("stand-in-host/index.mjs", 'export function StringEnum(values) { return { type: "string", enum: [...values] }; }\n');
    const bare = await runCli(["tools", "--json"], { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome });
    expect(JSON.parse(bare.stdout).errors.map((e: { code: string }) => e.code)).toEqual(["EHOST_EXPORTS"]);
    const withPi = await runCli(["tools", "--json", "--pi", "../stand-in-host/index.mjs"], { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome });
    expect(withPi.code, withPi.stderr).toBe(0);
    expect(JSON.parse(withPi.stdout).tools.map((t: { name: string }) => t.name)).toEqual(["todo"]);
    const missing = await runCli(["tools", "--pi", "./nowhere.mjs"], { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("EHOST_EXPORTS_MODULE");
  }, 90_000);

  /* PI_CONFIG_DIR reaches the CLI: doctor reads the renamed folder (dirs.ts:106-107, :140). */
  it("doctor uses PI_CONFIG_DIR's folder", async () => {
    await npmPlugins(path.join(w.home, ".xcsh-dev/plugins"), ["a"]);
    const out = await runCli(["doctor", "--json"], { cwd: w.cwd, home: w.home, env: { XCSH_HOME: undefined, PI_CONFIG_DIR: ".xcsh-dev" } });
    expect(out.stdout).toContain(path.join(w.home, ".xcsh-dev", "plugins"));
  }, 60_000);
});

describe("host parity: where we differ on purpose, and warn", () => {
  const codes = (report: { warnings: { code: string }[] }) => report.warnings.map((x) => x.code).filter((c) => c.startsWith("WHOST_"));
  const doctorCodes = async (cwd = w.cwd) =>
    (await diagnose({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd, env: {}, projectTrusted: true })).findings
      .filter((f) => f.area === "host parity" && f.status === "warn")
      .map((f) => f.message.split(":")[0]);

  /*
   * On disk: an npm plugin whose manifest tools entry "./tools" is a folder without index.
   * Host: pushes the folder path (extensibility/plugins/loader.ts:133-141) and import()s it
   *   (custom-tools/loader.ts:44): a load error.
   * Ours: scan the folder like a tools folder (its modules load); WHOST_ENTRY_NO_INDEX in
   *   validate and doctor.
   */
  it("a manifest entry that is a folder without index: WHOST_ENTRY_NO_INDEX", async () => {
    const pkg = path.join(w.root, "pkg");
    await w.write(path.join(pkg, "package.json"), { name: "folder-entry", version: "1.0.0", xcsh: { tools: "./tools" } });
    await writeTool(w, path.join(pkg, "tools/one.ts"), "one");
    const report = await validatePath(pkg, { cwd: w.cwd, staticOnly: true });
    expect(codes(report)).toEqual(["WHOST_ENTRY_NO_INDEX"]);

    await npmPlugins(path.join(w.xcshHome, "plugins"), ["folder-entry"], () => ({ tools: "./tools" }));
    await writeTool(w, path.join(w.xcshHome, "plugins/node_modules/folder-entry/tools/one.ts"), "one");
    expect(await discover(w.cwd, { providers: ["npm"] })).toEqual(["npm/user: home/.xcsh/plugins/node_modules/folder-entry/tools/one.ts"]);
    expect(await doctorCodes()).toContain("WHOST_ENTRY_NO_INDEX");
  }, 60_000);

  /*
   * On disk: marketplace plugins a and b both with tools/search.ts; a project tool search.ts.
   * Host: marketplace tools are keyed by file stem (discovery/claude-plugins.ts:167,
   *   capability/tool.ts:31), the first of a key wins (capability/index.ts:167-182), and the
   *   native project tool comes first: only the project's search.ts is loaded.
   * Ours: all three are handed to the loader (a real name conflict is reported there);
   *   WHOST_TOOL_STEM in validate (a marketplace's plugins) and doctor (installed plugins).
   */
  it("two marketplace plugins whose tools share a file stem: WHOST_TOOL_STEM", async () => {
    const mkt = path.join(w.root, "market");
    await w.write(path.join(mkt, ".xcsh-plugin/marketplace.json"), {
      name: "mkt",
      owner: { name: "t" },
      plugins: [
        { name: "a", source: "./plugins/a" },
        { name: "b", source: "./plugins/b" },
      ],
    });
    await writeTool(w, path.join(mkt, "plugins/a/tools/search.ts"), "a_search");
    await writeTool(w, path.join(mkt, "plugins/b/tools/search.ts"), "b_search");
    expect(codes(await validatePath(mkt, { cwd: w.cwd, staticOnly: true }))).toEqual(["WHOST_TOOL_STEM"]);

    await registry(path.join(w.xcshHome, "plugins/installed_plugins.json"), {
      "a@mkt": [await marketplacePlugin("a", { "search.ts": "a_search" })],
      "b@mkt": [await marketplacePlugin("b", { "search.ts": "b_search" })],
    });
    await writeTool(w, path.join(w.cwd, ".xcsh/tools/search.ts"), "search");
    expect(await discover(w.cwd, { providers: ["native", "xcsh-plugins"] })).toEqual([
      "native/project: project/.xcsh/tools/search.ts",
      "xcsh-plugins/user: home/.xcsh/plugins/cache/plugins/mkt/a/1.0.0/tools/search.ts",
      "xcsh-plugins/user: home/.xcsh/plugins/cache/plugins/mkt/b/1.0.0/tools/search.ts",
    ]);
    const findings = (await diagnose({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd: w.cwd, env: {}, projectTrusted: true })).findings.filter((f) => f.message.startsWith("WHOST_TOOL_STEM"));
    expect(findings).toHaveLength(1);
    expect(findings[0]!.message).toContain("the host loads only the project tool");
  }, 60_000);

  /*
   * On disk: a marketplace plugin with tools/t.ts, tools/README.md, tools/lib/helper.ts.
   * Host: loadFilesFromDir with no extension filter, recursive (discovery/helpers.ts:408-444 from
   *   claude-plugins.ts:164-175): README.md and lib/helper.ts are imported as tools, load errors.
   * Ours: t.ts loads, README.md is metadata, lib/ is not a tool (no index); WHOST_TOOLS_FILES.
   */
  it("files below a marketplace plugin's tools/: WHOST_TOOLS_FILES", async () => {
    await registry(path.join(w.xcshHome, "plugins/installed_plugins.json"), {
      "p@mkt": [await marketplacePlugin("p", { "t.ts": "t", "README.md": "# tools\n", "lib/helper.ts": "helper" })],
    });
    expect(await discover(w.cwd, { providers: ["xcsh-plugins"] })).toEqual(["xcsh-plugins/user: home/.xcsh/plugins/cache/plugins/mkt/p/1.0.0/tools/t.ts"]);
    const found = (await diagnose({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd: w.cwd, env: {}, projectTrusted: true })).findings.find((f) => f.message.startsWith("WHOST_TOOLS_FILES"));
    expect(found?.message).toContain("README.md, lib/helper.ts");

    const folder = path.join(w.root, "plugin-folder");
    await writeTool(w, path.join(folder, "tools/t.ts"), "t");
    await w.write(path.join(folder, "tools/data.json"), "{}");
    expect(codes(await validatePath(folder, { cwd: w.cwd, staticOnly: true }))).toEqual(["WHOST_TOOLS_FILES"]);
  }, 60_000);

  /*
   * On disk: a marketplace plugin whose .claude-plugin/plugin.json declares userConfig (one option
   *   sensitive) and whose .mcp.json passes ${user_config.api_token} to its server.
   * Host: reads no userConfig; .mcp.json servers get ${CLAUDE_PLUGIN_ROOT}/${XCSH_PLUGIN_ROOT}
   *   substituted and nothing else (discovery/claude-plugins.ts:237-240, substitute-plugin-root.ts).
   * Ours: installed as Claude Code installs it; validate and doctor say WHOST_USER_CONFIG naming
   *   the options and where they are used. A plugin without userConfig: no warning.
   */
  it("a marketplace plugin that declares userConfig: WHOST_USER_CONFIG in validate and doctor", async () => {
    const plugin = (dir: string, userConfig?: Record<string, unknown>) =>
      Promise.all([
        w.write(path.join(dir, ".claude-plugin/plugin.json"), { name: "notes", version: "1.0.0", ...(userConfig ? { userConfig } : {}) }),
        w.write(path.join(dir, ".mcp.json"), { mcpServers: { notes: { command: "notes-server", env: { TOKEN: "${user_config.api_token}" } } } }),
      ]);
    const userConfig = { api_token: { type: "string", title: "API token", sensitive: true }, region: { type: "string", title: "Region" } };
    const folder = path.join(w.root, "notes-plugin");
    await plugin(folder, userConfig);
    const report = await validatePath(folder, { cwd: w.cwd, staticOnly: true });
    expect(codes(report)).toEqual(["WHOST_USER_CONFIG"]);
    const warning = report.warnings.find((x) => x.code === "WHOST_USER_CONFIG")!;
    expect(warning.file).toBe(path.join(folder, ".claude-plugin/plugin.json"));
    expect(warning.path).toBe("/userConfig");
    expect(warning.message).toContain('declares userConfig "api_token" (sensitive), "region" (.mcp.json uses ${user_config.api_token})');
    expect(warning.hint).toMatch(/environment xcsh starts with/);
    // The manifest alone (no folder to load) says nothing of the host.
    expect(codes(await validatePath(path.join(folder, ".claude-plugin/plugin.json"), { cwd: w.cwd, staticOnly: true }))).toEqual([]);

    const entry = await marketplacePlugin("notes", { "n.ts": "n" });
    await plugin(String(entry.installPath), userConfig);
    const plain = await marketplacePlugin("plain", { "q.ts": "q" });
    await plugin(String(plain.installPath));
    await registry(path.join(w.xcshHome, "plugins/installed_plugins.json"), { "notes@mkt": [entry], "plain@mkt": [plain] });
    expect(await doctorCodes()).toEqual(["WHOST_USER_CONFIG"]);
    const found = (await diagnose({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd: w.cwd, env: {}, projectTrusted: true })).findings.find((f) => f.message.startsWith("WHOST_USER_CONFIG"));
    expect(found?.message).toContain(`notes@mkt (${entry.installPath}) declares userConfig "api_token" (sensitive), "region"`);

    const clean = path.join(w.root, "plain-plugin");
    await plugin(clean);
    expect(codes(await validatePath(clean, { cwd: w.cwd, staticOnly: true }))).toEqual([]);
  }, 60_000);

  it("WHOST_USER_CONFIG reads nothing outside the plugin (a .mcp.json linked out is not read) and quotes the keys it names", async () => {
    const outside = path.join(w.root, "outside.json");
    await w.write(outside, { mcpServers: { x: { command: "x", env: { T: "${user_config.secret_elsewhere}" } } } });
    const dir = path.join(w.root, "linked-out");
    await w.write(path.join(dir, ".claude-plugin/plugin.json"), { name: "linked-out", version: "1.0.0", userConfig: { token: { type: "string", sensitive: true } } });
    await symlink(outside, path.join(dir, ".mcp.json"));
    const use = userConfigUse(dir)!;
    expect(use.options).toEqual([{ key: "token", sensitive: true }]);
    expect(use.references).toEqual([]);
    // A key with a control byte (refused elsewhere as ECONFIG_KEY) is named escaped, never raw.
    const text = describeUserConfigUse({ options: [{ key: "a\u001b[31mb", sensitive: false }], references: [] });
    expect(text).toBe('declares userConfig "a\\u001b[31mb"');
    expect(text).not.toContain("\u001b");
  }, 60_000);

  /*
   * On disk: p@mkt installed for the user; the project registry holds p@mkt with enabled: false.
   * Host: skips the disabled project entry (helpers.ts:821), so p is not a project id and the
   *   user's copy loads (helpers.ts:838-844).
   * Ours: the project entry shadows the user's and switches p off here; WHOST_PROJECT_DISABLED.
   */
  it("a disabled project install of a plugin also installed for the user: WHOST_PROJECT_DISABLED", async () => {
    const entry = await marketplacePlugin("p", { "p.ts": "p" });
    await registry(path.join(w.xcshHome, "plugins/installed_plugins.json"), { "p@mkt": [entry] });
    await registry(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), { "p@mkt": [{ ...entry, scope: "project", enabled: false }] });
    expect(await discover(w.cwd, { providers: ["xcsh-plugins"] })).toEqual([]);
    expect(await doctorCodes()).toEqual(["WHOST_PROJECT_DISABLED"]);
  }, 60_000);

  /*
   * On disk: xcsh-plugins.lock.json is not JSON.
   * Host: loadRuntimeConfig rethrows (extensibility/plugins/loader.ts:20-28): no plugin of the
   *   session loads. Ours: ESTATE_FILE, no npm tool, every other source; WHOST_LOCK_MALFORMED.
   */
  it("a malformed runtime lock: WHOST_LOCK_MALFORMED", async () => {
    await npmPlugins(path.join(w.xcshHome, "plugins"), ["a"]);
    await w.write(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), "{ not json");
    await writeTool(w, path.join(w.cwd, ".xcsh/tools/mine.ts"), "mine");
    const result = await discoverToolPaths([], w.cwd, { home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["native", "npm"] });
    expect(result.paths.map((p) => rel(w, p.path))).toEqual(["project/.xcsh/tools/mine.ts"]);
    expect(result.errors.map((e) => e.code)).toEqual(["ESTATE_FILE"]);
    expect(await doctorCodes()).toContain("WHOST_LOCK_MALFORMED");
    expect(codes(await validatePath(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), { cwd: w.cwd, staticOnly: true }))).toEqual(["WHOST_LOCK_MALFORMED"]);
  }, 60_000);

  /*
   * On disk: .xcsh/plugin-overrides.json is not JSON and would disable a.
   * Host: skips it (extensibility/plugins/loader.ts:37-39) and loads a.
   * Ours: ESTATE_FILE, no npm tool until fixed; WHOST_OVERRIDES_MALFORMED.
   */
  it("malformed overrides: WHOST_OVERRIDES_MALFORMED", async () => {
    await npmPlugins(path.join(w.xcshHome, "plugins"), ["a"]);
    await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), '{ "disabled": ["a"], ');
    const result = await discoverToolPaths([], w.cwd, { home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["npm"] });
    expect(result.paths).toEqual([]);
    expect(result.errors.map((e) => e.code)).toEqual(["ESTATE_FILE"]);
    expect(await doctorCodes()).toEqual(["WHOST_OVERRIDES_MALFORMED"]);
    expect(codes(await validatePath(path.join(w.cwd, ".xcsh/plugin-overrides.json"), { cwd: w.cwd, staticOnly: true }))).toEqual(["WHOST_OVERRIDES_MALFORMED"]);
  }, 60_000);
});

/*
 * Team sets (docs/design/team-sets.md (a), docs/host-parity.md "Team sets"): what the host reads of
 * a project, what xcsh-tools generates for it from the committed set, and what the host cannot
 * express. The generated files are rendered by the restore's own function (teamset/host-files.ts
 * `renderHostFiles`) from a set built from a declaration, then read the host's way.
 */
describe("host parity: team sets", () => {
  const DECLARATION = () => path.join(w.cwd, "xcsh-team.json");
  const setOf = (plugins: Record<string, Record<string, unknown>>) =>
    buildEffectiveSet({ root: w.cwd, declaration: { file: DECLARATION(), doc: { version: 1, marketplaces: { mkt: { source: { source: "directory", path: "./m" } } }, plugins } } });
  const teamCodes = async (cwd = w.cwd) =>
    (await diagnose({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd, env: {}, projectTrusted: true })).findings.filter((f) => f.area === "team set" && f.status !== "ok").map((f) => f.message.split(":")[0]);

  /*
   * 1. On disk: the project registry generated from the set: p@mkt → an absolute path in this
   *   user's plugin cache.
   * Host: listXcshPluginRoots uses each installPath as is (discovery/helpers.ts:744-860), scope project.
   * Ours: the same registry is generated per machine (never committed); the committed truth is xcsh-team.json.
   */
  it("1. the generated project registry holds this machine's absolute paths, and the host loads from it at project level", async () => {
    const entry = await marketplacePlugin("p", { "p.ts": "p" });
    const host = renderHostFiles({ set: setOf({ "p@mkt": {} }), pluginCache: xcshPaths({ home: w.home, xcshHome: w.xcshHome }).pluginCache, installs: new Map([["p@mkt", { installPath: entry.installPath as string, version: "1.0.0" }]]) });
    await w.write(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), host.registryText);
    expect(host.registry.plugins["p@mkt"]![0]!.installPath.startsWith(`${w.home}${path.sep}`)).toBe(true);
    expect(await discover(w.cwd, { providers: ["xcsh-plugins"] })).toEqual(["xcsh-plugins/project: home/.xcsh/plugins/cache/plugins/mkt/p/1.0.0/tools/p.ts"]);
  });

  /*
   * 2. On disk: an npm plugin in the user's tree that a project's set declared.
   * Host: getEnabledPlugins reads PLUGINS/package.json + node_modules for every project
   *   (extensibility/plugins/loader.ts:53-120): it loads in the user's other projects too.
   * Ours: level user everywhere; `tools` says `declaredBy: <root>` (team-doctor.test.ts).
   */
  it("2. a team's npm plugin loads in the user's other projects too, at level user", async () => {
    await npmPlugins(path.join(w.xcshHome, "plugins"), ["a"]);
    await w.write(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), { plugins: { a: { version: "1.0.0", enabled: true } } });
    const other = path.join(w.root, "other");
    await mkdir(path.join(other, ".git"), { recursive: true });
    expect(await discover(other, { providers: ["npm"] })).toEqual(["npm/user: home/.xcsh/plugins/node_modules/a/a.ts"]);
  });

  /*
   * 3. On disk: the set's generated <root>/.xcsh/plugin-overrides.json switches npm plugin a off.
   * Host: loadProjectOverrides(cwd) reads <cwd>/.xcsh/plugin-overrides.json only, no walk-up
   *   (extensibility/plugins/loader.ts:33-45): started in <root>/sub, a loads.
   * Ours: the same; doctor and tools say WTEAM_OVERRIDES_CWD below the root.
   */
  it("3. the set's npm overrides apply at the root only: below it a loads, and doctor says WTEAM_OVERRIDES_CWD", async () => {
    await npmPlugins(path.join(w.xcshHome, "plugins"), ["a"]);
    await w.write(path.join(w.xcshHome, "plugins/xcsh-plugins.lock.json"), { plugins: { a: { version: "1.0.0", enabled: true } } });
    await w.write(DECLARATION(), { version: 1, plugins: { a: { enabled: false } } });
    const host = renderHostFiles({ set: setOf({ a: { enabled: false } }), pluginCache: "/unused", installs: new Map() });
    await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), host.overridesText);
    const sub = path.join(w.cwd, "sub");
    await mkdir(sub, { recursive: true });
    expect(await discover(w.cwd, { providers: ["npm"] })).toEqual([]);
    expect(await discover(sub, { providers: ["npm"] })).toEqual(["npm/user: home/.xcsh/plugins/node_modules/a/a.ts"]);
    expect(await teamCodes(sub)).toContain("WTEAM_OVERRIDES_CWD");
    expect(await teamCodes(w.cwd)).not.toContain("WTEAM_OVERRIDES_CWD");
  }, 60_000);

  /*
   * 4. On disk: the user installed p@mkt; the set switches it off: the generated project entry is
   *   enabled and points at the empty `___off` folder.
   * Host: a project root shadows the user's root with the same id (helpers.ts:838-844); the off
   *   folder has no tools: p does not load (a disabled entry would not shadow: WHOST_PROJECT_DISABLED).
   */
  it("4. a plugin the set switches off is shadowed by an entry at the empty off folder: the user's copy does not load", async () => {
    const entry = await marketplacePlugin("p", { "p.ts": "p" });
    await registry(path.join(w.xcshHome, "plugins/installed_plugins.json"), { "p@mkt": [entry] });
    expect(await discover(w.cwd, { providers: ["xcsh-plugins"] })).toEqual(["xcsh-plugins/user: home/.xcsh/plugins/cache/plugins/mkt/p/1.0.0/tools/p.ts"]);
    const host = renderHostFiles({ set: setOf({ "p@mkt": { enabled: false } }), pluginCache: xcshPaths({ home: w.home, xcshHome: w.xcshHome }).pluginCache, installs: new Map() });
    for (const off of host.offFolders) await mkdir(off, { recursive: true });
    await w.write(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), host.registryText);
    expect(await discover(w.cwd, { providers: ["xcsh-plugins"] })).toEqual([]);
  });

  /*
   * 5. On disk: the generated entry of p@mkt rewritten by the host's marketplace update
   *   (`autoUpdate: "auto"`, main.ts:721-745) to another installPath and version.
   * Host: loads what the entry names. Ours: doctor says WTEAM_HOST_DRIFT (fix: `xcsh-tools install`).
   */
  it("5. an entry the host rewrote (autoUpdate): doctor says WTEAM_HOST_DRIFT", async () => {
    const hash = "ab".repeat(32);
    await w.write(DECLARATION(), { version: 1, marketplaces: { mkt: { source: { source: "directory", path: "./m" } } }, plugins: { "p@mkt": {} } });
    await w.write(path.join(w.cwd, "xcsh-team.lock.json"), { lockfileVersion: 1, marketplaces: { mkt: { source: { source: "directory", path: "./m" } } }, marketplacePlugins: { "p@mkt": { version: "1.0.0", from: { kind: "relative", path: "./p" }, hash: `tree1-sha256:${hash}` } }, npm: {} });
    await w.write(path.join(w.cwd, ".xcsh/.gitignore"), "/plugins/\n/cache/\n/marketplaces.json\n/plugin-overrides.json\n/team.local.json\n");
    const updated = await marketplacePlugin("p", { "p.ts": "p" }, { scope: "project", version: "1.1.0" });
    await registry(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), { "p@mkt": [updated] });
    expect(await teamCodes()).toEqual(["WTEAM_HOST_DRIFT"]);
  }, 60_000);

  /*
   * 6. On disk: <root>/xcsh-team.json and <root>/packages/app/.xcsh/ (no declaration there).
   * Host: the nearest folder with .xcsh/ is the project root (helpers.ts:678-711): started in
   *   packages/app, it reads packages/app/.xcsh and nothing of the root's set.
   * Ours: the same root; doctor says WTEAM_NESTED_ROOT.
   */
  it("6. a nested .xcsh/ without a declaration hides the parent's set: doctor says WTEAM_NESTED_ROOT", async () => {
    await w.write(DECLARATION(), { version: 1, plugins: {} });
    const nested = path.join(w.cwd, "packages/app");
    await mkdir(path.join(nested, ".xcsh"), { recursive: true });
    expect(findProjectRoot(nested, w.home)).toBe(nested);
    expect(await teamCodes(nested)).toEqual(["WTEAM_NESTED_ROOT"]);
  }, 60_000);
});
