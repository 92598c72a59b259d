/**
 * `list`, `show`, `doctor` and `listInstalledComponents` say the same about one world of mixed
 * components: a full xcsh marketplace plugin, one with manifest paths (project scope), a broken
 * one, a Claude Code cache plugin and an npm plugin — whether the answer comes from the boot
 * index or from a scan.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { listInstalledComponents } from "../../src/index.js";
import { claudeInventory, countByKind, formatTokens, summarizeComponents } from "../../src/components/summary.js";
import { xcshPaths } from "../../src/core/paths.js";
import { buildDist } from "../helpers/build-dist.js";
import { writeBrokenPlugin, writeFullPlugin, writeManifestPathsPlugin } from "../helpers/component-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

beforeAll(async () => {
  await buildDist();
}, 180_000);

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-components-agree-", { trustProject: true });

function mixedWorld(): void {
  const cache = path.join(w.xcshHome, "plugins", "cache", "plugins");
  const user: Record<string, unknown[]> = {};
  for (const [name, write] of [
    ["kitchen-sink", (r: string) => writeFullPlugin(r)],
    ["broken", (r: string) => writeBrokenPlugin(r, path.join(w.root, "outside-skills"))],
  ] as const) {
    const root = path.join(cache, `mkt___${name}___1.0.0`);
    write(root);
    user[`${name}@mkt`] = [{ scope: "user", installPath: root, version: "1.0.0" }];
  }
  writeFileSync(path.join(w.xcshHome, "plugins", "installed_plugins.json"), JSON.stringify({ version: 2, plugins: user }));
  const projectRoot = path.join(cache, "mkt___custom-paths___1.0.0");
  writeManifestPathsPlugin(projectRoot);
  mkdirSync(path.join(w.cwd, ".xcsh", "plugins"), { recursive: true });
  writeFileSync(path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json"), JSON.stringify({ version: 2, plugins: { "custom-paths@mkt": [{ scope: "project", installPath: projectRoot, version: "1.0.0" }] } }));

  const claude = path.join(w.home, ".claude", "plugins", "cache", "cmkt", "claude-only", "2.0.0");
  mkdirSync(path.join(claude, "skills", "only"), { recursive: true });
  writeFileSync(path.join(claude, "skills", "only", "SKILL.md"), "---\ndescription: a Claude-only skill\n---\nbody\n");
  writeFileSync(path.join(w.home, ".claude", "plugins", "installed_plugins.json"), JSON.stringify({ version: 2, plugins: { "claude-only@cmkt": [{ scope: "user", installPath: claude, version: "2.0.0" }] } }));

  const plugins = path.join(w.xcshHome, "plugins");
  const npm = path.join(plugins, "node_modules", "deploy-kit");
  mkdirSync(path.join(npm, "commands"), { recursive: true });
  writeFileSync(path.join(npm, "commands", "deploy.md"), "---\ndescription: Deploy it\n---\nSteps.\n");
  writeFileSync(path.join(npm, "hook.js"), "export default () => {};\n");
  writeFileSync(path.join(npm, "package.json"), JSON.stringify({ name: "deploy-kit", version: "0.3.0", xcsh: { commands: ["./commands/deploy.md"], hooks: ["./hook.js"] } }));
  writeFileSync(path.join(plugins, "package.json"), JSON.stringify({ name: "xcsh-plugins", private: true, dependencies: { "deploy-kit": "0.3.0" } }));
}

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe("list, show, doctor and the library agree", () => {
  it("on every plugin's components, counts and context cost, from the index and from a scan", { timeout: 180_000 }, async () => {
    mixedWorld();
    const options = { cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: {} };
    const library = await listInstalledComponents(options);
    expect(library.index.written).toBe(true);
    expect(library.plugins.map((p) => p.id).sort()).toEqual(["broken@mkt", "claude-only@cmkt", "custom-paths@mkt", "deploy-kit", "kitchen-sink@mkt"]);
    expect(library.plugins.find((p) => p.id === "broken@mkt")!.errors.length).toBeGreaterThan(0);
    // The index answers what a scan answers.
    expect((await listInstalledComponents(options)).index.fresh).toBe(true);
    const scanned = await listInstalledComponents({ ...options, write: false });
    expect(scanned.plugins).toEqual(library.plugins);
    const byId = new Map(library.plugins.map((p) => [p.id, plain(p)]));

    // show: every component of each plugin, as the library has it (from the index, then from a scan).
    for (const fromIndex of [true, false]) {
      if (!fromIndex) rmSync(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootComponents, { force: true });
      // From a scan, two plugins are enough: the index was just shown to equal a scan.
      for (const id of fromIndex ? byId.keys() : ["kitchen-sink@mkt", "broken@mkt"]) {
        const shown = await runCli(["show", id, "--json"], { cwd: w.cwd, home: w.home });
        expect(shown.code, shown.stderr).toBe(0);
        const [p] = shown.json().plugins;
        expect(p.summary).toBe(summarizeComponents(byId.get(id)!.components));
        delete p.summary;
        expect(p.inventory).toEqual(claudeInventory(byId.get(id)!.components));
        delete p.inventory;
        expect(p, `show ${id} (${fromIndex ? "index" : "scan"})`).toEqual(byId.get(id));
      }
    }

    // list: the summary, counts and tokens of every npm and marketplace plugin.
    const listed = await runCli(["list", "--json"], { cwd: w.cwd, home: w.home });
    expect(listed.code, listed.stderr).toBe(0);
    const doc = listed.json();
    const rows: { id: string; components: any }[] = [...doc.plugins.map((p: any) => ({ id: p.name, components: p.components })), ...doc.marketplacePlugins.map((p: any) => ({ id: p.id, components: p.components }))];
    expect(rows.map((r) => r.id).sort()).toEqual(["broken@mkt", "custom-paths@mkt", "deploy-kit", "kitchen-sink@mkt"]);
    for (const row of rows) {
      const p = byId.get(row.id)!;
      expect(row.components, `list ${row.id}`).toEqual({ summary: summarizeComponents(p.components), counts: countByKind(p.components), tokens: p.cost });
    }
    const counted = library.plugins.filter((p) => !p.problem && p.rootKind !== "claude-cache");
    expect(doc.contextTokens).toEqual({ alwaysOn: counted.reduce((n, p) => n + p.cost.alwaysOn, 0), alwaysOnForXcsh: counted.reduce((n, p) => n + p.cost.alwaysOnForXcsh, 0) });

    // doctor: the skill/command/agent listings xcsh loads, and their tokens.
    const doctor = await runCli(["doctor", "--json"], { cwd: w.cwd, home: w.home });
    const context = doctor.json().checks.find((c: any) => c.id === "components:context");
    const listings = library.plugins.flatMap((p) => (p.enabled ? p.components.filter((c) => c.loadedByXcsh && c.kind !== "tool") : []));
    expect(listings.length).toBeGreaterThan(0);
    const tokens = listings.reduce((n, c) => n + (c.cost.alwaysOn ?? 0), 0);
    expect(context.message).toContain(`${listings.length} skill/command/agent listing${listings.length === 1 ? "" : "s"} ${formatTokens(tokens)}`);
  });
});
