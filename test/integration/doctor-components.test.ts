import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runDoctor } from "../../src/doctor/index.js";
import { writeFullPlugin } from "../helpers/component-fixtures.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-doctor-components-");
});
afterEach(async () => {
  await w.cleanup();
});

function install(entries: { name: string; write: (root: string) => void }[]): void {
  const plugins: Record<string, unknown[]> = {};
  for (const { name, write } of entries) {
    const root = path.join(w.xcshHome, "plugins", "cache", "plugins", `mkt___${name}___1.0.0`);
    write(root);
    plugins[`${name}@mkt`] = [{ scope: "user", installPath: root, version: "1.0.0" }];
  }
  mkdirSync(path.join(w.xcshHome, "plugins"), { recursive: true });
  writeFileSync(path.join(w.xcshHome, "plugins", "installed_plugins.json"), JSON.stringify({ version: 2, plugins }));
}

const world = (extra: object = {}) => ({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd: w.cwd, env: {}, projectTrusted: true, ...extra });

describe("doctor: components", () => {
  it("reports the always-on context total and warns past contextWarnTokens", async () => {
    install([{ name: "kitchen-sink", write: (r) => writeFullPlugin(r) }]);
    const quiet = await runDoctor(world());
    const ok = quiet.checks.find((c) => c.id === "components:context")!;
    expect(ok).toMatchObject({ area: "components", status: "ok" });
    expect(ok.message).toMatch(/tokens of context in every session .*skill\/command\/agent listings/);
    const loud = await runDoctor(world({ settingsFlags: { contextWarnTokens: 1 } }));
    const warn = loud.checks.find((c) => c.id === "components:context")!;
    expect(warn.status).toBe("warn");
    expect(warn.message).toMatch(/more than contextWarnTokens \(1\)/);
    expect(warn.message).toMatch(/most: kitchen-sink@mkt/);
  });

  it("says which agent the host uses and which it hides: the user's own, then plugins in order", async () => {
    install([
      { name: "kitchen-sink", write: (r) => writeFullPlugin(r) },
      { name: "second", write: (r) => writeFullPlugin(r, "second") },
    ]);
    const own = path.join(w.xcshHome, "agent", "agents", "security-reviewer.md");
    mkdirSync(path.dirname(own), { recursive: true });
    writeFileSync(own, "---\nname: security-reviewer\ndescription: mine\n---\n");
    const report = await runDoctor(world());
    const clash = report.checks.find((c) => c.id === "components:conflict:agent:security-reviewer")!;
    expect(clash.status).toBe("warn");
    expect(clash.message).toContain(`the host uses ${own} (the user's ~/.xcsh/agent/agents)`);
    expect(clash.message).toMatch(/hides .*kitchen-sink___1\.0\.0\/agents\/security-reviewer\.md \(plugin kitchen-sink@mkt\), .*second___1\.0\.0.*\(plugin second@mkt\)/);
  });

  it("no clash: one ok check", async () => {
    install([{ name: "kitchen-sink", write: (r) => writeFullPlugin(r) }]);
    const report = await runDoctor(world());
    expect(report.checks.find((c) => c.id === "components:conflicts")).toMatchObject({ status: "ok" });
  });
});
