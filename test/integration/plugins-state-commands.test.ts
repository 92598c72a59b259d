/**
 * `enable`, `disable`, `features` and `config` end to end (built CLI, temp HOME, the shared
 * Verdaccio): both scopes, the files the host reads (runtime lock, project overrides) and what
 * its loader then loads, dry runs that write nothing, errors that change nothing, secrets that are
 * never printed and stored 0600, state that survives reinstall and update, rollback at each step
 * of the transaction, and `name@marketplace` handed to the marketplace engine.
 */
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { catalog, catalogPath, pluginFiles } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { REPO_ROOT } from "../helpers/runtimes.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makePluginWorld, prepareStateWorld, type PluginWorld, type PluginWorldTemplate, type StateFixtureNames } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: StateFixtureNames;
let w: PluginWorld;
let cacheDir: string;
/** Both fixtures installed (`install <state>@1.0.0 <plain>`), the world most tests start from. */
let both: PluginWorldTemplate;

const SECRET = "sk-live-DO-NOT-PRINT-4242";

// Every test runs the CLI a dozen times or more (each a Node process on a 2-core machine).
vi.setConfig({ testTimeout: 300_000 });

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  ({ n, both } = await prepareStateWorld(reg, `ps${Date.now().toString(36)}`));
  cacheDir = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-state-cache-"));
}, 180_000);
afterAll(async () => {
  await both?.cleanup();
  await reg?.dispose();
  await rm(cacheDir, { recursive: true, force: true });
});
beforeEach(async () => {
  w = await makePluginWorld(reg, "", { trustProject: true });
});
afterEach(async () => {
  await w.cleanup();
});

const overridesFile = () => path.join(w.cwd, ".xcsh", "plugin-overrides.json");
const lockFile = () => path.join(w.plugins, "xcsh-plugins.lock.json");
const readOverrides = async () => JSON.parse(await readFile(overridesFile(), "utf8"));

/** Both trees a state command may write: the xcsh root and the project. */
async function snapshotAll() {
  return { home: await w.snapshot(), project: await snapshotTree(w.cwd) };
}

/** The tool names the host's loader loads now, sorted. */
async function hostTools(): Promise<string[]> {
  const loaded = await discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {}, cacheDir });
  expect(loaded.errors).toEqual([]);
  return loaded.tools.map((t) => t.tool.name).sort();
}

