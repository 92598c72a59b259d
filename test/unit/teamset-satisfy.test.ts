/**
 * The lock against the set (src/teamset/satisfy.ts): every kind of difference, with why.
 */
import { describe, expect, it } from "vitest";
import type { TeamDeclaration } from "../../src/manifest/team-declaration.js";
import type { TeamLock } from "../../src/manifest/team-lock.js";
import { isSatisfied, npmGitUrlOf, satisfies } from "../../src/teamset/index.js";
import { LOCAL_FILE, declaration, lock, setOf, sha } from "../helpers/team-fixtures.js";

function stateOf(doc: TeamDeclaration, l: TeamLock, section: string, key: string, facts = {}) {
  const found = satisfies(setOf(doc), l, facts).find((e) => e.section === section && e.key === key);
  return found && [found.state, found.why ?? ""];
}

const withPlugin = (key: string, entry: object) => {
  const doc = declaration();
  doc.plugins = { ...doc.plugins, [key]: entry };
  return doc;
};

describe("satisfies", () => {
  it("ok: the design's lock satisfies the design's declaration, entry by entry, in lock order", () => {
    const result = satisfies(setOf(), lock());
    expect(result.map((e) => [e.section, e.key, e.state])).toEqual([
      ["marketplaces", "acme-tools", "ok"],
      ["marketplaces", "in-repo", "ok"],
      ["marketplaces", "pinned", "ok"],
      ["marketplacePlugins", "lint-helper@acme-tools", "ok"],
      ["marketplacePlugins", "reviewer@in-repo", "ok"],
      ["npm", "@acme/xcsh-db", "ok"],
      ["npm", "@acme/xcsh-search", "ok"],
    ]);
    expect(isSatisfied(result)).toBe(true);
  });

  it("a personal opt-out changes nothing: the lock is the team's", () => {
    const set = setOf(declaration(), { local: { file: LOCAL_FILE, doc: { version: 1, plugins: { "@acme/xcsh-search": { enabled: false }, "reviewer@in-repo": { enabled: false } } } } });
    expect(isSatisfied(satisfies(set, lock()))).toBe(true);
  });

  describe("missing", () => {
    it.each([
      ["npm", "@acme/new", { spec: "^1.0.0" }],
      ["marketplacePlugins", "new@acme-tools", {}],
    ])("%s %s", (section, key, entry) => {
      expect(stateOf(withPlugin(key, entry), lock(), section, key)).toEqual(["missing", "not locked yet"]);
    });
    it("a marketplace, and its plugins become stale with it", () => {
      const doc = declaration();
      doc.marketplaces = { ...doc.marketplaces, extra: { source: { source: "url", url: "https://acme.dev/marketplace.json" } } };
      doc.plugins = { ...doc.plugins, "p@extra": {} };
      const l = lock();
      l.marketplacePlugins["p@extra"] = { version: "1.0.0", from: { kind: "relative", path: "p" }, hash: l.marketplacePlugins["reviewer@in-repo"]!.hash };
      expect(stateOf(doc, l, "marketplaces", "extra")).toEqual(["missing", "not locked yet"]);
      expect(stateOf(doc, l, "marketplacePlugins", "p@extra")?.[0]).toBe("stale");
      expect(stateOf(doc, l, "marketplacePlugins", "p@extra")?.[1]).toContain("its marketplace is missing");
    });
  });

  describe("stale", () => {
    it.each([
      ["a range the locked version does not meet", "@acme/xcsh-search", { spec: "^2.0.0" }, "locked 1.4.2 does not meet the declared ^2.0.0"],
      ["an exact version that differs", "@acme/xcsh-search", { spec: "1.4.3" }, "locked 1.4.2 does not meet the declared 1.4.3"],
      ["a registry range for a plugin locked from git", "@acme/xcsh-db", { spec: "^2.0.0" }, "locked from git https://git.acme.dev/xcsh-db.git"],
      ["another git repository", "@acme/xcsh-db", { spec: "git+https://git.acme.dev/fork.git#v2.0.1" }, "declared the git repository https://git.acme.dev/fork.git"],
      ["a pinned commit that differs", "@acme/xcsh-db", { spec: `git+https://git.acme.dev/xcsh-db.git#${sha("bb")}` }, `declared commit ${sha("bb")}`],
      ["a git semver range not met", "@acme/xcsh-db", { spec: "git+https://git.acme.dev/xcsh-db.git#semver:^3" }, "semver:^3"],
      ["a tarball for a registry lock", "@acme/xcsh-search", { spec: "https://acme.dev/x-1.4.2.tgz" }, "declared the tarball https://acme.dev/x-1.4.2.tgz"],
    ])("npm: %s", (_what, key, entry, why) => {
      const [state, reason] = stateOf(withPlugin(key, entry), lock(), "npm", key)!;
      expect(state).toBe("stale");
      expect(reason).toContain(why);
    });

    it("npm: a dist-tag that names another version now (a fact from the registry)", () => {
      const doc = withPlugin("@acme/xcsh-search", { spec: "next" });
      expect(stateOf(doc, lock(), "npm", "@acme/xcsh-search", { npmTags: new Map([["@acme/xcsh-search", "1.4.2"]]) })).toEqual(["ok", ""]);
      expect(stateOf(doc, lock(), "npm", "@acme/xcsh-search", { npmTags: new Map([["@acme/xcsh-search", "1.5.0"]]) })).toEqual(["stale", "the dist-tag next names 1.5.0, locked 1.4.2"]);
      // Without the fact the locked choice stands, as npm ci does.
      expect(stateOf(doc, lock(), "npm", "@acme/xcsh-search")).toEqual(["ok", ""]);
    });

    it("npm: a hosted git shorthand is compared as the URL git fetches", () => {
      expect(npmGitUrlOf("@acme/x", "github:acme/x#v1")).toBe("https://github.com/acme/x.git");
      const l = lock();
      l.npm["@acme/xcsh-db"]!.from = { kind: "git", url: "https://github.com/acme/xcsh-db.git", commit: sha("aa01") };
      expect(stateOf(withPlugin("@acme/xcsh-db", { spec: "github:acme/xcsh-db#v2.0.1" }), l, "npm", "@acme/xcsh-db")).toEqual(["ok", ""]);
    });

    it("marketplace plugin: locked version outside the declared range", () => {
      expect(stateOf(withPlugin("lint-helper@acme-tools", { version: "^3.0.0" }), lock(), "marketplacePlugins", "lint-helper@acme-tools")).toEqual(["stale", "locked 2.1.3 does not meet the declared range ^3.0.0"]);
    });

    it("marketplace: another source (ref moved), and its plugins with it", () => {
      const doc = declaration();
      doc.marketplaces!["acme-tools"] = { source: { source: "github", repo: "acme/xcsh-marketplace", ref: "v4" } };
      expect(stateOf(doc, lock(), "marketplaces", "acme-tools")?.[1]).toContain("its source changed");
      expect(stateOf(doc, lock(), "marketplacePlugins", "lint-helper@acme-tools")?.[1]).toContain("its marketplace is stale");
    });

    it("marketplace: a declared sha the locked commit is not", () => {
      const l = lock();
      l.marketplaces.pinned!.commit = sha("1111");
      expect(stateOf(declaration(), l, "marketplaces", "pinned")).toEqual(["stale", `declared sha ${sha("9f2c")}, locked commit ${sha("1111")}`]);
    });

    it("marketplace: a git catalog locked without commit, a url catalog without sha256", () => {
      const l = lock();
      delete l.marketplaces["acme-tools"]!.commit;
      expect(stateOf(declaration(), l, "marketplaces", "acme-tools")).toEqual(["stale", "no catalog commit is locked"]);
      const doc = declaration();
      doc.marketplaces!.u = { source: { source: "url", url: "https://acme.dev/m.json" } };
      l.marketplaces.u = { source: { source: "url", url: "https://acme.dev/m.json" } };
      expect(stateOf(doc, l, "marketplaces", "u")).toEqual(["stale", "no catalog sha256 is locked"]);
    });
  });

  describe("extra", () => {
    it("a plugin no longer declared, one the team switched off, a marketplace removed", () => {
      const doc = declaration();
      delete doc.plugins!["@acme/xcsh-search"];
      doc.plugins!["reviewer@in-repo"] = { enabled: false };
      const l = lock();
      l.marketplaces.gone = { source: { source: "directory", path: "./old" } };
      const extra = satisfies(setOf(doc), l).filter((e) => e.state === "extra").map((e) => [e.section, e.key]);
      expect(extra).toEqual([
        ["marketplaces", "gone"],
        ["marketplacePlugins", "reviewer@in-repo"],
        ["npm", "@acme/xcsh-search"],
      ]);
    });
  });
});
