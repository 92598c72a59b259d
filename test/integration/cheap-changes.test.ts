/**
 * The changes that download nothing (issue 44, point 1) take shortcuts: `enable` and `features`
 * check only the tool modules they turn on, reuse the boot index's record of bytes already
 * checked (a disabled plugin's records are kept), and import the rest once in the validation
 * child, inside the transaction. Each test here is a way a shortcut could skip what it must do:
 * trust a record of bytes that changed since, commit tools that do not load, let an entry leave
 * its package, run plugin code on a dry run, or leave a half change behind when killed while it
 * checks. Built CLI, temp HOME, the shared Verdaccio.
 */
import { once } from "node:events";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { buildDist, modulesOfLoadedFiles } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { cliArgv, hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makePluginWorld, prepareStateWorld, toolSource, type PluginWorld, type PluginWorldTemplate, type StateFixtureNames } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: StateFixtureNames;
let w: PluginWorld;
let both: PluginWorldTemplate;

vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  ({ n, both } = await prepareStateWorld(reg, `cheap${Date.now().toString(36)}`));
}, 180_000);
afterAll(async () => {
  await both?.cleanup();
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makePluginWorld(reg, "", { trustProject: true });
  await both.restore(w);
});
afterEach(async () => {
  await w.cleanup();
});

const stateDir = () => path.join(w.plugins, "node_modules", n.state);
const toolFile = (rel: string) => path.join(stateDir(), rel);
const modulesFile = () => path.join(w.plugins, ".xcsh-tools", "boot-modules.json");
const overridesFile = () => path.join(w.cwd, ".xcsh", "plugin-overrides.json");

async function snapshotAll() {
  return { home: await w.snapshot(), project: await snapshotTree(w.cwd) };
}

async function ok(args: string[]) {
  const r = await w.cli(args);
  expect(r.code, `${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

/** The tool names `tools --json` (the boot index) says the host loads here, sorted. */
async function indexedTools(): Promise<string[]> {
  const r = await ok(["tools", "--json"]);
  return (r.json().tools as { name: string }[]).map((t) => t.name).sort();
}

/** The record files of boot-modules.json. */
async function recordedFiles(): Promise<string[]> {
  const doc = JSON.parse(await readFile(modulesFile(), "utf8")) as { modules: Record<string, Record<string, { file: string }>> };
  return Object.values(doc.modules).flatMap((byRuntime) => Object.values(byRuntime).map((r) => r.file));
}

/** A command that must be refused with EVALIDATE naming `file`, leaving both trees byte-identical. */
async function refused(args: string[], file: string): Promise<void> {
  const before = await snapshotAll();
  const r = await w.cli([...args, "--json"]);
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(1);
  expect(r.json().error).toMatchObject({ code: "EVALIDATE", message: expect.stringContaining(file), hint: expect.stringContaining(`xcsh-tools validate ${stateDir()}`) });
  expect(r.json().error.message).toContain("nothing was changed");
  expect(await snapshotAll()).toEqual(before);
}

describe("what a change turns on is checked before it counts", () => {
  it("features --enable / --set of a feature whose module does not load: EVALIDATE, nothing changed, at both scopes; a dry run imports nothing", async () => {
    const marker = path.join(w.root, "imported");
    // Imported, it leaves a mark and throws at factory time.
    await writeFile(toolFile("tools/cache.js"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "");\nexport default () => { throw new Error("cache is broken"); };\n`);
    const dry = await ok(["features", n.state, "--enable", "cache", "--dry-run"]);
    expect(dry.stdout).toContain("~ CHANGE");
    expect(await readFile(marker).then(() => true, () => false)).toBe(false);

    await refused(["features", n.state, "--enable", "cache"], "tools/cache.js: the factory threw: cache is broken");
    await refused(["features", n.state, "--set", "web,cache", "--scope", "project"], "tools/cache.js");
    await refused(["features", n.state, "--set", "cache"], "tools/cache.js");
    expect(await indexedTools()).toEqual([n.plainTool, n.tools.base, n.tools.web].sort());

    // Fixed, the same command goes through and the tool loads.
    await writeFile(toolFile("tools/cache.js"), toolSource(n.tools.cache));
    await ok(["features", n.state, "--enable", "cache"]);
    expect(await indexedTools()).toEqual([n.plainTool, n.tools.base, n.tools.cache, n.tools.web].sort());
  });

  it("enable of several plugins, one broken: one transaction, neither is enabled", async () => {
    await ok(["disable", n.state, n.plain]);
    await writeFile(path.join(w.plugins, "node_modules", n.plain, "t.js"), `throw new Error("plain is broken");\n`);
    const before = await snapshotAll();
    const r = await w.cli(["enable", n.state, n.plain, "--json"]);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(1);
    expect(r.json().error).toMatchObject({ code: "EVALIDATE", message: expect.stringMatching(new RegExp(`^${n.plain}: .*t\\.js: .*plain is broken`)) });
    expect(await snapshotAll()).toEqual(before);
    expect(await indexedTools()).toEqual([]);
  });

  it("a feature entry that does not exist or leaves its package: EVALIDATE, nothing changed", async () => {
    const pkgFile = path.join(stateDir(), "package.json");
    const pkg = JSON.parse(await readFile(pkgFile, "utf8"));
    pkg.xcsh.features.gone = { description: "missing", tools: ["./tools/missing.js"] };
    pkg.xcsh.features.out = { description: "escapes", tools: ["./tools/../../outside.js"] };
    await writeFile(pkgFile, JSON.stringify(pkg, null, 2));
    await writeFile(path.join(w.plugins, "node_modules", "outside.js"), toolSource("outside_tool"));
    await refused(["features", n.state, "--enable", "gone"], "EENTRY_NOT_FOUND tools/missing.js");
    await refused(["features", n.state, "--enable", "out"], "EENTRY_ESCAPE");
  });
});

