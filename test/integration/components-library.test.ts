import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listInstalledComponents } from "../../src/index.js";
import { installFullPlugin } from "../helpers/component-fixtures.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { seedTreeHash } from "../../src/teamset/seed.js";
import { toolSource } from "./plugins-fixtures.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-components-lib-", { trustProject: true });

const install = (scope: "user" | "project", name: string) => installFullPlugin(w, scope, name);

describe("listInstalledComponents", () => {
  it("answers every component of every installed plugin without importing code", async () => {
    const root = install("user", "kitchen-sink");
    const list = await listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: {} });
    expect(list.plugins.map((p) => p.id)).toEqual(["kitchen-sink@mkt"]);
    const p = list.plugins[0]!;
    expect(p.components.filter((c) => c.kind === "skill").map((c) => c.name).sort()).toEqual(["explain", "review"]);
    expect(p.components.find((c) => c.kind === "mcp-server" && c.name === "local")!.exec!.command).toBe(`${root}/servers/mcp.js`);
    expect(p.components.find((c) => c.kind === "tool")).toMatchObject({ name: "greet", cost: { alwaysOn: null } });
  });

  it("leaves project installs out of an untrusted project", async () => {
    install("project", "proj");
    const trusted = await listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: {}, projectTrust: true });
    expect(trusted.plugins.map((p) => `${p.id}:${p.scope}`)).toEqual(["proj@mkt:project"]);
    const untrusted = await listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: {}, projectTrust: false });
    expect(untrusted.plugins).toEqual([]);
    expect(untrusted.untrusted?.trustCommand).toMatch(/xcsh-tools trust/);
  });
});

describe("listInstalledComponents with plugin seeds (XCSH_PLUGIN_SEED_DIR of env), as `list` shows them", () => {
  /** A seed holding one npm plugin with a tool, built as `seed` leaves it (manifest with the tree hash). */
  async function seedWith(name: string): Promise<string> {
    const seed = path.join(w.root, "seed");
    const dir = path.join(seed, "plugins", "node_modules", name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, version: "1.2.3", type: "module", xcsh: { tools: "./t.js" } }));
    writeFileSync(path.join(dir, "t.js"), toolSource("seeded_tool"));
    writeFileSync(path.join(seed, "plugins", "package.json"), JSON.stringify({ dependencies: { [name]: "1.2.3" } }));
    const plugins = { [name]: { version: "1.2.3", integrity: "sha512-test", tree: await seedTreeHash(dir) } };
    writeFileSync(path.join(seed, "xcsh-seed.json"), JSON.stringify({ seedFormat: 1, generator: "test", from: { kind: "specs", specs: [name] }, plugins }));
    return seed;
  }

  it("lists each seeded plugin after the user's, marked with its seed, with its components", async () => {
    install("user", "kitchen-sink");
    const seed = await seedWith("seeded-plugin");
    const list = await listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: { XCSH_PLUGIN_SEED_DIR: seed } });
    expect(list.plugins.map((p) => [p.id, p.seed])).toEqual([["kitchen-sink@mkt", undefined], ["seeded-plugin", seed]]);
    const seeded = list.plugins[1]!;
    expect(seeded).toMatchObject({ rootKind: "npm", version: "1.2.3", root: path.join(seed, "plugins", "node_modules", "seeded-plugin") });
    expect(seeded.components.map((c) => `${c.kind}:${c.name}`)).toEqual(["tool:t"]);
  });

  it("the user's own copy of a name a seed provides is marked hiddenBySeed (the seed's copy loads), the seed's row follows", async () => {
    const seed = await seedWith("shared-plugin");
    const plugins = path.join(w.xcshHome, "plugins");
    const own = path.join(plugins, "node_modules", "shared-plugin");
    mkdirSync(own, { recursive: true });
    writeFileSync(path.join(plugins, "package.json"), JSON.stringify({ name: "xcsh-plugins", private: true, dependencies: { "shared-plugin": "^1.0.0", "own-plugin": "^1.0.0" } }));
    writeFileSync(path.join(own, "package.json"), JSON.stringify({ name: "shared-plugin", version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } }));
    writeFileSync(path.join(own, "t.js"), toolSource("user_copy_tool"));
    const other = path.join(plugins, "node_modules", "own-plugin");
    mkdirSync(other, { recursive: true });
    writeFileSync(path.join(other, "package.json"), JSON.stringify({ name: "own-plugin", version: "1.0.0", type: "module", xcsh: { tools: "./o.js" } }));
    writeFileSync(path.join(other, "o.js"), toolSource("own_tool"));
    const list = await listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: { XCSH_PLUGIN_SEED_DIR: seed } });
    expect(list.plugins.map((p) => [p.id, p.root, p.seed, p.hiddenBySeed])).toEqual([
      ["shared-plugin", own, undefined, seed],
      ["own-plugin", other, undefined, undefined],
      ["shared-plugin", path.join(seed, "plugins", "node_modules", "shared-plugin"), seed, undefined],
    ]);
    // Without the seed, nothing is hidden.
    const alone = await listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: {} });
    expect(alone.plugins.map((p) => p.hiddenBySeed)).toEqual([undefined, undefined]);
  });

  it("a seed that cannot be read is a row with its code, never silently nothing", async () => {
    const missing = path.join(w.root, "no-such-seed");
    const list = await listInstalledComponents({ cwd: w.cwd, home: w.home, xcshHome: w.xcshHome, env: { XCSH_PLUGIN_SEED_DIR: missing } });
    expect(list.plugins.map((p) => [p.seed, p.problem?.code])).toEqual([[missing, "ESEED_UNREADABLE"]]);
  });
});
