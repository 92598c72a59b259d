import { describe, expect, it } from "vitest";
import { listInstalledComponents } from "../../src/index.js";
import { installFullPlugin } from "../helpers/component-fixtures.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

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
