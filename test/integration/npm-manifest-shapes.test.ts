/**
 * npm plugin manifests as they are published (issue 45, points 7 and 8), end to end through the
 * built CLI against the shared Verdaccio, with fixture packages written here:
 *
 * - pi packages: a `pi` manifest's `skills`, `prompts` and `themes` (pi-mono core/package-manager.ts)
 *   install with the package, are listed as pi only by install, `show`, `list`, and `doctor` tells
 *   the user what that means (never to remove a key of a package they do not own); the author's
 *   `validate` keeps that advice. A package with only oh-my-pi's `omp` manifest is refused as the
 *   host's plugin loader would skip it, saying what would load it (EOMP_MANIFEST).
 * - the host's own leniency (extensibility/plugins/loader.ts): four manifest shapes off our schema
 *   that the host loads are installed and loaded as it loads them, with a WHOST_* warning; a
 *   leading-`/` entry that, joined under the package, still leaves it stays EENTRY_ESCAPE, however
 *   it is spelled.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { pluginWorldPerTest, toolName, toolSource, type PluginWorld } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let w: PluginWorld;
const prefix = `nms${Date.now().toString(36)}`;
const names = {
  pi: `${prefix}-pi-web`,
  omp: `${prefix}-omp-swarm`,
  featString: `${prefix}-feat-string`,
  featDefault: `${prefix}-feat-default`,
  settingType: `${prefix}-setting-int`,
  rooted: `${prefix}-rooted`,
};
/** Tools entries that start with "/" and, joined under the package as the host joins them, still leave it. */
const ESCAPES = ["/../outside.js", "/tools/../../outside.js", "//../outside.js", "/./../outside.js", "/..", "/a/b/../../../outside.js"];
const escapeName = (i: number) => `${prefix}-escape${i}`;

/** A pi extension module (pi's factory takes its API; the xcsh host imports it the same way). */
const PI_EXTENSION = "export default function (pi) {}\n";
const skill = (name: string) => `---\nname: ${name}\ndescription: ${name} for pi\n---\nDo ${name}.\n`;

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  await reg.publish({
    name: names.pi,
    version: "1.0.0",
    packageJson: {
      type: "module",
      keywords: ["pi-package"],
      pi: { extensions: ["./extensions/search.js"], skills: ["./skills"], prompts: ["./prompts"], themes: ["./themes"], image: "https://example.test/shot.png" },
    },
    files: {
      "extensions/search.js": PI_EXTENSION,
      "skills/summarise/SKILL.md": skill("summarise"),
      "skills/cite/SKILL.md": skill("cite"),
      "prompts/review.md": "---\ndescription: review\n---\nReview $1\n",
      "prompts/explain.md": "Explain $1\n",
      "prompts/plan.md": "Plan $1\n",
      "themes/night.json": { name: "night" },
    },
  });
  await reg.publish({ name: names.omp, version: "1.0.0", packageJson: { type: "module", omp: { extensions: ["./src/extension.js"] } }, files: { "src/extension.js": PI_EXTENSION } });
  const tool = (suffix: string) => toolSource(`${toolName(prefix)}_${suffix}`);
  await reg.publish({
    name: names.featString,
    version: "1.0.0",
    packageJson: { type: "module", xcsh: { tools: ["./tools/base.js"], features: { web: { default: true, tools: "./tools/web.js" } } } },
    files: { "tools/base.js": tool("base"), "tools/web.js": tool("web") },
  });
  await reg.publish({
    name: names.featDefault,
    version: "1.0.0",
    packageJson: {
      type: "module",
      xcsh: {
        features: {
          yes: { default: "yes", tools: ["./tools/yes.js"] },
          no: { default: "no", tools: ["./tools/no.js"] },
          zero: { default: 0, tools: ["./tools/zero.js"] },
        },
      },
    },
    files: { "tools/yes.js": tool("yes"), "tools/no.js": tool("no"), "tools/zero.js": tool("zero") },
  });
  await reg.publish({
    name: names.settingType,
    version: "1.0.0",
    packageJson: { type: "module", xcsh: { tools: "./tools/t.js", settings: { limit: { type: "integer", default: 5, min: 1, description: "how many" } } } },
    files: { "tools/t.js": tool("setting") },
  });
  await reg.publish({ name: names.rooted, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: ["/tools/rooted.js"] } }, files: { "tools/rooted.js": tool("rooted") } });
  for (const [i, entry] of ESCAPES.entries()) {
    await reg.publish({ name: escapeName(i), version: "1.0.0", packageJson: { type: "module", xcsh: { tools: [entry] } }, files: { "tools/ok.js": tool(`escape${i}`) } });
  }
}, 240_000);
afterAll(async () => {
  await reg?.dispose();
});
pluginWorldPerTest(() => reg, (world) => (w = world));

