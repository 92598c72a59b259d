/**
 * Pure validators of src/manifest: name rules, typo warnings, tolerant reading (unknown keys kept)
 * versus strict validation, and the path/code of each issue. Table driven.
 */
import { describe, expect, it } from "vitest";
import { validateInstalledPlugins } from "../../src/manifest/installed-plugins.js";
import { validateKnownMarketplaces } from "../../src/manifest/known-marketplaces.js";
import { validateMarketplaceCatalog } from "../../src/manifest/marketplace-catalog.js";
import { validateMarketplacesRegistry } from "../../src/manifest/marketplaces-registry.js";
import { nameSegmentProblem, npmNameProblem, pluginIdProblem, toolNameProblem } from "../../src/manifest/names.js";
import { validatePluginJson } from "../../src/manifest/plugin-json.js";
import { PluginManifestSchema, validatePluginManifest, validatePluginPackageJson } from "../../src/manifest/plugin-manifest.js";
import { validatePluginOverrides } from "../../src/manifest/plugin-overrides.js";
import { validatePluginsPackageJson } from "../../src/manifest/plugins-package.js";
import type { ValidationResult } from "../../src/manifest/result.js";
import { checkSchema } from "../../src/manifest/schema-check.js";
import { validateRuntimeLock } from "../../src/manifest/runtime-lock.js";
import { closestKey } from "../../src/manifest/unknown-keys.js";

function issues(result: ValidationResult<unknown>): [string, string][] {
  return result.ok ? [] : result.issues.map((i) => [i.code, i.path]);
}

describe("name rules", () => {
  it.each([
    ["my-plugin", true],
    ["wordpress.com", true],
    ["a", true],
    ["a".repeat(64), true],
    ["a".repeat(65), false],
    ["-bad", false],
    ["bad-", false],
    [".bad", false],
    ["Bad", false],
    ["under_score", false],
    ["a b", false],
    ["a@b", false],
    ["a/b", false],
    ["", false],
  ])("plugin/marketplace name %j valid=%s", (name, valid) => {
    expect(nameSegmentProblem(name) === undefined).toBe(valid);
  });

  it.each([
    ["p@m", true],
    ["my-plugin@acme.market", true],
    ["p", false],
    ["@m", false],
    ["p@", false],
    ["P@m", false],
    [`${"a".repeat(64)}@${"b".repeat(63)}`, true],
    [`${"a".repeat(64)}@${"b".repeat(64)}`, false],
  ])("plugin id %j valid=%s", (id, valid) => {
    expect(pluginIdProblem(id) === undefined).toBe(valid);
  });

  it.each([
    ["left-pad", true],
    ["@scope/name", true],
    ["@scope/na.me_x-1", true],
    ["Capital", false],
    [".hidden", false],
    ["_under", false],
    [" space", false],
    ["a/b", false],
    ["node_modules", false],
    ["http", false],
    ["@scope/.x", false],
    ["a".repeat(215), false],
    ["with space", false],
    ["bang!", false],
  ])("npm name %j valid=%s", (name, valid) => {
    expect(npmNameProblem(name) === undefined).toBe(valid);
  });

  it.each([
    ["read_file", true],
    ["_x", true],
    ["Tool-1", true],
    ["a".repeat(64), true],
    ["a".repeat(65), false],
    ["1tool", false],
    ["-x", false],
    ["my tool", false],
    ["dot.name", false],
    ["", false],
  ])("tool name %j valid=%s", (name, valid) => {
    expect(toolNameProblem(name) === undefined).toBe(valid);
  });

  it("suggests the key a typo meant", () => {
    expect(closestKey("tols", ["tools", "hooks"])).toBe("tools");
    expect(closestKey("Settings", ["settings"])).toBe("settings");
    expect(closestKey("zzzzzz", ["tools"])).toBeUndefined();
  });
});

