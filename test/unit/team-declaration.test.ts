/**
 * `xcsh-team.json` (src/manifest/team-declaration.ts): each class of bad input is refused with its
 * code, naming the file, the JSON path, what was expected and the fix; a good file reads with its
 * unknown keys kept.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { XcshToolsError } from "../../src/core/errors.js";
import { teamPaths } from "../../src/core/paths.js";
import { readTeamDeclaration, secretSettingIssues, validateTeamDeclaration } from "../../src/manifest/team-declaration.js";
import { teamIssueError } from "../../src/manifest/team-file.js";
import { declaration, refusedBy } from "../helpers/team-fixtures.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-team-decl-");

const GOOD = { ...declaration(), "//": "review: keep db pinned" };

function write(doc: unknown): string {
  const file = teamPaths(w.cwd).declaration;
  writeFileSync(file, typeof doc === "string" ? doc : `${JSON.stringify(doc, null, 2)}\n`);
  return file;
}

function refused(doc: unknown): XcshToolsError {
  const file = write(doc);
  const e = refusedBy(() => readTeamDeclaration(file), file);
  expect(e.exitCode).toBe(2);
  return e;
}

const withPlugin = (key: string, plugin: unknown) => ({ ...GOOD, plugins: { ...GOOD.plugins, [key]: plugin } });
const withMarketplace = (name: string, source: unknown) => ({ ...GOOD, marketplaces: { ...GOOD.marketplaces, [name]: { source } } });

describe("xcsh-team.json", () => {
  it("reads the design's example, unknown keys kept", () => {
    const doc = readTeamDeclaration(write(GOOD));
    expect(doc).toEqual(GOOD);
    expect(doc?.["//"]).toBe("review: keep db pinned");
  });

  it("a FIFO in the declaration's place (a project file: untrusted) is ENOT_A_FILE, never a read that waits for a writer", () => {
    const file = path.join(w.cwd, "xcsh-team.json");
    execFileSync("mkfifo", [file]);
    const e = refusedBy(() => readTeamDeclaration(file), file);
    expect(e.code).toBe("ENOT_A_FILE");
  });

  it("a missing file is no declaration", () => {
    expect(readTeamDeclaration(path.join(w.cwd, "xcsh-team.json"))).toBeUndefined();
  });

  describe("unknown marketplace (ETEAM_UNKNOWN_MARKETPLACE)", () => {
    it("a plugin of a marketplace declared nowhere", () => {
      const e = refused(withPlugin("x@nowhere", {}));
      expect([e.code, e.path]).toEqual(["ETEAM_UNKNOWN_MARKETPLACE", "/plugins/x@nowhere"]);
      expect(e.message).toContain("not declared");
      expect(e.hint).toContain("marketplace add");
    });
    it("a marketplace Claude Code's settings declare is known", () => {
      const result = validateTeamDeclaration(withPlugin("x@claude-mkt", {}), { otherMarketplaces: ["claude-mkt"] });
      expect(result.ok).toBe(true);
    });
  });

  describe("machine paths (ETEAM_MACHINE_PATH)", () => {
    it.each([["/abs/marketplace"], ["~/marketplace"], ["../outside"], ["tools/../../outside"], ["C:\\mkt"], ["\\\\server\\share"], ["~"]])("directory %j", (p) => {
      const e = refused(withMarketplace("local", { source: "directory", path: p }));
      expect([e.code, e.path]).toEqual(["ETEAM_MACHINE_PATH", "/marketplaces/local/source/path"]);
      expect(e.message).toContain("expected a relative path inside the project root");
      expect(e.hint).toContain("relative to the project root");
    });
    it("a relative path that stays inside is fine", () => {
      expect(validateTeamDeclaration(withMarketplace("local", { source: "directory", path: "tools/../mkt" })).ok).toBe(true);
    });
  });

  describe("folder specs (ETEAM_SPEC)", () => {
    it.each([["file:../x"], ["file:/abs/x.tgz"], ["link:../x"], ["./local-folder"], ["../x"], ["/abs/folder"], ["~/x"], ["http://acme.dev/x.tgz"], ["npm:other@1"]])("spec %j", (spec) => {
      const e = refused(withPlugin("@acme/x", { spec }));
      expect([e.code, e.path]).toEqual(["ETEAM_SPEC", "/plugins/@acme~1x/spec"]);
      expect(e.message).toContain("expected a version, range, dist-tag, git URL or https tarball URL");
      expect(e.hint).toContain("directory");
    });
    it.each([["^1.2.0"], ["1.2.3"], ["latest"], ["git+https://git.acme.dev/x.git#v1"], ["github:acme/x#v1"], ["https://acme.dev/x-1.0.0.tgz"], [">=1 <2"]])("spec %j is accepted", (spec) => {
      expect(validateTeamDeclaration(withPlugin("@acme/x", { spec })).ok).toBe(true);
    });
  });

  describe("hostile git values (core/source-args.ts codes)", () => {
    it.each([
      [{ source: "git", url: "ext::sh -c touch% /tmp/pwned" }, "EGIT_URL", "/marketplaces/m/source/url"],
      [{ source: "git", url: "--upload-pack=touch /tmp/pwned" }, "EGIT_URL", "/marketplaces/m/source/url"],
      [{ source: "git", url: "file:///home/me/repo" }, "EGIT_URL", "/marketplaces/m/source/url"],
      [{ source: "git", url: "https://-oProxyCommand=x/y" }, "EGIT_URL", "/marketplaces/m/source/url"],
      [{ source: "github", repo: "--help/x" }, "ESOURCE_INVALID", "/marketplaces/m/source/repo"],
      [{ source: "github", repo: "acme/x", ref: "--output=/tmp/x" }, "EGIT_REF", "/marketplaces/m/source/ref"],
      [{ source: "github", repo: "acme/x", sha: "abc" }, "ESHA", "/marketplaces/m/source/sha"],
      [{ source: "github", repo: "acme/x", path: "../../etc" }, "EENTRY_ESCAPE", "/marketplaces/m/source/path"],
      [{ source: "url", url: "file:///etc/passwd" }, "ESOURCE_URL", "/marketplaces/m/source/url"],
    ])("marketplace source %j", (source, code, at) => {
      const e = refused(withMarketplace("m", source));
      expect([e.code, e.path]).toEqual([code, at]);
    });
    it.each([["git+ext::sh -c x"], ["git+ssh://-oProxyCommand=x/y.git"], ["git+file:///home/me/x.git"], ["git+https://acme.dev/x.git#--upload-pack=x"]])("npm git spec %j", (spec) => {
      const e = refused(withPlugin("@acme/x", { spec }));
      expect(e.code).toMatch(/^(EGIT_URL|EGIT_REF|ETEAM_SPEC)$/);
      expect(e.path).toBe("/plugins/@acme~1x/spec");
    });
  });

  describe("wrong types and shapes (ETEAM_DECLARATION_INVALID)", () => {
    it.each([
      [{ version: 1, plugins: [] }, "/plugins", "an object"],
      [{ version: 1, plugins: { "@acme/x": { enabled: "no" } } }, "/plugins/@acme~1x/enabled", "true or false"],
      [{ version: 1, plugins: { "@acme/x": { features: "all" } } }, "/plugins/@acme~1x/features", '"*" or an array'],
      [{ version: 1, marketplaces: { m: { source: { source: "npm", package: "x" } } } }, "/marketplaces/m/source", "github"],
      [{ plugins: {} }, "/version", "1"],
      [{ version: "1" }, "/version", "1"],
      [{ version: 0 }, "/version", "1"],
      [{ version: 1, plugins: { "Bad Name": {} } }, "/plugins/Bad Name", "npm package name"],
      [{ version: 1, marketplaces: { "Bad_Name": { source: { source: "github", repo: "a/b" } } } }, "/marketplaces/Bad_Name", "lower-case"],
      [{ version: 1, plugins: { "@acme/x": { version: "^1" } } }, "/plugins/@acme~1x/version", '"spec"'],
    ])("%j", (doc, at, expected) => {
      const e = refused(doc);
      expect([e.code, e.path]).toEqual(["ETEAM_DECLARATION_INVALID", at]);
      expect(e.message).toContain(expected);
    });
    it("a newer declaration version says to upgrade", () => {
      const e = refused({ version: 2 });
      expect([e.code, e.path]).toEqual(["ETEAM_DECLARATION_INVALID", "/version"]);
      expect(e.hint).toContain("upgrade xcsh-tools");
    });
    it("a file that is not JSON", () => {
      const e = refused("{ version: 1 ");
      expect(e.code).toBe("ETEAM_DECLARATION_INVALID");
      expect(e.hint).toContain("xcsh-team.json");
    });
  });

  describe("merge conflict markers (ETEAM_CONFLICT_MARKERS)", () => {
    it.each([
      ['{\n  "version": 1,\n<<<<<<< HEAD\n  "plugins": {"a": {}}\n=======\n  "plugins": {"b": {}}\n>>>>>>> feat\n}\n', 3],
      ['{\n  "version": 1,\n  "plugins": {\n<<<<<<< ours\n    "a": {}\n||||||| base\n=======\n    "b": {}\n>>>>>>> theirs\n  }\n}\n', 4],
    ])("markers are named with file and line %#", (text, line) => {
      const e = refused(text);
      expect([e.code, e.path]).toEqual(["ETEAM_CONFLICT_MARKERS", `line ${line}`]);
      expect(e.message).toContain(`line ${line}`);
      expect(e.hint).toContain("Resolve the conflict");
    });
    it("marker-like text inside a string is not a marker", () => {
      expect(readTeamDeclaration(write({ version: 1, "//": "<<<<<<< not a marker" }))?.version).toBe(1);
    });
  });

  describe("secret settings (ESECRET_SCOPE)", () => {
    it("names xcsh-team.json and /plugins/<name>/settings/<key>", () => {
      const file = teamPaths(w.cwd).declaration;
      const issues = secretSettingIssues({ "@acme/x": { settings: { limit: 1, apiKey: "s3cret" } } }, (name) => (name === "@acme/x" ? ["apiKey"] : undefined));
      const e = teamIssueError(file, issues, "ETEAM_DECLARATION_INVALID");
      expect([e.code, e.file, e.path, e.exitCode]).toEqual(["ESECRET_SCOPE", file, "/plugins/@acme~1x/settings/apiKey", 2]);
      expect(e.message).toContain("xcsh-team.json");
      expect(e.hint).toContain("xcsh-tools config set @acme/x apiKey");
    });
    it("non-secret settings pass", () => {
      expect(secretSettingIssues({ "@acme/x": { settings: { limit: 1 } } }, () => ["apiKey"])).toEqual([]);
    });
  });
});
