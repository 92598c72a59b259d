/**
 * An npm plugin manifest read as the xcsh host reads it (`hostManifest`, `readHostManifest`) and
 * validated for its author (`validatePluginPackageJson`): the shapes the host loads off our
 * schema, each kind and spelling of them, and pi's and oh-my-pi's keys.
 */
import { describe, expect, it } from "vitest";
import { hostManifest, readHostManifest, selectEntries, validatePluginPackageJson, type PluginManifest } from "../../src/manifest/plugin-manifest.js";

const codes = (issues: { code: string; path: string }[]) => issues.map((i) => `${i.code} ${i.path}`);
const pkg = (manifest: Record<string, unknown>, key = "xcsh") => ({ name: "p", version: "1.0.0", [key]: manifest });

describe("a feature's entries written as a string: the host reads them letter by letter", () => {
  it.each(["tools", "hooks", "extensions", "commands"])("%s: nothing is taken from it, with WHOST_FEATURE_ENTRY_STRING; the base entries stay", (kind) => {
    const read = readHostManifest({ tools: "./base.ts", features: { f: { default: true, [kind]: "./x.ts" } } }, "/xcsh");
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(codes(read.warnings)).toEqual([`WHOST_FEATURE_ENTRY_STRING /xcsh/features/f/${kind}`]);
    expect(selectEntries(read.value, kind as "tools", null)).toEqual(kind === "tools" ? ["./base.ts"] : []);
  });
});

describe("a feature default that is not a boolean counts as JavaScript counts it", () => {
  it.each([
    ["yes", true],
    ["no", true],
    ["false", true],
    [1, true],
    [0, false],
    ["", false],
    [null, false],
  ] as const)("%j is %s", (value, on) => {
    const read = readHostManifest({ features: { f: { default: value, tools: ["./f.ts"] } } });
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.features!.f!.default).toBe(on);
    expect(codes(read.warnings)).toEqual(["WHOST_FEATURE_DEFAULT /features/f/default"]);
    expect(read.warnings[0]!.message).toContain(on ? "on by default" : "off by default");
  });

  it("booleans and an absent default say nothing", () => {
    expect(hostManifest({ features: { a: { default: true }, b: { default: false }, c: {} } }).warnings).toEqual([]);
  });
});

describe("a setting type the host does not know is a string setting", () => {
  it.each(["integer", "int", "float", "strng"])("%s", (type) => {
    const read = readHostManifest({ settings: { n: { type, default: 5, min: 1, description: "d", secret: false, env: "N" } } });
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.value.settings!.n).toEqual({ type: "string", default: "5", description: "d", secret: false, env: "N" });
    expect(codes(read.warnings)).toEqual(["WHOST_SETTING_TYPE /settings/n/type"]);
    if (type === "strng") expect(read.warnings[0]!.message).toContain('did you mean "string"');
  });

  it("a setting with no type name at all stays refused (ESETTING_TYPE)", () => {
    const checked = validatePluginPackageJson(pkg({ tools: "./t.ts", settings: { n: { default: 5 } } }));
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(codes(checked.issues)).toEqual(["ESETTING_TYPE /xcsh/settings/n/type"]);
  });
});

