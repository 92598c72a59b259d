/**
 * The effective set (src/teamset/set.ts): xcsh-team.json over Claude Code's project settings, then
 * personal choices and the user's own switch-offs, each with who decided it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { teamPaths } from "../../src/core/paths.js";
import { buildEffectiveSet, loadTeamSet } from "../../src/teamset/index.js";
import { CLAUDE_FILE, DECLARATION_FILE, LOCAL_FILE, ROOT, claudeSettings, declaration, refusedBy, setOf } from "../helpers/team-fixtures.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

const team = { by: "team", file: DECLARATION_FILE };
const claude = { by: "claude", file: CLAUDE_FILE };

const thrown = (run: () => unknown) => refusedBy(run);

describe("provenance", () => {
  it("team: every declared plugin and marketplace, decided by xcsh-team.json", () => {
    const set = setOf();
    expect([...set.marketplaces.keys()].sort()).toEqual(["acme-tools", "in-repo", "pinned"]);
    expect(set.marketplaces.get("in-repo")).toEqual({ source: { source: "directory", path: "./tools/marketplace" }, from: team });
    expect(set.plugins.get("@acme/xcsh-search")).toEqual({ key: "@acme/xcsh-search", kind: "npm", spec: "^1.4.0", enabled: true, teamEnabled: true, features: ["web"], settings: { limit: 20 }, decided: [team], enabledBy: team });
    expect(set.plugins.get("old-thing@acme-tools")).toMatchObject({ kind: "marketplace", enabled: false, teamEnabled: false, enabledBy: team });
  });

  it("claude: marketplaces and on/off from .claude/settings.json; xcsh-team.json wins per field where it speaks", () => {
    const set = setOf(
      { version: 1, plugins: { "a@claude-mkt": { version: "^1" }, "b@claude-mkt": { enabled: true } } },
      { claude: claudeSettings({ "claude-mkt": { source: "github", repo: "acme/m" } }, { "a@claude-mkt": false, "b@claude-mkt": false, "c@claude-mkt": true }) },
    );
    expect(set.marketplaces.get("claude-mkt")?.from).toEqual(claude);
    // a: the declaration names a range but not enabled: Claude's off stands.
    expect(set.plugins.get("a@claude-mkt")).toMatchObject({ version: "^1", enabled: false, decided: [claude, team], enabledBy: claude });
    // b: the declaration switches it on explicitly: it wins.
    expect(set.plugins.get("b@claude-mkt")).toMatchObject({ enabled: true, enabledBy: team });
    expect(set.plugins.get("c@claude-mkt")).toMatchObject({ enabled: true, decided: [claude], enabledBy: claude });
  });

  it("local: .xcsh/team.local.json switches off, picks features, adds settings; the lock's view (teamEnabled) is unchanged", () => {
    const local = { by: "local", file: LOCAL_FILE };
    const set = setOf(declaration(), { local: { file: LOCAL_FILE, doc: { version: 1, plugins: { "@acme/xcsh-search": { enabled: false }, "@acme/xcsh-db": { features: [], settings: { depth: 2 } }, "old-thing@acme-tools": { enabled: true } } } } });
    expect(set.plugins.get("@acme/xcsh-search")).toMatchObject({ enabled: false, teamEnabled: true, enabledBy: local, decided: [team, local] });
    expect(set.plugins.get("@acme/xcsh-db")).toMatchObject({ enabled: true, features: [], settings: { depth: 2 }, enabledBy: team });
    expect(set.plugins.get("old-thing@acme-tools")).toMatchObject({ enabled: true, teamEnabled: false, enabledBy: local });
  });

  it("claude-local: only false counts (a personal opt-out never adds a plugin)", () => {
    const claudeLocal = claudeSettings({}, { "lint-helper@acme-tools": false, "old-thing@acme-tools": true, "new@acme-tools": true }, `${ROOT}/.claude/settings.local.json`);
    const set = setOf(declaration(), { claudeLocal });
    expect(set.plugins.get("lint-helper@acme-tools")).toMatchObject({ enabled: false, teamEnabled: true, enabledBy: { by: "claude-local", file: claudeLocal.file } });
    expect(set.plugins.get("old-thing@acme-tools")).toMatchObject({ enabled: false });
    expect(set.plugins.has("new@acme-tools")).toBe(false);
  });

  it("user-disabled: an npm plugin the user switched off stays off here, decided by the user", () => {
    const runtimeLock = "/home/u/.xcsh/plugins/xcsh-plugins.lock.json";
    const set = setOf(declaration(), { userDisabled: new Map([["@acme/xcsh-db", runtimeLock], ["lint-helper@acme-tools", runtimeLock]]) });
    expect(set.plugins.get("@acme/xcsh-db")).toMatchObject({ enabled: false, teamEnabled: true, enabledBy: { by: "user", file: runtimeLock } });
    // The user's runtime lock speaks about npm plugins only.
    expect(set.plugins.get("lint-helper@acme-tools")).toMatchObject({ enabled: true });
  });

  it("personal entries about undeclared plugins are ignored and reported", () => {
    const set = setOf(declaration(), { local: { file: LOCAL_FILE, doc: { version: 1, plugins: { "@other/x": { enabled: false } } } } });
    expect(set.plugins.has("@other/x")).toBe(false);
    expect(set.ignored).toEqual([{ key: "@other/x", file: LOCAL_FILE, path: "/plugins/@other~1x (not declared by the project)" }]);
  });

  it("Claude plugins of marketplaces the project does not declare are ignored and reported", () => {
    const set = buildEffectiveSet({ root: ROOT, claude: claudeSettings({}, { "x@claude-plugins-official": true }) });
    expect(set.plugins.size).toBe(0);
    expect(set.ignored[0]).toMatchObject({ key: "x@claude-plugins-official", file: CLAUDE_FILE });
  });
});

describe("refusals", () => {
  it("ETEAM_DECLARATION_CONFLICT: one marketplace, two sources, naming both files", () => {
    const e = thrown(() => setOf(declaration(), { claude: claudeSettings({ "acme-tools": { source: "github", repo: "acme/other" } }) }));
    expect([e.code, e.file, e.path, e.exitCode]).toEqual(["ETEAM_DECLARATION_CONFLICT", DECLARATION_FILE, "/marketplaces/acme-tools/source", 2]);
    expect(e.message).toContain(CLAUDE_FILE);
    expect(e.message).toContain("/extraKnownMarketplaces/acme-tools/source");
    expect(e.hint).toContain("Make both sources the same");
  });

  it("the same source in both files is one marketplace, decided by xcsh-team.json", () => {
    const set = setOf(declaration(), { claude: claudeSettings({ "acme-tools": { ref: "v3", repo: "acme/xcsh-marketplace", source: "github" } }) });
    expect(set.marketplaces.get("acme-tools")?.from).toEqual(team);
  });

  it("ETEAM_UNKNOWN_MARKETPLACE when a declared plugin's marketplace is nowhere", () => {
    const e = thrown(() => setOf({ version: 1, plugins: { "x@gone": {} } }));
    expect([e.code, e.file, e.path]).toEqual(["ETEAM_UNKNOWN_MARKETPLACE", DECLARATION_FILE, "/plugins/x@gone"]);
    expect(e.hint).toContain("marketplace add");
  });
});

describe("loadTeamSet (the files on disk)", () => {
  let w: TmpWorld;
  worldPerTest((world) => (w = world), "xcsh-teamset-load-");

  it("undefined when the project declares nothing", () => {
    expect(loadTeamSet(w.cwd)).toBeUndefined();
  });

  it("reads xcsh-team.json, Claude's settings and the personal files together", () => {
    const paths = teamPaths(w.cwd);
    mkdirSync(path.dirname(paths.claudeSettings), { recursive: true });
    mkdirSync(paths.configDir, { recursive: true });
    writeFileSync(paths.claudeSettings, JSON.stringify({ extraKnownMarketplaces: { cm: { source: { source: "directory", path: path.join(w.cwd, "mkt") } } }, enabledPlugins: { "p@cm": true } }));
    writeFileSync(paths.declaration, JSON.stringify({ version: 1, plugins: { "q@cm": {}, "@acme/x": { spec: "^1" } } }));
    writeFileSync(paths.local, JSON.stringify({ version: 1, plugins: { "@acme/x": { enabled: false } } }));
    writeFileSync(paths.claudeLocalSettings, JSON.stringify({ enabledPlugins: { "p@cm": false } }));
    const set = loadTeamSet(w.cwd)!;
    expect(set.marketplaces.get("cm")?.source).toEqual({ source: "directory", path: "./mkt" });
    expect([...set.plugins.values()].map((p) => [p.key, p.enabled, p.enabledBy.by])).toEqual([
      ["p@cm", false, "claude-local"],
      ["q@cm", true, "team"],
      ["@acme/x", false, "local"],
    ]);
  });

  it("a Claude-only project is a set", () => {
    const paths = teamPaths(w.cwd);
    mkdirSync(path.dirname(paths.claudeSettings), { recursive: true });
    writeFileSync(paths.claudeSettings, JSON.stringify({ extraKnownMarketplaces: { cm: { source: { source: "github", repo: "acme/m" } } }, enabledPlugins: { "p@cm": ["1.0.0"] } }));
    expect(loadTeamSet(w.cwd)?.plugins.get("p@cm")).toMatchObject({ enabled: true, enabledBy: { by: "claude", file: paths.claudeSettings } });
  });
});