describe("checkSchema issues", () => {
  it("reports a missing field as EREQUIRED at its path, and a wrong type as ETYPE, each with a hint", () => {
    const result = validatePluginPackageJson({ name: "x", xcsh: { tools: 1 } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: "EREQUIRED", path: "/version", hint: expect.any(String) }),
        expect.objectContaining({ code: "ETYPE", path: "/xcsh/tools", found: "number 1", hint: expect.any(String) }),
      ]),
    );
  });

  it("prefixes paths with the base pointer", () => {
    expect(issues(checkSchema(PluginManifestSchema, { tools: 3 }, "/pi"))).toEqual([["ETYPE", "/pi/tools"]]);
  });
});

describe("plugin manifest", () => {
  it("accepts the host's full example (xcsh-host-formats §5.1)", () => {
    const result = validatePluginManifest({
      tools: "./dist/tools.ts",
      hooks: "./dist/hooks.ts",
      extensions: ["./dist/extension.ts"],
      commands: ["./commands/search.md"],
      features: {
        web: { description: "Web search", default: true, tools: ["./dist/web.ts"] },
        cache: { description: "Disk cache", default: false, extensions: ["./dist/cache-ext.ts"] },
      },
      settings: {
        apiKey: { type: "string", secret: true, env: "ACME_KEY", description: "API key" },
        limit: { type: "number", default: 10, min: 1, max: 100, step: 1 },
        verbose: { type: "boolean", default: false },
        mode: { type: "enum", values: ["fast", "deep"], default: "fast" },
      },
    });
    expect(result).toMatchObject({ ok: true, warnings: [] });
  });

  it.each([
    [{ tools: "./t", settings: { s: { type: "number", default: 500, max: 10 } } }, "ESETTING_DEFAULT", "/xcsh/settings/s/default"],
    [{ tools: "./t", settings: { s: { type: "enum", values: ["a", "a"] } } }, "ESETTING_VALUES", "/xcsh/settings/s/values"],
    [{ tools: "./t", settings: { "bad key": { type: "string" } } }, "ESETTING_KEY", "/xcsh/settings/bad key"],
    [{ tools: "./t", settings: { s: { type: "boolean", default: "no" } } }, "ETYPE", "/xcsh/settings/s/default"],
    [{ tools: "./t", features: { "a b": {} } }, "EFEATURE_NAME", "/xcsh/features/a b"],
    [{ tools: "./t", features: { f: { tools: 3 } } }, "ETYPE", "/xcsh/features/f/tools"],
    [{ tools: "../t" }, "EENTRY_ESCAPE", "/xcsh/tools"],
    [{ tools: "./a/../../t" }, "EENTRY_ESCAPE", "/xcsh/tools"],
    [{ tools: ["C:\\x.ts"] }, "EENTRY_ESCAPE", "/xcsh/tools/0"],
    [{ commands: { c: "./c.md" } }, "ETYPE", "/xcsh/commands"],
  ])("%j → %s at %s", (manifest, code, at) => {
    const result = validatePluginManifest(manifest);
    expect(issues(result)).toContainEqual([code, at]);
  });

  it("takes what the host loads: a feature's tools string (read letter by letter: nothing loads), a top-level commands string (one entry)", () => {
    const feature = validatePluginManifest({ tools: "./t", features: { f: { tools: "./x.ts" } } });
    expect(feature.ok && feature.value.features?.f?.tools).toBeUndefined();
    expect(feature.warnings.map((w) => [w.code, w.path])).toEqual([["WHOST_FEATURE_ENTRY_STRING", "/xcsh/features/f/tools"]]);
    const commands = validatePluginManifest({ commands: "./c.md" });
    expect(commands.ok && commands.value.commands).toEqual(["./c.md"]);
  });

  it("warns about typos and keeps going", () => {
    const result = validatePluginManifest({ tools: "./t", setings: {} });
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => [w.code, w.path, w.hint])).toEqual([["EUNKNOWN_KEY", "/xcsh/setings", 'Rename "setings" to "settings".']]);
  });

  it("warns when both xcsh and pi are present, and reads xcsh", () => {
    const result = validatePluginPackageJson({ name: "p", version: "1.0.0", xcsh: { tools: "./a" }, pi: { tools: "./b" } });
    expect(result.ok && result.value.key).toBe("xcsh");
    expect(result.warnings.map((w) => w.code)).toContain("EMANIFEST_SHADOWED");
  });

  it("falls back to pi", () => {
    const result = validatePluginPackageJson({ name: "p", version: "1.0.0", pi: { tools: "./b" } });
    expect(result.ok && result.value.key).toBe("pi");
  });
});

