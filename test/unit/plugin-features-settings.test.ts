/**
 * The feature selection model (features.ts) and the settings model (plugin-settings.ts): pure,
 * table driven. The host's weaknesses they fix are named per case (xcsh-host-formats §5.2, §5.3,
 * §9 #26, #27).
 */
import { describe, expect, it } from "vitest";
import type { PluginManifest } from "../../src/manifest/plugin-manifest.js";
import {
  describeFeatures,
  effectiveFeatures,
  parseFeatureList,
  planFeatureChange,
  type FeatureChange,
} from "../../src/plugins/features.js";
import {
  SECRET_MASK,
  checkStoredSettings,
  describeAccepted,
  effectiveSettings,
  parseSettingInput,
  requireSetting,
  resolveSetting,
  settingValueProblem,
} from "../../src/plugins/plugin-settings.js";

const manifest: PluginManifest = {
  features: {
    web: { description: "Web search", default: true },
    cache: { description: "Disk cache" },
    extra: { default: true },
  },
};

describe("effective features (§5.3)", () => {
  it.each([
    [null, ["web", "extra"]],
    [[], []],
    [["cache"], ["cache"]],
    [["extra", "web"], ["web", "extra"]],
    [["*"], ["web", "cache", "extra"]],
    [["gone", "cache"], ["cache"]],
  ] as const)("stored %j → %j", (stored, effective) => {
    expect(effectiveFeatures(manifest, stored === null ? null : [...stored])).toEqual(effective);
  });

  it("describes null as defaults (the host shows it as none, §9 #26) and reports undeclared names", () => {
    const d = describeFeatures(manifest, null);
    expect(d.kind).toBe("defaults");
    expect(d.features).toEqual([
      { name: "web", description: "Web search", default: true, enabled: true },
      { name: "cache", description: "Disk cache", default: false, enabled: false },
      { name: "extra", default: true, enabled: true },
    ]);
    expect(describeFeatures(manifest, []).kind).toBe("none");
    expect(describeFeatures(manifest, ["cache", "gone"])).toMatchObject({ kind: "list", effective: ["cache"], unknown: ["gone"] });
  });
});

describe("parseFeatureList", () => {
  it.each([
    ["web,cache", ["web", "cache"]],
    [" web , , cache ", ["web", "cache"]],
    ["", []],
    ["*", "*"],
    [" * ", "*"],
  ] as const)("%j → %j", (input, out) => {
    expect(parseFeatureList(input)).toEqual(out);
  });
});

describe("planFeatureChange", () => {
  const cases: [string, string[] | null, FeatureChange, { after: string[] | null; changed: boolean; added: string[]; removed: string[] }][] = [
    // --enable on a defaults plugin keeps the defaults (the host starts from [] and drops them, §9 #26).
    ["enable on defaults keeps defaults", null, { enable: ["cache"] }, { after: ["web", "cache", "extra"], changed: true, added: ["cache"], removed: [] }],
    ["enabling a default of a defaults plugin keeps null", null, { enable: ["web"] }, { after: null, changed: false, added: [], removed: [] }],
    ["disable on defaults", null, { disable: ["web"] }, { after: ["extra"], changed: true, added: [], removed: ["web"] }],
    ["disable of an off feature changes nothing", ["web"], { disable: ["cache"] }, { after: ["web"], changed: false, added: [], removed: [] }],
    ["set replaces", ["web"], { set: ["cache"] }, { after: ["cache"], changed: true, added: ["cache"], removed: ["web"] }],
    ["set to the same effective set on defaults is stored (explicit)", null, { set: ["web", "extra"] }, { after: ["web", "extra"], changed: true, added: [], removed: [] }],
    ["set to the same stored list is unchanged", ["web"], { set: ["web"] }, { after: ["web"], changed: false, added: [], removed: [] }],
    ["set * is every declared feature, in manifest order", [], { set: "*" }, { after: ["web", "cache", "extra"], changed: true, added: ["web", "cache", "extra"], removed: [] }],
    ["set none", null, { set: [] }, { after: [], changed: true, added: [], removed: ["web", "extra"] }],
    ["enable *", ["web"], { enable: "*" }, { after: ["web", "cache", "extra"], changed: true, added: ["cache", "extra"], removed: [] }],
    ["disable *", null, { disable: "*" }, { after: [], changed: true, added: [], removed: ["web", "extra"] }],
    ["set then enable then disable", [], { set: ["web"], enable: ["cache"], disable: ["web"] }, { after: ["cache"], changed: true, added: ["cache"], removed: [] }],
    ["stored names no longer declared are dropped on change", ["gone", "web"], { enable: ["cache"] }, { after: ["web", "cache"], changed: true, added: ["cache"], removed: [] }],
  ];
  it.each(cases)("%s", (_name, before, change, expected) => {
    expect(planFeatureChange("p", manifest, before, change)).toMatchObject(expected);
  });

  it("an unknown name is EUNKNOWN_FEATURE (exit 2) listing the available ones, with a did-you-mean", () => {
    let error: any;
    try {
      planFeatureChange("@acme/p", manifest, null, { enable: ["cahce"] });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "EUNKNOWN_FEATURE", exitCode: 2 });
    expect(error.message).toBe('Plugin @acme/p has no feature "cahce"; did you mean "cache"?');
    expect(error.hint).toBe("Available features: web, cache, extra. Nothing was changed.");
  });

  it("a plugin without features refuses any name (the host accepts them silently, §9 #26)", () => {
    expect(() => planFeatureChange("p", {}, null, { set: ["x"] })).toThrow(expect.objectContaining({ code: "EUNKNOWN_FEATURE", message: expect.stringContaining("declares no features") }));
    expect(planFeatureChange("p", {}, null, { enable: "*" })).toMatchObject({ changed: false, after: null });
  });
});

