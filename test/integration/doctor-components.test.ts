import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runDoctor } from "../../src/doctor/index.js";
import { writeFullPlugin } from "../helpers/component-fixtures.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-doctor-components-", { trustProject: true });

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

/** Install `name` from each of `marketplaces` (user scope, in that order): one plugin name, two ids. */
function installFrom(name: string, marketplaces: string[]): string[] {
  const plugins: Record<string, unknown[]> = {};
  const roots: string[] = [];
  for (const mkt of marketplaces) {
    const root = path.join(w.xcshHome, "plugins", "cache", "plugins", `${mkt}___${name}___1.0.0`);
    writeFullPlugin(root, name);
    plugins[`${name}@${mkt}`] = [{ scope: "user", installPath: root, version: "1.0.0" }];
    roots.push(root);
  }
  mkdirSync(path.join(w.xcshHome, "plugins"), { recursive: true });
  writeFileSync(path.join(w.xcshHome, "plugins", "installed_plugins.json"), JSON.stringify({ version: 2, plugins }));
  return roots;
}

function own(rel: string, content: string): string {
  const file = path.join(rel.startsWith("~/") ? w.home : w.cwd, rel.replace(/^~\//, ""));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
  return file;
}

describe("doctor: conflicts in the host's order", () => {
  it("skills and commands of one plugin name from two marketplaces: the first install is used, the other hidden", async () => {
    const [first, second] = installFrom("kitchen-sink", ["alpha", "beta"]);
    const report = await runDoctor(world());
    const command = report.checks.find((c) => c.id === "components:conflict:command:kitchen-sink:about")!;
    expect(command.status).toBe("warn");
    expect(command.message).toContain(`the host uses ${path.join(first!, "commands/about.md")} (plugin kitchen-sink@alpha) and hides ${path.join(second!, "commands/about.md")} (plugin kitchen-sink@beta)`);
    const skill = report.checks.find((c) => c.id === "components:conflict:skill:kitchen-sink:review")!;
    expect(skill.message).toContain(`the host uses ${path.join(first!, "skills/review/SKILL.md")}`);
  });

  it("the user's own command or skill never hides a plugin's: the host names plugin ones plugin:name", async () => {
    install([{ name: "kitchen-sink", write: (r) => writeFullPlugin(r) }]);
    own("~/.xcsh/agent/commands/about.md", "---\ndescription: mine\n---\n");
    own("~/.xcsh/agent/skills/review/SKILL.md", "---\nname: review\ndescription: mine\n---\n");
    const report = await runDoctor(world());
    expect(report.checks.filter((c) => c.id.startsWith("components:conflict:"))).toEqual([]);
  });

  it("agents: each config base's project folder, then its user folder (.xcsh, then .codex, then .gemini), then plugins", async () => {
    install([{ name: "kitchen-sink", write: (r) => writeFullPlugin(r) }]);
    const agent = "---\nname: security-reviewer\ndescription: mine\n---\n";
    const userXcsh = own("~/.xcsh/agent/agents/security-reviewer.md", agent);
    const projectCodex = own(".codex/agents/security-reviewer.md", agent);
    const report = await runDoctor(world());
    const clash = report.checks.find((c) => c.id === "components:conflict:agent:security-reviewer")!;
    expect(clash.message).toContain(`the host uses ${userXcsh} (the user's ~/.xcsh/agent/agents) and hides ${projectCodex} (the project's .codex/agents), `);
    expect(clash.message).toMatch(/kitchen-sink___1\.0\.0\/agents\/security-reviewer\.md \(plugin kitchen-sink@mkt\)$/);

    const projectXcsh = own(".xcsh/agents/security-reviewer.md", agent);
    const again = await runDoctor(world());
    expect(again.checks.find((c) => c.id === "components:conflict:agent:security-reviewer")!.message).toContain(`the host uses ${projectXcsh} (the project's .xcsh/agents)`);
  });

  it("agents in Claude Code's ~/.claude/agents are not read by xcsh, so they hide nothing", async () => {
    install([{ name: "kitchen-sink", write: (r) => writeFullPlugin(r) }]);
    own("~/.claude/agents/security-reviewer.md", "---\nname: security-reviewer\ndescription: mine\n---\n");
    own(".claude/agents/security-reviewer.md", "---\nname: security-reviewer\ndescription: mine\n---\n");
    const report = await runDoctor(world());
    expect(report.checks.find((c) => c.id === "components:conflict:agent:security-reviewer")).toBeUndefined();
  });
});