describe("state files: tolerant shape, strict rules", () => {
  it("keeps unknown keys of installed_plugins.json (Claude's isLocal, future fields)", () => {
    const doc = { version: 2, extra: { x: 1 }, plugins: { "a@b": [{ installPath: "/p", isLocal: true, future: 1 }] } };
    const result = validateInstalledPlugins(doc, { flavour: "claude" });
    expect(result.ok).toBe(true);
    expect(result.ok && result.value).toBe(doc);
  });

  it("Claude's ids with capitals are warnings, ours errors", () => {
    const doc = { version: 2, plugins: { "My_Plugin@mkt": [{ installPath: "/p" }] } };
    expect(validateInstalledPlugins(doc, { flavour: "claude" }).ok).toBe(true);
    expect(issues(validateInstalledPlugins(doc))).toEqual([["EPLUGIN_ID", "/plugins/My_Plugin@mkt"]]);
  });

  it.each([
    ["lock", validateRuntimeLock({ plugins: { "Bad Name": {} } }), "EPACKAGE_NAME", "/plugins/Bad Name"],
    ["lock features", validateRuntimeLock({ plugins: { x: { enabledFeatures: "all" } } }), "ETYPE", "/plugins/x/enabledFeatures"],
    ["overrides", validatePluginOverrides({ features: { x: "web" } }), "ETYPE", "/features/x"],
    ["overrides name", validatePluginOverrides({ disabled: ["UPPER"] }), "EPACKAGE_NAME", "/disabled/0"],
    ["plugins package", validatePluginsPackageJson({ dependencies: { x: 1 } }), "ETYPE", "/dependencies/x"],
    ["plugins package spec", validatePluginsPackageJson({ private: true, dependencies: { x: "git+ssh://[bad" } }), "ESPEC", "/dependencies/x"],
    ["marketplaces version", validateMarketplacesRegistry({ version: 2, marketplaces: [] }), "EFORMAT_VERSION", "/version"],
    ["marketplaces name", validateMarketplacesRegistry({ version: 1, marketplaces: [{ name: "A", sourceType: "url", sourceUri: "u", catalogPath: "/c", addedAt: "", updatedAt: "" }] }), "EMARKETPLACE_NAME", "/marketplaces/0/name"],
    ["known", validateKnownMarketplaces({ m: { source: { source: "directory" }, installLocation: "/x" } }), "EREQUIRED", "/m/source/path"],
    ["known shape", validateKnownMarketplaces({ m: { source: "github" } }), "ETYPE", "/m/source"],
  ])("%s", (_label, result, code, at) => {
    expect(issues(result)).toContainEqual([code, at]);
  });

  it("an unknown Claude marketplace source kind is a warning, not an error", () => {
    const result = validateKnownMarketplaces({ m: { source: { source: "s3", bucket: "b" }, installLocation: "/x" } });
    expect(result.ok).toBe(true);
    expect(result.warnings.map((w) => w.code)).toEqual(["ESOURCE_KIND"]);
  });
});