async function install(name: string) {
  const r = await w.cli(["install", name, "--yes"]);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return r;
}

/** `tools --json`: the names loaded and the error codes, as the host's loader would see them. */
async function tools(): Promise<{ names: string[]; errors: string[] }> {
  const r = await w.cli(["tools", "--json"]);
  const doc = r.json();
  return { names: doc.tools.map((t: { name: string }) => t.name).sort(), errors: doc.errors.map((e: { code: string }) => e.code) };
}

async function doctorChecks(): Promise<{ id: string; status: string; message: string; hint?: string }[]> {
  return (await w.cli(["doctor", "--json"])).json().checks;
}

describe("pi packages as they are published", () => {
  const piSummary = "1 extension; pi only, not loaded by xcsh: 2 skills, 3 prompt templates, 1 theme";

  it("install, list and show say what the package brings per kind, and that xcsh loads only its extension", async () => {
    const r = await install(names.pi);
    expect(r.stdout).toContain(`${names.pi}: ${piSummary}`);
    expect((await w.cli(["list"])).stdout).toContain(`components: ${piSummary}`);
    const listed = (await w.cli(["list", "--json"])).json().plugins.find((p: { name: string }) => p.name === names.pi);
    expect(listed.components).toMatchObject({ summary: piSummary, counts: { extension: 1, skill: 2, prompt: 3, theme: 1 }, piOnly: { skill: 2, prompt: 3, theme: 1 } });
    const show = await w.cli(["show", names.pi, "--json"]);
    expect(show.code, show.stderr).toBe(0);
    const components = show.json().plugins[0].components as { kind: string; name: string; loadedByXcsh: boolean; piOnly?: boolean }[];
    const byKind = (kind: string) => components.filter((c) => c.kind === kind).map((c) => `${c.name}:${c.loadedByXcsh ? "loaded" : "not"}:${c.piOnly ? "pi" : "-"}`).sort();
    expect(byKind("extension")).toEqual(["search:loaded:-"]);
    expect(byKind("skill")).toEqual(["cite:not:pi", "summarise:not:pi"]);
    expect(byKind("prompt")).toEqual(["explain:not:pi", "plan:not:pi", "review:not:pi"]);
    expect(byKind("theme")).toEqual(["night:not:pi"]);
    const text = await w.cli(["show", names.pi]);
    expect(text.stdout).toMatch(/Prompt templates \(3\)\n\s+explain .*pi only, not loaded by xcsh/);
  });

  it("doctor says what pi's keys mean for the user, and never tells them to remove a key of a package they do not own", async () => {
    await install(names.pi);
    const checks = (await doctorChecks()).filter((c) => c.id.startsWith(`plugin:${names.pi}`));
    const pi = checks.filter((c) => c.id.includes(":WPI_ONLY:"));
    expect(pi.map((c) => c.id.split(":").pop()).sort()).toEqual(["/pi/prompts", "/pi/skills", "/pi/themes"]);
    for (const c of pi) {
      expect(c.status).toBe("warn");
      expect(c.message).toMatch(/only pi loads/);
      expect(c.hint).toMatch(/^Nothing to do/);
    }
    // No advice to edit the package, for pi's keys or its gallery field (`image`).
    expect(checks.filter((c) => /remove|rename/i.test(c.hint ?? "")), JSON.stringify(checks, null, 1)).toEqual([]);
    expect(checks.some((c) => c.id.includes("EUNKNOWN_KEY"))).toBe(false);
  });

  it("validate of the author's own folder keeps the author's advice: keep the keys for pi, remove them only if not meant for pi", async () => {
    const dir = path.join(w.root, "author", "pi-web");
    await mkdir(path.join(dir, "prompts"), { recursive: true });
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "pi-web", version: "1.0.0", type: "module", pi: { extensions: ["./ext.js"], prompts: ["./prompts"], video: "https://example.test/demo.mp4" } }));
    await writeFile(path.join(dir, "ext.js"), PI_EXTENSION);
    await writeFile(path.join(dir, "prompts/review.md"), "Review\n");
    const r = await w.cli(["validate", dir, "--static", "--json"]);
    expect(r.code, r.stdout).toBe(0);
    const warnings = r.json().warnings as { code: string; path: string; hint: string }[];
    expect(warnings.map((x) => `${x.code} ${x.path}`)).toEqual(["WPI_ONLY /pi/prompts"]);
    expect(warnings[0]!.hint).toMatch(/Keep "prompts" for pi users.*remove the key only if the package is not meant for pi/);
  });

  it("a package with only an omp manifest is refused as the host's plugin loader skips it, saying what would load it; nothing changes", async () => {
    const r = await w.cli(["install", names.omp, "--yes", "--json"]);
    expect(r.code, r.stdout).toBe(2);
    const error = r.json().error;
    expect(error.code).toBe("EOMP_MANIFEST");
    expect(error.message).toMatch(/carries an "omp" manifest \(oh-my-pi's\)/);
    expect(error.message).toMatch(/reads only "xcsh", else "pi"/);
    expect(error.hint).toMatch(/"xcsh" manifest has the same fields as "omp"/);
    expect(error.hint).toMatch(/xcsh --extension <folder>/);
    expect(await w.snapshot()).toEqual(w.fresh);
  });

  it("an omp-only package the host installed: the loader skips it as the host does; doctor says why and what would load it", async () => {
    const dir = path.join(w.plugins, "node_modules", "swarm");
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name: "swarm", version: "1.0.0", type: "module", omp: { extensions: ["./e.js"] } }));
    await writeFile(path.join(dir, "e.js"), PI_EXTENSION);
    await writeFile(path.join(w.plugins, "package.json"), JSON.stringify({ name: "xcsh-plugins", private: true, dependencies: { swarm: "1.0.0" } }));
    expect(await tools()).toEqual({ names: [], errors: [] });
    const check = (await doctorChecks()).find((c) => c.id === "plugin:swarm");
    expect(check?.message).toMatch(/an "omp" manifest \(oh-my-pi's\) and no "xcsh" or "pi" one/);
    expect(check?.hint).toContain(`xcsh --extension ${dir}`);
  });
});

