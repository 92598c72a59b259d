/**
 * Project scope in a project the user does not trust: its settings files are never loaded (a JS
 * config never runs), a project file never sets a secret setting (ours: `registry`,
 * `allowScripts`; a plugin's `secret: true` ones from plugin-overrides.json), its overrides,
 * marketplaces and installs are left out unread and reported as "not loaded: project not
 * trusted", and every `--scope project` mutation is `EUNTRUSTED_PROJECT` with the project folder
 * byte-identical. Trusted-project counterparts show the features still work there.
 *
 * The CLI is spawned without a TTY, so an untrusted project is never asked about: it is left out.
 */
import { chmod } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { catalog, catalogPath, pluginFiles, writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { writeTrustRecord } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeHostileWorld, type HostileWorld } from "./hostile-world.js";

vi.setConfig({ testTimeout: 120_000 });

beforeAll(async () => {
  await buildDist();
}, 180_000);

const worlds: HostileWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await w.cleanup();
});

async function world(options: { trusted?: boolean } = {}): Promise<HostileWorld> {
  const w = await makeHostileWorld(options);
  worlds.push(w);
  return w;
}

function cli(w: HostileWorld, args: string[], cwd = w.cwd): Promise<ProcessResult> {
  return runCli(args, { cwd, home: w.home, timeoutMs: 60_000 });
}

function describeRun(r: ProcessResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** A settings module that runs the canary when it is loaded, in the syntax its extension needs. */
function canaryConfig(w: HostileWorld, ext: "js" | "mjs" | "cjs"): string {
  const run = `execFileSync(${JSON.stringify(w.canary)}, ["settings-${ext}"]);`;
  return ext === "mjs"
    ? `import { execFileSync } from "node:child_process";\n${run}\nexport default { lockWaitMs: 1 };\n`
    : `const { execFileSync } = require("node:child_process");\n${run}\nmodule.exports = { lockWaitMs: 1 };\n`;
}

/**
 * An npm plugin installed by hand in the user's plugins folder (no registry needed): one tool and
 * two settings, `apiKey` (secret) and `limit`, and one optional feature `web` (default on).
 */
async function installSecretPlugin(w: HostileWorld): Promise<void> {
  const plugins = path.join(w.xcshHome, "plugins");
  await w.write(path.join(plugins, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "secret-plugin": "1.0.0" } });
  await w.write(path.join(plugins, "node_modules", "secret-plugin", "package.json"), {
    name: "secret-plugin",
    version: "1.0.0",
    type: "module",
    xcsh: {
      tools: ["./base.js"],
      features: { web: { description: "web tool", default: true, tools: ["./web.js"] } },
      settings: { apiKey: { type: "string", secret: true, description: "the service key" }, limit: { type: "number", description: "how many" } },
    },
  });
  for (const tool of ["base", "web"]) {
    await w.write(
      path.join(plugins, "node_modules", "secret-plugin", `${tool}.js`),
      `export default (api) => ({ name: "sp_${tool}", label: "${tool}", description: "fixture", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`,
    );
  }
}

async function overrides(w: HostileWorld, doc: object): Promise<string> {
  return w.write(path.join(w.cwd, ".xcsh", "plugin-overrides.json"), doc);
}

/** A local marketplace folder (outside the project) offering `hello`. */
async function folderMarketplace(w: HostileWorld, name: string): Promise<string> {
  const root = path.join(w.root, `market-${name}`);
  return writeFolderMarketplace(root, { name, tools: ["hello_tool"], entry: { version: "1.0.0", description: "Says hello" } });
}

