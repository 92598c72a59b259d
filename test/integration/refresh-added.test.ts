/**
 * The refresh after a change that adds a plugin folder (`link`, an install), issue 44: the
 * mutation names the folder (Mutation.added) and the refresh stats what is in it before its scan
 * (boot/views.ts `addedInputs`), so the new plugin's inputs, none of which the previous view had,
 * do not cost a second scan when nothing moved while the scan read them. Each hostile case is a
 * way that shortcut could store an answer the disk no longer gives: the new plugin's tool file,
 * manifest or tools folder changed while the scan read them, the link pointed elsewhere, an input
 * outside what was stat'ed (below the plugin's own node_modules, past the walk's bound, outside
 * the added folder). In each, the index left is what a scan of the disk gives. Real discovery,
 * counted; the change happens after a scan has read the disk and before its fingerprints.
 */
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { expectIndexAsAScanLeavesIt, jsTool } from "./discovery-fixtures.js";

const scans = vi.hoisted(() => ({ calls: 0, during: undefined as undefined | ((call: number) => Promise<void>) }));
vi.mock("../../src/discovery/index.js", async (original) => {
  const real = await original<typeof import("../../src/discovery/index.js")>();
  return {
    ...real,
    discoverToolPaths: async (...args: Parameters<typeof real.discoverToolPaths>) => {
      scans.calls++;
      const answer = await real.discoverToolPaths(...args);
      await scans.during?.(scans.calls);
      return answer;
    },
  };
});
const { checkBootIndex, refreshBootIndex } = await import("../../src/boot/index.js");
const { xcshPaths } = await import("../../src/core/paths.js");

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-refresh-added-");

const opts = () => ({ home: w.home, xcshHome: w.xcshHome, env: {}, cwd: w.cwd, validate: false });
const plugins = () => path.join(w.xcshHome, "plugins");
const nodeModules = () => path.join(plugins(), "node_modules");
/** Where the linked plugin lives (the user's folder) and where the link puts it. */
const linkedFolder = () => path.join(w.root, "dev", "npm-c");
const linkPath = () => path.join(nodeModules(), "npm-c");

const lock = (names: string[]) => ({ plugins: Object.fromEntries(names.map((name) => [name, { version: "1.0.0", enabledFeatures: null, enabled: true }])), settings: {} });

/** Two npm plugins, the index refreshed once (the previous view). */
async function installed(): Promise<void> {
  await w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-a": "^1.0.0", "npm-b": "^1.0.0" } });
  for (const name of ["npm-a", "npm-b"]) {
    await w.write(path.join(nodeModules(), name, "package.json"), { name, version: "1.0.0", xcsh: { tools: "./tools/index.js" } });
    await w.write(path.join(nodeModules(), name, "tools", "index.js"), jsTool(name.replace("-", "_")));
  }
  await w.write(path.join(plugins(), "xcsh-plugins.lock.json"), lock(["npm-a", "npm-b"]));
  await refreshBootIndex(opts());
}

/** What `link` commits: the folder, the link to it, its dependency and lock entry. */
async function linked(manifest: object = { tools: "./tools/index.js" }): Promise<void> {
  await w.write(path.join(linkedFolder(), "package.json"), { name: "npm-c", version: "1.0.0", xcsh: manifest });
  await w.write(path.join(linkedFolder(), "tools", "index.js"), jsTool("npm_c"));
  await symlink(path.relative(nodeModules(), linkedFolder()), linkPath());
  await w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-a": "^1.0.0", "npm-b": "^1.0.0", "npm-c": `file:${linkedFolder()}` } });
  await w.write(path.join(plugins(), "xcsh-plugins.lock.json"), lock(["npm-a", "npm-b", "npm-c"]));
}

/** The refresh after the link, with the added folder named (or not): how many scans it took. */
async function refreshAdded(added: string[] = [linkPath()]): Promise<number> {
  scans.calls = 0;
  await refreshBootIndex({ ...opts(), added });
  scans.during = undefined;
  return scans.calls;
}

