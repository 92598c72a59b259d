/**
 * Issue 41: consent means nothing has run yet, and a checked plugin's packages come only from its
 * own folders.
 *
 * CLASS A — no code of a plugin runs before the user agreed, none on --dry-run. A marketplace
 * plugin and an npm plugin (from the test registry) each declare a hook (so consent is asked) and
 * a tool whose module writes a canary file the moment it is imported. Install and update, each
 * with --dry-run, without a terminal and without --yes (EUNCONFIRMED), and answered "n" on a
 * terminal: the canary never appears; with --yes it does (validation really imports the tool).
 * The refusal's hint names no command that would import the refused plugin.
 *
 * CLASS B — module resolution never reaches above the folders being checked. Packages that write
 * a canary (an unlisted dependency, fake `xcsh-tools`, `@sinclair/typebox` and host package
 * `@f5-sales-demo/xcsh`) are planted in a TMPDIR of the test's own and in the folder above the
 * user's home and the checked plugin: marketplace install validation, npm install validation and
 * `validate <folder>` of a marketplace plugin (.mjs through Node's loader, .ts through jiti) never
 * load them, and the unlisted import fails as EIMPORT_OUTSIDE naming the import and the file.
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { xcshPaths } from "../../src/core/paths.js";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";
import { runOnPty } from "../helpers/pty.js";
import { type TmpWorld, worldPerTest, writeUserNpmrc } from "../helpers/tmp-home.js";

const R = "$" + "{CLAUDE_PLUGIN_ROOT}";
const SCOPE = "@consent-b4";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-consent-b4-");
// Each run's TMPDIR, a folder of the test's own (CLASS B plants packages in it).
beforeEach(async () => {
  await mkdir(path.join(w.root, "tmp"), { recursive: true });
});
let reg: RegistryHandle & { dispose(): Promise<void> };

/** Module text that appends `label` to the canary file when imported. */
const canaryLine = (label: string) => `import { appendFileSync as __canary } from "node:fs";\n__canary(${JSON.stringify(canaryFile())}, ${JSON.stringify(`${label}\n`)});\n`;
const canaryFile = () => path.join(w.root, "canary");
const ran = () => existsSync(canaryFile());

/** A tool module that runs the canary at import, then exports a valid factory. */
const canaryTool = (imports = "") => `${canaryLine("tool")}${imports}export default (api) => ({ name: "canary_tool", label: "c", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`;

/** The refusal's hint must not send the user to a command that imports the plugin (validate without --static, install/update again). */
function expectSafeHint(text: string): void {
  expect(text).not.toMatch(/xcsh-tools validate (?!--static)/);
  expect(text).toMatch(/validate --static/);
}

beforeAll(async () => {
  await buildDist();
  reg = await useGlobalRegistry();
  const npmPlugin = (version: string, xcsh: Record<string, unknown>, files: Record<string, string> = {}) =>
    reg.publish({
      name: `${SCOPE}/canary`,
      version,
      packageJson: { type: "module", xcsh: { tools: "./tools/t.js", hooks: "./hooks/guard.js", ...xcsh } },
      // The canary's path is not known yet: the tool reads it from the environment of the run.
      files: { "tools/t.js": ENV_CANARY_TOOL, "hooks/guard.js": "export default function () {}\n", "ext/more.js": "export default function () {}\n", ...files },
    });
  await npmPlugin("1.0.0", {});
  await npmPlugin("1.1.0", { extensions: ["./ext/more.js"] });
  await reg.publish({ name: `${SCOPE}/outside`, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./tools/t.js" } }, files: { "tools/t.js": OUTSIDE_TOOL } });
}, 240_000);
afterAll(async () => {
  await reg?.dispose();
});

/** A registry tool cannot know the world's path: it writes to $CANARY_FILE, which each run sets. */
const ENV_CANARY_TOOL = 'import { appendFileSync } from "node:fs";\nappendFileSync(process.env.CANARY_FILE, "tool\\n");\nexport default (api) => ({ name: "canary_tool", label: "c", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n';
/** A registry tool that imports a package it does not depend on. */
const OUTSIDE_TOOL = 'import planted from "planted-dep";\nexport default (api) => ({ name: "outside_tool", label: "o", description: String(planted), parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n';

const env = () => ({ CANARY_FILE: canaryFile(), TMPDIR: path.join(w.root, "tmp") });
const cli = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home, env: env() });

