/**
 * `xcsh-tools doctor [--fix]` end to end (built CLI, temp HOME, the shared Verdaccio): each check
 * healthy and broken by hand after a real install, `--fix` repairing through the transaction
 * path and a second doctor reporting ok, a failing fix leaving the tree byte-identical, the
 * `--json` shape, the origin of each of our settings, and no write at all without `--fix`.
 */
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { catalog, catalogPath, pluginFiles } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makePluginWorld, preparePluginWorld, publishFixtures, toolName, toolSource, type FixtureNames, type PluginWorld, type PluginWorldTemplate } from "./plugins-fixtures.js";
import { BOOT_INDEX_VERSION } from "../../src/boot/format.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: FixtureNames;
let w: PluginWorld;
/** What `install <basic>` leaves: installed once, copied into the tests that break it by hand. */
let basicInstalled: PluginWorldTemplate;

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  n = await publishFixtures(reg, `dr${Date.now().toString(36)}`);
  basicInstalled = await preparePluginWorld(reg, async (x) => {
    const r = await x.cli(["install", n.basic]);
    expect(r.code, r.stderr).toBe(0);
  }, "", { trustProject: true });
}, 180_000);
afterAll(async () => {
  await basicInstalled?.cleanup();
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makePluginWorld(reg, "", { trustProject: true });
});
afterEach(async () => {
  await w.cleanup();
});

interface Check {
  id: string;
  area: string;
  status: "ok" | "warn" | "error";
  message: string;
  hint?: string;
  fixed?: boolean;
}
interface Report {
  ok: boolean;
  checks: Check[];
  settings: { key: string; value: unknown; origin: string; via?: string }[];
}

async function doctor(args: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; report: Report; stderr: string }> {
  const r = await w.cli(["doctor", ...args, "--json"], env);
  return { code: r.code, report: r.json<Report>(), stderr: r.stderr };
}
const check = (report: Report, id: string) => {
  const found = report.checks.find((c) => c.id === id);
  if (!found) throw new Error(`no check ${id} in:\n${report.checks.map((c) => `${c.status} ${c.id}: ${c.message}`).join("\n")}`);
  return found;
};
const problems = (report: Report) => report.checks.filter((c) => c.status !== "ok");
/** Everything under the test's root: home (xcsh root, npm cache) and the project. */
const snapshotAll = () => snapshotTree(w.root);

async function install(...specs: string[]): Promise<void> {
  const r = await w.cli(["install", ...specs]);
  expect(r.code, r.stderr).toBe(0);
}

