/**
 * The refresh after a change of the runtime lock that discovery cannot see (`config set|delete`:
 * a setting), issue 44: each view built from the lock's bytes before the change is kept without a
 * scan (boot/views.ts `keptAfterLockChange`), and what it keeps is what a scan gives (a full
 * refresh right after finds nothing to write; the boot's own check finds the index fresh).
 * Every other case is a scan's: a change discovery reads (a plugin disabled, features, an entry
 * named `__proto__`, the envelope broken, a lock too deep to read), bytes the view was not built
 * from, another input that moved as well.
 */
import { readFile, writeFile } from "node:fs/promises";
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
async function refreshAfter(edit: (lock: Lock) => unknown): Promise<number> {
  const before = await readFile(lockFile());
  await writeLock(edit(await readLock()));
  scans.calls = 0;
  await refreshBootIndex({ ...opts(), runtimeLockBefore: before });
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