describe("catalogs and plugin.json", () => {
  const catalog = (plugins: unknown[], extra: object = {}) => ({ name: "m", owner: { name: "o" }, plugins, ...extra });

  it("accepts every plugin source kind", () => {
    const result = validateMarketplaceCatalog(
      catalog([
        { name: "rel", source: "./plugins/rel" },
        { name: "gh", source: { source: "github", repo: "o/r", ref: "v1", sha: "f".repeat(40) } },
        { name: "url", source: { source: "url", url: "git@github.com:o/r.git" } },
        { name: "sub", source: { source: "git-subdir", url: "o/r", path: "p/x" } },
        { name: "npm", source: { source: "npm", package: "@o/r", version: "latest" } },
      ]),
      { flavour: "claude" },
    );
    expect(result).toMatchObject({ ok: true, warnings: [] });
  });

  it.each([
    [[{ name: "p", source: "/abs/path" }], "ESOURCE_PATH", "/plugins/0/source"],
    [[{ name: "p", source: { repo: "o/r" } }], "ESOURCE_KIND", "/plugins/0/source/source"],
    [[{ name: "p" }], "EREQUIRED", "/plugins/0/source"],
    [[{ name: "p", source: { source: "npm", package: "x", registry: "ftp://r" } }], "ESOURCE_URL", "/plugins/0/source/registry"],
    [[{ name: "p", source: "./p", commands: ["../x"] }], "EENTRY_ESCAPE", "/plugins/0/commands/0"],
    [["just-a-string"], "ETYPE", "/plugins/0"],
  ])("%j → %s at %s", (plugins, code, at) => {
    expect(issues(validateMarketplaceCatalog(catalog(plugins)))).toContainEqual([code, at]);
  });

  it("pluginRoot may not leave the repository", () => {
    expect(issues(validateMarketplaceCatalog(catalog([], { metadata: { pluginRoot: "../x" } })))).toContainEqual(["EENTRY_ESCAPE", "/metadata/pluginRoot"]);
  });

  // Issue #28: Anthropic's own catalogs carry reserved names, so it is a warning for both flavours.
  it("a reserved name is a warning for Claude catalogs and for ours", () => {
    const doc = { ...catalog([]), name: "claude-plugins-official" };
    for (const flavour of ["claude", "xcsh"] as const) {
      const result = validateMarketplaceCatalog(doc, { flavour });
      expect(result.ok).toBe(true);
      expect(result.warnings.map((w) => w.code)).toContain("EMARKETPLACE_RESERVED");
    }
  });

  it("plugin.json: a non-kebab name is an error for xcsh, a warning for Claude; typos warn", () => {
    expect(issues(validatePluginJson({ name: "My Plugin" }))).toEqual([["EPLUGIN_NAME", "/name"]]);
    // Claude Code takes capitals and "_" (a warning here) but refuses spaces (an error, as there).
    const claude = validatePluginJson({ name: "My_Plugin", descripton: "x" }, { flavour: "claude" });
    expect(claude.ok).toBe(true);
    expect(claude.warnings.map((w) => [w.code, w.path])).toEqual([["EUNKNOWN_KEY", "/descripton"], ["EPLUGIN_NAME", "/name"]]);
    expect(issues(validatePluginJson({ name: "My Plugin" }, { flavour: "claude" }))).toEqual([["EPLUGIN_NAME", "/name"]]);
  });

  it("plugin.json: dependencies follow Claude's pattern", () => {
    expect(validatePluginJson({ name: "p", dependencies: ["other", "x@mkt", { name: "y", marketplace: "m" }] }).ok).toBe(true);
    expect(issues(validatePluginJson({ name: "p", dependencies: ["bad name!"] }))).toContainEqual(["ESCHEMA", "/dependencies/0"]);
  });
});

describe("readCheckedJson", () => {
  it("throws the first issue under the reader's code naming file and path; missing is undefined", async () => {
    const { makeTmpWorld } = await import("../helpers/tmp-home.js");
    const { readCheckedJson } = await import("../../src/manifest/json-file.js");
    const how = { code: "ESTATE_FILE", hint: "hint" };
    const world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
    try {
      const file = await world.write("marketplaces.json", { version: 1, marketplaces: [{ name: "Bad" }] });
      await expect(readCheckedJson(file, validateMarketplacesRegistry, how)).rejects.toMatchObject({ code: "ESTATE_FILE", file, path: "/marketplaces/0/sourceType", message: expect.stringContaining(`${file}: /marketplaces/0`) });
      expect(await readCheckedJson(`${file}.missing`, validateMarketplacesRegistry, how)).toBeUndefined();
      const good = await world.write("ok.json", { version: 1, marketplaces: [] });
      expect(await readCheckedJson(good, validateMarketplacesRegistry, how)).toEqual({ version: 1, marketplaces: [] });
    } finally {
      await world.cleanup();
    }
  });
});
