/**
 * A plugin seed is input we did not write on this machine (a mounted folder, an image layer):
 * its manifest and its links never make the loader import code from outside the seed (issue 43;
 * docs/design/fleets.md "How the loader and the commands see seeded plugins"). Each hostile seed
 * has a canary tool where the seed points to; the host's own boot call (`discoverAndLoadCustomTools`,
 * boot index on and off) must not import it, and must say why with a coded record.
 */
import { existsSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";
import { toolSource } from "../integration/plugins-fixtures.js";

let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-seed-hostile-");

const TREE = `tree1-sha256:${"0".repeat(64)}`;

/** A plugin folder at `dir` whose tool writes `canary` when imported. */
async function plugin(dir: string, name: string, canary: string, tools = "./t.js"): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", type: "module", xcsh: { tools } }));
  await writeFile(path.join(dir, "t.js"), toolSource(name.replace(/\W/g, "_"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(canary)}, "ran");\n`));
}

/** A seed at `dir` whose manifest lists `names` (its files are the caller's). */
async function manifest(dir: string, names: string[]): Promise<void> {
  await mkdir(path.join(dir, "plugins", "node_modules"), { recursive: true });
  const plugins = Object.fromEntries(names.map((n) => [n, { version: "1.0.0", integrity: "sha512-x", tree: TREE }]));
  await writeFile(path.join(dir, "xcsh-seed.json"), JSON.stringify({ seedFormat: 1, generator: "test", from: { kind: "specs", specs: names }, plugins }));
}

async function boot(seed: string, bootIndex: boolean) {
  return discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, env: { XCSH_HOME: w.xcshHome, XCSH_PLUGIN_SEED_DIR: seed }, bootIndex });
}

describe.each([true, false])("hostile seeds (boot index %s): nothing outside the seed is imported", (bootIndex) => {
  let seed: string;
  let canary: string;
  let outside: string;
  beforeEach(() => {
    seed = path.join(w.root, "seed");
    canary = path.join(w.root, "canary");
    outside = path.join(w.root, "outside");
  });

  it("a plugin folder that is a link out of the seed: ESEED_INCOMPLETE, not loaded", async () => {
    await manifest(seed, ["evil"]);
    await plugin(outside, "evil", canary);
    await symlink(outside, path.join(seed, "plugins", "node_modules", "evil"));
    const loaded = await boot(seed, bootIndex);
    expect(loaded.tools).toEqual([]);
    expect(loaded.errors).toEqual([expect.objectContaining({ code: "ESEED_INCOMPLETE", error: expect.stringContaining("resolves outside the seed") })]);
    expect(existsSync(canary)).toBe(false);
  });

  it("node_modules itself a link out of the seed: ESEED_INCOMPLETE, not loaded", async () => {
    await mkdir(seed, { recursive: true });
    await manifest(seed, ["evil"]);
    await plugin(path.join(outside, "evil"), "evil", canary);
    const { rm } = await import("node:fs/promises");
    await rm(path.join(seed, "plugins", "node_modules"), { recursive: true });
    await symlink(outside, path.join(seed, "plugins", "node_modules"));
    const loaded = await boot(seed, bootIndex);
    expect(loaded.tools).toEqual([]);
    expect(loaded.errors.map((e) => e.code)).toEqual(["ESEED_INCOMPLETE"]);
    expect(existsSync(canary)).toBe(false);
  });

  it.each(["../outside/evil", "@x/../../outside/evil", "..", "/abs/evil"])("a manifest key %j that is no package name: ESEED_INVALID naming /plugins/<key>, no plugin of the seed loaded", async (key) => {
    await manifest(seed, [key, "good"]);
    await plugin(path.join(seed, "plugins", "node_modules", "good"), "good", canary);
    await plugin(path.join(w.root, "outside", "evil"), "evil", canary);
    const loaded = await boot(seed, bootIndex);
    expect(loaded.tools).toEqual([]);
    expect(loaded.errors).toEqual([expect.objectContaining({ code: "ESEED_INVALID", path: path.join(seed, "xcsh-seed.json"), error: expect.stringContaining(`/plugins/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`) })]);
    expect(existsSync(canary)).toBe(false);
  });

  it("a seeded plugin's tools entry that leaves its package: EENTRY_ESCAPE, not imported", async () => {
    await manifest(seed, ["leaky"]);
    await plugin(path.join(seed, "plugins", "node_modules", "leaky"), "leaky", path.join(w.root, "unused"), "../../../../outside/t.js");
    await plugin(outside, "evil", canary);
    const loaded = await boot(seed, bootIndex);
    expect(loaded.tools).toEqual([]);
    expect(loaded.errors.map((e) => e.code)).toEqual(["EENTRY_ESCAPE"]);
    expect(existsSync(canary)).toBe(false);
  });
});
