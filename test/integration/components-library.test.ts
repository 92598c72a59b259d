import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listInstalledComponents } from "../../src/index.js";
import { writeFullPlugin } from "../helpers/component-fixtures.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-components-lib-");
});
afterEach(async () => {
  await w.cleanup();
});

function install(scope: "user" | "project", name: string): string {
  const root = path.join(w.xcshHome, "plugins", "cache", "plugins", `mkt___${name}___1.0.0`);
  writeFullPlugin(root, name);
  // The tool module would throw if anything imported it.
  writeFileSync(path.join(root, "tools", "greet.ts"), "throw new Error('imported');\n");
  const registry = scope === "user" ? path.join(w.xcshHome, "plugins", "installed_plugins.json") : path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json");
  mkdirSync(path.dirname(registry), { recursive: true });
  writeFileSync(registry, JSON.stringify({ version: 2, plugins: { [`${name}@mkt`]: [{ scope, installPath: root, version: "1.0.0" }] } }));
  return root;
}

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