/** Marketplace `acme` with plugin `canary` at `version`: a hook running `hookScript`, a canary tool. */
async function market(version: string, hookScript: string, toolText = canaryTool()): Promise<string> {
  const root = path.join(w.root, "market-acme");
  await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "canary", source: "./plugins/canary", version }]));
  await w.write(path.join(root, "plugins/canary/.claude-plugin/plugin.json"), { name: "canary", version });
  await w.write(path.join(root, "plugins/canary/hooks/hooks.json"), { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `python3 ${R}/scripts/${hookScript}` }] }] } });
  await w.write(path.join(root, `plugins/canary/scripts/${hookScript}`), "print('ok')\n");
  await w.write(path.join(root, "plugins/canary/tools/canary.mjs"), toolText);
  return root;
}

async function addMarket(version = "1.0.0", hookScript = "check.py", toolText?: string): Promise<void> {
  const root = await market(version, hookScript, toolText);
  const added = await cli(["marketplace", "add", root]);
  expect(added.code, added.stderr).toBe(0);
}

const marketplaceInstalled = () => existsSync(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).installedPlugins);
const npmInstalled = () => existsSync(path.join(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).plugins, "node_modules", SCOPE, "canary"));

describe("CLASS A: a marketplace plugin's tool is not imported before consent", () => {
  it("install --dry-run imports nothing and says the tool modules were not imported", async () => {
    await addMarket();
    const r = await cli(["install", "canary@acme", "--dry-run"]);
    expect(r.code, r.stderr).toBe(0);
    expect(ran()).toBe(false);
    expect(r.stdout + r.stderr).toMatch(/WNOT_IMPORTED 1 tool module\(s\) not imported/);
    expect(marketplaceInstalled()).toBe(false);
  });

  it("install without a terminal and without --yes: EUNCONFIRMED, the tool never imported", async () => {
    await addMarket();
    const r = await cli(["install", "canary@acme", "--json"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json().error.code).toBe("EUNCONFIRMED");
    expect(ran()).toBe(false);
    expect(marketplaceInstalled()).toBe(false);
  });

  it('install answered "n" on a terminal: the tool never imported; the hint names no command that imports it', async () => {
    await addMarket();
    const r = await runOnPty(["install", "canary@acme"], w, "n", env());
    expect(r.asked, r.screen).toBe(true);
    expect(r.code, r.screen).toBe(1);
    expect(ran()).toBe(false);
    expect(r.screen).toMatch(/EUNCONFIRMED/);
    expectSafeHint(r.screen);
    expect(marketplaceInstalled()).toBe(false);
  });

  it("a plugin that fails the static checks is refused before the question, without running its tool; the hint stays static", async () => {
    const root = await market("1.0.0", "check.py");
    await w.write(path.join(root, "plugins/canary/.claude-plugin/plugin.json"), { name: "canary", version: "1.0.0", skills: "../../outside" });
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const r = await cli(["install", "canary@acme", "--yes", "--json"]);
    expect(r.code, r.stderr).toBe(2);
    expect(ran()).toBe(false);
    const error = r.json().error;
    expect(error.code).toBe("EPLUGIN_INVALID");
    expectSafeHint(error.hint);
  });

  it("install --yes imports the tool to validate it (the canary runs), after the question", async () => {
    await addMarket();
    const r = await cli(["install", "canary@acme", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(ran()).toBe(true);
    expect(marketplaceInstalled()).toBe(true);
  });

  it("update (a changed hook): --dry-run, no terminal, and \"n\" never import the new tool; --yes does", async () => {
    await addMarket("1.0.0", "check.py", canaryTool().replace(canaryLine("tool"), ""));
    expect((await cli(["install", "canary@acme", "--yes"])).code).toBe(0);
    expect(ran()).toBe(false);
    await market("1.1.0", "check2.py");
    expect((await cli(["marketplace", "update", "acme"])).code).toBe(0);

    const dry = await cli(["update", "canary@acme", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(ran()).toBe(false);
    expect(dry.stdout + dry.stderr).toMatch(/WNOT_IMPORTED/);

    const refused = await cli(["update", "canary@acme", "--json"]);
    expect(JSON.stringify(refused.json()), refused.stderr).toMatch(/EUNCONFIRMED/);
    expect(ran()).toBe(false);

    const no = await runOnPty(["update", "canary@acme"], w, "n", env());
    expect(no.asked, no.screen).toBe(true);
    expect(ran()).toBe(false);
    expect(no.screen).toMatch(/EUNCONFIRMED/);
    expectSafeHint(no.screen);

    const yes = await cli(["update", "canary@acme", "--yes"]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(ran()).toBe(true);
  });
});

describe("CLASS A: an npm plugin's tool is not imported before consent", () => {
  const spec = `${SCOPE}/canary@1.0.0`;
  const npmrc = () => writeUserNpmrc(w.home, reg.url);

  it("install --dry-run, without a terminal, and answered \"n\": the tool never imported; --yes imports it", async () => {
    await npmrc();
    const dry = await cli(["install", spec, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(ran()).toBe(false);
    expect(dry.stdout).toMatch(/No plugin code ran: tool modules are imported and checked only by the real run/);

    const refused = await cli(["install", spec, "--json"]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.json().error.code).toBe("EUNCONFIRMED");
    expect(ran()).toBe(false);

    const no = await runOnPty(["install", spec], w, "n", env());
    expect(no.asked, no.screen).toBe(true);
    expect(no.code, no.screen).toBe(1);
    expectSafeHint(no.screen);
    expect(ran()).toBe(false);
    expect(npmInstalled()).toBe(false);

    const yes = await cli(["install", spec, "--yes"]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(ran()).toBe(true);
    expect(npmInstalled()).toBe(true);
  });

  it("update to a version with a new extension: --dry-run, no terminal, \"n\" never import it; --yes does", async () => {
    await npmrc();
    expect((await cli(["install", spec, "--yes"])).code).toBe(0);
    const { rm } = await import("node:fs/promises");
    await rm(canaryFile(), { force: true });
    const next = `${SCOPE}/canary@1.1.0`;

    expect((await cli(["install", next, "--dry-run"])).code).toBe(0);
    expect(ran()).toBe(false);

    const refused = await cli(["install", next, "--json"]);
    expect(refused.json().error.code).toBe("EUNCONFIRMED");
    expect(refused.json().error.message).toMatch(/\(update\)/);
    expect(ran()).toBe(false);

    const no = await runOnPty(["install", next], w, "n", env());
    expect(no.asked, no.screen).toBe(true);
    expectSafeHint(no.screen);
    expect(ran()).toBe(false);

    const yes = await cli(["install", next, "--yes"]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(ran()).toBe(true);
  });
});

/** Plant canary packages in `<dir>/node_modules`: an unlisted dependency, fake xcsh-tools, TypeBox and host package. */
async function plant(dir: string): Promise<void> {
  for (const name of ["planted-dep", "xcsh-tools", "@sinclair/typebox", "@f5-sales-demo/xcsh"]) {
    const pkg = path.join(dir, "node_modules", name);
    await w.write(path.join(pkg, "package.json"), { name, version: "9.9.9", type: "module", main: "index.js", exports: { ".": { import: "./index.js", require: "./index.cjs" } } });
    await w.write(path.join(pkg, "index.js"), `${canaryLine(`planted ${name}`)}export default "planted";\nexport const Type = {};\n`);
    await w.write(path.join(pkg, "index.cjs"), `require("node:fs").appendFileSync(${JSON.stringify(canaryFile())}, ${JSON.stringify(`planted ${name}\n`)});\nmodule.exports = { default: "planted" };\n`);
  }
}

/** Everywhere a shared folder could sit above what is checked: the run's TMPDIR and the folder above home, project and plugin. */
async function plantEverywhere(): Promise<void> {
  await plant(path.join(w.root, "tmp"));
  await plant(w.root);
}

const IMPORTS = 'import planted from "planted-dep";\nimport * as own from "xcsh-tools";\nimport { Type } from "@sinclair/typebox";\nvoid own; void Type; void planted;\n';

/** `validate <folder>` of a plugin whose `file` imports the planted packages: EIMPORT_OUTSIDE, nothing planted loaded. */
async function validatePlanted(file: string, runtime?: string): Promise<void> {
  await plantEverywhere();
  const plugin = path.join(w.root, "checkout", `plugin-${path.extname(file).slice(1)}`);
  await w.write(path.join(plugin, ".claude-plugin/plugin.json"), { name: "plugin", version: "1.0.0" });
  const param = file.endsWith(".ts") ? "(api: any)" : "(api)";
  await w.write(path.join(plugin, file), `${IMPORTS}export default ${param} => ({ name: "t_tool", label: "t", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`);
  const r = await runCli(["validate", plugin, "--json"], { cwd: w.cwd, home: w.home, env: env(), ...(runtime ? { runtime } : {}) });
  expect(r.code, r.stderr).not.toBe(0);
  const errors = r.json().errors as { code: string; file: string; message: string }[];
  expect(errors.map((e) => e.code)).toEqual(["EIMPORT_OUTSIDE"]);
  expect(errors[0]!.file).toBe(path.join(plugin, file));
  expect(errors[0]!.message).toContain('"planted-dep"');
  expect(ran()).toBe(false);
}

// The other runtimes the host and the CLI run on: Node 22/24 (the in-thread resolve hook, type stripping) and Bun (its load hook).
describe.each(runtimes().filter((r) => r.id !== "node"))("CLASS B on $label", (runtime) => {
  runtimeIt(runtime)(`validate <folder>: .mjs and .ts tools never load the planted packages${skipNote(runtime)}`, async () => {
    await validatePlanted("tools/t.mjs", requireRuntime(runtime));
    await validatePlanted("tools/t.ts", requireRuntime(runtime));
  });
});

describe("CLASS B: a checked plugin's packages never come from the folders above it", () => {
  it("marketplace install: the planted packages are never loaded; the unlisted import is EIMPORT_OUTSIDE, naming it", async () => {
    await plantEverywhere();
    const root = path.join(w.root, "market-acme");
    await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "lonely", source: "./plugins/lonely", version: "1.0.0" }]));
    await w.write(path.join(root, "plugins/lonely/.claude-plugin/plugin.json"), { name: "lonely", version: "1.0.0" });
    await w.write(path.join(root, "plugins/lonely/tools/lonely.mjs"), `${IMPORTS}export default (api) => ({ name: "lonely_tool", label: "l", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`);
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const r = await cli(["install", "lonely@acme", "--json"]);
    expect(r.code, r.stderr).toBe(2);
    const error = r.json().error;
    expect(error.code).toBe("EPLUGIN_INVALID");
    expect(error.message).toMatch(/tools\/lonely\.mjs: EIMPORT_OUTSIDE/);
    expect(error.message).toContain('"planted-dep" imported by');
    expect(ran()).toBe(false);
    expect(marketplaceInstalled()).toBe(false);
  });

  it("npm install: the planted packages are never loaded; the unlisted import is EIMPORT_OUTSIDE", async () => {
    await plantEverywhere();
    await writeUserNpmrc(w.home, reg.url);
    const r = await cli(["install", `${SCOPE}/outside@1.0.0`, "--json"]);
    expect(r.code, r.stderr).not.toBe(0);
    const error = r.json().error;
    expect(error.code).toBe("EVALIDATE");
    expect(error.message).toMatch(/EIMPORT_OUTSIDE tools\/t\.js: EIMPORT_OUTSIDE: "planted-dep" imported by .*tools\/t\.js/);
    expect(ran()).toBe(false);
  });

  it.each([
    ["an .mjs tool (Node's loader)", "tools/t.mjs"],
    ["a .ts tool (jiti)", "tools/t.ts"],
  ])("validate <folder> of a marketplace plugin, %s: the planted packages are never loaded", async (_title, file) => {
    await validatePlanted(file);
  });

  it("validate <folder>: the plugin's own dependencies still resolve, and only those", async () => {
    await plantEverywhere();
    const plugin = path.join(w.root, "checkout/plugin");
    await w.write(path.join(plugin, ".claude-plugin/plugin.json"), { name: "plugin", version: "1.0.0" });
    await w.write(path.join(plugin, "node_modules/planted-dep/package.json"), { name: "planted-dep", version: "1.0.0", type: "module", main: "index.js" });
    await w.write(path.join(plugin, "node_modules/planted-dep/index.js"), 'export default "own";\n');
    await w.write(path.join(plugin, "tools/t.mjs"), `${IMPORTS}export default (api) => ({ name: "t_tool", label: "t", description: planted, parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`);
    const r = await cli(["validate", plugin, "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(ran()).toBe(false);
  });
});