const settings: PluginManifest = {
  settings: {
    apiKey: { type: "string", secret: true, env: "ACME_KEY", description: "API key" },
    limit: { type: "number", default: 10, min: 1, max: 100, step: 1 },
    ratio: { type: "number", min: 0.25, step: 0.5 },
    verbose: { type: "boolean", default: false, env: "ACME_VERBOSE" },
    mode: { type: "enum", values: ["fast", "deep"], default: "fast" },
    token: { type: "enum", values: ["a1", "b2"], secret: true },
  },
};
const schema = (key: string) => settings.settings![key]!;
const ref = (key: string) => ({ plugin: "p", key });

describe("parseSettingInput: strict where the host is lax (§5.2)", () => {
  it.each([
    ["verbose", "true", true],
    ["verbose", "YES", true],
    ["verbose", "1", true],
    ["verbose", "false", false],
    ["verbose", "no", false],
    ["verbose", " 0 ", false],
    ["limit", "42", 42],
    ["limit", "+7", 7],
    ["limit", "1e1", 10],
    ["ratio", "0.75", 0.75],
    ["ratio", "1.25", 1.25],
    ["mode", "deep", "deep"],
    ["apiKey", "sk- with spaces ", "sk- with spaces "],
  ] as const)("%s %j → %j", (key, raw, value) => {
    expect(parseSettingInput(raw, schema(key), ref(key))).toBe(value);
  });

  it.each([
    // The host turns anything that is not true/yes/1 into false.
    ["verbose", "ture", "expected true/false, yes/no or 1/0, found \"ture\""],
    ["verbose", "", "expected true/false"],
    // The host's Number("") is 0 and Number("0x10") is 16.
    ["limit", "", "expected a number"],
    ["limit", "0x10", "expected a number"],
    ["limit", "Infinity", "expected a number"],
    ["limit", "1e", "expected a number"],
    ["limit", "0", "must be >= 1, found number 0"],
    ["limit", "101", "must be <= 100"],
    // The host does not enforce step.
    ["limit", "2.5", "must be a multiple of 1, found number 2.5"],
    ["ratio", "0.5", "must be 0.25 plus a multiple of 0.5"],
    ["mode", "dep", 'expected one of fast, deep, found "dep" (did you mean "deep"?)'],
  ] as const)("%s %j is ESETTING_VALUE: %s", (key, raw, message) => {
    let error: any;
    try {
      parseSettingInput(raw, schema(key), ref(key));
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: "ESETTING_VALUE", exitCode: 2, path: key });
    expect(error.message).toContain(`Setting "${key}" of plugin p: ${message}`);
    expect(error.hint).toContain(`xcsh-tools config set p ${key} <value>`);
  });

  it("never puts a secret value in an error", () => {
    for (const raw of ["c3", "a1x"]) {
      let error: any;
      try {
        parseSettingInput(raw, schema("token"), ref("token"));
      } catch (e) {
        error = e;
      }
      expect(error.code).toBe("ESETTING_VALUE");
      expect(`${error.message} ${error.hint}`).not.toContain(raw);
      expect(error.message).toContain(SECRET_MASK);
    }
    expect(settingValueProblem(12345, schema("apiKey"))).toBe(`expected a string, found ${SECRET_MASK}`);
  });

  it("describes what each type accepts", () => {
    expect(describeAccepted(schema("limit"))).toBe("a number from 1 to 100 in steps of 1");
    expect(describeAccepted(schema("ratio"))).toBe("a number >= 0.25 in steps of 0.5 from 0.25");
    expect(describeAccepted(schema("mode"))).toBe("one of fast, deep");
    expect(describeAccepted(schema("verbose"))).toBe("true or false (or yes/no, 1/0)");
  });
});

