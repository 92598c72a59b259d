/**
 * A project's Claude Code settings read as part of its team set (src/manifest/claude-team-settings.ts):
 * `extraKnownMarketplaces` become declared marketplaces, `enabledPlugins` on/off; sources a
 * committed set cannot use are `ETEAM_SOURCE` naming `.claude/settings.json` and the JSON path.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { teamPaths } from "../../src/core/paths.js";
import { readClaudeTeamSettings } from "../../src/manifest/claude-team-settings.js";
import { refusedBy } from "../helpers/team-fixtures.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-claude-team-");

function write(doc: unknown, local = false): string {
  const paths = teamPaths(w.cwd);
  const file = local ? paths.claudeLocalSettings : paths.claudeSettings;
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof doc === "string" ? doc : JSON.stringify(doc, null, 2));
  return file;
}

function refused(file: string): XcshToolsError {
  const e = refusedBy(() => readClaudeTeamSettings(file, w.cwd), file);
  expect(e.message).toContain(".claude");
  return e;
}

describe(".claude/settings.json as a team set", () => {
  it("reads marketplaces and enabledPlugins; other keys ignored; autoUpdate ignored", () => {
    const file = write({
      permissions: { allow: ["Bash"] },
      extraKnownMarketplaces: {
        "acme-tools": { source: { source: "github", repo: "acme/xcsh-marketplace", ref: "v3" }, autoUpdate: true },
        "in-repo": { source: { source: "directory", path: path.join(w.cwd, "tools", "marketplace") } },
        rel: { source: { source: "directory", path: "./mkt" } },
      },
      enabledPlugins: { "lint-helper@acme-tools": true, "old@acme-tools": false, "v@in-repo": ["1.0.0"] },
    });
    const read = readClaudeTeamSettings(file, w.cwd)!;
    expect(read.file).toBe(file);
    expect(Object.fromEntries(read.marketplaces)).toEqual({
      "acme-tools": { source: "github", repo: "acme/xcsh-marketplace", ref: "v3" },
      // Claude Code writes absolute folders; inside the project they become relative, as a committed file needs.
      "in-repo": { source: "directory", path: "./tools/marketplace" },
      rel: { source: "directory", path: "./mkt" },
    });
    expect(Object.fromEntries(read.enabledPlugins)).toEqual({ "lint-helper@acme-tools": true, "old@acme-tools": false, "v@in-repo": true });
  });

  it("no file: nothing", () => {
    expect(readClaudeTeamSettings(teamPaths(w.cwd).claudeSettings, w.cwd)).toBeUndefined();
  });

  describe("unsupported sources (ETEAM_SOURCE)", () => {
    it.each([
      [{ source: "npm", package: "@acme/mkt" }, "/extraKnownMarketplaces/m/source"],
      [{ source: "settings" }, "/extraKnownMarketplaces/m/source"],
      [{ source: "hostPattern", hostPattern: "*.acme.dev" }, "/extraKnownMarketplaces/m/source"],
      [{ source: "file", path: "/abs/marketplace.json" }, "/extraKnownMarketplaces/m/source"],
      [{ source: "directory", path: "/somewhere/else/mkt" }, "/extraKnownMarketplaces/m/source/path"],
    ])("%j", (source, at) => {
      const e = refused(write({ extraKnownMarketplaces: { m: { source } } }));
      expect([e.code, e.path]).toEqual(["ETEAM_SOURCE", at]);
      expect(e.hint).toContain('Declare "m" in xcsh-team.json');
    });
  });

  it.each([
    [{ source: "git", url: "ext::sh -c x" }, "EGIT_URL", "/extraKnownMarketplaces/m/source/url"],
    [{ source: "directory", path: "../outside" }, "ETEAM_MACHINE_PATH", "/extraKnownMarketplaces/m/source/path"],
    [{ source: "github" }, "ETEAM_DECLARATION_INVALID", "/extraKnownMarketplaces/m/source"],
  ])("hostile or broken source %j", (source, code, at) => {
    const e = refused(write({ extraKnownMarketplaces: { m: { source } } }));
    expect([e.code, e.path]).toEqual([code, at]);
  });

  it("wrong types are ETEAM_DECLARATION_INVALID with the path", () => {
    const e = refused(write({ enabledPlugins: { "x@m": "yes" } }));
    expect([e.code, e.path]).toEqual(["ETEAM_DECLARATION_INVALID", "/enabledPlugins/x@m"]);
  });

  it("conflict markers in settings.local.json", () => {
    const e = refused(write('{\n<<<<<<< HEAD\n"enabledPlugins": {}\n=======\n>>>>>>> x\n}', true));
    expect([e.code, e.path]).toEqual(["ETEAM_CONFLICT_MARKERS", "line 2"]);
  });
});