/** Project marketplace state as a clone would ship it (never read while untrusted). */
async function projectMarketplaceState(w: HostileWorld, content: string | object = { version: 1, marketplaces: [] }): Promise<string[]> {
  return [
    await w.write(path.join(w.cwd, ".xcsh", "marketplaces.json"), content),
    await w.write(path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json"), { version: 2, plugins: { "evil@attacker": [{ scope: "project", installPath: w.victim, version: "6.6.6", installedAt: "2026-01-01T00:00:00.000Z", lastUpdated: "2026-01-01T00:00:00.000Z" }] } }),
  ];
}

function doctorCheck(report: { checks: { id: string }[] }, id: string) {
  return report.checks.find((c) => c.id === id);
}

describe("settings files of an untrusted project are never loaded", () => {
  it.each([
    ["js", ["list"]],
    ["mjs", ["config", "validate"]],
    ["cjs", ["install", "./nowhere", "--dry-run"]],
  ] as const)("xcsh-tools.config.%s in the project: `%s` never runs it, and names the file and the trust command", async (ext, args) => {
    const w = await world();
    const file = await w.write(path.join(w.cwd, `xcsh-tools.config.${ext}`), canaryConfig(w, ext));
    const r = await cli(w, [...args]);
    expect(r.stderr, describeRun(r)).toContain(`${file} is ignored`);
    expect(r.stderr).toContain(`xcsh-tools trust ${w.cwd}`);
    if (args[0] !== "install") expect(r.code, describeRun(r)).toBe(0);
    await w.assertUntouched();
  });

  it.each(["js", "mjs", "cjs"] as const)("xcsh-tools.config.%s in a folder above the project: never run by doctor (ECONFIG_UNTRUSTED_PROJECT)", async (ext) => {
    const w = await world();
    const file = await w.write(path.join(w.root, `xcsh-tools.config.${ext}`), canaryConfig(w, ext));
    const r = await cli(w, ["doctor", "--json"]);
    const report = r.json();
    expect(report.checks.find((c: { id: string }) => c.id.startsWith("settings:ECONFIG_UNTRUSTED_PROJECT")), describeRun(r)).toMatchObject({ status: "warn", message: expect.stringContaining(file), hint: expect.stringContaining(`xcsh-tools trust ${w.root}`) });
    expect(report.settings.find((s: { key: string }) => s.key === "lockWaitMs")).toMatchObject({ origin: "default" });
    await w.assertUntouched();
  });

  it("a trusted project does not trust the folder above it: a config module there is never run", async () => {
    const w = await world({ trusted: true });
    await w.write(path.join(w.root, "xcsh-tools.config.mjs"), canaryConfig(w, "mjs"));
    const r = await cli(w, ["list", "--json"]);
    expect(r.code, describeRun(r)).toBe(0);
    await w.assertUntouched();
  });

  it("cosmiconfig's meta-config (.config/config.js in the process folder) never runs, even in a trusted project", async () => {
    const w = await world({ trusted: true });
    await w.write(path.join(w.cwd, ".config", "config.js"), `require("node:child_process").execFileSync(${JSON.stringify(w.canary)}, ["meta-config"]);\nmodule.exports = {};\n`);
    const rc = await w.write(path.join(w.cwd, ".xcsh-toolsrc.json"), { lockWaitMs: 1234, $import: path.join(w.root, "imported.js") });
    await w.write(path.join(w.root, "imported.js"), `require("node:child_process").execFileSync(${JSON.stringify(w.canary)}, ["import"]);\nmodule.exports = {};\n`);
    const r = await cli(w, ["doctor", "--json"]);
    const report = r.json();
    // The project's own file still applies in a trusted project.
    expect(report.settings.find((s: { key: string }) => s.key === "lockWaitMs"), describeRun(r)).toMatchObject({ value: 1234, origin: `project:${rc}` });
    await w.assertUntouched();
  });

  it("a broken settings file of an untrusted project does not stop a command (it is not read)", async () => {
    const w = await world();
    await w.write(path.join(w.cwd, ".xcsh-toolsrc.json"), '{"lockWaitMs": ,,,');
    await w.write(path.join(w.cwd, "package.json"), '{"name": "p", "xcsh-tools": {"timeouts": "nope"}}');
    const r = await cli(w, ["list", "--json"]);
    expect(r.code, describeRun(r)).toBe(0);
    await w.assertUntouched();
  });
});

describe("secret settings never come from a project file", () => {
  it.each([
    [".xcsh-toolsrc", "allowScripts: true\n", "allowScripts"],
    ["package.json", { name: "p", "xcsh-tools": { registry: "http://127.0.0.1:9/attacker/" } }, "registry"],
  ] as const)("untrusted project, %s setting %s: ignored with the whole file", async (name, content, key) => {
    const w = await world();
    const file = await w.write(path.join(w.cwd, name), content);
    const r = await cli(w, ["doctor", "--json"]);
    const report = r.json();
    expect(report.settings.find((s: { key: string }) => s.key === key), describeRun(r)).toMatchObject({ origin: "default" });
    expect(report.checks.find((c: { id: string }) => c.id === `settings:ECONFIG_UNTRUSTED_PROJECT:${file}:`)).toMatchObject({ status: "warn" });
    await w.assertUntouched();
  });

  it.each([
    [".xcsh-toolsrc.json", { allowScripts: true, lockWaitMs: 4321 }, "allowScripts"],
    ["package.json", { name: "p", "xcsh-tools": { registry: "http://127.0.0.1:9/attacker/", lockWaitMs: 4321 } }, "registry"],
    ["xcsh-tools.config.mjs", "export default { allowScripts: true, registry: 'http://127.0.0.1:9/x/', lockWaitMs: 4321 };\n", "allowScripts"],
  ] as const)("TRUSTED project, %s setting %s: that key is ignored (ECONFIG_PROJECT_SECRET naming file and field), the rest applies; config validate and doctor report it", async (name, content, key) => {
    const w = await world({ trusted: true });
    const file = await w.write(path.join(w.cwd, name), content);
    const d = await cli(w, ["doctor", "--json"]);
    const report = d.json();
    expect(report.settings.find((s: { key: string }) => s.key === key), describeRun(d)).toMatchObject({ origin: "default" });
    expect(report.settings.find((s: { key: string }) => s.key === "lockWaitMs")).toMatchObject({ value: 4321, origin: `project:${file}` });
    expect(doctorCheck(report, `settings:ECONFIG_PROJECT_SECRET:${file}:${key}`)).toMatchObject({ status: "warn", message: expect.stringContaining(`"${key}" is ignored`) });
    const v = await cli(w, ["config", "validate", "--json"]);
    expect(v.code, describeRun(v)).toBe(0);
    expect(v.json().problems).toContainEqual(expect.objectContaining({ code: "ECONFIG_PROJECT_SECRET", source: file, key }));
    const human = await cli(w, ["list"]);
    expect(human.stderr).toContain(`${file}: "${key}" is ignored`);
    await w.assertUntouched();
  });

  it("plugin-overrides.json setting a secret plugin setting in a TRUSTED project: not applied; config validate and doctor report it", async () => {
    const w = await world({ trusted: true });
    await installSecretPlugin(w);
    const file = await overrides(w, { settings: { "secret-plugin": { apiKey: "attacker-key", limit: 7 } } });
    const get = await cli(w, ["config", "get", "secret-plugin", "apiKey", "--json"]);
    expect(get.code, describeRun(get)).toBe(1);
    expect(get.json().error.code).toBe("ESETTING_UNSET");
    const list = (await cli(w, ["config", "list", "secret-plugin", "--json"])).json();
    expect(list.settings).toEqual([expect.objectContaining({ key: "apiKey", origin: "unset" }), expect.objectContaining({ key: "limit", value: 7, origin: "project" })]);
    const v = await cli(w, ["config", "validate", "--json"]);
    expect(v.json().problems).toContainEqual(expect.objectContaining({ code: "ESECRET_IN_PROJECT", plugin: "secret-plugin", key: "apiKey", source: file }));
    expect(v.stdout).not.toContain("attacker-key");
    const d = (await cli(w, ["doctor", "--json"])).json();
    expect(doctorCheck(d, "overrides:secret-plugin:secret:apiKey")).toMatchObject({ status: "warn", message: expect.stringContaining("ESECRET_IN_PROJECT") });
    await w.assertUntouched();
  });

  it("plugin-overrides.json with a secret in an UNTRUSTED project: nothing of it applies, and config list says it was not loaded", async () => {
    const w = await world();
    await installSecretPlugin(w);
    const file = await overrides(w, { settings: { "secret-plugin": { apiKey: "attacker-key", limit: 7 } } });
    const r = await cli(w, ["config", "list", "secret-plugin", "--json"]);
    expect(r.code, describeRun(r)).toBe(0);
    const doc = r.json();
    expect(doc.settings.map((s: { origin: string }) => s.origin)).toEqual(["unset", "unset"]);
    expect(doc.projectNotLoaded).toEqual({ reason: "not loaded: project not trusted", project: w.cwd, files: [file], trust: `xcsh-tools trust ${w.cwd}` });
    await w.assertUntouched();
  });
});

describe("plugin-overrides.json of an untrusted project does not apply", () => {
  it("a project's feature list that turns on a feature the user turned off is not applied", async () => {
    const w = await world();
    await installSecretPlugin(w);
    await w.write(path.join(w.xcshHome, "plugins", "xcsh-plugins.lock.json"), { plugins: { "secret-plugin": { version: "1.0.0", enabledFeatures: [], enabled: true } } });
    await overrides(w, { features: { "secret-plugin": ["*"] } });
    const r = await cli(w, ["features", "secret-plugin", "--json"]);
    expect(r.code, describeRun(r)).toBe(0);
    expect(r.json()).toMatchObject({ origin: "user", effective: [], projectNotLoaded: { reason: "not loaded: project not trusted" } });
    await w.assertUntouched();
  });

  it("a project's disabled list does not apply either (list shows the plugin as the user has it, and why)", async () => {
    const w = await world();
    await installSecretPlugin(w);
    const file = await overrides(w, { disabled: ["secret-plugin"] });
    const r = await cli(w, ["list", "--json"]);
    expect(r.json()).toMatchObject({ plugins: [{ name: "secret-plugin", enabled: true, projectDisabled: false }], projectNotLoaded: { files: [file] } });
    const text = await cli(w, ["list"]);
    expect(text.stdout).toContain("not loaded: project not trusted");
    expect(text.stdout).toContain(`xcsh-tools trust ${w.cwd}`);
    await w.assertUntouched();
  });

  it("TRUSTED counterpart: the project's disabled list and feature list apply", async () => {
    const w = await world({ trusted: true });
    await installSecretPlugin(w);
    await overrides(w, { disabled: ["secret-plugin"], features: { "secret-plugin": [] } });
    const list = (await cli(w, ["list", "--json"])).json();
    expect(list).toMatchObject({ plugins: [{ name: "secret-plugin", enabled: false, projectDisabled: true }] });
    expect(list.projectNotLoaded).toBeUndefined();
    expect((await cli(w, ["features", "secret-plugin", "--json"])).json()).toMatchObject({ origin: "project", effective: [] });
    await w.assertUntouched();
  });
});

describe("--scope project mutations in an untrusted project are EUNTRUSTED_PROJECT, and change nothing", () => {
  const mutations: [string, string[]][] = [
    ["enable", ["enable", "secret-plugin", "--scope", "project"]],
    ["disable", ["disable", "secret-plugin", "--scope", "project"]],
    ["disable --dry-run", ["disable", "secret-plugin", "--scope", "project", "--dry-run"]],
    ["features", ["features", "secret-plugin", "--set", "web", "--scope", "project"]],
    ["config set", ["config", "set", "secret-plugin", "limit", "5", "--scope", "project"]],
    ["config delete", ["config", "delete", "secret-plugin", "limit", "--scope", "project"]],
    ["install name@mkt", ["install", "hello@acme", "--scope", "project"]],
    ["uninstall", ["uninstall", "evil@attacker", "--scope", "project"]],
    ["update", ["update", "evil@attacker", "--scope", "project"]],
    ["enable name@mkt", ["enable", "evil@attacker", "--scope", "project"]],
    ["marketplace add", ["marketplace", "add", "MARKET", "--scope", "project"]],
    ["marketplace remove", ["marketplace", "remove", "acme", "--scope", "project"]],
    ["marketplace update", ["marketplace", "update", "--scope", "project"]],
    ["marketplace import-claude", ["marketplace", "import-claude", "--scope", "project"]],
  ];
  // Each case must change nothing anywhere in its world (checked: the whole temp tree, a
  // stricter check than the project and xcsh root alone), so they share one world, set up once.
  let shared: { w: HostileWorld; market: string } | undefined;
  afterAll(async () => {
    await shared?.w.cleanup();
  });
  async function untrustedWorld(): Promise<{ w: HostileWorld; market: string }> {
    if (shared) return shared;
    const w = await makeHostileWorld();
    shared = { w, market: "" };
    await installSecretPlugin(w);
    const market = await folderMarketplace(w, "acme");
    expect((await cli(w, ["marketplace", "add", market])).code).toBe(0);
    await overrides(w, { settings: { "secret-plugin": { limit: 1 } } });
    await projectMarketplaceState(w);
    shared.market = market;
    return shared;
  }

  it.each(mutations)("%s --scope project", async (_label, args) => {
    const { w, market } = await untrustedWorld();
    const project = await snapshotTree(w.cwd);
    const home = await snapshotTree(w.xcshHome);
    const all = await snapshotTree(w.root);
    const r = await cli(w, [...args.map((a) => (a === "MARKET" ? market : a)), "--json"]);
    expect(r.code, describeRun(r)).toBe(1);
    expect(r.json().error).toMatchObject({ code: "EUNTRUSTED_PROJECT", message: expect.stringContaining(w.cwd), hint: expect.stringContaining(`xcsh-tools trust ${w.cwd}`) });
    expect(await snapshotTree(w.cwd)).toEqual(project);
    expect(await snapshotTree(w.xcshHome)).toEqual(home);
    expect(await snapshotTree(w.root)).toEqual(all);
    await w.assertUntouched();
  });

  it("TRUSTED counterpart: the same project-scope changes work", async () => {
    const w = await world({ trusted: true });
    await installSecretPlugin(w);
    const market = await folderMarketplace(w, "acme");
    for (const args of [
      ["config", "set", "secret-plugin", "limit", "5", "--scope", "project"],
      ["disable", "secret-plugin", "--scope", "project"],
      ["marketplace", "add", market, "--scope", "project"],
      ["install", "hello@acme", "--scope", "project"],
    ]) {
      const r = await cli(w, args);
      expect(r.code, `${args.join(" ")}\n${describeRun(r)}`).toBe(0);
    }
    const list = (await cli(w, ["list", "--json"])).json();
    expect(list.plugins).toMatchObject([{ name: "secret-plugin", projectDisabled: true }]);
    expect(list.marketplacePlugins).toMatchObject([{ id: "hello@acme", scope: "project" }]);
    expect((await cli(w, ["marketplace", "list", "--json"])).json().marketplaces).toMatchObject([{ name: "acme", scope: "project" }]);
    await w.assertUntouched();
  });
});

describe("reads leave an untrusted project's entries out, unread, and say so", () => {
  it("list, marketplace list and outdated: project installs and marketplaces are not loaded (a broken file there is not even read)", async () => {
    const w = await world();
    const files = await projectMarketplaceState(w, "{ this is not json");
    for (const args of [["list"], ["marketplace", "list"], ["outdated"]]) {
      const r = await cli(w, [...args, "--json"]);
      expect(r.code, `${args.join(" ")}\n${describeRun(r)}`).toBe(0);
      const doc = r.json();
      expect(doc.projectNotLoaded, args.join(" ")).toEqual({ reason: "not loaded: project not trusted", project: w.cwd, files, trust: `xcsh-tools trust ${w.cwd}` });
      expect(JSON.stringify(doc)).not.toContain("evil@attacker");
      const text = await cli(w, args);
      expect(text.code).toBe(0);
      expect(text.stdout, args.join(" ")).toContain("not loaded: project not trusted");
    }
    await w.assertUntouched();
  });

  it("a project marketplace named like the user's does not shadow it: discover and install --dry-run use the user's catalog", async () => {
    const w = await world();
    const mine = await folderMarketplace(w, "acme");
    expect((await cli(w, ["marketplace", "add", mine])).code).toBe(0);
    // The clone ships its own "acme" (registered here the way a trusted project would have it).
    const theirs = path.join(w.root, "attacker-acme");
    await w.write(path.join(theirs, catalogPath()), catalog("acme", [{ name: "hello", source: "./plugins/hello", version: "6.6.6", description: "attacker" }]));
    for (const [rel, content] of Object.entries(pluginFiles("plugins/hello", "hello", ["evil_tool"]))) await w.write(path.join(theirs, rel), content);
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    expect((await cli(w, ["marketplace", "add", theirs, "--scope", "project"])).code).toBe(0);
    await writeTrustRecord(w.xcshHome, []);
    const project = await snapshotTree(w.cwd);
    const discovered = await cli(w, ["marketplace", "discover", "acme", "--json"]);
    expect(discovered.json().plugins, describeRun(discovered)).toMatchObject([{ id: "hello@acme", version: "1.0.0", scope: "user" }]);
    const dry = await cli(w, ["install", "hello@acme", "--dry-run", "--json"]);
    expect(dry.code, describeRun(dry)).toBe(0);
    expect(dry.json().items).toMatchObject([{ op: "ADD", id: "hello@acme", scope: "user", to: { version: "1.0.0" } }]);
    expect(await snapshotTree(w.cwd)).toEqual(project);
    await w.assertUntouched();
  });

  it("doctor: the project's marketplace state and overrides are reported as not loaded, and no cache is called unreferenced", async () => {
    const w = await world();
    await projectMarketplaceState(w);
    await overrides(w, { disabled: ["x"] });
    // A cached plugin only the (unread) project could reference: doctor must not offer to delete it.
    await w.write(path.join(w.xcshHome, "plugins", "cache", "plugins", "attacker___evil___6.6.6", "plugin.json"), { name: "evil" });
    const r = await cli(w, ["doctor", "--json"]);
    const report = r.json();
    expect(doctorCheck(report, "marketplace:project"), describeRun(r)).toMatchObject({ status: "warn", message: expect.stringContaining("not loaded: project not trusted"), hint: expect.stringContaining(`xcsh-tools trust ${w.cwd}`) });
    expect(doctorCheck(report, "overrides")).toMatchObject({ status: "warn", message: expect.stringContaining("not loaded: project not trusted") });
    const before = await snapshotTree(w.xcshHome);
    const fixed = await cli(w, ["doctor", "--fix", "--json"]);
    expect(fixed.json().checks.filter((c: { fixed?: boolean }) => c.fixed === true).map((c: { id: string }) => c.id)).not.toContainEqual(expect.stringContaining("cache"));
    expect((await snapshotTree(w.xcshHome))[path.join("plugins", "cache", "plugins", "attacker___evil___6.6.6", "plugin.json")]).toEqual(before[path.join("plugins", "cache", "plugins", "attacker___evil___6.6.6", "plugin.json")]);
    await w.assertUntouched();
  });

  it("a project registry the user cannot even read (mode 000) does not fail marketplace list: it is not read", async () => {
    const w = await world();
    const [registry] = await projectMarketplaceState(w);
    await chmod(registry!, 0o000);
    try {
      const r = await cli(w, ["marketplace", "list", "--json"]);
      expect(r.code, describeRun(r)).toBe(0);
      expect(r.json().projectNotLoaded.files).toContain(registry);
    } finally {
      await chmod(registry!, 0o644);
    }
    await w.assertUntouched();
  });

  it("TRUSTED counterpart: doctor reads the project's state and overrides", async () => {
    const w = await world({ trusted: true });
    await w.write(path.join(w.cwd, ".xcsh", "marketplaces.json"), { version: 1, marketplaces: [] });
    await overrides(w, {});
    const report = (await cli(w, ["doctor", "--json"])).json();
    expect(doctorCheck(report, "marketplace:project")).toBeUndefined();
    expect(doctorCheck(report, "overrides")).toMatchObject({ status: "ok", message: expect.stringContaining("is valid") });
    await w.assertUntouched();
  });
});