describe("effective values: project > user > env > default (the host never reads env, §9 #27)", () => {
  const userFile = "/h/lock.json";
  const projectFile = "/p/.xcsh/plugin-overrides.json";
  it.each([
    ["project wins", { project: { limit: 5 }, user: { limit: 7 } }, { ACME_KEY: "k" }, "limit", { value: 5, origin: "project", via: projectFile }],
    ["user next", { user: { limit: 7 } }, {}, "limit", { value: 7, origin: "user", via: userFile }],
    ["env before default, typed", {}, { ACME_VERBOSE: "yes" }, "verbose", { value: true, origin: "env", via: "ACME_VERBOSE" }],
    ["an empty env var does not count", {}, { ACME_VERBOSE: "" }, "verbose", { value: false, origin: "default" }],
    ["a stored value beats env", { user: { verbose: false } }, { ACME_VERBOSE: "1" }, "verbose", { value: false, origin: "user" }],
    ["default", {}, {}, "mode", { value: "fast", origin: "default" }],
    ["unset", {}, {}, "ratio", { value: undefined, origin: "unset" }],
    ["an env value that does not parse is kept as text (validate reports it)", {}, { ACME_VERBOSE: "maybe" }, "verbose", { value: "maybe", origin: "env" }],
  ] as const)("%s", (_name, stored, env, key, expected) => {
    expect(resolveSetting(key, schema(key), { ...stored, userFile, projectFile } as never, env)).toMatchObject(expected);
  });

  it("lists every declared setting with secrets masked (value and default)", () => {
    const list = effectiveSettings({ settings: { ...settings.settings!, pin: { type: "string", secret: true, default: "0000" } } }, { user: { apiKey: "sk-live-123" }, userFile }, {});
    expect(list.map((s) => [s.key, s.value, s.origin])).toEqual([
      ["apiKey", SECRET_MASK, "user"],
      ["limit", 10, "default"],
      ["ratio", undefined, "unset"],
      ["verbose", false, "default"],
      ["mode", "fast", "default"],
      ["token", undefined, "unset"],
      ["pin", SECRET_MASK, "default"],
    ]);
    expect(JSON.stringify(list)).not.toMatch(/sk-live-123|0000/);
    expect(list[0]).toMatchObject({ type: "string", secret: true, env: "ACME_KEY", description: "API key", via: userFile });
    expect(list[1]).toMatchObject({ min: 1, max: 100, step: 1, default: 10 });
    expect(list[4]).toMatchObject({ values: ["fast", "deep"] });
    // An env-provided secret is masked too.
    expect(effectiveSettings(settings, {}, { ACME_KEY: "sk-env" })[0]).toMatchObject({ value: SECRET_MASK, origin: "env", via: "ACME_KEY" });
  });
});

describe("checkStoredSettings", () => {
  it("wrong stored values are errors, undeclared keys warnings with a did-you-mean, bad env fallbacks errors; secrets masked", () => {
    const problems = checkStoredSettings(
      "p",
      settings,
      { user: { limit: "10", apiKey: 42, limt: 3 }, userFile: "/h/lock.json", project: { mode: "slow" }, projectFile: "/p/o.json" },
      { ACME_VERBOSE: "perhaps" },
    );
    expect(problems.map((p) => [p.severity, p.code, p.key, p.source])).toEqual([
      ["error", "ESETTING_VALUE", "limit", "/h/lock.json"],
      ["error", "ESETTING_VALUE", "apiKey", "/h/lock.json"],
      ["warning", "EUNKNOWN_SETTING", "limt", "/h/lock.json"],
      ["error", "ESETTING_VALUE", "mode", "/p/o.json"],
      ["error", "ESETTING_VALUE", "verbose", "env:ACME_VERBOSE"],
    ]);
    expect(problems[0]!.message).toBe('/h/lock.json: setting "limit" of plugin p: expected a number, found "10"');
    expect(problems[1]!.message).not.toContain("42");
    expect(problems[2]!.message).toContain('did you mean "limit"?');
    expect(problems[4]!.message).toContain("ACME_VERBOSE");
    expect(checkStoredSettings("p", settings, { user: { limit: 50, apiKey: "x" } }, {})).toEqual([]);
  });

  it("requireSetting: EUNKNOWN_SETTING with a did-you-mean, or the plugin declares none", () => {
    expect(requireSetting(settings, ref("limit"))).toBe(schema("limit"));
    expect(() => requireSetting(settings, ref("limti"))).toThrow(expect.objectContaining({ code: "EUNKNOWN_SETTING", exitCode: 2, message: 'Plugin p has no setting "limti"; did you mean "limit"?' }));
    expect(() => requireSetting({}, ref("x"))).toThrow(expect.objectContaining({ code: "EUNKNOWN_SETTING", message: expect.stringContaining("declares no settings") }));
  });
});