/** After the refresh: a full one finds nothing to write, and the boot's check finds the index fresh. */
const asAScanLeavesIt = () => expectIndexAsAScanLeavesIt(w, scans, { refreshBootIndex, checkBootIndex });

/** The tool paths the index's views hold. */
const viewPaths = async () => (JSON.parse(await readFile(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootIndex, "utf8")) as { views: { paths: { path: string }[] }[] }).views.flatMap((v) => v.paths.map((p) => p.path));

beforeEach(() => {
  scans.calls = 0;
  scans.during = undefined;
});

describe("the refresh after a plugin folder was added", () => {
  it("a linked plugin, nothing moved: one scan, and the index is what a scan gives", async () => {
    await installed();
    await linked();
    expect(await refreshAdded()).toBe(1);
    expect(await viewPaths()).toContain(path.join(linkPath(), "tools", "index.js"));
    await asAScanLeavesIt();
  });

  it("the folder not named (any other mutation): scanned twice, as before", async () => {
    await installed();
    await linked();
    expect(await refreshAdded([])).toBe(2);
    await asAScanLeavesIt();
  });
});

describe("a change while the scan reads the added plugin: scanned again, and the index is what a scan gives", () => {
  const during: [string, () => Promise<void>][] = [
    ["its tool file rewritten", () => writeFile(path.join(linkedFolder(), "tools", "index.js"), jsTool("npm_c_changed"))],
    ["its manifest names another entry", async () => {
      await w.write(path.join(linkedFolder(), "tools", "other.js"), jsTool("npm_c_other"));
      await w.write(path.join(linkedFolder(), "package.json"), { name: "npm-c", version: "1.0.0", xcsh: { tools: "./tools/other.js" } });
    }],
    ["a file added to its tools folder", () => w.write(path.join(linkedFolder(), "tools", "late.js"), jsTool("npm_c_late")).then(() => undefined)],
    ["the link pointed at another folder", async () => {
      const other = path.join(w.root, "dev", "npm-c-2");
      await w.write(path.join(other, "package.json"), { name: "npm-c", version: "1.0.0", xcsh: { tools: "./tools/index.js" } });
      await w.write(path.join(other, "tools", "index.js"), jsTool("npm_c_2"));
      await rm(linkPath());
      await symlink(path.relative(nodeModules(), other), linkPath());
    }],
  ];
  for (const [what, change] of during) {
    it(what, async () => {
      await installed();
      await linked({ tools: "./tools" });
      scans.during = async (call) => {
        if (call === 1) await change();
      };
      // Twice at least: a third when the second scan's answer differs from the first's.
      expect(await refreshAdded()).toBeGreaterThanOrEqual(2);
      await asAScanLeavesIt();
    });
  }
});

describe("an input of the added plugin that was not stat'ed before the scan: scanned twice", () => {
  it("a tool entry below the plugin's own node_modules (not walked)", async () => {
    await installed();
    await w.write(path.join(linkedFolder(), "node_modules", "dep", "tool.js"), jsTool("npm_c_dep"));
    await linked({ tools: "./node_modules/dep/tool.js" });
    expect(await refreshAdded()).toBe(2);
    await asAScanLeavesIt();
  });

  it("a tools folder past the walk's bound (a plugin folder with hundreds of files before it)", async () => {
    await installed();
    await mkdir(path.join(linkedFolder(), "a-data"), { recursive: true });
    for (let i = 0; i < 300; i++) await writeFile(path.join(linkedFolder(), "a-data", `f${i}.json`), "{}");
    await linked({ tools: "./tools/index.js" });
    expect(await refreshAdded()).toBe(2);
    await asAScanLeavesIt();
  });

  it("a tool new to the view outside the added folder (the user's tools folder)", async () => {
    await installed();
    await linked();
    await w.write(path.join(w.xcshHome, "agent", "tools", "late.js"), jsTool("late"));
    expect(await refreshAdded()).toBe(2);
    await asAScanLeavesIt();
  });
});
