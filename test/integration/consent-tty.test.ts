/**
 * The consent question on a real terminal (issue 31 point 5): the built CLI runs on a pseudo
 * terminal (util-linux `script`), the test answers the y/N question when it appears, and checks
 * what was committed. "y" installs; "n" and an empty answer (the default, No) install nothing.
 * Both engines: a marketplace plugin's hook command, and an npm plugin's hook module (whose
 * install shows a live progress display on a terminal, which must give the question the screen).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { xcshPaths } from "../../src/core/paths.js";
import { buildDist } from "../helpers/build-dist.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { runOnPty } from "../helpers/pty.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const R = "$" + "{CLAUDE_PLUGIN_ROOT}";

let w: TmpWorld;
beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-consent-tty-");
  await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
});
afterEach(async () => {
  await w.cleanup();
});

async function marketWithHook(): Promise<void> {
  const root = path.join(w.root, "market-acme");
  await w.write(path.join(root, catalogPath()), catalog("acme", [{ name: "guard", source: "./plugins/guard", version: "1.0.0" }]));
  await w.write(path.join(root, "plugins/guard/.claude-plugin/plugin.json"), { name: "guard", version: "1.0.0" });
  await w.write(path.join(root, "plugins/guard/hooks/hooks.json"), { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `python3 ${R}/scripts/check.py` }] }] } });
  await w.write(path.join(root, "plugins/guard/scripts/check.py"), "print('ok')\n");
  const add = await runCli(["marketplace", "add", root], { cwd: w.cwd, home: w.home });
  expect(add.code, add.stderr).toBe(0);
}

async function npmPluginWithHook(): Promise<string> {
  const dir = path.join(w.root, "guarded");
  await w.write(path.join(dir, "package.json"), { name: "guarded", version: "1.0.0", type: "module", xcsh: { tools: "./tools/t.js", hooks: "./hooks/guard.js" } });
  await w.write(path.join(dir, "tools/t.js"), 'export default (api) => ({ name: "guarded_tool", label: "t", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n');
  await w.write(path.join(dir, "hooks/guard.js"), "export default function () {}\n");
  return dir;
}

const marketplaceInstalled = () => existsSync(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).installedPlugins);
const npmInstalled = () => existsSync(path.join(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).plugins, "node_modules", "guarded"));

describe("consent on a terminal (built CLI on a pseudo terminal)", () => {
  it.each([
    ["y", true],
    ["n", false],
    ["", false],
  ])("marketplace plugin, answer %j: installed %s", async (answer, installs) => {
    await marketWithHook();
    const r = await runOnPty(["install", "guard@acme"], w, answer);
    expect(r.asked, r.screen).toBe(true);
    expect(r.screen).toMatch(/\+ hook PreToolUse \[Bash\]: python3 .*\/scripts\/check\.py/);
    expect(r.code, r.screen).toBe(installs ? 0 : 1);
    if (!installs) expect(r.screen).toMatch(/EUNCONFIRMED/);
    expect(marketplaceInstalled()).toBe(installs);
  });

  it.each([
    ["y", true],
    ["", false],
  ])("npm plugin with a hook module, answer %j: installed %s", async (answer, installs) => {
    const dir = await npmPluginWithHook();
    const r = await runOnPty(["install", dir], w, answer);
    expect(r.asked, r.screen).toBe(true);
    expect(r.screen).toMatch(/\+ hook guard: imported by the host: .*guarded\/hooks\/guard\.js/);
    expect(r.code, r.screen).toBe(installs ? 0 : 1);
    expect(npmInstalled()).toBe(installs);
  });
});
