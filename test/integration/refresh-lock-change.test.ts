/**
 * The refresh after a change of the runtime lock that discovery cannot see (`config set|delete`:
 * a setting), issue 44: each view built from the lock's bytes before the change is kept without a
 * scan (boot/views.ts `keptAfterLockChange`), and what it keeps is what a scan gives (a full
 * refresh right after finds nothing to write; the boot's own check finds the index fresh).
 * Every other case is a scan's: a change discovery reads (a plugin disabled, features, an entry
 * named `__proto__`, the envelope broken, a lock too deep to read), bytes the view was not built
 * from, another input that moved as well.
 *
 * The shelf (boot/view-shelf.ts): a view a change replaced is served again, without a scan, when a
 * change undoes it (`enable` after `disable`, a feature on again, a setting changed meanwhile), and
 * what it serves is what a scan gives. Hostile: never once anything it was built from reads
 * otherwise (a tool file's bytes, a folder's list, a manifest, the lock's reading, the trust
 * record, a plugin folder replaced by a link), nor when it names a path outside the folders
 * discovery reads, nor from a shelf file this version did not write.
 */
import { cp, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { expectIndexAsAScanLeavesIt, jsTool } from "./discovery-fixtures.js";

const scans = vi.hoisted(() => ({ calls: 0 }));
vi.mock("../../src/discovery/index.js", async (original) => {
  const real = await original<typeof import("../../src/discovery/index.js")>();
  return {
    ...real,
    discoverToolPaths: (...args: Parameters<typeof real.discoverToolPaths>) => {
      scans.calls++;
      return real.discoverToolPaths(...args);
    },
  };
});
const { checkBootIndex, refreshBootIndex } = await import("../../src/boot/index.js");
const { xcshPaths } = await import("../../src/core/paths.js");

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-refresh-lock-");

const opts = () => ({ home: w.home, xcshHome: w.xcshHome, env: {}, cwd: w.cwd, validate: false });
const plugins = () => path.join(w.xcshHome, "plugins");
const lockFile = () => path.join(plugins(), "xcsh-plugins.lock.json");
const indexFile = () => xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootIndex;
type Lock = { plugins: Record<string, Record<string, unknown>>; settings: Record<string, Record<string, unknown>> } & Record<string, unknown>;

/** Two npm plugins (one with a feature off by default), and the index refreshed once. */
async function installed(): Promise<void> {
  const nm = path.join(plugins(), "node_modules");
  await w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-a": "^1.0.0", "npm-b": "^1.0.0" } });
  await w.write(path.join(nm, "npm-a/package.json"), { name: "npm-a", version: "1.0.0", xcsh: { tools: "./tools/a.js", features: { extra: { default: false, tools: ["./tools/extra.js"] } } } });
  await w.write(path.join(nm, "npm-a/tools/a.js"), jsTool("npm_a"));
  await w.write(path.join(nm, "npm-a/tools/extra.js"), jsTool("npm_extra"));
  await w.write(path.join(nm, "npm-b/package.json"), { name: "npm-b", version: "1.0.0", xcsh: { tools: "./tools/b.js" } });
  await w.write(path.join(nm, "npm-b/tools/b.js"), jsTool("npm_b"));
  await writeLock({ plugins: { "npm-a": { version: "1.0.0", enabledFeatures: null, enabled: true }, "npm-b": { version: "1.0.0", enabledFeatures: null, enabled: true } }, settings: {} });
  await refreshBootIndex(opts());
}

async function writeLock(lock: unknown): Promise<void> {
  await writeFile(lockFile(), typeof lock === "string" ? lock : `${JSON.stringify(lock, null, 2)}\n`);
}

const readLock = async () => JSON.parse(await readFile(lockFile(), "utf8")) as Lock;
const viewPaths = async () => (JSON.parse(await readFile(indexFile(), "utf8")) as { views: { paths: { path: string }[] }[] }).views.flatMap((v) => v.paths.map((p) => path.basename(p.path)));

/** Change the lock as `edit` says, then refresh with its bytes from before: how many scans it took. */
async function refreshAfter(edit: (lock: Lock) => unknown, hints: { shelf?: boolean } = {}): Promise<number> {
  const before = await readFile(lockFile());
  await writeLock(edit(await readLock()));
  scans.calls = 0;
  await refreshBootIndex({ ...opts(), runtimeLockBefore: before, ...hints });
  return scans.calls;
}

/** After the refresh: a full one finds nothing to write, and the boot's check finds the index fresh. */
const asAScanLeavesIt = () => expectIndexAsAScanLeavesIt(w, scans, { refreshBootIndex, checkBootIndex });

beforeEach(() => {
  scans.calls = 0;
});

describe("the refresh after a change of the runtime lock's settings", () => {
  it("a setting set: no scan, and the index is what a scan gives", async () => {
    await installed();
    expect(await refreshAfter((lock) => ({ ...lock, settings: { "npm-a": { level: "high" } } }))).toBe(0);
    await asAScanLeavesIt();
    expect(await viewPaths()).toEqual(expect.arrayContaining(["a.js", "b.js"]));
  });

  it("a setting deleted, secret settings recorded, unknown top-level keys: no scan either", async () => {
    await installed();
    expect(await refreshAfter((lock) => ({ ...lock, settings: { "npm-b": { token: "x" } }, secretSettings: { "npm-b": ["token"] }, hostOwn: [1, 2] }))).toBe(0);
    expect(await refreshAfter((lock) => ({ ...lock, settings: {} }))).toBe(0);
    await asAScanLeavesIt();
  });
});

describe("a change the refresh must scan for", () => {
  const discoveryReads: [string, (lock: Lock) => unknown][] = [
    ["a plugin disabled", (lock) => ({ ...lock, plugins: { ...lock.plugins, "npm-b": { ...lock.plugins["npm-b"], enabled: false } } })],
    ["a feature turned on", (lock) => ({ ...lock, plugins: { ...lock.plugins, "npm-a": { ...lock.plugins["npm-a"], enabledFeatures: ["extra"] } } })],
    ["a plugin's entry removed", (lock) => ({ ...lock, plugins: { "npm-a": lock.plugins["npm-a"] } })],
    ["the plugins entries reordered", (lock) => ({ ...lock, plugins: { "npm-b": lock.plugins["npm-b"], "npm-a": lock.plugins["npm-a"] } })],
    ["an entry named __proto__ added", (lock) => JSON.parse(JSON.stringify(lock).replace('"plugins":{', '"plugins":{"__proto__":{"enabled":false},'))],
    ["a plugin's entry of the wrong shape", (lock) => ({ ...lock, plugins: { ...lock.plugins, "npm-b": { enabled: "no" } } })],
    ["plugins of the wrong shape", (lock) => ({ ...lock, plugins: ["npm-a"] })],
    ["the lock an array", () => []],
    ["the lock not JSON", () => "{ not json"],
    ["settings nested deeper than a state file may be", (lock) => ({ ...lock, settings: { "npm-a": { deep: JSON.parse(`${"[".repeat(300)}${"]".repeat(300)}`) } } })],
  ];
  for (const [what, edit] of discoveryReads) {
    it(`${what}: scanned, and the index is what a scan gives`, async () => {
      await installed();
      expect(await refreshAfter(edit)).toBeGreaterThan(0);
      await asAScanLeavesIt();
    });
  }

  it("a plugin disabled: its tool leaves the index", async () => {
    await installed();
    await refreshAfter((lock) => ({ ...lock, plugins: { ...lock.plugins, "npm-b": { enabled: false } } }));
    expect(await viewPaths()).not.toContain("b.js");
    expect(await viewPaths()).toContain("a.js");
  });

  it("bytes from before that are not the ones the views were built from: scanned", async () => {
    await installed();
    // The host changed the lock meanwhile (a plugin disabled) and no refresh ran: the index lags it.
    await writeLock({ ...(await readLock()), plugins: { "npm-a": { enabled: true }, "npm-b": { enabled: false } } });
    expect(await refreshAfter((lock) => ({ ...lock, settings: { "npm-a": { level: "x" } } }))).toBeGreaterThan(0);
    expect(await viewPaths()).not.toContain("b.js");
    await asAScanLeavesIt();
  });

  it("another input moved as well (a tool added to the user's tools folder): scanned", async () => {
    await installed();
    await w.write(path.join(w.xcshHome, "agent", "tools", "late.js"), jsTool("late"));
    expect(await refreshAfter((lock) => ({ ...lock, settings: { "npm-a": { level: "x" } } }))).toBeGreaterThan(0);
    expect(await viewPaths()).toContain("late.js");
    await asAScanLeavesIt();
  });

  it("a plugin's manifest edited as well: scanned", async () => {
    await installed();
    const manifest = path.join(plugins(), "node_modules", "npm-a", "package.json");
    await w.write(manifest, { name: "npm-a", version: "1.0.0", xcsh: { tools: ["./tools/a.js", "./tools/extra.js"] } });
    expect(await refreshAfter((lock) => ({ ...lock, settings: { "npm-a": { level: "x" } } }))).toBeGreaterThan(0);
    expect(await viewPaths()).toContain("extra.js");
  });

  it("no bytes from before (the lock did not exist, or a read-only command's recovery): scanned", async () => {
    await installed();
    await writeLock({ ...(await readLock()), settings: { "npm-a": { level: "y" } } });
    scans.calls = 0;
    await refreshBootIndex(opts());
    expect(scans.calls).toBeGreaterThan(0);
  });
});

// ---- the shelf (boot/view-shelf.ts): a view a change replaced, served again when the change is undone ----

const nm = () => path.join(plugins(), "node_modules");
const shelfFile = () => path.join(path.dirname(indexFile()), "boot-shelf.json");
type Shelf = { views: { key: { cwd: string }; paths: { path: string }[] }[] } & Record<string, unknown>;
const readShelf = async () => JSON.parse(await readFile(shelfFile(), "utf8")) as Shelf;

/** The lock `installed` writes, npm-b enabled or not, npm-a's features. */
const enabledLock = (bEnabled: boolean, aFeatures: string[] | null = null): Lock => ({
  plugins: { "npm-a": { version: "1.0.0", enabledFeatures: aFeatures, enabled: true }, "npm-b": { version: "1.0.0", enabledFeatures: null, enabled: bEnabled } },
  settings: {},
});

/** Write `lock` and refresh as a state command does (with the shelf): how many scans it took. */
const refreshTo = (lock: Lock) => refreshAfter(() => lock, { shelf: true });

/** Installed, then npm-b disabled (a scan): the shelf holds the view with npm-b's tool. */
async function disabledOnce(): Promise<void> {
  await installed();
  expect(await refreshTo(enabledLock(false))).toBeGreaterThan(0);
  expect(await viewPaths()).not.toContain("b.js");
  const shelf = await readShelf();
  expect(shelf.views.map((view) => view.key.cwd)).toContain(w.cwd);
  expect(shelf.views.flatMap((view) => view.paths.map((p) => path.basename(p.path)))).toContain("b.js");
}

describe("a change undone: the view from before, without a scan", () => {
  it("enable after disable: no scan, and the index is what a scan gives", async () => {
    await disabledOnce();
    expect(await refreshTo(enabledLock(true))).toBe(0);
    expect(await viewPaths()).toEqual(expect.arrayContaining(["a.js", "b.js"]));
    await asAScanLeavesIt();
  });

  it("disable, enable, disable again: each undone state from the shelf", async () => {
    await disabledOnce();
    expect(await refreshTo(enabledLock(true))).toBe(0);
    expect(await refreshTo(enabledLock(false))).toBe(0);
    expect(await viewPaths()).not.toContain("b.js");
    await asAScanLeavesIt();
    expect(await refreshTo(enabledLock(true))).toBe(0);
    await asAScanLeavesIt();
  });

  it("a feature off again after on: no scan, and the index is what a scan gives", async () => {
    await installed();
    expect(await refreshTo(enabledLock(true, ["extra"]))).toBeGreaterThan(0);
    expect(await viewPaths()).toContain("extra.js");
    expect(await refreshTo(enabledLock(true))).toBe(0);
    expect(await viewPaths()).not.toContain("extra.js");
    expect(await refreshTo(enabledLock(true, ["extra"]))).toBe(0);
    expect(await viewPaths()).toContain("extra.js");
    await asAScanLeavesIt();
  });

  it("a setting changed meanwhile: served, the lock reading for discovery as it did", async () => {
    await disabledOnce();
    expect(await refreshTo({ ...enabledLock(false), settings: { "npm-a": { level: "x" } } })).toBe(0);
    expect(await refreshTo({ ...enabledLock(true), settings: { "npm-a": { level: "x" } } })).toBe(0);
    expect(await viewPaths()).toEqual(expect.arrayContaining(["a.js", "b.js"]));
    await asAScanLeavesIt();
  });

  it("bench/changes.js's round (disable, enable, feature on, off, a new setting): the second round scans nothing", async () => {
    await installed();
    const round = async (n: number) => {
      const settings = { "npm-a": { level: `l${n}` } };
      const counts = [];
      counts.push(await refreshTo({ ...enabledLock(false), settings: n === 0 ? {} : { "npm-a": { level: `l${n - 1}` } } }));
      counts.push(await refreshTo({ ...enabledLock(true), settings: n === 0 ? {} : { "npm-a": { level: `l${n - 1}` } } }));
      counts.push(await refreshTo({ ...enabledLock(true, ["extra"]), settings: n === 0 ? {} : { "npm-a": { level: `l${n - 1}` } } }));
      counts.push(await refreshTo({ ...enabledLock(true), settings: n === 0 ? {} : { "npm-a": { level: `l${n - 1}` } } }));
      counts.push(await refreshTo({ ...enabledLock(true), settings }));
      return counts;
    };
    expect((await round(0)).filter((n) => n > 0).length).toBeGreaterThan(0);
    expect(await round(1)).toEqual([0, 0, 0, 0, 0]);
    await asAScanLeavesIt();
    expect(await round(2)).toEqual([0, 0, 0, 0, 0]);
    await asAScanLeavesIt();
  });

  it("a file touched with the same bytes: served, with the signature it has now", async () => {
    await disabledOnce();
    const tool = path.join(nm(), "npm-b/tools/b.js");
    const later = new Date(Date.now() + 5000);
    await utimes(tool, later, later);
    expect(await refreshTo(enabledLock(true))).toBe(0);
    await asAScanLeavesIt();
  });
});

describe("a shelved view that no longer reads as it was built: scanned", () => {
  const edits: [string, () => Promise<unknown>, (paths: string[]) => void][] = [
    ["the disabled plugin's tool file rewritten", () => w.write(path.join(nm(), "npm-b/tools/b.js"), jsTool("npm_b_v2")), () => undefined],
    ["another plugin's tool file rewritten", () => w.write(path.join(nm(), "npm-a/tools/a.js"), jsTool("npm_a_v2")), () => undefined],
    ["a tool added to the disabled plugin's tools folder", () => w.write(path.join(nm(), "npm-b/tools/late.js"), jsTool("late")), () => undefined],
    ["a tool added to the user's tools folder", () => w.write(path.join(w.xcshHome, "agent", "tools", "late.js"), jsTool("late")), (paths) => expect(paths).toContain("late.js")],
    [
      "the disabled plugin's manifest edited (a second entry)",
      () => w.write(path.join(nm(), "npm-b/package.json"), { name: "npm-b", version: "1.0.0", xcsh: { tools: ["./tools/b.js", "./tools/b2.js"] } }).then(() => w.write(path.join(nm(), "npm-b/tools/b2.js"), jsTool("npm_b2"))),
      (paths) => expect(paths).toContain("b2.js"),
    ],
    ["the plugins package.json edited (npm-a gone)", () => w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-b": "^1.0.0" } }), (paths) => expect(paths).not.toContain("a.js")],
    ["the disabled plugin's tool file removed", () => rm(path.join(nm(), "npm-b/tools/b.js")), (paths) => expect(paths).not.toContain("b.js")],
    [
      "the disabled plugin's folder replaced by a link to a copy",
      async () => {
        const copy = path.join(w.root, "npm-b-copy");
        await cp(path.join(nm(), "npm-b"), copy, { recursive: true });
        await rm(path.join(nm(), "npm-b"), { recursive: true });
        await symlink(copy, path.join(nm(), "npm-b"));
      },
      () => undefined,
    ],
    ["the trust record written", () => w.write(path.join(plugins(), ".xcsh-tools", "trusted-projects.json"), { version: 1, projects: {} }), () => undefined],
  ];
  for (const [what, edit, expectPaths] of edits) {
    it(`${what}: scanned, and the index is what a scan gives`, async () => {
      await disabledOnce();
      await edit();
      expect(await refreshTo(enabledLock(true))).toBeGreaterThan(0);
      expectPaths(await viewPaths());
      await asAScanLeavesIt();
    });
  }

  it("the lock reading otherwise for discovery (a feature on as well): scanned", async () => {
    await disabledOnce();
    expect(await refreshTo(enabledLock(true, ["extra"]))).toBeGreaterThan(0);
    expect(await viewPaths()).toEqual(expect.arrayContaining(["b.js", "extra.js"]));
    await asAScanLeavesIt();
  });

  it("a refresh without a mutation's bytes (a read-only command's recovery) shelves nothing; other lock bytes later: scanned", async () => {
    await installed();
    // The host disables npm-b and a later command's refresh has no bytes from before.
    await writeLock(enabledLock(false));
    scans.calls = 0;
    await refreshBootIndex(opts());
    expect(scans.calls).toBeGreaterThan(0);
    // A refresh without a mutation's bytes shelves nothing.
    await expect(readShelf()).rejects.toThrow(/ENOENT/);
    expect(await refreshTo({ ...enabledLock(true), settings: { "npm-a": { level: "x" } } })).toBeGreaterThan(0);
    expect(await viewPaths()).toContain("b.js");
    await asAScanLeavesIt();
  });

  it("the refresh after another mutation (install, link: no shelf hint) neither serves from the shelf nor writes it", async () => {
    await disabledOnce();
    const shelf = await readFile(shelfFile(), "utf8");
    expect(await refreshAfter(() => enabledLock(true))).toBeGreaterThan(0);
    expect(await readFile(shelfFile(), "utf8")).toBe(shelf);
    await asAScanLeavesIt();
  });

  it("a shelf whose readings are not strings: read as none, so other lock bytes are scanned", async () => {
    await disabledOnce();
    await refreshTo({ ...enabledLock(false), settings: { "npm-a": { level: "x" } } });
    const shelf = await readShelf();
    await writeFile(shelfFile(), JSON.stringify({ ...shelf, readings: (shelf.readings as unknown[]).map(() => 7) }));
    expect(await refreshTo({ ...enabledLock(true), settings: { "npm-a": { level: "x" } } })).toBeGreaterThan(0);
    await asAScanLeavesIt();
  });

  it("a shelved view naming a path outside every folder discovery reads: not served", async () => {
    await disabledOnce();
    const outside = path.join(w.root, "elsewhere", "evil.js");
    await w.write(outside, jsTool("evil"));
    const shelf = await readShelf();
    for (const view of shelf.views) view.paths.push({ ...view.paths[0]!, path: outside });
    await writeFile(shelfFile(), JSON.stringify(shelf));
    expect(await refreshTo(enabledLock(true))).toBeGreaterThan(0);
    expect(await viewPaths()).not.toContain("evil.js");
    await asAScanLeavesIt();
  });

  const shelves: [string, (shelf: Shelf) => string][] = [
    ["not JSON", () => "{ not json"],
    ["an array", () => "[]"],
    ["views of the wrong shape", (shelf) => JSON.stringify({ ...shelf, views: [{ key: 1 }] })],
    ["another version", (shelf) => JSON.stringify({ ...shelf, version: 5 })],
    ["another generator", (shelf) => JSON.stringify({ ...shelf, generator: "xcsh-tools@0.0.0-other" })],
    ["a link to the index", () => ""],
  ];
  for (const [what, text] of shelves) {
    it(`a shelf file that is ${what}: scanned, no error, and the index is what a scan gives`, async () => {
      await disabledOnce();
      const shelf = await readShelf();
      await rm(shelfFile());
      if (what.startsWith("a link")) await symlink(indexFile(), shelfFile());
      else await writeFile(shelfFile(), text(shelf));
      const before = await readFile(lockFile());
      await writeLock(enabledLock(true));
      scans.calls = 0;
      const report = await refreshBootIndex({ ...opts(), runtimeLockBefore: before, shelf: true });
      expect(scans.calls).toBeGreaterThan(0);
      expect(report.written).toBe(true);
      expect(await viewPaths()).toContain("b.js");
      await asAScanLeavesIt();
    });
  }
});
