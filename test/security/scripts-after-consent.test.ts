/**
 * Issue 41, CLASS A ("consent comes before code"): install scripts. With `--allow-scripts` (or
 * settings `allowScripts`) npm's installer used to run the packages' lifecycle scripts while it
 * installed, before the user was asked about the plugin's hooks: a user who then said no had
 * already run them. Now nothing runs while npm installs; the question names every script that
 * will run (package, event, command), and only an accepted answer runs them.
 *
 * An npm plugin from the test registry declares a hook (so consent is asked for it anyway) and a
 * postinstall script, and depends on a package with its own postinstall; both scripts append to
 * a canary file. A second plugin has no hook or extension at all, only a postinstall: its script
 * alone is asked about. Install and update: without a terminal and without --yes (EUNCONFIRMED),
 * answered "n" on a terminal, and --dry-run: no canary; --yes: the canary has both lines and the
 * plugin is installed; without --allow-scripts: never. A local folder's `prepare`, which npm runs
 * while packing it (before anything could be asked, even on --dry-run), never runs.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { xcshPaths } from "../../src/core/paths.js";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { runOnPty } from "../helpers/pty.js";
import { type TmpWorld, worldPerTest, writeUserNpmrc } from "../helpers/tmp-home.js";

const SCOPE = "@scripts-ac";
const PLUGIN = `${SCOPE}/hooked`;
const BARE = `${SCOPE}/bare`;
const DEP = `${SCOPE}/dep`;

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-scripts-ac-");
let reg: RegistryHandle & { dispose(): Promise<void> };

/** A script file that appends `label` to $CANARY_FILE (the registry cannot know the world's path). */
const canaryScript = (label: string) => `require("node:fs").appendFileSync(process.env.CANARY_FILE, ${JSON.stringify(`${label}\n`)});\n`;
const TOOL = 'export default (api) => ({ name: "scripts_tool", label: "s", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n';

beforeAll(async () => {
  await buildDist();
  reg = await useGlobalRegistry();
  await reg.publish({ name: DEP, version: "1.0.0", packageJson: { scripts: { postinstall: "node dep-canary.cjs" } }, files: { "dep-canary.cjs": canaryScript("dep postinstall"), "index.js": "module.exports = 1;\n" } });
  const hooked = (version: string) =>
    reg.publish({
      name: PLUGIN,
      version,
      packageJson: { type: "module", dependencies: { [DEP]: "1.0.0" }, scripts: { postinstall: `node plugin-canary.cjs ${version}` }, xcsh: { tools: "./tools/t.js", hooks: "./hooks/guard.js" } },
      files: { "tools/t.js": TOOL, "hooks/guard.js": "export default function () {}\n", "plugin-canary.cjs": canaryScript(`plugin postinstall ${version}`) },
    });
  await hooked("1.0.0");
  await hooked("1.1.0");
  await reg.publish({ name: BARE, version: "1.0.0", packageJson: { type: "module", scripts: { postinstall: "node plugin-canary.cjs" }, xcsh: { tools: "./tools/t.js" } }, files: { "tools/t.js": TOOL, "plugin-canary.cjs": canaryScript("bare postinstall") } });
}, 240_000);
afterAll(async () => {
  await reg?.dispose();
});

const canaryFile = () => path.join(w.root, "canary");
const canary = () => (existsSync(canaryFile()) ? readFileSync(canaryFile(), "utf8") : "");
const env = () => ({ CANARY_FILE: canaryFile(), TMPDIR: w.root });
const cli = (args: string[], extra: NodeJS.ProcessEnv = {}) => runCli(args, { cwd: w.cwd, home: w.home, env: { ...env(), ...extra } });
const installed = (name: string) => existsSync(path.join(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).plugins, "node_modules", name, "package.json"));
const installedVersion = (name: string): string | undefined => (installed(name) ? (JSON.parse(readFileSync(path.join(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).plugins, "node_modules", name, "package.json"), "utf8")) as { version: string }).version : undefined);