async function ok(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = await w.cli(args, env);
  expect(r.code, `${args.join(" ")}\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

/** The state `install <state>@1.0.0 <plain>` leaves, installed once in beforeAll and copied here. */
async function installBoth(): Promise<void> {
  await both.restore(w);
}

describe("enable / disable", () => {
  it("user scope: the runtime lock's enabled, the host's loader follows, NOOP the second time", async () => {
    await installBoth();
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.web].sort());

    const off = await ok(["disable", n.state, "--json"]);
    expect(off.json()).toEqual({
      ok: true,
      dryRun: false,
      scope: "user",
      command: "disable",
      actions: [{ type: "CHANGE", name: n.state, reason: `disable ${n.state} for the user`, enabled: { scope: "user", from: true, to: false } }],
      written: [lockFile()],
      plugins: [{ name: n.state, enabled: false, user: false, projectDisabled: false }],
    });
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state]).toEqual({ version: "1.0.0", enabledFeatures: null, enabled: false });
    expect(await hostTools()).toEqual([n.plainTool]);
    expect((await ok(["list", "--json"])).json().plugins.find((p: { name: string }) => p.name === n.state).enabled).toBe(false);

    const before = await snapshotAll();
    const again = await ok(["disable", n.state]);
    expect(again.stdout).toContain(`= NOOP   ${n.state}  ${n.state} is already disabled for the user`);
    expect(again.stdout).toContain("Nothing to do.");
    expect(await snapshotAll()).toEqual(before);

    // Several names, one transaction.
    const on = await ok(["enable", n.state, n.plain]);
    expect(on.stdout).toMatch(new RegExp(`~ CHANGE ${n.state}  enable ${n.state} for the user`));
    expect(on.stdout).toMatch(new RegExp(`= NOOP   ${n.plain}  `));
    expect(on.stdout).toContain(`Enabled ${n.state}, ${n.plain}`);
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.web].sort());
  });

  it("a plugin without a lock entry (the host counts it enabled) gets a complete one", async () => {
    await installBoth();
    const lock = await w.readJson("xcsh-plugins.lock.json");
    delete lock.plugins[n.plain];
    await writeFile(lockFile(), JSON.stringify(lock, null, 2));
    await ok(["disable", n.plain]);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.plain]).toEqual({ version: "1.0.0", enabledFeatures: null, enabled: false });
  });

  it("project scope writes <cwd>/.xcsh/plugin-overrides.json (unknown keys kept), never the lock", async () => {
    await installBoth();
    await w.write(overridesFile(), { custom: { kept: true }, settings: { [n.plain]: { x: 1 } } });
    const lockBefore = await readFile(lockFile());
    const r = await ok(["disable", n.state, "--scope", "project", "--json"]);
    expect(r.json()).toMatchObject({ scope: "project", written: [overridesFile()], plugins: [{ name: n.state, enabled: false, user: true, projectDisabled: true }] });
    expect(await readOverrides()).toEqual({ custom: { kept: true }, settings: { [n.plain]: { x: 1 } }, disabled: [n.state] });
    expect(await readFile(lockFile())).toEqual(lockBefore);
    expect(await hostTools()).toEqual([n.plainTool]);
    // list shows what the host does in this project.
    expect((await ok(["list", "--json"])).json().plugins.find((p: { name: string }) => p.name === n.state)).toMatchObject({ enabled: false, user: true, projectDisabled: true });
    expect((await ok(["list"])).stdout).toMatch(new RegExp(`${n.state}@\\S+  disabled in this project`));

    // A user-level enable cannot override the project: it says so.
    const user = await ok(["enable", n.state]);
    expect(user.stdout).toContain(`still disabled in this project by ${overridesFile()}`);
    expect(await hostTools()).toEqual([n.plainTool]);

    await ok(["enable", n.state, "--scope", "project"]);
    expect(await readOverrides()).toEqual({ custom: { kept: true }, settings: { [n.plain]: { x: 1 } } });
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.web].sort());
    // And the other way round: the user disabled it; the project cannot enable it.
    await ok(["disable", n.plain]);
    const proj = await ok(["enable", n.plain, "--scope", "project"]);
    expect(proj.stdout).toContain(`${n.plain} is not disabled in this project (it is disabled for the user: xcsh-tools enable ${n.plain})`);
  });

  it("unknown plugins, bad names, a bad scope and a malformed overrides file: coded errors, nothing written", async () => {
    await installBoth();
    const before = await snapshotAll();
    const unknown = await w.cli(["disable", n.state, `${n.state}-nope`, "--json"]);
    expect(unknown.code).toBe(1);
    expect(unknown.json().error).toMatchObject({ code: "ENOT_INSTALLED", message: `${n.state}-nope is not installed`, hint: expect.stringContaining(n.plain) });
    const badName = await w.cli(["enable", "Not A Name", "--json"]);
    expect(badName.code).toBe(2);
    expect(badName.json().error.code).toBe("EUSAGE");
    const badScope = await w.cli(["enable", n.state, "--scope", "global", "--json"]);
    expect(badScope.code).toBe(2);
    expect(badScope.json().error).toMatchObject({ code: "EUSAGE", message: expect.stringContaining("--scope must be user or project") });
    expect(await snapshotAll()).toEqual(before);

    // A malformed runtime lock is never "empty" (the host's manager would then overwrite it, §9 #23).
    const lockText = await readFile(lockFile(), "utf8");
    await writeFile(lockFile(), "{ not json");
    const corrupt = await snapshotAll();
    for (const args of [["enable", n.state], ["config", "set", n.state, "limit", "5"], ["config", "list", n.state], ["features", n.state]]) {
      const r = await w.cli([...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.json().error).toMatchObject({ code: "ESTATE_FILE", file: lockFile() });
    }
    expect(await snapshotAll()).toEqual(corrupt);
    await writeFile(lockFile(), lockText);

    await w.write(overridesFile(), '{"disabled": "all"}');
    const broken = await snapshotAll();
    const bad = await w.cli(["disable", n.state, "--scope", "project", "--json"]);
    expect(bad.code).toBe(1);
    expect(bad.json().error).toMatchObject({ code: "ESTATE_FILE", file: overridesFile(), path: "/disabled" });
    expect(await snapshotAll()).toEqual(broken);
  });
});

describe("features", () => {
  it("lists defaults as defaults; --enable keeps the defaults; --disable, --set, --reset; the host's loader follows", async () => {
    await installBoth();
    const list = await ok(["features", n.state]);
    expect(list.stdout).toBe(`${n.state} features (defaults):\n  on   web    default  Web search\n  off  cache           Disk cache\n`);
    expect((await ok(["features", n.state, "--json"])).json()).toEqual({
      plugin: n.state,
      stored: null,
      kind: "defaults",
      effective: ["web"],
      features: [
        { name: "web", description: "Web search", default: true, enabled: true },
        { name: "cache", description: "Disk cache", default: false, enabled: false },
      ],
      unknown: [],
      origin: "user",
      user: null,
    });

    // The host would start from [] and drop web (§9 #26).
    const on = await ok(["features", n.state, "--enable", "cache", "--json"]);
    expect(on.json()).toMatchObject({ command: "features", actions: [{ type: "CHANGE", features: { from: null, to: ["web", "cache"] } }], features: { kind: "list", effective: ["web", "cache"] } });
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state].enabledFeatures).toEqual(["web", "cache"]);
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.cache, n.tools.web].sort());

    await ok(["features", n.state, "--disable", "web"]);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state].enabledFeatures).toEqual(["cache"]);
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.cache].sort());

    await ok(["features", n.state, "--set", ""]);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state].enabledFeatures).toEqual([]);
    expect((await ok(["features", n.state])).stdout).toContain("features (none (base tools only)):");
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base].sort());

    await ok(["features", n.state, "--set", "*"]);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state].enabledFeatures).toEqual(["web", "cache"]);

    const reset = await ok(["features", n.state, "--reset"]);
    expect(reset.stdout).toContain(`${n.state} follows its default features again (web)`);
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state].enabledFeatures).toBeNull();
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.web].sort());

    // Enabling a default of a defaults plugin changes nothing: it keeps following its defaults.
    const before = await snapshotAll();
    expect((await ok(["features", n.state, "--enable", "web"])).stdout).toContain("= NOOP");
    expect(await snapshotAll()).toEqual(before);
  });

  it("project scope: features[name] in the overrides file, the user's selection untouched", async () => {
    await installBoth();
    const r = await ok(["features", n.state, "--enable", "cache", "--scope", "project", "--json"]);
    expect(r.json()).toMatchObject({ scope: "project", written: [overridesFile()], features: { origin: "project", project: ["web", "cache"], user: null } });
    expect(await readOverrides()).toEqual({ features: { [n.state]: ["web", "cache"] } });
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.state].enabledFeatures).toBeNull();
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.cache, n.tools.web].sort());
    const list = await ok(["features", n.state]);
    expect(list.stdout).toContain(`${n.state} features (this project's list (web, cache)):`);
    expect(list.stdout).toContain("the user's selection (defaults) is overridden in this project");

    // A user change is made but the project still wins here; the reason says so.
    const user = await ok(["features", n.state, "--disable", "web"]);
    expect(user.stdout).toContain(`this project's list in ${overridesFile()} still applies here`);
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base, n.tools.cache, n.tools.web].sort());

    await ok(["features", n.state, "--reset", "--scope", "project"]);
    expect(await readOverrides()).toEqual({});
    expect(await hostTools()).toEqual([n.plainTool, n.tools.base].sort());
  });

  it("unknown features are EUNKNOWN_FEATURE (exit 2) listing the available ones; nothing written", async () => {
    await installBoth();
    const before = await snapshotAll();
    for (const args of [["--enable", "cahce"], ["--set", "web,nope"], ["--disable", "x", "--scope", "project"]]) {
      const r = await w.cli(["features", n.state, ...args, "--json"]);
      expect(r.code, r.stdout).toBe(2);
      expect(r.json().error).toMatchObject({ code: "EUNKNOWN_FEATURE", hint: "Available features: web, cache. Nothing was changed." });
    }
    expect((await w.cli(["features", n.state, "--enable", "cahce"])).stderr).toContain('did you mean "cache"?');
    const none = await w.cli(["features", n.plain, "--enable", "x", "--json"]);
    expect(none.code).toBe(2);
    expect(none.json().error).toMatchObject({ code: "EUNKNOWN_FEATURE", message: `Plugin ${n.plain} declares no features, so "x" cannot be selected` });
    expect((await ok(["features", n.plain])).stdout).toBe(`${n.plain} declares no optional features.\n`);
    const nope = await w.cli(["features", `${n.plain}-nope`, "--json"]);
    expect(nope.code).toBe(1);
    expect(nope.json().error.code).toBe("ENOT_INSTALLED");
    const mixed = await w.cli(["features", n.state, "--reset", "--set", "web", "--json"]);
    expect(mixed.code).toBe(2);
    expect(mixed.json().error.code).toBe("EUSAGE");
    expect(await snapshotAll()).toEqual(before);
  });
});

