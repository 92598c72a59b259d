/**
 * Claude Code's catalog and plugin.json formats as they are in late 2026 (issue #28, points 1–3):
 * `metadata.pluginRoot` resolved the way Claude Code does, the current reserved names as
 * warnings, the fields Claude Code defines, `url` sources with a `path`, `archive` sources, and
 * source kinds that would run a command refused with their own code.
 */
import { describe, expect, it } from "vitest";
import { RESERVED_MARKETPLACE_NAMES, relativeSourceDir, reservedMarketplaceName, validateMarketplaceCatalog } from "../../src/manifest/marketplace-catalog.js";
import { validatePluginJson } from "../../src/manifest/plugin-json.js";
import type { ValidationResult } from "../../src/manifest/result.js";
import { catalog } from "../helpers/marketplace-fixtures.js";

function errors(result: ValidationResult<unknown>): [string, string][] {
  return result.ok ? [] : result.issues.map((i) => [i.code, i.path]);
}
function warnings(result: ValidationResult<unknown>): [string, string][] {
  return result.warnings.map((w) => [w.code, w.path]);
}
const SHA = "30287f5e3f122a646d1ac5ca3ab96e130c52a3ad";

describe("metadata.pluginRoot (Claude Code's rule)", () => {
  const withRoot = { metadata: { pluginRoot: "./plugins" } };
  it("a ./ source starts at the marketplace root and is never prefixed again", () => {
    expect(relativeSourceDir("./plugins/x", withRoot)).toBe("plugins/x");
    expect(relativeSourceDir("./plugins/x", {})).toBe("plugins/x");
    expect(relativeSourceDir("./", withRoot)).toBe("./");
  });
  it("a bare name resolves under pluginRoot", () => {
    expect(relativeSourceDir("formatter", withRoot)).toBe("plugins/formatter");
    expect(relativeSourceDir("formatter", { metadata: { pluginRoot: "plugins" } })).toBe("plugins/formatter");
  });
  it("a bare name validates with a pluginRoot and is ESOURCE_PATH without one", () => {
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "f", source: "formatter" }], withRoot)))).toEqual([]);
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "f", source: "formatter" }])))).toEqual([["ESOURCE_PATH", "/plugins/0/source"]]);
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "f", source: "../formatter" }], withRoot)))).toEqual([["EENTRY_ESCAPE", "/plugins/0/source"]]);
  });
});

describe("reserved marketplace names", () => {
  it("the current list (official, community, directory names) and impersonations are warnings", () => {
    for (const name of ["claude-plugins-official", "knowledge-work-plugins", "claude-for-legal", "healthcare", "claude-plugin-directory", "claude-plugins-community"]) {
      expect(RESERVED_MARKETPLACE_NAMES).toContain(name);
      const result = validateMarketplaceCatalog(catalog(name, []), { flavour: "claude" });
      expect(result.ok).toBe(true);
      expect(warnings(result)).toContainEqual(["EMARKETPLACE_RESERVED", "/name"]);
    }
    expect(reservedMarketplaceName("official-claude-plugins")).toBe("impersonating");
    expect(reservedMarketplaceName("anthropic-tools")).toBe("impersonating");
    expect(reservedMarketplaceName("claude-code-workflows")).toBeUndefined();
    expect(warnings(validateMarketplaceCatalog(catalog("claude-code-workflows", [])))).toEqual([]);
  });
});