describe("entries with a leading /: joined under the package, as the host joins them", () => {
  it.each([
    ["/tools/x.ts", "./tools/x.ts"],
    ["//tools//x.ts", "./tools/x.ts"],
    ["/./tools/x.ts", "./tools/x.ts"],
    ["/tools/../lib/x.ts", "./lib/x.ts"],
    ["/", "./"],
  ])("%s is %s, with WHOST_ENTRY_ROOTED, in the base and in a feature", (entry, joined) => {
    const checked = validatePluginPackageJson(pkg({ tools: [entry], features: { f: { tools: [entry] } } }));
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    const m = checked.value.manifest as PluginManifest;
    expect(m.tools).toEqual([joined]);
    expect(m.features!.f!.tools).toEqual([joined]);
    expect(codes(checked.warnings).filter((c) => c.startsWith("WHOST"))).toEqual(["WHOST_ENTRY_ROOTED /xcsh/tools/0", "WHOST_ENTRY_ROOTED /xcsh/features/f/tools/0"]);
  });

  it.each(["/../x.ts", "/tools/../../x.ts", "//../x.ts", "/./../x.ts", "/..", "/a/b/../../../x.ts", "/tools/..//../x.ts", "/\\..\\x.ts", "C:\\x.ts", "\\\\server\\share\\x.ts", "\\x.ts", "../x.ts"])(
    "%s leaves the package even joined under it: EENTRY_ESCAPE, in every kind and in a feature",
    (entry) => {
      for (const manifest of [{ tools: [entry] }, { hooks: entry }, { extensions: [entry] }, { commands: entry }, { features: { f: { default: true, tools: [entry] } } }]) {
        const checked = validatePluginPackageJson(pkg(manifest));
        expect(checked.ok, `${JSON.stringify(manifest)}`).toBe(false);
        if (!checked.ok) expect(checked.issues.map((i) => i.code)).toEqual(["EENTRY_ESCAPE"]);
      }
    },
  );

  it("a top-level extensions or commands string is one entry, as the host wraps it", () => {
    const read = readHostManifest({ extensions: "./e.ts", commands: "./c.md" });
    expect(read.ok && read.value).toMatchObject({ extensions: ["./e.ts"], commands: ["./c.md"] });
    expect(read.warnings).toEqual([]);
  });

  it("does not change what it reads", () => {
    const raw = { tools: ["/t.ts"], features: { f: { default: "yes", tools: "./x.ts" } }, settings: { n: { type: "integer" } } };
    const copy = structuredClone(raw);
    hostManifest(raw);
    expect(raw).toEqual(copy);
  });
});

describe("pi's and oh-my-pi's manifests", () => {
  it("a pi manifest's skills, prompts and themes are WPI_ONLY (kept for pi), its gallery keys silent; the author is told to keep them", () => {
    const checked = validatePluginPackageJson(pkg({ extensions: ["./e.ts"], skills: ["./skills"], prompts: ["./prompts"], themes: ["./themes"], video: "v.mp4", image: "i.png" }, "pi"));
    expect(checked.ok).toBe(true);
    expect(codes(checked.warnings)).toEqual(["WPI_ONLY /pi/skills", "WPI_ONLY /pi/prompts", "WPI_ONLY /pi/themes"]);
    for (const w of checked.warnings) {
      expect(w.hint).toMatch(/^Keep ".+" for pi users/);
      expect(w.forUser).toMatch(/^Nothing to do/);
      expect(w.forUser).not.toMatch(/remove/i);
    }
  });

  it("the same keys in an xcsh manifest are unknown keys (the host reads none of them, and they are not pi's there)", () => {
    const checked = validatePluginPackageJson(pkg({ tools: "./t.ts", skills: ["./skills"] }));
    expect(codes(checked.warnings)).toEqual(["EUNKNOWN_KEY /xcsh/skills"]);
  });

  it("a typo of a pi key in a pi manifest says which was meant", () => {
    const checked = validatePluginPackageJson(pkg({ extensions: ["./e.ts"], prompt: ["./prompts"] }, "pi"));
    expect(checked.warnings.find((w) => w.code === "EUNKNOWN_KEY")?.message).toContain('did you mean "prompts"?');
  });

  it("only an omp manifest: EOMP_MANIFEST, saying what would load it; with an xcsh or pi one beside it, omp is ignored", () => {
    const omp = validatePluginPackageJson({ name: "p", version: "1.0.0", omp: { extensions: ["./e.ts"] } });
    expect(omp.ok).toBe(false);
    if (!omp.ok) {
      expect(codes(omp.issues)).toEqual(["EOMP_MANIFEST /omp"]);
      expect(omp.issues[0]!.hint).toContain("xcsh --extension <folder>");
    }
    expect(validatePluginPackageJson({ name: "p", version: "1.0.0", omp: { extensions: ["./e.ts"] }, pi: { extensions: ["./e.ts"] } }).ok).toBe(true);
    const none = validatePluginPackageJson({ name: "p", version: "1.0.0", omp: null });
    expect(!none.ok && none.issues[0]!.code).toBe("ENOT_A_PLUGIN");
  });
});
