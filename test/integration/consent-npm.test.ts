/**
 * Consent for npm plugins (issue 31 point 5): an install or update whose plugin adds or changes
 * hook or extension modules (which the host imports and calls on its own) lists them with their
 * paths before anything is committed, refuses without a terminal and without --yes
 * (EUNCONFIRMED, nothing written), and accepts with --yes. A plugin that brings only tools is
 * installed without a question. Plugins come from local folders: no registry is needed.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { xcshPaths } from "../../src/core/paths.js";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const TOOL = 'export default (api) => ({ name: "guarded_tool", label: "t", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n';

let w: TmpWorld;
beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-consent-npm-", { trustProject: true });
  // No registry is reachable: every plugin comes from a folder and has no dependencies.
  await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
});
afterEach(async () => {
  await w.cleanup();
});

/** A plugin folder `name` at `version` whose manifest is `xcsh` plus a tool. */
async function plugin(name: string, version: string, xcsh: Record<string, unknown>): Promise<string> {
  const dir = path.join(w.root, `src-${name}-${version}`);
  await w.write(path.join(dir, "package.json"), { name, version, type: "module", xcsh: { tools: "./tools/t.js", ...xcsh } });
  await w.write(path.join(dir, "tools/t.js"), TOOL);
  for (const file of ["hooks/guard.js", "ext/watch.js", "ext/more.js"]) await w.write(path.join(dir, file), "export default function () {}\n");
  return dir;
}

function installed(name: string): boolean {
  return existsSync(path.join(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).plugins, "node_modules", name));
}

describe("npm plugin consent (built CLI)", () => {
  it("hooks and extensions: EUNCONFIRMED without a terminal, listing the modules; nothing written; --yes installs", async () => {
    const dir = await plugin("guarded", "1.0.0", { hooks: "./hooks/guard.js", extensions: ["./ext/watch.js"] });
    const refused = await runCli(["install", dir, "--json"], { cwd: w.cwd, home: w.home });
    expect(refused.code, refused.stderr).toBe(1);
    const error = refused.json().error;
    expect(error.code).toBe("EUNCONFIRMED");
    const live = path.join(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).plugins, "node_modules", "guarded");
    expect(error.message).toContain(`+ hook guard: imported by the host: ${path.join(live, "hooks/guard.js")}`);
    expect(error.message).toContain(`+ extension watch: imported by the host: ${path.join(live, "ext/watch.js")}`);
    expect(installed("guarded")).toBe(false);
    expect(existsSync(path.join(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).plugins, "package.json"))).toBe(false);

    const accepted = await runCli(["install", dir, "--yes"], { cwd: w.cwd, home: w.home });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(accepted.stderr).toMatch(/guarded 1\.0\.0 has the host run code on your machine:\n\s+\+ hook guard: /);
    expect(installed("guarded")).toBe(true);
  });

  it("a plugin that brings only tools installs without a question", async () => {
    const dir = await plugin("toolsonly", "1.0.0", {});
    const r = await runCli(["install", dir], { cwd: w.cwd, home: w.home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/host run code|EUNCONFIRMED/);
    expect(installed("toolsonly")).toBe(true);
  });

  it("an update is asked only about what changed since the installed version; removals alone are shown, not asked", async () => {
    const v1 = await plugin("guarded", "1.0.0", { hooks: "./hooks/guard.js", extensions: ["./ext/watch.js"] });
    expect((await runCli(["install", v1, "--yes"], { cwd: w.cwd, home: w.home })).code).toBe(0);

    const v2 = await plugin("guarded", "1.1.0", { hooks: "./hooks/guard.js", extensions: ["./ext/watch.js", "./ext/more.js"] });
    const refused = await runCli(["install", v2, "--json"], { cwd: w.cwd, home: w.home });
    expect(refused.code, refused.stderr).toBe(1);
    const message: string = refused.json().error.message;
    expect(message).toMatch(/guarded 1\.1\.0 \(update\) adds or changes/);
    expect(message).toContain("+ extension more:");
    expect(message).not.toContain("hook guard");
    expect(message).not.toContain("extension watch");
    expect(refused.json().error.code).toBe("EUNCONFIRMED");

    const v3 = await plugin("guarded", "1.2.0", { hooks: "./hooks/guard.js" });
    const removed = await runCli(["install", v3], { cwd: w.cwd, home: w.home });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stderr).toMatch(/guarded 1\.2\.0 \(update\) no longer runs:\n\s+- extension watch: /);
    const list = await runCli(["list", "--json"], { cwd: w.cwd, home: w.home });
    expect(JSON.stringify(list.json())).toContain("1.2.0");
  });
});
