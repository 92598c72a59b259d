/**
 * Edits of xcsh-team.json (`--scope project`) and .xcsh/team.local.json (`--scope local`)
 * (src/teamset/edit.ts): canonical bytes, unknown keys kept, every result valid, refusals coded.
 */
import { describe, expect, it } from "vitest";
import { declaredSourceOf, editDeclaration, editLocal, formatDeclaration, formatLocal, type DeclarationEdit } from "../../src/teamset/index.js";
import { CLAUDE_FILE, DECLARATION_FILE, LOCAL_FILE, claudeSettings, declaration, refusedBy, setOf } from "../helpers/team-fixtures.js";

const ctx = { file: DECLARATION_FILE, secretKeysOf: (name: string) => (name === "@acme/xcsh-search" ? ["apiKey"] : undefined) };

const refused = (run: () => unknown) => refusedBy(run);

describe("editDeclaration", () => {
  it("starts a declaration, canonical bytes", () => {
    const doc = editDeclaration(undefined, { op: "add-plugin", key: "@acme/x", entry: { spec: "^1.2.0" } }, ctx);
    expect(formatDeclaration(doc)).toBe('{\n  "version": 1,\n  "plugins": {\n    "@acme/x": {\n      "spec": "^1.2.0"\n    }\n  }\n}\n');
  });

  it("unknown keys are kept; schema order and sorted names; re-running an edit changes no byte", () => {
    const doc = { "//": "review: keep db pinned", ...declaration(), zeta: true } as ReturnType<typeof declaration>;
    (doc.plugins!["@acme/xcsh-search"] as Record<string, unknown>).note = "why";
    const edit: DeclarationEdit = { op: "add-plugin", key: "@acme/a-first", entry: { features: ["x"], spec: "~1.0.0" } };
    const once = formatDeclaration(editDeclaration(doc, edit, ctx));
    const twice = formatDeclaration(editDeclaration(JSON.parse(once), edit, ctx));
    expect(twice).toBe(once);
    const parsed = JSON.parse(once);
    expect(Object.keys(parsed)).toEqual(["version", "marketplaces", "plugins", "//", "zeta"]);
    expect(Object.keys(parsed.plugins)).toEqual(["@acme/a-first", "@acme/xcsh-db", "@acme/xcsh-search", "lint-helper@acme-tools", "old-thing@acme-tools", "reviewer@in-repo"]);
    expect(Object.keys(parsed.plugins["@acme/a-first"])).toEqual(["spec", "features"]);
    expect(parsed.plugins["@acme/xcsh-search"].note).toBe("why");
    expect(once).toContain('"source": "github",\n        "repo": "acme/xcsh-marketplace",\n        "ref": "v3"');
  });

  it("a plugin the team only switched off, switched on again, leaves the declaration (it would otherwise be declared anew)", () => {
    let doc = declaration();
    // An npm plugin of the user's own (a folder install, say): off for the team, then on again: no entry, not a spec-less "latest".
    doc = editDeclaration(doc, { op: "enable", key: "@mine/folder-plugin", enabled: false }, ctx);
    expect(doc.plugins!["@mine/folder-plugin"]).toEqual({ enabled: false });
    doc = editDeclaration(doc, { op: "enable", key: "@mine/folder-plugin", enabled: true }, ctx);
    expect(doc.plugins).not.toHaveProperty(["@mine/folder-plugin"]);
    // Declared otherwise (a spec, a declared marketplace): kept, switched on.
    doc = editDeclaration(doc, { op: "enable", key: "@acme/xcsh-search", enabled: false }, ctx);
    doc = editDeclaration(doc, { op: "enable", key: "@acme/xcsh-search", enabled: true }, ctx);
    expect(doc.plugins!["@acme/xcsh-search"]).toHaveProperty("spec");
    expect(doc.plugins!["old-thing@acme-tools"]).toEqual({ enabled: false });
    expect(editDeclaration(doc, { op: "enable", key: "old-thing@acme-tools", enabled: true }, ctx).plugins!["old-thing@acme-tools"]).toEqual({});
  });

  it("enable/disable, features, settings set/delete", () => {
    let doc = declaration();
    doc = editDeclaration(doc, { op: "enable", key: "old-thing@acme-tools", enabled: true }, ctx);
    expect(doc.plugins!["old-thing@acme-tools"]).toEqual({});
    doc = editDeclaration(doc, { op: "enable", key: "@acme/xcsh-db", enabled: false }, ctx);
    expect(doc.plugins!["@acme/xcsh-db"]).toEqual({ spec: "git+https://git.acme.dev/xcsh-db.git#v2.0.1", enabled: false, features: "*" });
    doc = editDeclaration(doc, { op: "features", key: "@acme/xcsh-db", features: undefined }, ctx);
    expect(doc.plugins!["@acme/xcsh-db"]).not.toHaveProperty("features");
    doc = editDeclaration(doc, { op: "setting-set", key: "@acme/xcsh-search", setting: "limit", value: 50 }, ctx);
    doc = editDeclaration(doc, { op: "setting-set", key: "@acme/xcsh-search", setting: "__proto__", value: { polluted: true } }, ctx);
    expect(doc.plugins!["@acme/xcsh-search"]!.settings).toEqual(JSON.parse('{"limit": 50, "__proto__": {"polluted": true}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    doc = editDeclaration(doc, { op: "setting-delete", key: "@acme/xcsh-search", setting: "limit" }, ctx);
    doc = editDeclaration(doc, { op: "setting-delete", key: "@acme/xcsh-search", setting: "__proto__" }, ctx);
    expect(doc.plugins!["@acme/xcsh-search"]).not.toHaveProperty("settings");
  });

  it("a plugin only Claude's file switches off gets an explicit enabled: true override (never an edit of .claude/)", () => {
    const claude = claudeSettings({ cm: { source: "github", repo: "acme/m" } }, { "p@cm": false });
    const doc = editDeclaration(declaration(), { op: "enable", key: "p@cm", enabled: true }, { ...ctx, claude });
    expect(doc.plugins!["p@cm"]).toEqual({ enabled: true });
  });

  it("marketplace add and remove", () => {
    let doc = editDeclaration(declaration(), { op: "marketplace-add", name: "new", source: { source: "git", url: "https://git.acme.dev/new.git", ref: "main" } }, ctx);
    expect(doc.marketplaces!.new).toEqual({ source: { source: "git", url: "https://git.acme.dev/new.git", ref: "main" } });
    doc = editDeclaration(doc, { op: "marketplace-remove", name: "new" }, ctx);
    expect(doc.marketplaces).not.toHaveProperty("new");
  });

  describe("refusals name the file and the JSON path", () => {
    it.each([
      ["a secret setting: ESECRET_SCOPE", { op: "setting-set", key: "@acme/xcsh-search", setting: "apiKey", value: "s3cret" }, "ESECRET_SCOPE", "/plugins/@acme~1xcsh-search/settings/apiKey"],
      ["a secret in a new plugin: ESECRET_SCOPE", { op: "add-plugin", key: "@acme/xcsh-search", entry: { spec: "^1", settings: { apiKey: "x" } } }, "ESECRET_SCOPE", "/plugins/@acme~1xcsh-search/settings/apiKey"],
      ["a folder spec: ETEAM_SPEC", { op: "add-plugin", key: "@acme/y", entry: { spec: "file:../y" } }, "ETEAM_SPEC", "/plugins/@acme~1y/spec"],
      ["a plugin of an undeclared marketplace", { op: "add-plugin", key: "x@nowhere", entry: {} }, "ETEAM_UNKNOWN_MARKETPLACE", "/plugins/x@nowhere"],
      ["removing what is not declared", { op: "remove-plugin", key: "@acme/none" }, "ETEAM_NOT_DECLARED", "/plugins/@acme~1none"],
      ["removing a marketplace still used", { op: "marketplace-remove", name: "acme-tools" }, "ETEAM_UNKNOWN_MARKETPLACE", "/plugins/lint-helper@acme-tools"],
      ["removing an undeclared marketplace", { op: "marketplace-remove", name: "none" }, "EMARKETPLACE_NOT_FOUND", "/marketplaces/none"],
      ["adding a marketplace name with another source", { op: "marketplace-add", name: "acme-tools", source: { source: "github", repo: "evil/m" } }, "EMARKETPLACE_EXISTS", "/marketplaces/acme-tools"],
      ["a machine path", { op: "marketplace-add", name: "local", source: { source: "directory", path: "/home/a/mkt" } }, "ETEAM_MACHINE_PATH", "/marketplaces/local/source/path"],
      ["an option-shaped git URL", { op: "marketplace-add", name: "evil", source: { source: "git", url: "--upload-pack=x" } }, "EGIT_URL", "/marketplaces/evil/source/url"],
    ] as [string, DeclarationEdit, string, string][])("%s", (_what, edit, code, at) => {
      const e = refused(() => editDeclaration(declaration(), edit, ctx));
      expect([e.code, e.file, e.path]).toEqual([code, DECLARATION_FILE, at]);
      expect(e.message).toContain(DECLARATION_FILE);
    });

    it("removing a plugin only Claude declares says how to switch it off", () => {
      const claude = claudeSettings({ cm: { source: "github", repo: "acme/m" } }, { "p@cm": true });
      const e = refused(() => editDeclaration(declaration(), { op: "remove-plugin", key: "p@cm" }, { ...ctx, claude }));
      expect(e.hint).toContain(CLAUDE_FILE);
      expect(e.hint).toContain("disable p@cm --scope project");
    });
  });
});

describe("editLocal (--scope local)", () => {
  const localCtx = { ...ctx, file: LOCAL_FILE };
  it("switches a declared plugin off, back on (the entry goes away), picks features", () => {
    const set = setOf();
    let doc = editLocal(undefined, set, { op: "enable", key: "@acme/xcsh-search", enabled: false }, localCtx);
    expect(formatLocal(doc)).toBe('{\n  "version": 1,\n  "plugins": {\n    "@acme/xcsh-search": {\n      "enabled": false\n    }\n  }\n}\n');
    doc = editLocal(doc, set, { op: "enable", key: "@acme/xcsh-search", enabled: true }, localCtx);
    expect(doc.plugins).toEqual({});
    doc = editLocal(doc, set, { op: "enable", key: "old-thing@acme-tools", enabled: true }, localCtx);
    expect(doc.plugins!["old-thing@acme-tools"]).toEqual({ enabled: true });
    doc = editLocal(doc, set, { op: "features", key: "@acme/xcsh-db", features: [] }, localCtx);
    expect(doc.plugins!["@acme/xcsh-db"]).toEqual({ features: [] });
  });
  it("ETEAM_NOT_DECLARED for a plugin the project does not declare: use --scope user", () => {
    const e = refused(() => editLocal(undefined, setOf(), { op: "enable", key: "@other/x", enabled: false }, localCtx));
    expect([e.code, e.file, e.path]).toEqual(["ETEAM_NOT_DECLARED", LOCAL_FILE, "/plugins/@other~1x"]);
    expect(e.hint).toContain("--scope user");
  });
  it("ESECRET_SCOPE for a secret, naming the personal file", () => {
    const e = refused(() => editLocal(undefined, setOf(), { op: "setting-set", key: "@acme/xcsh-search", setting: "apiKey", value: "x" }, localCtx));
    expect([e.code, e.file, e.path]).toEqual(["ESECRET_SCOPE", LOCAL_FILE, "/plugins/@acme~1xcsh-search/settings/apiKey"]);
  });
});

describe("declaredSourceOf: what `marketplace add --scope project` declares", () => {
  const root = "/work/project";
  const at = (kind: string, uri: string) => declaredSourceOf({ kind, uri }, root, DECLARATION_FILE);

  it("a folder inside the root → a relative directory source; git and GitHub as typed, with their ref", () => {
    expect(at("local", "/work/project/tools/mkt")).toEqual({ source: "directory", path: "./tools/mkt" });
    expect(at("local", "/work/project")).toEqual({ source: "directory", path: "./" });
    expect(at("local", "/work/project/..dots/mkt")).toEqual({ source: "directory", path: "./..dots/mkt" });
    expect(at("git", "https://git.acme.dev/mkt.git#v3")).toEqual({ source: "git", url: "https://git.acme.dev/mkt.git", ref: "v3" });
    expect(at("github", "acme/mkt")).toEqual({ source: "github", repo: "acme/mkt" });
    expect(at("url", "https://acme.dev/marketplace.json")).toEqual({ source: "url", url: "https://acme.dev/marketplace.json" });
  });

  it.each([
    ["a folder outside the root", "/work/other/mkt"],
    ["a sibling whose name starts like the root's", "/work/project-evil/mkt"],
    ["a parent of the root", "/work"],
  ])("%s: ETEAM_MACHINE_PATH naming the declaration", (_what, folder) => {
    const e = refusedBy(() => at("local", folder), DECLARATION_FILE);
    expect(e.code).toBe("ETEAM_MACHINE_PATH");
  });
});