describe("a healthy world", () => {
  it("every check is ok, --json has the documented shape, and doctor writes nothing", async () => {
    await install(n.basic, n.features);
    const dev = path.join(w.root, "dev", "healthy-linked");
    await w.write(path.join(dev, "package.json"), { name: "healthy-linked", version: "0.1.0", type: "module", xcsh: { tools: "./t.js" } });
    await w.write(path.join(dev, "t.js"), toolSource("healthy_linked_tool"));
    const linked = await w.cli(["link", dev]);
    expect(linked.code, linked.stderr).toBe(0);
    const before = await snapshotAll();
    const { code, report } = await doctor();
    expect(code).toBe(0);
    expect(problems(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(Object.keys(report).sort()).toEqual(["checks", "ok", "settings"]);
    for (const c of report.checks) {
      expect(Object.keys(c).every((k) => ["id", "area", "status", "message", "hint", "fixed"].includes(k))).toBe(true);
      expect(typeof c.message).toBe("string");
    }
    expect([...new Set(report.checks.map((c) => c.area))]).toEqual(["policy", "settings", "transactions", "plugins folder", "plugins", "lockfile", "conflicts", "components", "marketplace", "overrides", "host parity", "boot index"]);
    expect(check(report, `plugin:${n.basic}`).message).toMatch(/@2\.0\.0: enabled, features defaults/);
    expect(check(report, "lockfile").message).toMatch(/every one installed at its locked version and from its locked tarball/);
    expect(check(report, "conflicts").message).toMatch(/4 tools from 4 modules: no name conflicts/);
    expect(check(report, "plugin:healthy-linked").message).toContain(`(linked → ${dev})`);
    expect(report.settings.map((s) => s.key)).toContain("lockWaitMs");
    const text = await w.cli(["doctor"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^plugins\n {2}ok /m);
    expect(text.stdout).toMatch(/Summary: \d+ ok, 0 warnings, 0 errors/);
    expect(await snapshotAll()).toEqual(before);
  });
});

describe("the plugins folder, broken by hand", () => {
  it("missing package, orphan folder, runtime-lock drift are reported, not touched, then fixed; a second doctor is ok", async () => {
    const local = path.join(w.root, "dev", "packed-plugin");
    await w.write(path.join(local, "package.json"), { name: "packed-plugin", version: "0.2.0", type: "module", xcsh: { tools: "./t.js" } });
    await w.write(path.join(local, "t.js"), toolSource("packed_tool"));
    await install(n.basic, n.features, n.extra[0]!, local);
    await rm(local, { recursive: true });
    await rm(path.join(w.plugins, "node_modules", n.basic), { recursive: true });
    await rm(path.join(w.plugins, "node_modules", "packed-plugin"), { recursive: true });
    await w.write(path.join(w.plugins, "node_modules", "orphan-pkg", "package.json"), { name: "orphan-pkg", version: "1.0.0" });
    const lock = await w.readJson("xcsh-plugins.lock.json");
    lock.plugins["ghost-plugin"] = { version: "1.0.0", enabledFeatures: null, enabled: true };
    lock.settings["ghost-plugin"] = { token: "x" };
    lock.plugins[n.features].enabledFeatures = ["web", "nope"];
    delete lock.plugins[n.extra[0]!];
    await writeFile(path.join(w.plugins, "xcsh-plugins.lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
    const before = await snapshotAll();

    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(check(report, `plugin:${n.basic}`)).toMatchObject({ area: "plugins", status: "error", message: expect.stringContaining("not installed") });
    expect(check(report, `lockfile:node_modules/${n.basic}`)).toMatchObject({ area: "lockfile", status: "error" });
    expect(check(report, "plugin:packed-plugin").status).toBe("error");
    expect(check(report, "orphan:node_modules:orphan-pkg")).toMatchObject({ status: "warn", hint: expect.stringContaining("--fix") });
    expect(check(report, "orphan:runtime:ghost-plugin").status).toBe("warn");
    expect(check(report, "orphan:settings:ghost-plugin").status).toBe("warn");
    expect(check(report, `plugin:${n.features}:feature:nope`).message).toMatch(/does not declare it \(it declares web, cache\)/);
    expect(check(report, `plugin:${n.extra[0]}:runtime`).message).toMatch(/no entry in the runtime lock/);
    expect(await snapshotAll()).toEqual(before);

    const dry = await doctor(["--fix", "--dry-run"]);
    expect(dry.code).toBe(1);
    expect(check(dry.report, `plugin:${n.basic}`).hint).toMatch(/^would fix: reinstall/);
    expect(check(dry.report, "orphan:node_modules:orphan-pkg").hint).toMatch(/^would fix: remove the orphan/);
    expect(await snapshotAll()).toEqual(before);

    const fixed = await doctor(["--fix"]);
    expect(fixed.code, JSON.stringify(problems(fixed.report), null, 2)).toBe(0);
    for (const id of [`plugin:${n.basic}`, "plugin:packed-plugin", `lockfile:node_modules/${n.basic}`, "orphan:node_modules:orphan-pkg", "orphan:runtime:ghost-plugin", "orphan:settings:ghost-plugin", `plugin:${n.features}:feature:nope`, `plugin:${n.extra[0]}:runtime`]) {
      expect(check(fixed.report, id), id).toMatchObject({ fixed: true, hint: "fixed" });
    }
    const after = await doctor();
    expect(after.code).toBe(0);
    expect(problems(after.report)).toEqual([]);
    const repaired = await w.readJson("xcsh-plugins.lock.json");
    expect(repaired.plugins["ghost-plugin"]).toBeUndefined();
    expect(repaired.settings["ghost-plugin"]).toBeUndefined();
    expect(repaired.plugins[n.features].enabledFeatures).toEqual(["web"]);
    expect(repaired.plugins[n.extra[0]!]).toEqual({ version: "1.0.0", enabledFeatures: null, enabled: true });
    expect((await w.readJson(`node_modules/${n.basic}/package.json`)).version).toBe("2.0.0");
    // Reinstalled from the packed copy: the source folder is gone.
    expect((await w.readJson("node_modules/packed-plugin/package.json")).version).toBe("0.2.0");
    expect(await snapshotTree(path.join(w.plugins, "node_modules", "orphan-pkg"))).toEqual({ ".": "absent" });
  });

  it("a malformed state file is an error naming it, never read as empty, never rewritten by --fix", async () => {
    await basicInstalled.restore(w); // install <basic>
    const pkgFile = path.join(w.plugins, "package.json");
    const good = await readFile(pkgFile, "utf8");
    await writeFile(pkgFile, "{ oops");
    const broken = await doctor();
    expect(broken.code).toBe(1);
    expect(check(broken.report, "plugins:package-json")).toMatchObject({ area: "plugins folder", status: "error", message: expect.stringContaining(pkgFile) });
    expect(check(broken.report, "conflicts").area).toBe("conflicts");
    // The boot index may be rebuilt (a repair of its own); the state files stay as they are.
    const before = await snapshotTree(w.root, { exclude: ["boot-index.json", "boot-modules.json"] });
    const fixed = await doctor(["--fix"]);
    expect(fixed.code).toBe(1);
    expect(check(fixed.report, "plugins:package-json")).toMatchObject({ fixed: false, hint: expect.stringMatching(/^could not fix: doctor does not rewrite a file it cannot read/) });
    expect(await snapshotTree(w.root, { exclude: ["boot-index.json", "boot-modules.json"] })).toEqual(before);
    await writeFile(pkgFile, good);

    const lockFile = path.join(w.plugins, "xcsh-plugins.lock.json");
    await writeFile(lockFile, JSON.stringify({ plugins: { [n.basic]: { enabled: "yes" } } }));
    expect(check((await doctor()).report, "plugins:runtime-lock")).toMatchObject({ status: "error", message: expect.stringMatching(/xcsh-plugins\.lock\.json.*enabled/) });
    await rm(lockFile);
    await writeFile(path.join(w.plugins, "package-lock.json"), "[1]");
    const lockReport = (await doctor()).report;
    expect(check(lockReport, "lockfile:file")).toMatchObject({ status: "error", message: expect.stringContaining("package-lock.json") });
    expect(check(lockReport, `plugin:${n.basic}:runtime`).message).toMatch(/no entry in the runtime lock/);
  });

  it("a version or tarball that differs from package-lock.json is an error; --fix reinstalls from the lockfile", async () => {
    await basicInstalled.restore(w); // install <basic>
    const depPkg = path.join(w.plugins, "node_modules", n.dep, "package.json");
    const pkg = JSON.parse(await readFile(depPkg, "utf8"));
    await writeFile(depPkg, JSON.stringify({ ...pkg, version: "1.0.9" }));
    const hiddenFile = path.join(w.plugins, "node_modules", ".package-lock.json");
    const hidden = JSON.parse(await readFile(hiddenFile, "utf8"));
    hidden.packages[`node_modules/${n.basic}`].integrity = "sha512-AAAA";
    await writeFile(hiddenFile, JSON.stringify(hidden, null, 2));

    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(check(report, `lockfile:node_modules/${n.dep}`).message).toMatch(/is 1\.0\.9 on disk but package-lock\.json locks 1\.0\.0/);
    expect(check(report, `lockfile:node_modules/${n.basic}`).message).toMatch(/installed from another tarball than package-lock\.json records \(integrity/);

    const fixed = await doctor(["--fix"]);
    expect(fixed.code, JSON.stringify(problems(fixed.report), null, 2)).toBe(0);
    expect(check(fixed.report, `lockfile:node_modules/${n.dep}`).fixed).toBe(true);
    expect(check(fixed.report, `lockfile:node_modules/${n.basic}`).fixed).toBe(true);
    expect((await w.readJson(`node_modules/${n.dep}/package.json`)).version).toBe("1.0.0");
    expect(problems((await doctor()).report)).toEqual([]);
  });

  it("a fix that fails leaves the old state byte for byte and says why", async () => {
    await basicInstalled.restore(w); // install <basic>
    await rm(path.join(w.plugins, "node_modules", n.basic), { recursive: true });
    const before = await snapshotAll();
    for (const step of ["doctor:copied", "doctor:reified", "doctor:staged", "commit:synced"]) {
      const r = await doctor(["--fix"], { XCSH_TOOLS_TEST_FAULT: step });
      expect(r.code, step).toBe(1);
      expect(check(r.report, `plugin:${n.basic}`), step).toMatchObject({ status: "error", fixed: false, hint: expect.stringMatching(/^could not fix: Injected failure at step .*; nothing was changed/) });
      expect(await snapshotTree(w.root, { exclude: [".npm"] }), step).toEqual(pruneNpm(before));
    }
  });

  it("what it cannot fix it says: a manifest entry whose file is gone, a linked plugin whose folder is gone", async () => {
    await install(n.features);
    await rm(path.join(w.plugins, "node_modules", n.features, "tools", "web.js"));
    const dev = path.join(w.root, "dev", "linked-plugin");
    await w.write(path.join(dev, "package.json"), { name: "linked-plugin", version: "0.1.0", type: "module", xcsh: { tools: "./t.js" } });
    await w.write(path.join(dev, "t.js"), toolSource("linked_tool"));
    const linked = await w.cli(["link", dev]);
    expect(linked.code, linked.stderr).toBe(0);
    await rm(dev, { recursive: true });

    const { code, report } = await doctor();
    expect(code).toBe(1);
    const entry = check(report, `plugin:${n.features}:EENTRY_NOT_FOUND:/xcsh/features/web/tools/0`);
    expect(entry).toMatchObject({ status: "error", hint: expect.stringContaining(`xcsh-tools install ${n.features}@1.0.0`) });
    expect(entry.message).toMatch(/tools\/web\.js/);
    expect(check(report, "plugin:linked-plugin:link")).toMatchObject({ status: "error", message: expect.stringContaining(dev), hint: expect.stringContaining("xcsh-tools unlink linked-plugin") });

    const fixed = await doctor(["--fix"]);
    expect(fixed.code).toBe(1);
    expect(check(fixed.report, `plugin:${n.features}:EENTRY_NOT_FOUND:/xcsh/features/web/tools/0`)).toMatchObject({ fixed: false, hint: expect.stringMatching(/^could not fix: /) });
    expect(check(fixed.report, "plugin:linked-plugin:link")).toMatchObject({ fixed: false, hint: expect.stringMatching(/^could not fix: the linked folder is yours/) });
  });
});

describe("conflicts between tools", () => {
  it("two plugins exporting one tool name, a tool shadowing a built-in (also one named in our settings)", async () => {
    const twin = `${n.basic}-twin`;
    await reg.publish({ name: twin, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(n.basic)) } });
    await install(n.basic, twin, n.extra[1]!);
    const pair = await doctor();
    expect(pair.code).toBe(1);
    const dupe = check(pair.report, `conflict:tool:${toolName(n.basic)}:${path.join(w.plugins, "node_modules", twin, "t.js")}`);
    expect(dupe).toMatchObject({ area: "conflicts", status: "error", hint: expect.stringContaining(`xcsh-tools uninstall ${twin}`) });
    expect(dupe.message).toContain(`npm Plugin ${twin} (user)`);
    expect(dupe.message).toMatch(new RegExp(`same name as the one of npm Plugin ${n.basic} \\(user\\) .*which loads first`));

    expect((await w.cli(["uninstall", twin])).code).toBe(0);
    const userTools = path.join(w.xcshHome, "agent", "tools");
    await w.write(path.join(userTools, "bash.js"), toolSource("bash"));
    const { code, report } = await doctor([], { XCSH_TOOLS_BUILTIN_TOOLS: toolName(n.extra[1]!) });
    expect(code).toBe(1);
    expect(check(report, `conflict:builtin:bash:${path.join(userTools, "bash.js")}`)).toMatchObject({ status: "error", message: expect.stringContaining("built-in") });
    expect(check(report, `conflict:builtin:${toolName(n.extra[1]!)}:${path.join(w.plugins, "node_modules", n.extra[1]!, "t.js")}`).message).toContain(n.extra[1]!);
    const fixed = await doctor(["--fix"], { XCSH_TOOLS_BUILTIN_TOOLS: toolName(n.extra[1]!) });
    expect(check(fixed.report, `conflict:builtin:bash:${path.join(userTools, "bash.js")}`)).toMatchObject({ fixed: false, hint: expect.stringMatching(/^could not fix: /) });
    await rm(userTools, { recursive: true });
    const clean = await doctor();
    expect(clean.code, JSON.stringify(problems(clean.report), null, 2)).toBe(0);
  });

  it("takes a tool's names from its boot-index record while the file's bytes are unchanged, and imports it again once they change", async () => {
    const marker = path.join(w.root, "imports.log");
    const tool = path.join(w.xcshHome, "agent", "tools", "counted.js");
    // Every import of the module appends to the marker: the log counts the imports.
    const counted = (name: string) => toolSource(name, `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(marker)}, "x");`);
    const imports = async () => (await readFile(marker, "utf8").catch(() => "")).length;
    await w.write(tool, counted("counted_a"));
    const listed = await w.cli(["tools", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    const recorded = await imports();
    expect(recorded).toBeGreaterThan(0);
    const first = await doctor();
    expect(check(first.report, "conflicts").message).toMatch(/1 tool from 1 module: no name conflicts/);
    expect(await imports()).toBe(recorded);
    await w.write(tool, counted("bash"));
    const changed = await doctor();
    expect(check(changed.report, `conflict:builtin:bash:${tool}`).status).toBe("error");
    expect(await imports()).toBeGreaterThan(recorded);
  });
  it("one module reached by two paths (a symlink beside it) is one module, as the loader takes it: no conflict with itself", async () => {
    const tools = path.join(w.xcshHome, "agent", "tools");
    await w.write(path.join(tools, "real.js"), toolSource("linked_once"));
    await symlink(path.join(tools, "real.js"), path.join(tools, "alias.js"));
    const listed = await w.cli(["tools", "--json"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.stringify(listed.json()).match(/"linked_once"/g)).toHaveLength(1);
    const report = (await doctor()).report;
    expect(check(report, "conflicts").message).toMatch(/1 tool from 1 module: no name conflicts/);
  });
});

describe("transactions", () => {
  it("an interrupted install (kill -9) leaves a pending journal and a dead holder's lock: reported, untouched, then recovered", async () => {
    await install(n.extra[2]!);
    const pauseFile = path.join(w.root, "paused");
    const child = w.spawnCli(["install", n.basic], { XCSH_TOOLS_TEST_PAUSE: "reify:done", XCSH_TOOLS_TEST_PAUSE_FILE: pauseFile });
    await waitFor(pauseFile);
    const pid = child.pid!;

    // While it runs: the lock's holder is alive; doctor says so and --fix leaves it alone.
    const live = await doctor();
    expect(check(live.report, "lock")).toMatchObject({ status: "warn", message: expect.stringMatching(new RegExp(`locked by pid ${pid} .*"install ${n.basic}".*a command is running`)) });
    expect(check(live.report, "journal").status).toBe("warn");
    const liveFix = await doctor(["--fix"]);
    expect(check(liveFix.report, "lock")).toMatchObject({ fixed: false, hint: expect.stringContaining(`could not fix: its holder, pid ${pid}, is alive`) });
    expect(() => process.kill(pid, 0)).not.toThrow();

    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("close", resolve));
    const before = await snapshotAll();
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(check(report, "journal")).toMatchObject({ status: "error", message: expect.stringMatching(new RegExp(`"install ${n.basic}" \\(pid ${pid}, started .*\\) was interrupted: recovery rolls it back`)) });
    expect(check(report, "lock")).toMatchObject({ status: "warn", message: expect.stringMatching(new RegExp(`held by pid ${pid} on .*no longer running \\(taken \\d+ s ago, last heartbeat \\d+ s ago\\)`)) });
    expect(await snapshotAll()).toEqual(before);

    const fixed = await doctor(["--fix"]);
    expect(fixed.code, JSON.stringify(problems(fixed.report), null, 2)).toBe(0);
    expect(check(fixed.report, "journal")).toMatchObject({ fixed: true });
    expect(check(fixed.report, "lock")).toMatchObject({ fixed: true });
    const again = await doctor();
    expect(problems(again.report)).toEqual([]);
    expect(Object.keys((await w.readJson("package.json")).dependencies)).toEqual([n.extra[2]]);
  });
});

describe("transactions, committed but not completed", () => {
  it("a command killed after its commit record: doctor says recovery completes it, --fix does", async () => {
    const pauseFile = path.join(w.root, "paused");
    const child = w.spawnCli(["install", n.extra[3]!], { XCSH_TOOLS_TEST_PAUSE: "commit:marked", XCSH_TOOLS_TEST_PAUSE_FILE: pauseFile });
    await waitFor(pauseFile);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("close", resolve));
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(check(report, "journal").message).toMatch(new RegExp(`"install ${n.extra[3]}" .*was committed but not completed: recovery completes it`));
    const fixed = await doctor(["--fix"]);
    expect(fixed.code, JSON.stringify(problems(fixed.report), null, 2)).toBe(0);
    expect(check(fixed.report, "journal").fixed).toBe(true);
    expect((await w.readJson("package.json")).dependencies).toEqual({ [n.extra[3]!]: "^1.0.0" });
    expect(problems((await doctor()).report)).toEqual([]);
  });
});

describe("the boot index", () => {
  it("none yet is no warning where nothing was ever installed", async () => {
    const { code, report } = await doctor();
    expect(code).toBe(0);
    expect(check(report, "boot-index")).toMatchObject({ status: "ok", message: expect.stringMatching(/^boot index: none yet \(nothing was installed in .+\)/) });
  });

  it("fresh after an install; stale (with the reason) when a tool source changes; --fix rebuilds it", async () => {
    await install(n.basic);
    const fresh = await doctor();
    expect(check(fresh.report, "boot-index")).toMatchObject({ area: "boot index", status: "ok", message: expect.stringMatching(/^boot index: fresh/) });
    await w.write(path.join(w.xcshHome, "agent", "tools", "late.js"), toolSource("late_tool"));
    const before = await snapshotAll();
    const stale = await doctor();
    expect(stale.code).toBe(0);
    expect(check(stale.report, "boot-index")).toMatchObject({ status: "warn", message: expect.stringMatching(/^boot index: stale \(.+\)/), hint: expect.stringContaining("--fix") });
    expect(await snapshotAll()).toEqual(before);
    const fixed = await doctor(["--fix"]);
    expect(check(fixed.report, "boot-index")).toMatchObject({ fixed: true, hint: "fixed" });
    expect(check((await doctor()).report, "boot-index").message).toMatch(/^boot index: fresh/);
  });

  it("a broken module records file is noted on a fresh index (a boot never reads it), not a problem", async () => {
    await install(n.basic);
    const modulesFile = path.join(w.xcshHome, "plugins", ".xcsh-tools", "boot-modules.json");
    await writeFile(modulesFile, JSON.stringify({ version: 1 }));
    const { code, report } = await doctor();
    expect(code).toBe(0);
    expect(check(report, "boot-index")).toMatchObject({
      status: "ok",
      message: expect.stringMatching(new RegExp(`^boot index: fresh \\(1 view, 0 module records\\); module records ignored: .*boot-modules\\.json has version 1; this xcsh-tools reads version ${BOOT_INDEX_VERSION}$`)),
    });
  });
});

describe("our settings", () => {
  it("shows each value's origin: flag, env, project, user, default", async () => {
    const userFile = await w.write(path.join(w.xcshHome, "xcsh-tools.json"), { lockWaitMs: 1234, timeouts: { gitMs: 5000 } });
    const projectFile = await w.write(path.join(w.cwd, ".xcsh-toolsrc.json"), { timeouts: { fetchMs: 777, gitMs: 6000 } });
    const r = await w.cli(["doctor", "--json", "--registry", "http://127.0.0.1:9/"], { XCSH_TOOLS_FACTORY_TIMEOUT_MS: "4321" });
    expect(r.code, `${r.stderr}\n${JSON.stringify(problems(r.json<Report>()), null, 2)}`).toBe(0);
    const rows = Object.fromEntries(r.json<Report>().settings.map((s) => [s.key, s]));
    expect(rows.registry).toEqual({ key: "registry", value: "http://127.0.0.1:9/", origin: "flag" });
    expect(rows["timeouts.factoryMs"]).toEqual({ key: "timeouts.factoryMs", value: 4321, origin: "env", via: "XCSH_TOOLS_FACTORY_TIMEOUT_MS" });
    expect(rows["timeouts.fetchMs"]).toEqual({ key: "timeouts.fetchMs", value: 777, origin: `project:${projectFile}` });
    expect(rows["timeouts.gitMs"]).toEqual({ key: "timeouts.gitMs", value: 6000, origin: `project:${projectFile}` });
    expect(rows.lockWaitMs).toEqual({ key: "lockWaitMs", value: 1234, origin: `user:${userFile}` });
    expect(rows.allowScripts).toEqual({ key: "allowScripts", value: false, origin: "default" });
    const text = await w.cli(["doctor"], { XCSH_TOOLS_FACTORY_TIMEOUT_MS: "4321" });
    expect(text.stdout).toMatch(/timeouts\.factoryMs +4321 +env \(XCSH_TOOLS_FACTORY_TIMEOUT_MS\)/);
    expect(text.stdout).toContain(`lockWaitMs`);
  });

  it("a malformed settings file is a failed check naming the file and the field, not a crash; --fix still runs", async () => {
    const userFile = await w.write(path.join(w.xcshHome, "xcsh-tools.json"), { lockWaitMs: "soon" });
    await install(n.extra[3]!).catch(() => undefined);
    const { code, report } = await doctor();
    expect(code).toBe(1);
    const settings = check(report, "settings");
    expect(settings.status).toBe("error");
    expect(settings.message).toContain(userFile);
    expect(settings.message).toContain("lockWaitMs");
    expect(report.settings).toEqual([]);
    expect(check(report, "journal").status).toBe("ok");
    const fixed = await doctor(["--fix"]);
    expect(check(fixed.report, "settings")).toMatchObject({ fixed: false, hint: expect.stringMatching(/^could not fix: doctor never rewrites your settings/) });
  });
});

describe("marketplace state and project overrides", () => {
  it("a missing installed plugin folder, an unreferenced cache folder, a malformed registry; overrides valid or not", async () => {
    const root = path.join(w.root, "market-acme");
    await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "hello", source: "./plugins/hello", version: "1.0.0", description: "Says hello" }]));
    for (const [rel, content] of Object.entries(pluginFiles("plugins/hello", "hello", ["acme_tool"]))) await w.write(path.join(root, rel), content);
    expect((await w.cli(["marketplace", "add", root])).code).toBe(0);
    const inst = await w.cli(["install", "hello@acme"]);
    expect(inst.code, inst.stderr).toBe(0);
    expect(problems((await doctor()).report)).toEqual([]);

    const registry = JSON.parse(await readFile(path.join(w.plugins, "installed_plugins.json"), "utf8"));
    const installPath = registry.plugins["hello@acme"][0].installPath as string;
    const stray = path.join(w.plugins, "cache", "plugins", "acme___old___0.9.0-000000000000");
    await mkdir(stray, { recursive: true });
    await rm(installPath, { recursive: true });
    await w.write(path.join(w.cwd, ".xcsh", "plugin-overrides.json"), { disabled: ["not-installed-plugin"] });
    const before = await snapshotAll();
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(check(report, "marketplace:plugin:user:hello@acme")).toMatchObject({ status: "error", hint: expect.stringContaining("xcsh-tools install hello@acme --scope user") });
    expect(check(report, `marketplace:cache:${stray}`)).toMatchObject({ status: "warn" });
    expect(check(report, "overrides:not-installed-plugin").status).toBe("warn");
    expect(await snapshotAll()).toEqual(before);

    const fixed = await doctor(["--fix"]);
    expect(check(fixed.report, `marketplace:cache:${stray}`).fixed).toBe(true);
    expect(check(fixed.report, "marketplace:plugin:user:hello@acme").fixed).toBe(false);
    expect(await snapshotTree(stray)).toEqual({ ".": "absent" });

    await writeFile(path.join(w.plugins, "installed_plugins.json"), "{ not json");
    await w.write(path.join(w.cwd, ".xcsh", "plugin-overrides.json"), { disabled: "everything" });
    const bad = await doctor();
    expect(check(bad.report, "marketplace:installed:user")).toMatchObject({ status: "error", message: expect.stringContaining("installed_plugins.json") });
    expect(check(bad.report, "overrides")).toMatchObject({ status: "error", message: expect.stringContaining("plugin-overrides.json") });
  });
});

async function waitFor(file: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await readFile(file);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${file} never appeared`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A snapshot without npm's cache (a failed fix may have fetched into it: that is not our state). */
function pruneNpm(snapshot: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(snapshot).filter(([k]) => !k.split("/").includes(".npm")));
}