describe("the host's own leniency: shapes it loads are loaded, with a WHOST_* warning", () => {
  it("a feature whose tools is a string: installs; the host reads it letter by letter, so that feature's tool does not load, the base tool does", async () => {
    expect((await install(names.featString)).stdout).toContain(`warning WHOST_FEATURE_ENTRY_STRING ${names.featString} /xcsh/features/web/tools:`);
    expect(await tools()).toEqual({ names: [`${toolName(prefix)}_base`], errors: [] });
    const doctor = (await doctorChecks()).filter((c) => c.id.startsWith(`plugin:${names.featString}`));
    expect(doctor.map((c) => c.id)).toContain(`plugin:${names.featString}:WHOST_FEATURE_ENTRY_STRING:/xcsh/features/web/tools`);
  });

  it('a feature default of "yes" (or "no") is on, as the host counts it; 0 is off', async () => {
    expect((await install(names.featDefault)).stdout).toMatch(/warning WHOST_FEATURE_DEFAULT .* \/xcsh\/features\/no\/default: .*so the feature is on by default/);
    expect(await tools()).toEqual({ names: [`${toolName(prefix)}_no`, `${toolName(prefix)}_yes`], errors: [] });
    const ids = (await doctorChecks()).map((c) => c.id);
    for (const f of ["yes", "no", "zero"]) expect(ids).toContain(`plugin:${names.featDefault}:WHOST_FEATURE_DEFAULT:/xcsh/features/${f}/default`);
    const features = await w.cli(["features", names.featDefault]);
    expect(features.stdout).toMatch(/on\s+yes\s+default/);
    expect(features.stdout).toMatch(/off\s+zero/);
  });

  it('a setting of type "integer": installs, loads, and takes any value as text, as the host stores it', async () => {
    expect((await install(names.settingType)).stdout).toContain(`warning WHOST_SETTING_TYPE ${names.settingType} /xcsh/settings/limit/type:`);
    expect(await tools()).toEqual({ names: [`${toolName(prefix)}_setting`], errors: [] });
    const set = await w.cli(["config", "set", names.settingType, "limit", "12"]);
    expect(set.code, set.stderr).toBe(0);
    expect((await w.readJson("xcsh-plugins.lock.json")).settings[names.settingType]).toEqual({ limit: "12" });
    expect((await w.cli(["config", "get", names.settingType, "limit"])).stdout).toBe("12\n");
    expect((await doctorChecks()).map((c) => c.id)).toContain(`plugin:${names.settingType}:WHOST_SETTING_TYPE:/xcsh/settings/limit/type`);
  });

  it("a tools entry with a leading / is joined under the package, as the host joins it", async () => {
    expect((await install(names.rooted)).stdout).toContain(`warning WHOST_ENTRY_ROOTED ${names.rooted} /xcsh/tools/0: "/tools/rooted.js" starts with "/"`);
    expect(await tools()).toEqual({ names: [`${toolName(prefix)}_rooted`], errors: [] });
    expect((await doctorChecks()).map((c) => c.id)).toContain(`plugin:${names.rooted}:WHOST_ENTRY_ROOTED:/xcsh/tools/0`);
  });

  it.each(ESCAPES.map((entry, i) => [entry, i] as const))("%s leaves the package even joined under it: install refuses it (EENTRY_ESCAPE), nothing changes", async (_entry, i) => {
    const r = await w.cli(["install", escapeName(i), "--yes", "--json"]);
    expect(r.code, r.stdout).toBe(2);
    expect(r.json().error.code).toBe("EENTRY_ESCAPE");
    expect(await w.snapshot()).toEqual(w.fresh);
  });

  it("the loader refuses the same entries in a package the host installed, and loads none of the files they reach", async () => {
    const modules = path.join(w.plugins, "node_modules");
    const deps: Record<string, string> = {};
    await mkdir(path.join(modules, "a", "b"), { recursive: true });
    for (const [i, entry] of ESCAPES.entries()) {
      const name = `planted${i}`;
      deps[name] = "1.0.0";
      await mkdir(path.join(modules, name), { recursive: true });
      await writeFile(path.join(modules, name, "package.json"), JSON.stringify({ name, version: "1.0.0", type: "module", xcsh: { tools: [entry] } }));
    }
    // What the escapes reach, were they followed: node_modules/outside.js and the plugins folder.
    await writeFile(path.join(modules, "outside.js"), toolSource("outside_tool"));
    await writeFile(path.join(w.plugins, "outside.js"), toolSource("outside_tool_2"));
    await writeFile(path.join(w.plugins, "package.json"), JSON.stringify({ name: "xcsh-plugins", private: true, dependencies: deps }));
    const result = await tools();
    expect(result.names).toEqual([]);
    expect(result.errors).toEqual(ESCAPES.map(() => "EENTRY_ESCAPE"));
  });
});
