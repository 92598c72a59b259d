/**
 * The host files generated from a set (src/teamset/host-files.ts): the project registry with
 * `___off` folders that shadow the user's copies, the npm overrides, and `.xcsh/.gitignore`.
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { teamOffFolder, teamPaths, teamStampFile } from "../../src/core/paths.js";
import { validateInstalledPlugins } from "../../src/manifest/installed-plugins.js";
import { validatePluginOverrides } from "../../src/manifest/plugin-overrides.js";
import { GITIGNORE_TEXT, missingGitignoreLines, renderHostFiles, type MarketplaceInstall } from "../../src/teamset/index.js";
import { LOCAL_FILE, ROOT, claudeSettings, declaration, setOf } from "../helpers/team-fixtures.js";

const CACHE = "/home/b/.xcsh/plugins/cache/plugins";
const installs = new Map<string, MarketplaceInstall>([
  ["lint-helper@acme-tools", { installPath: `${CACHE}/acme-tools___lint-helper___2.1.3-5d4100000000`, version: "2.1.3", gitCommitSha: "4b1e".padEnd(40, "0") }],
  ["reviewer@in-repo", { installPath: `${CACHE}/in-repo___reviewer___0.3.0-aa0000000000`, version: "0.3.0" }],
]);
const npmFeatures = new Map([["@acme/xcsh-db", ["query", "migrate"]]]);

describe("renderHostFiles", () => {
  it("the registry: declared-on plugins at their install, declared-off at the empty ___off folder (enabled, so it shadows)", () => {
    const files = renderHostFiles({ set: setOf(), pluginCache: CACHE, installs, npmFeatures });
    expect(files.registry.plugins).toEqual({
      "lint-helper@acme-tools": [{ scope: "project", installPath: installs.get("lint-helper@acme-tools")!.installPath, version: "2.1.3", gitCommitSha: "4b1e".padEnd(40, "0"), enabled: true }],
      "old-thing@acme-tools": [{ scope: "project", installPath: path.join(CACHE, "acme-tools___old-thing___off"), enabled: true }],
      "reviewer@in-repo": [{ scope: "project", installPath: installs.get("reviewer@in-repo")!.installPath, version: "0.3.0", enabled: true }],
    });
    expect(files.offFolders).toEqual([teamOffFolder(CACHE, "acme-tools", "old-thing")]);
    // What we generate is what our own reader accepts, as the host's registry.
    expect(validateInstalledPlugins(JSON.parse(files.registryText)).ok).toBe(true);
    expect(JSON.parse(files.registryText)).toEqual(files.registry);
  });

  it("personal opt-outs and Claude's off shadow too; the off folder is per marketplace and plugin", () => {
    const set = setOf(declaration(), {
      local: { file: LOCAL_FILE, doc: { version: 1, plugins: { "reviewer@in-repo": { enabled: false } } } },
      claudeLocal: claudeSettings({}, { "lint-helper@acme-tools": false }, `${ROOT}/.claude/settings.local.json`),
    });
    const files = renderHostFiles({ set, pluginCache: CACHE, installs: new Map(), npmFeatures });
    expect(files.offFolders).toEqual([teamOffFolder(CACHE, "acme-tools", "lint-helper"), teamOffFolder(CACHE, "acme-tools", "old-thing"), teamOffFolder(CACHE, "in-repo", "reviewer")]);
    expect(Object.values(files.registry.plugins).every((entries) => entries.every((e) => e.enabled === true && e.installPath.endsWith("___off")))).toBe(true);
  });

  it("overrides: disabled = off npm plugins (team, personal, user); features with '*' expanded; settings of the ones on", () => {
    const set = setOf(declaration(), { local: { file: LOCAL_FILE, doc: { version: 1, plugins: { "@acme/xcsh-search": { settings: { region: "eu" } } } } } });
    const files = renderHostFiles({ set, pluginCache: CACHE, installs, npmFeatures });
    expect(files.overrides).toEqual({ features: { "@acme/xcsh-db": ["query", "migrate"], "@acme/xcsh-search": ["web"] }, settings: { "@acme/xcsh-search": { limit: 20, region: "eu" } } });
    const off = renderHostFiles({ set: setOf(declaration(), { userDisabled: new Map([["@acme/xcsh-search", "/u/lock.json"]]), local: { file: LOCAL_FILE, doc: { version: 1, plugins: { "@acme/xcsh-db": { enabled: false } } } } }), pluginCache: CACHE, installs, npmFeatures });
    expect(off.overrides).toEqual({ disabled: ["@acme/xcsh-db", "@acme/xcsh-search"] });
    expect(validatePluginOverrides(JSON.parse(files.overridesText)).ok).toBe(true);
    expect(off.overridesText).toBe('{\n  "disabled": [\n    "@acme/xcsh-db",\n    "@acme/xcsh-search"\n  ]\n}\n');
  });

  it("ids the set does not mention are kept as they were and reported (WTEAM_UNDECLARED)", () => {
    const existing = { version: 2, plugins: { "mine@user-mkt": [{ scope: "project", installPath: `${CACHE}/x`, version: "1.0.0" }], "reviewer@in-repo": [{ scope: "project", installPath: `${CACHE}/stale` }] } };
    const files = renderHostFiles({ set: setOf(), pluginCache: CACHE, installs, npmFeatures, existingRegistry: existing });
    expect(files.undeclared).toEqual(["mine@user-mkt"]);
    expect(files.registry.plugins["mine@user-mkt"]).toEqual(existing.plugins["mine@user-mkt"]);
    expect(files.registry.plugins["reviewer@in-repo"]![0]!.installPath).toBe(installs.get("reviewer@in-repo")!.installPath);
  });

  it("an enabled plugin without install, or '*' features without the list, is refused rather than half-written", () => {
    expect(() => renderHostFiles({ set: setOf(), pluginCache: CACHE, installs: new Map(), npmFeatures })).toThrow(XcshToolsError);
    expect(() => renderHostFiles({ set: setOf(), pluginCache: CACHE, installs })).toThrow(/features "\*"/);
  });

  it("the bytes are stable: the same set renders the same text", () => {
    const a = renderHostFiles({ set: setOf(), pluginCache: CACHE, installs, npmFeatures });
    const b = renderHostFiles({ set: setOf(), pluginCache: CACHE, installs: new Map([...installs].reverse()), npmFeatures });
    expect([a.registryText, a.overridesText]).toEqual([b.registryText, b.overridesText]);
  });
});

describe(".xcsh/.gitignore", () => {
  it("the text written once lists every per-machine file", () => {
    expect(GITIGNORE_TEXT).toBe('# xcsh-tools: per-machine state generated from xcsh-team.json (see README "Share plugins with your team")\n/plugins/\n/cache/\n/marketplaces.json\n/plugin-overrides.json\n/team.local.json\n');
    expect(missingGitignoreLines(GITIGNORE_TEXT)).toEqual([]);
  });
  it("an existing one: the missing lines (WTEAM_GITIGNORE), spelled with or without slashes", () => {
    expect(missingGitignoreLines("node_modules\nplugins\r\n/cache\n")).toEqual(["/marketplaces.json", "/plugin-overrides.json", "/team.local.json"]);
  });
});

describe("team paths (core/paths.ts)", () => {
  it("committed files at the root, per-machine ones in the config folder, the stamp keyed by the root's real path", () => {
    const p = teamPaths("/r/proj", ".xcsh-dev");
    expect([p.declaration, p.lock, p.local, p.gitignore, p.installedPlugins, p.pluginOverrides, p.claudeSettings]).toEqual([
      "/r/proj/xcsh-team.json",
      "/r/proj/xcsh-team.lock.json",
      "/r/proj/.xcsh-dev/team.local.json",
      "/r/proj/.xcsh-dev/.gitignore",
      "/r/proj/.xcsh-dev/plugins/installed_plugins.json",
      "/r/proj/.xcsh-dev/plugin-overrides.json",
      "/r/proj/.claude/settings.json",
    ]);
    const ours = "/h/.xcsh/plugins/.xcsh-tools";
    expect(teamStampFile(ours, "/r/proj")).toBe(path.join(ours, "team", `${createHash("sha256").update("/r/proj").digest("hex").slice(0, 16)}.json`));
    expect(teamStampFile(ours, "/r/proj")).not.toBe(teamStampFile(ours, "/r/proj2"));
  });
});