describe("config", () => {
  it("list shows key, type, value, origin, description; set/get/delete at user scope; env fallback", async () => {
    await installBoth();
    const env = { XCSH_STATE_TEST_KEY: SECRET };
    const listed = (await ok(["config", "list", n.state, "--json"])).json();
    expect(listed.settings.map((s: { key: string; value: unknown; origin: string }) => [s.key, s.value ?? null, s.origin])).toEqual([
      ["apiKey", null, "unset"],
      ["limit", 10, "default"],
      ["verbose", false, "default"],
      ["mode", "fast", "default"],
    ]);
    expect(listed.settings[1]).toMatchObject({ type: "number", description: "Result limit", min: 1, max: 100, step: 1 });

    const set = await ok(["config", "set", n.state, "limit", "20", "--json"]);
    expect(set.json()).toMatchObject({ command: "config", scope: "user", actions: [{ type: "ADD", reason: "set limit = 20 for the user", setting: { scope: "user", key: "limit", secret: false, from: null, to: 20 } }], setting: { key: "limit", value: 20, origin: "user" } });
    expect((await w.readJson("xcsh-plugins.lock.json")).settings).toEqual({ [n.state]: { limit: 20 } });
    await ok(["config", "set", n.state, "verbose", "yes"]);
    await ok(["config", "set", n.state, "mode", "deep"]);
    expect((await w.readJson("xcsh-plugins.lock.json")).settings[n.state]).toEqual({ limit: 20, verbose: true, mode: "deep" });
    expect((await ok(["config", "get", n.state, "limit"])).stdout).toBe("20\n");
    expect((await ok(["config", "get", n.state, "mode"])).stdout).toBe("deep\n");
    expect((await ok(["config", "get", n.state, "verbose", "--json"])).json()).toEqual({ plugin: n.state, key: "verbose", value: true, origin: "user", secret: false, via: lockFile() });
    const change = await ok(["config", "set", n.state, "limit", "30"]);
    expect(change.stdout).toContain("~ CHANGE");
    expect(change.stdout).toContain("limit: 20 → 30 for the user");

    const text = await ok(["config", "list", n.state], env);
    expect(text.stdout.split("\n")[0]).toMatch(/^key +type +value +origin +description$/);
    expect(text.stdout).toMatch(/apiKey +string, secret +•••• +env \$XCSH_STATE_TEST_KEY +API key; a string/);
    expect(text.stdout).toMatch(/limit +number +30 +user +Result limit; a number from 1 to 100 in steps of 1; default 10/);

    const del = await ok(["config", "delete", n.state, "limit"]);
    expect(del.stdout).toContain("delete limit (was 30) for the user; falls back to the default 10");
    expect((await ok(["config", "get", n.state, "limit", "--json"])).json()).toMatchObject({ value: 10, origin: "default" });
    expect((await ok(["config", "delete", n.state, "limit"])).stdout).toContain("limit is not set for the user");

    const unset = await w.cli(["config", "get", n.state, "apiKey", "--json"]);
    expect(unset.code).toBe(1);
    expect(unset.json().error).toMatchObject({ code: "ESETTING_UNSET", path: "apiKey" });
    const unsetText = await w.cli(["config", "get", n.state, "apiKey"]);
    expect(unsetText.code).toBe(1);
    expect(unsetText.stderr).toContain("Code: ESETTING_UNSET");
  });

  it("values are checked against the schema (type, enum, min/max, step); unknown keys and plugins: coded errors, nothing written", async () => {
    await installBoth();
    const before = await snapshotAll();
    const cases: [string[], string, string][] = [
      [["limit", "ten"], "ESETTING_VALUE", 'expected a number, found "ten"'],
      [["limit", "0"], "ESETTING_VALUE", "must be >= 1, found number 0"],
      [["limit", "101"], "ESETTING_VALUE", "must be <= 100"],
      [["limit", "2.5"], "ESETTING_VALUE", "must be a multiple of 1"],
      [["verbose", "maybe"], "ESETTING_VALUE", "expected true/false, yes/no or 1/0"],
      [["mode", "dep"], "ESETTING_VALUE", 'did you mean "deep"?'],
      [["limt", "5"], "EUNKNOWN_SETTING", 'did you mean "limit"?'],
    ];
    for (const [args, code, message] of cases) {
      const r = await w.cli(["config", "set", n.state, ...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.json().error).toMatchObject({ code, message: expect.stringContaining(message) });
    }
    const none = await w.cli(["config", "set", n.plain, "x", "1", "--json"]);
    expect(none.json().error).toMatchObject({ code: "EUNKNOWN_SETTING", message: expect.stringContaining("declares no settings") });
    expect((await w.cli(["config", "get", n.state, "nope", "--json"])).json().error.code).toBe("EUNKNOWN_SETTING");
    expect((await w.cli(["config", "delete", n.state, "nope", "--json"])).json().error.code).toBe("EUNKNOWN_SETTING");
    const notInstalled = await w.cli(["config", "list", `${n.state}-nope`, "--json"]);
    expect(notInstalled.code).toBe(1);
    expect(notInstalled.json().error.code).toBe("ENOT_INSTALLED");
    const missingValue = await w.cli(["config", "set", n.state, "limit"]);
    expect(missingValue.code).toBe(2);
    expect(await snapshotAll()).toEqual(before);
    expect((await ok(["config", "list", n.plain])).stdout).toBe(`${n.plain} declares no settings.\n`);
  });

  it("secrets: never printed (text, JSON, plans, errors), stored 0600 in the runtime lock, refused at project scope", async () => {
    await installBoth();
    const outputs: string[] = [];
    const run = async (args: string[], code = 0, env: NodeJS.ProcessEnv = {}) => {
      const r = await w.cli(args, env);
      expect(r.code, `${args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(code);
      outputs.push(r.stdout, r.stderr);
      return r;
    };
    const set = await run(["config", "set", n.state, "apiKey", SECRET]);
    expect(set.stdout).toContain("set apiKey = •••• for the user");
    await run(["config", "set", n.state, "apiKey", SECRET, "--json"]);
    await run(["config", "set", n.state, "apiKey", SECRET, "--dry-run"]);
    await run(["config", "set", n.state, "apiKey", `${SECRET}-2`, "--dry-run", "--json"]);
    expect((await run(["config", "get", n.state, "apiKey"])).stdout).toBe("••••\n");
    expect((await run(["config", "get", n.state, "apiKey", "--json"])).json()).toMatchObject({ value: "••••", origin: "user", secret: true });
    expect((await run(["config", "list", n.state, "--json"])).json().settings[0]).toMatchObject({ key: "apiKey", value: "••••", origin: "user" });
    await run(["config", "list", n.state]);
    await run(["config", "validate", n.state, "--json"]);
    const refused = await run(["config", "set", n.state, "apiKey", SECRET, "--scope", "project", "--json"], 2);
    expect(refused.json().error).toMatchObject({ code: "ESECRET_SCOPE", path: "apiKey" });
    await run(["config", "set", n.state, "apiKey", SECRET, "--scope", "project"], 2);
    await run(["list", "--json"]);
    // An env-provided secret is masked too.
    expect((await run(["config", "get", n.state, "apiKey", "--json"], 0, { XCSH_STATE_TEST_KEY: `${SECRET}-env` })).json()).toMatchObject({ value: "••••", origin: "user" });
    await run(["config", "delete", n.state, "apiKey", "--json"]);
    expect((await run(["config", "list", n.state], 0, { XCSH_STATE_TEST_KEY: `${SECRET}-env` })).stdout).toMatch(/apiKey +string, secret +•••• +env \$XCSH_STATE_TEST_KEY/);
    for (const out of outputs) expect(out).not.toContain(SECRET);

    await run(["config", "set", n.state, "apiKey", SECRET]);
    expect((await w.readJson("xcsh-plugins.lock.json")).settings[n.state].apiKey).toBe(SECRET);
    expect((await stat(lockFile())).mode & 0o777).toBe(0o600);
    await expect(stat(overridesFile())).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("project scope: settings[name] in the overrides file wins over the user's value", async () => {
    await installBoth();
    await ok(["config", "set", n.state, "limit", "30"]);
    const proj = await ok(["config", "set", n.state, "limit", "5", "--scope", "project", "--json"]);
    expect(proj.json()).toMatchObject({ scope: "project", written: [overridesFile()], setting: { value: 5, origin: "project", via: overridesFile() } });
    expect(await readOverrides()).toEqual({ settings: { [n.state]: { limit: 5 } } });
    expect((await w.readJson("xcsh-plugins.lock.json")).settings[n.state]).toEqual({ limit: 30 });
    expect((await ok(["config", "get", n.state, "limit"])).stdout).toBe("5\n");
    const user = await ok(["config", "set", n.state, "limit", "40"]);
    expect(user.stdout).toContain(`this project's value in ${overridesFile()} still applies here`);
    expect(user.stderr).toContain("note: the value in effect here comes from project");
    await ok(["config", "delete", n.state, "limit", "--scope", "project"]);
    expect(await readOverrides()).toEqual({});
    expect((await ok(["config", "get", n.state, "limit"])).stdout).toBe("40\n");
  });

  it("validate: stored values against the schema, exit 1 listing problems; undeclared keys are warnings", async () => {
    await installBoth();
    expect((await ok(["config", "validate"])).stdout).toBe(`Settings valid (${[n.state, n.plain].sort().join(", ")}).\n`);
    const lock = await w.readJson("xcsh-plugins.lock.json");
    lock.settings = { [n.state]: { limit: "10", mode: "slow", apiKey: 12345678, oldKey: true } };
    await writeFile(lockFile(), JSON.stringify(lock, null, 2));
    await w.write(overridesFile(), { settings: { [n.state]: { verbose: "yes" } } });
    const before = await snapshotAll();
    const r = await w.cli(["config", "validate", n.state, "--json"]);
    expect(r.code).toBe(1);
    const doc = r.json();
    expect(doc).toMatchObject({ ok: false, valid: false, plugins: [n.state] });
    expect(doc.problems.map((p: { severity: string; key: string; source: string }) => [p.severity, p.key, p.source])).toEqual([
      ["error", "limit", lockFile()],
      ["error", "mode", lockFile()],
      ["error", "apiKey", lockFile()],
      ["warning", "oldKey", lockFile()],
      ["error", "verbose", overridesFile()],
    ]);
    expect(JSON.stringify(doc)).not.toContain("12345678");
    const text = await w.cli(["config", "validate"]);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`error ESETTING_VALUE ${lockFile()}: setting "limit" of plugin ${n.state}: expected a number, found "10"`);
    expect(text.stdout).toContain(`Try this: xcsh-tools config delete ${n.state} oldKey`);
    expect(text.stdout).toContain("4 invalid setting value(s).");
    expect((await ok(["config", "list", n.state])).stdout).toContain(`oldKey: stored (user) but not declared by ${n.state}`);
    expect(await snapshotAll()).toEqual(before);
    // An undeclared stored key can be deleted; with the values fixed, validate passes.
    await ok(["config", "delete", n.state, "oldKey"]);
    for (const [key, value] of [["limit", "10"], ["mode", "fast"], ["apiKey", "k"]]) await ok(["config", "set", n.state, key!, value!]);
    await ok(["config", "set", n.state, "verbose", "true", "--scope", "project"]);
    expect((await ok(["config", "validate", n.state])).stdout).toBe(`Settings valid (${n.state}).\n`);
  });
});

describe("--dry-run and --json on every mutation", () => {
  it("prints the plan and writes nothing at all, in either scope", async () => {
    await installBoth();
    await ok(["config", "set", n.state, "limit", "30"]);
    const before = await snapshotAll();
    const mutations = [
      ["disable", n.state],
      ["disable", n.state, "--scope", "project"],
      ["enable", n.plain],
      ["features", n.state, "--enable", "cache"],
      ["features", n.state, "--set", "cache", "--scope", "project"],
      ["features", n.state, "--reset"],
      ["config", "set", n.state, "limit", "50"],
      ["config", "set", n.state, "mode", "deep", "--scope", "project"],
      ["config", "set", n.state, "apiKey", SECRET],
      ["config", "delete", n.state, "limit"],
    ];
    for (const args of mutations) {
      const r = await w.cli([...args, "--dry-run", "--json"]);
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
      const doc = r.json();
      expect(doc, args.join(" ")).toMatchObject({ ok: true, dryRun: true, written: [] });
      expect(doc.actions.length).toBeGreaterThan(0);
      expect(await snapshotAll(), args.join(" ")).toEqual(before);
      const text = await w.cli([...args, "--dry-run"]);
      expect(text.code).toBe(0);
      expect(text.stdout.split("\n")[0]).toBe("Plan (dry run: nothing was written)");
      expect(text.stdout).not.toContain(SECRET);
      expect(await snapshotAll(), args.join(" ")).toEqual(before);
    }
    // A dry run on a fresh home writes nothing either (and fails cleanly: nothing is installed).
    const fresh = await makePluginWorld(reg, "", { trustProject: true });
    try {
      const r = await fresh.cli(["disable", n.state, "--dry-run", "--json"]);
      expect(r.code).toBe(1);
      expect(r.json().error.code).toBe("ENOT_INSTALLED");
      expect(await fresh.snapshot()).toEqual(fresh.fresh);
    } finally {
      await fresh.cleanup();
    }
  });
});

describe("state survives reinstall and update", () => {
  it("enabled, features, settings (both scopes) are kept by install of another version, install again and update", async () => {
    await ok(["install", `${n.state}@1.0.0`, n.plain]);
    await ok(["disable", n.plain]);
    await ok(["features", n.state, "--enable", "cache"]);
    await ok(["config", "set", n.state, "limit", "42"]);
    await ok(["config", "set", n.state, "apiKey", SECRET]);
    await ok(["disable", n.state, "--scope", "project"]);
    await ok(["config", "set", n.state, "mode", "deep", "--scope", "project"]);
    const overrides = await readFile(overridesFile());
    const expectState = async (version: string) => {
      const lock = await w.readJson("xcsh-plugins.lock.json");
      expect(lock.plugins[n.state]).toEqual({ version, enabledFeatures: ["web", "cache"], enabled: true });
      expect(lock.plugins[n.plain]).toEqual({ version: "1.0.0", enabledFeatures: null, enabled: false });
      expect(lock.settings).toEqual({ [n.state]: { limit: 42, apiKey: SECRET } });
      expect((await stat(lockFile())).mode & 0o777).toBe(0o600);
      expect(await readFile(overridesFile())).toEqual(overrides);
    };
    await ok(["install", `${n.state}@1.1.0`]);
    await expectState("1.1.0");
    await ok(["install", `${n.state}@1.0.0`, n.plain]);
    await expectState("1.0.0");
    const up = await ok(["update", "--latest"]);
    expect(up.stdout).toContain(`${n.state} 1.0.0 → 1.1.0`);
    await expectState("1.1.0");
    expect(await hostTools()).toEqual([]);
    await ok(["enable", n.state, "--scope", "project"]);
    expect(await hostTools()).toEqual([n.tools.base, n.tools.cache, n.tools.web].sort());
  });
});

describe("rollback after an injected failure", () => {
  const steps = ["state:loaded", "begin:created", "apply:planned", "stage:0:recorded", "apply:staged", "commit:synced"];
  it.each(steps)("at %s both trees are byte-identical (user and project scope)", async (step) => {
    await installBoth();
    await ok(["config", "set", n.state, "limit", "30"]);
    await w.write(overridesFile(), { custom: 1 });
    const before = await snapshotAll();
    for (const args of [["config", "set", n.state, "apiKey", SECRET], ["disable", n.state, "--scope", "project"], ["features", n.state, "--set", "cache"]]) {
      const r = await w.cli([...args, "--json"], { XCSH_TOOLS_TEST_FAULT: step });
      expect(r.code, `${args.join(" ")} at ${step}: ${r.stdout}${r.stderr}`).toBe(1);
      expect(r.json().error.code).toBe("EFAULT_INJECTED");
      expect(r.stdout).not.toContain(SECRET);
      expect(await snapshotAll(), `${args.join(" ")} at ${step}`).toEqual(before);
    }
    const again = await ok(["disable", n.state, "--scope", "project"]);
    expect(again.stderr).not.toContain("Recovered");
    expect(await readOverrides()).toEqual({ custom: 1, disabled: [n.state] });
  });

  it("a failure after the commit record is completed by the next command", async () => {
    await installBoth();
    const r = await w.cli(["disable", n.state, "--scope", "project"], { XCSH_TOOLS_TEST_FAULT: "commit:swap:0:done" });
    expect(r.code).toBe(1);
    const list = await ok(["features", n.state, "--json"]);
    expect(list.stderr).toBe("");
    expect(await readOverrides()).toEqual({ disabled: [n.state] });
    expect(await hostTools()).toEqual([n.plainTool]);
  });
});

describe("kill -9", () => {
  async function killAt(step: string, args: string[]): Promise<void> {
    const marker = path.join(w.root, "paused");
    const child = w.spawnCli(args, { XCSH_TOOLS_TEST_PAUSE: step, XCSH_TOOLS_TEST_PAUSE_FILE: marker });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = once(child, "exit");
    for (let i = 0; ; i++) {
      if (await readFile(marker, "utf8").then(() => true, () => false)) break;
      if (child.exitCode !== null) throw new Error(`exited before pausing at ${step}: ${stderr}`);
      if (i > 1200) throw new Error(`never paused at ${step}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    await exited;
    await rm(marker, { force: true });
  }

  it("before the commit record the next command restores both files; after it, completes the change", async () => {
    await installBoth();
    await w.write(overridesFile(), { custom: 1 });
    const before = await snapshotAll();
    await killAt("apply:staged", ["disable", n.state, "--scope", "project"]);
    expect(await snapshotAll()).not.toEqual(before); // a journal was left behind
    const next = await ok(["features", n.state]);
    expect(next.stderr).toContain("Recovered an interrupted command");
    expect(await snapshotAll()).toEqual(before);

    await killAt("commit:marked", ["config", "set", n.state, "limit", "33"]);
    await ok(["config", "list", n.state]);
    expect((await w.readJson("xcsh-plugins.lock.json")).settings[n.state]).toEqual({ limit: 33 });
  });
});

describe("name@marketplace goes to the marketplace engine", () => {
  it("enable/disable hello@acme (with --scope), mixed with npm names is a usage error", async () => {
    const root = path.join(w.root, "market-acme");
    await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "hello", source: "./plugins/hello", version: "1.0.0" }]));
    for (const [rel, content] of Object.entries(pluginFiles("plugins/hello", "hello", ["acme_state_tool"]))) await w.write(path.join(root, rel), content);
    await ok(["marketplace", "add", root]);
    await ok(["install", "hello@acme", "--scope", "project"]);
    await ok(["install", n.plain]);
    const off = await ok(["disable", "hello@acme", "--scope", "project", "--json"]);
    expect(off.json()).toMatchObject({ ok: true, items: [{ id: "hello@acme", scope: "project" }] });
    expect((await ok(["list", "--json"])).json().marketplacePlugins).toMatchObject([{ id: "hello@acme", enabled: false }]);
    const mixed = await w.cli(["enable", "hello@acme", n.plain]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain("Cannot enable marketplace plugins (hello@acme) and npm plugins");
    await ok(["enable", "hello@acme"]);
    expect((await ok(["list", "--json"])).json().marketplacePlugins).toMatchObject([{ id: "hello@acme", enabled: true }]);
    // npm names keep their own --scope meaning.
    await ok(["disable", n.plain, "--scope", "project"]);
    expect(await readOverrides()).toEqual({ disabled: [n.plain] });
  });
});

describe("concurrent commands", () => {
  it("lose no update: each replans on the state it reads under the lock (§9 #30)", async () => {
    await installBoth();
    const runs = await Promise.all([
      w.cli(["config", "set", n.state, "limit", "20"]),
      w.cli(["config", "set", n.state, "mode", "deep"]),
      w.cli(["config", "set", n.state, "verbose", "true"]),
      w.cli(["features", n.state, "--enable", "cache"]),
      w.cli(["disable", n.plain]),
      w.cli(["disable", n.state, "--scope", "project"]),
      w.cli(["config", "set", n.state, "limit", "7", "--scope", "project"]),
    ]);
    for (const r of runs) expect(r.code, r.stdout + r.stderr).toBe(0);
    const lock = await w.readJson("xcsh-plugins.lock.json");
    expect(lock.plugins[n.state]).toEqual({ version: "1.0.0", enabledFeatures: ["web", "cache"], enabled: true });
    expect(lock.plugins[n.plain].enabled).toBe(false);
    expect(lock.settings[n.state]).toEqual({ limit: 20, mode: "deep", verbose: true });
    const overrides = await readOverrides();
    expect(overrides).toEqual({ disabled: [n.state], settings: { [n.state]: { limit: 7 } } });
  });
});

describe("README", () => {
  it("the state commands' walk-through runs as written (with the fixture in place of @example/xcsh-search)", async () => {
    const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const marker = "<!-- readme-test: state-commands -->";
    const block = /^\s*```sh\n([\s\S]*?)\n```/.exec(readme.slice(readme.indexOf(marker) + marker.length));
    expect(readme.includes(marker) && block, "README block").toBeTruthy();
    const lines = block![1]!.split("\n").map((line) => line.replace(/#.*$/, "").trim()).filter(Boolean);
    expect(lines.length).toBeGreaterThan(5);
    await ok(["install", n.state]);
    const outputs: string[] = [];
    for (const line of lines) {
      const [bin, ...args] = line.replaceAll("@example/xcsh-search", n.state).split(/\s+/);
      expect(bin).toBe("xcsh-tools");
      const r = await ok(args);
      outputs.push(r.stdout, r.stderr);
    }
    const lock = await w.readJson("xcsh-plugins.lock.json");
    expect(lock.plugins[n.state]).toMatchObject({ enabledFeatures: ["web", "cache"], enabled: true });
    expect(lock.settings[n.state]).toEqual({ limit: 20, apiKey: "sk-123" });
    expect(await readOverrides()).toEqual({});
    for (const out of outputs) expect(out).not.toContain("sk-123");
    expect(await hostTools()).toEqual([n.tools.base, n.tools.cache, n.tools.web].sort());
  });
});