describe("a disabled plugin keeps its records, for the same bytes only", () => {
  it("disable keeps the record; changed bytes are checked again at enable: broken refused, fixed taken", async () => {
    const base = toolFile("tools/base.js");
    expect(await recordedFiles()).toContain(base);
    await ok(["disable", n.state]);
    // No view takes it now; its record stays, so enabling the same bytes needs no import.
    expect(await recordedFiles()).toContain(base);

    await writeFile(base, `export default () => { throw new Error("base is broken"); };\n`);
    await refused(["enable", n.state], "tools/base.js: the factory threw: base is broken");
    expect(await indexedTools()).toEqual([n.plainTool]);

    // New good bytes with another description: the index answers from them, not from the old record.
    await writeFile(base, toolSource(n.tools.base).replace('"fixture tool"', '"renamed while disabled"'));
    await ok(["enable", n.state]);
    const tools = (await ok(["tools", "--json"])).json().tools as { name: string; description: string }[];
    expect(tools.find((t) => t.name === n.tools.base)?.description).toBe("renamed while disabled");
  });
});

describe("kill -9 while it checks", () => {
  it("a command killed while its validation child imports the module it turns on changes nothing", async () => {
    const marker = path.join(w.root, "importing");
    // Imported, it says so and never settles (nothing keeps its process alive once its parent is gone).
    await writeFile(toolFile("tools/cache.js"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, String(process.pid));\nawait new Promise(() => {});\nexport default () => ({});\n`);
    const before = await snapshotAll();
    const child = w.spawnCli(["features", n.state, "--enable", "cache"]);
    let output = "";
    child.stdout?.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr?.on("data", (c: Buffer) => (output += c.toString()));
    const exited = once(child, "exit");
    for (let i = 0; !(await readFile(marker).then(() => true, () => false)); i++) {
      if (child.exitCode !== null) throw new Error(`exited before importing the module: ${output}`);
      if (i > 2400) throw new Error(`never imported the module: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    await exited;
    const orphan = Number(await readFile(marker, "utf8"));
    try {
      process.kill(orphan, "SIGKILL");
    } catch {
      // already gone
    }
    await rm(marker, { force: true });
    const next = await ok(["features", n.state, "--json"]);
    expect(next.json()).toMatchObject({ effective: ["web"], stored: null });
    const after = await snapshotAll();
    // The journal a rollback recovered is gone; the boot index is a cache a killed check may not have written.
    expect(after.project).toEqual(before.project);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state]).toEqual({ version: "1.0.0", enabledFeatures: null, enabled: true });
    expect(Object.keys(after.home).filter((k) => !k.includes("boot-") && after.home[k] !== before.home[k])).toEqual([]);
  });
});

describe("a state change loads its own path", () => {
  it("disable, enable, features, config set|delete, trust: no commander, no team-set engine or restore, no npm installer, in a few files", async () => {
    // Which modules each process loaded: a resolve hook logs every URL (as boot-index-cli.test.ts does).
    const log = path.join(w.root, "resolved.log");
    const hooks = await w.write("hooks/log-hooks.mjs", `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + "\\n");\n  return result;\n}\n`);
    const register = await w.write("hooks/register.mjs", `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
    const changes = [
      ["disable", n.plain],
      ["enable", n.plain],
      ["features", n.state, "--enable", "cache"],
      ["features", n.state, "--disable", "cache"],
      ["config", "set", n.state, "limit", "20"],
      ["config", "delete", n.state, "limit"],
      ["trust", w.cwd],
    ];
    for (const args of changes) {
      await writeFile(log, "");
      const r = await runProcess(process.execPath, ["--import", register, ...cliArgv(w.home, args)], { cwd: w.cwd, env: hermeticEnv(w.home, w.env), timeoutMs: 60_000 });
      expect(r.code, `${args.join(" ")}\n${r.stderr}`).toBe(0);
      const loaded = (await readFile(log, "utf8")).split("\n").filter(Boolean);
      const urls = modulesOfLoadedFiles(loaded);
      expect(urls.some((url) => url.includes("/src/cli/state-command.ts") || url.includes("/src/cli/commands/trust.ts")), args.join(" ")).toBe(true);
      // Commander parses only what the plain forms leave to it; the set's writer only for --scope
      // project|local; the installers never (of the team-set engine, only the notes the query chunk holds).
      expect(urls.filter((url) => /\/node_modules\/(commander|@npmcli|pacote|jiti|listr2)\/|\/src\/(cli\/team-write|cli\/team-restore|cli\/restore-output|teamset\/(?!notes\.ts)|marketplace\/)/.test(url)), args.join(" ")).toEqual([]);
      // The state path is a few chunks (scripts/lib/bundle.mjs HOT_CHUNKS `state`, `scan`), not a file per module (68 before),
      // and no facade chunk of a dynamic import (`importsPastFacades`: 30 files before).
      expect(new Set(loaded.filter((url) => url.includes("/dist/"))).size, args.join(" ")).toBeLessThanOrEqual(16);
    }
  });
});
