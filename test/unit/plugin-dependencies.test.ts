/**
 * How a plugin.json's `dependencies` are read for an install (issue 45 point 5), as Claude Code
 * 2.1.332 reads them: `name`, `name@marketplace`, each optionally `@version` / `@^version`, or
 * `{name, marketplace?}`; other shapes (ranges it refuses, non-strings) are left out, since
 * validation refuses the plugin.json for them.
 */
import { describe, expect, it } from "vitest";
import { pluginDependencies } from "../../src/manifest/plugin-json.js";

describe("pluginDependencies", () => {
  it("reads names, marketplaces, versions and caret ranges", () => {
    expect(pluginDependencies({ dependencies: ["lib", "lib@acme", "lib@1.2.0", "lib@^1.2", "lib@acme@^1.2.0", "lib@1.x", { name: "obj", marketplace: "acme" }, { name: "bare" }] })).toEqual([
      { name: "lib" },
      { name: "lib", marketplace: "acme" },
      { name: "lib", range: "1.2.0" },
      { name: "lib", range: "^1.2" },
      { name: "lib", marketplace: "acme", range: "^1.2.0" },
      { name: "lib", range: "1.x" },
      { name: "obj", marketplace: "acme" },
      { name: "bare" },
    ]);
  });

  it("a marketplace named like a word that starts with a digit stays a marketplace unless it reads as a version", () => {
    expect(pluginDependencies({ dependencies: ["lib@2fa-tools", "lib@v2"] })).toEqual([{ name: "lib", marketplace: "2fa-tools" }, { name: "lib", marketplace: "v2" }]);
  });

  it("leaves out what Claude Code refuses and what is not a dependency at all", () => {
    const hostile = ["lib@~1.1.0", "lib@>=1.0.0", "lib@*", "lib@=1.2.0", "../lib", "lib@acme@^1@x", "", 42, null, { name: 7 }, ["lib"], "lib@", "@lib"];
    expect(pluginDependencies({ dependencies: hostile })).toEqual([]);
    expect(pluginDependencies({ dependencies: "lib" })).toEqual([]);
    expect(pluginDependencies(null)).toEqual([]);
    expect(pluginDependencies([])).toEqual([]);
  });
});