describe("CLASS A: install scripts run only after consent", () => {
  it("install --allow-scripts without a terminal and without --yes: EUNCONFIRMED naming each script; nothing ran, nothing installed", async () => {
    await writeUserNpmrc(w.home, reg.url);
    const r = await cli(["install", `${PLUGIN}@1.0.0`, "--allow-scripts", "--json"]);
    expect(r.code, r.stderr).toBe(1);
    const error = r.json().error;
    expect(error.code).toBe("EUNCONFIRMED");
    expect(error.message).toContain(`+ script ${PLUGIN} postinstall: node plugin-canary.cjs 1.0.0`);
    expect(error.message).toContain(`+ script ${DEP} postinstall: node dep-canary.cjs`);
    expect(canary()).toBe("");
    expect(installed(PLUGIN)).toBe(false);
  });

  it('install --allow-scripts answered "n" on a terminal: the question names the scripts; none ran', async () => {
    await writeUserNpmrc(w.home, reg.url);
    const no = await runOnPty(["install", `${PLUGIN}@1.0.0`, "--allow-scripts"], w, "n", env());
    expect(no.asked, no.screen).toBe(true);
    expect(no.code, no.screen).toBe(1);
    expect(no.screen).toMatch(/EUNCONFIRMED/);
    expect(no.screen).toContain(`script ${DEP} postinstall: node dep-canary.cjs`);
    expect(canary()).toBe("");
    expect(installed(PLUGIN)).toBe(false);
  });

  it("install --dry-run --allow-scripts: no script runs; the output names the plugin's script and its command", async () => {
    await writeUserNpmrc(w.home, reg.url);
    const dry = await cli(["install", `${PLUGIN}@1.0.0`, "--allow-scripts", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`+ script ${PLUGIN} postinstall: node plugin-canary.cjs 1.0.0`);
    expect(dry.stdout).toMatch(/none ran now/);
    const json = await cli(["install", `${PLUGIN}@1.0.0`, "--allow-scripts", "--dry-run", "--json"]);
    expect(json.json().wouldRunScripts).toEqual([{ pkg: PLUGIN, event: "postinstall", command: "node plugin-canary.cjs 1.0.0" }]);
    expect(canary()).toBe("");
    expect(installed(PLUGIN)).toBe(false);
  });

  it("install --allow-scripts --yes: the plugin's and its dependency's scripts run, and it is installed", async () => {
    await writeUserNpmrc(w.home, reg.url);
    const r = await cli(["install", `${PLUGIN}@1.0.0`, "--allow-scripts", "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(canary().split("\n").filter(Boolean).sort()).toEqual(["dep postinstall", "plugin postinstall 1.0.0"]);
    expect(installed(PLUGIN)).toBe(true);
    expect((await cli(["list", "--json"])).json().plugins.find((p: { name: string }) => p.name === PLUGIN)).toMatchObject({ scripts: ["postinstall"], scriptsRan: true });
  });

  it("without --allow-scripts a script never runs, with --yes or not", async () => {
    await writeUserNpmrc(w.home, reg.url);
    const r = await cli(["install", `${PLUGIN}@1.0.0`, "--yes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/NOT run/);
    expect(installed(PLUGIN)).toBe(true);
    expect(canary()).toBe("");
  });

  it("settings allowScripts: a plugin with no hook is still asked about its script; no terminal refuses, nothing ran; --yes runs it", async () => {
    await writeUserNpmrc(w.home, reg.url);
    await mkdir(w.xcshHome, { recursive: true });
    await writeFile(path.join(w.xcshHome, "xcsh-tools.json"), JSON.stringify({ allowScripts: true }));
    const r = await cli(["install", BARE, "--json"]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json().error.code).toBe("EUNCONFIRMED");
    expect(r.json().error.message).toContain(`+ script ${BARE} postinstall: node plugin-canary.cjs`);
    expect(canary()).toBe("");
    expect(installed(BARE)).toBe(false);
    const yes = await cli(["install", BARE, "--yes"]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(canary()).toBe("bare postinstall\n");
  });

  it("install <folder> --allow-scripts: packing the folder runs no `prepare` — not on --dry-run, not unasked, not after --yes", async () => {
    const folder = path.join(w.root, "local-plugin");
    await w.write(path.join(folder, "package.json"), { name: "local-scripts", version: "1.0.0", type: "module", scripts: { prepare: "node prepare-canary.cjs" }, xcsh: { tools: "./tools/t.js", hooks: "./hooks/guard.js" } });
    await w.write(path.join(folder, "prepare-canary.cjs"), canaryScript("folder prepare"));
    await w.write(path.join(folder, "tools/t.js"), TOOL);
    await w.write(path.join(folder, "hooks/guard.js"), "export default function () {}\n");
    const dry = await cli(["install", folder, "--allow-scripts", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(canary()).toBe("");
    const refused = await cli(["install", folder, "--allow-scripts", "--json"]);
    expect(refused.json().error.code).toBe("EUNCONFIRMED");
    expect(canary()).toBe("");
    expect(installed("local-scripts")).toBe(false);
    // npm runs a folder's prepare while packing it, before anything could be asked: never, even accepted.
    const yes = await cli(["install", folder, "--allow-scripts", "--yes"]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(installed("local-scripts")).toBe(true);
    expect(canary()).toBe("");
  });

  it("update --latest --allow-scripts: --dry-run names the new version's script; no terminal and \"n\" run none of the new version's scripts and keep the old one; --yes runs them", async () => {
    await writeUserNpmrc(w.home, reg.url);
    expect((await cli(["install", `${PLUGIN}@1.0.0`, "--yes"])).code).toBe(0);
    expect(canary()).toBe("");

    const dry = await cli(["update", PLUGIN, "--latest", "--allow-scripts", "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`+ script ${PLUGIN} postinstall: node plugin-canary.cjs 1.1.0`);
    expect(canary()).toBe("");
    expect(installedVersion(PLUGIN)).toBe("1.0.0");

    const refused = await cli(["update", PLUGIN, "--latest", "--allow-scripts", "--json"]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.json().error.code).toBe("EUNCONFIRMED");
    expect(refused.json().error.message).toContain("node plugin-canary.cjs 1.1.0");
    expect(canary()).toBe("");
    expect(installedVersion(PLUGIN)).toBe("1.0.0");

    const no = await runOnPty(["update", PLUGIN, "--latest", "--allow-scripts"], w, "n", env());
    expect(no.asked, no.screen).toBe(true);
    expect(no.code, no.screen).toBe(1);
    expect(canary()).toBe("");
    expect(installedVersion(PLUGIN)).toBe("1.0.0");

    const yes = await cli(["update", PLUGIN, "--latest", "--allow-scripts", "--yes"]);
    expect(yes.code, yes.stderr).toBe(0);
    expect(canary()).toContain("plugin postinstall 1.1.0");
    expect(installedVersion(PLUGIN)).toBe("1.1.0");
    await rm(canaryFile(), { force: true });
  });
});
