/**
 * Output a person can read: a catalog of many plugins is summarised (a count and the first few
 * names; `--json` has them all), `marketplace update` of an unchanged catalog says "unchanged",
 * a plan's reasons start in one column, and progress lines name plugins, never the journal's
 * internal paths.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/runtimes.js";
import { runCli } from "../helpers/run-cli.js";
import { catalog, catalogPath, pluginFiles } from "../helpers/marketplace-fixtures.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
beforeAll(async () => {
  w = await makeTmpWorld("xcsh-tools-output-", { trustProject: true });
});
afterAll(async () => {
  await w.cleanup();
});

const cli = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home, timeoutMs: 120_000 });

describe("marketplace output", () => {
  it("add of a 20,000-plugin catalog prints a count and five names; --json lists them all", async () => {
    const root = path.join(w.root, "big-market");
    const plugins = Array.from({ length: 20_000 }, (_, i) => ({ name: `plugin-${String(i).padStart(5, "0")}`, source: "./plugins/one", version: "1.0.0" }));
    await w.write(path.join(root, catalogPath()), catalog("big", plugins));
    for (const [rel, content] of Object.entries(pluginFiles("plugins/one", "one", ["one_tool"]))) await w.write(path.join(root, rel), content);
    const dry = await cli(["marketplace", "add", root, "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json().plugins).toHaveLength(20_000);
    const human = await cli(["marketplace", "add", root]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("with 20000 plugins: plugin-00000, plugin-00001, plugin-00002, plugin-00003, plugin-00004 and 19995 more");
    expect(human.stdout).not.toContain("plugin-00005");
    expect(human.stdout.length).toBeLessThan(1000);
  });

  it("update of an unchanged catalog says unchanged, not CHANGE", async () => {
    const r = await cli(["marketplace", "update", "big"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^= NOOP {3}big \(user\) {2}unchanged$/m);
    expect(r.stdout).not.toContain("CHANGE");
  });
});

describe("plans and progress", () => {
  it("a plan's reasons start in one column; progress names the plugins, not journal paths", async () => {
    const root = path.join(w.root, "two-market");
    await w.write(path.join(root, catalogPath()), catalog("two", [
      { name: "a", source: "./plugins/a", version: "1.0.0" },
      { name: "a-much-longer-name", source: "./plugins/b", version: "1.0.0" },
    ]));
    for (const [rel, content] of Object.entries({ ...pluginFiles("plugins/a", "a", ["a_tool"]), ...pluginFiles("plugins/b", "a-much-longer-name", ["b_tool"]) })) await w.write(path.join(root, rel), content);
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const plan = await cli(["install", "a@two", "a-much-longer-name@two", "--dry-run"]);
    expect(plan.code, plan.stderr).toBe(0);
    const lines = plan.stdout.split("\n").filter((l) => l.startsWith("+ ADD"));
    expect(lines).toHaveLength(2);
    const columns = lines.map((l) => l.indexOf("install 1.0.0"));
    expect(columns[0], plan.stdout).toBe(columns[1]);

    // An npm install from a folder: arborist gets a packed tarball in the journal; the progress line names the plugin.
    const example = path.join(REPO_ROOT, "examples", "xcsh-search");
    const install = await cli(["install", example]);
    expect(install.code, install.stderr).toBe(0);
    expect(install.stderr).toContain("Installing with npm's installer (@example/xcsh-search)");
    expect(install.stderr + install.stdout).not.toMatch(/journal|\.tgz/);
  });
});