describe("fields Claude Code defines", () => {
  it("top-level renames and allowCrossMarketplaceDependenciesOn are known (no warning)", () => {
    const doc = catalog("m", [{ name: "new-name", source: "./p" }], { renames: { "old-name": "new-name", "wordpress.com": "new-name" }, allowCrossMarketplaceDependenciesOn: ["other"] });
    const result = validateMarketplaceCatalog(doc);
    expect(errors(result)).toEqual([]);
    expect(warnings(result)).toEqual([]);
  });
  it("a rename to a plugin the catalog does not list, or of a listed plugin, warns ERENAME", () => {
    const result = validateMarketplaceCatalog(catalog("m", [{ name: "a", source: "./a" }], { renames: { x: "missing", a: "b" } }));
    expect(warnings(result)).toEqual([
      ["ERENAME", "/renames/x"],
      ["ERENAME", "/renames/a"],
    ]);
    expect(errors(validateMarketplaceCatalog(catalog("m", [], { renames: { x: 3 } }))).map(([c]) => c)).toContain("ETYPE");
  });
  it("entry relevance, metadata and defaultEnabled are known", () => {
    const result = validateMarketplaceCatalog(catalog("m", [{ name: "a", source: "./a", relevance: 0.5, metadata: { featured: true }, defaultEnabled: false }]));
    expect(errors(result)).toEqual([]);
    expect(warnings(result)).toEqual([]);
  });
  it("plugin.json displayName, defaultEnabled and channels are known; category still warns", () => {
    const result = validatePluginJson({ name: "p", displayName: "P", defaultEnabled: false, channels: { stable: {} } }, { flavour: "claude" });
    expect(errors(result)).toEqual([]);
    expect(warnings(result)).toEqual([]);
    expect(errors(validatePluginJson({ name: "p", defaultEnabled: "yes" })).map(([c]) => c)).toContain("ETYPE");
    expect(errors(validatePluginJson({ name: "p", channels: ["stable"] }, { flavour: "claude" })).map(([c]) => c)).toContain("ETYPE");
    expect(warnings(validatePluginJson({ name: "p", category: "x" }, { flavour: "claude" })).map(([c]) => c)).toEqual(["EUNKNOWN_KEY"]);
  });
  it("a url source may carry a path, checked like git-subdir's", () => {
    const ok = validateMarketplaceCatalog(catalog("m", [{ name: "a", source: { source: "url", url: "https://example.com/r.git", path: "plugins/a", sha: SHA } }]));
    expect(errors(ok)).toEqual([]);
    expect(warnings(ok)).toEqual([]);
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "a", source: { source: "url", url: "https://example.com/r.git", path: "../x" } }])))).toEqual([["EENTRY_ESCAPE", "/plugins/0/source/path"]]);
  });
  it("archive sources: https url, sha256 or SRI integrity; plain http only for a catalog on the local disk", () => {
    const good = { source: "archive", url: "https://example.com/p.tar.gz", sha256: "a".repeat(64), integrity: "sha512-AAAA" };
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "a", source: good }])))).toEqual([]);
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "a", source: { source: "archive", url: "https://example.com/p.tar.gz", sha256: "abc" } }])))).toEqual([["ESCHEMA", "/plugins/0/source/sha256"]]);
    const http = catalog("m", [{ name: "a", source: { source: "archive", url: "http://127.0.0.1:9/p.tar.gz" } }]);
    expect(errors(validateMarketplaceCatalog(http, { allowLocalSources: true }))).toEqual([]);
    expect(errors(validateMarketplaceCatalog(http, { allowLocalSources: false }))).toEqual([["ESOURCE_URL", "/plugins/0/source/url"]]);
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "a", source: { source: "archive", url: "file:///etc/p.tar.gz" } }])))).toEqual([["ESOURCE_URL", "/plugins/0/source/url"]]);
  });
  it("a source kind that would run a command is ESOURCE_COMMAND, an unknown one ESOURCE_KIND", () => {
    for (const source of [{ source: "command", command: "make plugin" }, { source: "pip", package: "x" }, { source: "generated", command: ["sh", "-c", "x"] }]) {
      expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "a", source }])))).toEqual([["ESOURCE_COMMAND", "/plugins/0/source/source"]]);
    }
    expect(errors(validateMarketplaceCatalog(catalog("m", [{ name: "a", source: { source: "gopher", url: "x" } }])))).toEqual([["ESOURCE_KIND", "/plugins/0/source/source"]]);
  });
});
