/**
 * Discovery of installed npm plugins: dependencies order, the runtime lock and the project
 * overrides, feature selection, and entries that are missing or escape their package.
 */
import { mkdir, symlink } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { discoverToolPaths } from "../../src/discovery/index.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { errorSummary, rel, summarize, writeTool } from "./discovery-fixtures.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-test-", { trustProject: true });

const opts = () => ({ home: w.home, xcshHome: w.xcshHome, env: {}, providers: ["npm" as const] });
const plugins = () => path.join(w.xcshHome, "plugins");
const lockFile = () => path.join(plugins(), "xcsh-plugins.lock.json");
const overridesFile = () => path.join(w.cwd, ".xcsh/plugin-overrides.json");

async function dependencies(...names: string[]): Promise<void> {
  await w.write(path.join(plugins(), "package.json"), {
    name: "xcsh-plugins",
    private: true,
    dependencies: Object.fromEntries(names.map((n) => [n, "^1.0.0"])),
  });
}

/** Write `node_modules/<name>` with a manifest under `key` and tool modules at `files`. */
async function npmPlugin(
  name: string,
  manifest: Record<string, unknown>,
  files: string[] = [],
  key: "xcsh" | "pi" = "xcsh",
  at = path.join(plugins(), "node_modules", name),
): Promise<string> {
  await w.write(path.join(at, "package.json"), { name, version: "1.0.0", [key]: manifest });
  for (const file of files) await writeTool(w, path.join(at, file), path.basename(file).replace(/\.\w+$/, ""));
  return at;
}

const featured = {
  tools: "./tools/base.ts",
  features: {
    web: { description: "web", default: true, tools: ["./tools/web.ts"] },
    cache: { description: "cache", default: false, tools: ["./tools/cache.js"] },
  },
};
const featuredFiles = ["tools/base.ts", "tools/web.ts", "tools/cache.js"];

describe("npm plugins", () => {
  it("follows dependencies order, reads xcsh then pi manifests, and labels tools with the package", async () => {
    await dependencies("zeta", "@scope/alpha", "not-a-plugin");
    await npmPlugin("zeta", { tools: ["./z1.ts", "./z2.js"] }, ["z1.ts", "z2.js"]);
    await npmPlugin("@scope/alpha", { tools: "./dist/alpha.mjs" }, ["dist/alpha.mjs"], "pi");
    await w.write(path.join(plugins(), "node_modules/not-a-plugin/package.json"), { name: "not-a-plugin", version: "1.0.0" });

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual([
      "npm/user/zeta: home/.xcsh/plugins/node_modules/zeta/z1.ts",
      "npm/user/zeta: home/.xcsh/plugins/node_modules/zeta/z2.js",
      "npm/user/@scope/alpha: home/.xcsh/plugins/node_modules/@scope/alpha/dist/alpha.mjs",
    ]);
    expect(result.paths[0]?.source).toEqual({ provider: "npm", providerName: "npm Plugin", level: "user", plugin: "zeta" });
    expect(result.errors).toEqual([]);
    expect(result.ignored.map((i) => rel(w, i.path))).toEqual(["home/.xcsh/plugins/node_modules/not-a-plugin/package.json"]);
  });

  it("skips plugins the lock disables or the overrides disable", async () => {
    await dependencies("off-in-lock", "off-in-project", "on", "lock-without-enabled");
    for (const n of ["off-in-lock", "off-in-project", "on", "lock-without-enabled"]) await npmPlugin(n, { tools: `./${n}.ts` }, [`${n}.ts`]);
    await w.write(lockFile(), {
      plugins: {
        "off-in-lock": { version: "1.0.0", enabledFeatures: null, enabled: false },
        on: { version: "1.0.0", enabledFeatures: null, enabled: true },
        "lock-without-enabled": { version: "1.0.0" },
      },
      settings: {},
    });
    await w.write(overridesFile(), { disabled: ["off-in-project"] });

    const result = await discoverToolPaths([], w.cwd, opts());

    // An entry without `enabled` is disabled, as the host reads it (extensibility/plugins/loader.ts:95).
    expect(summarize(w, result).map((s) => s.split(":")[0])).toEqual(["npm/user/on"]);
    expect(result.errors).toEqual([]);
  });

  it("applies features: null = base + defaults, [] = base only, a list = base + exactly those", async () => {
    await dependencies("by-default", "none", "listed", "no-lock");
    for (const n of ["by-default", "none", "listed", "no-lock"]) await npmPlugin(n, featured, featuredFiles);
    await w.write(lockFile(), {
      plugins: {
        "by-default": { version: "1.0.0", enabledFeatures: null, enabled: true },
        none: { version: "1.0.0", enabledFeatures: [], enabled: true },
        listed: { version: "1.0.0", enabledFeatures: ["cache"], enabled: true },
      },
    });

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result).map((s) => s.replace("home/.xcsh/plugins/node_modules/", ""))).toEqual([
      "npm/user/by-default: by-default/tools/base.ts",
      "npm/user/by-default: by-default/tools/web.ts",
      "npm/user/none: none/tools/base.ts",
      "npm/user/listed: listed/tools/base.ts",
      "npm/user/listed: listed/tools/cache.js",
      "npm/user/no-lock: no-lock/tools/base.ts",
      "npm/user/no-lock: no-lock/tools/web.ts",
    ]);
    expect(result.errors).toEqual([]);
  });

  it("lets the project's feature overrides win over the lock, and expands *", async () => {
    await dependencies("a", "b", "c");
    for (const n of ["a", "b", "c"]) await npmPlugin(n, featured, featuredFiles);
    await w.write(lockFile(), {
      plugins: {
        a: { version: "1.0.0", enabledFeatures: ["cache"], enabled: true },
        b: { version: "1.0.0", enabledFeatures: null, enabled: true },
      },
    });
    await w.write(overridesFile(), { features: { a: [], b: ["cache"], c: ["*"] } });

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result).map((s) => s.replace("home/.xcsh/plugins/node_modules/", ""))).toEqual([
      "npm/user/a: a/tools/base.ts",
      "npm/user/b: b/tools/base.ts",
      "npm/user/b: b/tools/cache.js",
      "npm/user/c: c/tools/base.ts",
      "npm/user/c: c/tools/web.ts",
      "npm/user/c: c/tools/cache.js",
    ]);
    expect(result.errors).toEqual([]);
  });

  it("reports unknown features from the lock and from the overrides, and still applies the known ones", async () => {
    await dependencies("from-lock", "from-overrides", "featureless");
    await npmPlugin("from-lock", featured, featuredFiles);
    await npmPlugin("from-overrides", featured, featuredFiles);
    await npmPlugin("featureless", { tools: "./f.ts" }, ["f.ts"]);
    await w.write(lockFile(), {
      plugins: {
        "from-lock": { version: "1.0.0", enabledFeatures: ["cache", "ghost"], enabled: true },
        featureless: { version: "1.0.0", enabledFeatures: ["anything"], enabled: true },
      },
    });
    await w.write(overridesFile(), { features: { "from-overrides": ["nope"] } });

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result).map((s) => s.replace("home/.xcsh/plugins/node_modules/", ""))).toEqual([
      "npm/user/from-lock: from-lock/tools/base.ts",
      "npm/user/from-lock: from-lock/tools/cache.js",
      "npm/user/from-overrides: from-overrides/tools/base.ts",
      "npm/user/featureless: featureless/f.ts",
    ]);
    expect(errorSummary(w, result)).toEqual([
      "EUNKNOWN_FEATURE home/.xcsh/plugins/xcsh-plugins.lock.json",
      "EUNKNOWN_FEATURE project/.xcsh/plugin-overrides.json",
      "EUNKNOWN_FEATURE home/.xcsh/plugins/xcsh-plugins.lock.json",
    ]);
    expect(result.errors[0]?.error).toContain('"ghost"');
    expect(result.errors[0]?.error).not.toContain('"cache",');
    expect(result.errors[1]?.source).toEqual({ provider: "npm", providerName: "npm Plugin", level: "project", plugin: "from-overrides" });
    expect(result.errors[2]?.error).toContain("no features");
  });

  it("reports missing entries and entries escaping the package by ../, absolute path or symlink", async () => {
    // An absolute entry is joined under the package, as the host joins it (path.join: docs/host-parity.md,
    // WHOST_ENTRY_ROOTED): the file outside is never loaded; the path inside does not exist.
    await dependencies("sly");
    const outside = await writeTool(w, "outside/evil.ts", "evil");
    const dir = await npmPlugin(
      "sly",
      { tools: ["./ok.ts", "./missing.ts", "../escape.ts", outside, "./linked.ts", "./linked-dir"] },
      ["ok.ts"],
    );
    await writeTool(w, path.join(plugins(), "node_modules/escape.ts"), "escape");
    await symlink(outside, path.join(dir, "linked.ts"));
    await symlink(path.dirname(outside), path.join(dir, "linked-dir"));

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual(["npm/user/sly: home/.xcsh/plugins/node_modules/sly/ok.ts"]);
    expect(errorSummary(w, result)).toEqual([
      "EENTRY_NOT_FOUND home/.xcsh/plugins/node_modules/sly/missing.ts",
      "EENTRY_ESCAPE home/.xcsh/plugins/node_modules/escape.ts",
      `EENTRY_NOT_FOUND home/.xcsh/plugins/node_modules/sly${outside}`,
      "EENTRY_ESCAPE home/.xcsh/plugins/node_modules/sly/linked.ts",
      "EENTRY_ESCAPE home/.xcsh/plugins/node_modules/sly/linked-dir",
    ]);
    for (const e of result.errors) expect(e.source?.plugin).toBe("sly");
  });

  it("accepts directory entries: an index module, or a folder of tools scanned like a tools dir", async () => {
    await dependencies("dirs");
    await npmPlugin("dirs", { tools: ["./single", "./many"] }, ["single/index.js", "many/one.ts", "many/two.js"]);
    await w.write(path.join(plugins(), "node_modules/dirs/many/about.md"), "# about\n");
    await w.write(path.join(plugins(), "node_modules/dirs/readme.md"), "# readme\n");

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result).map((s) => s.replace("home/.xcsh/plugins/node_modules/", ""))).toEqual([
      "npm/user/dirs: dirs/single/index.js",
      "npm/user/dirs: dirs/many/one.ts",
      "npm/user/dirs: dirs/many/two.js",
    ]);
    expect(result.metadata.map((m) => rel(w, m.path))).toEqual(["home/.xcsh/plugins/node_modules/dirs/many/about.md"]);
    expect(result.errors).toEqual([]);
  });

  it("reports an entry naming a .md file as ENOT_A_MODULE", async () => {
    await dependencies("docs");
    await npmPlugin("docs", { tools: ["./tool.md"] });
    await w.write(path.join(plugins(), "node_modules/docs/tool.md"), "# tool\n");
    const result = await discoverToolPaths([], w.cwd, opts());
    expect(result.paths).toEqual([]);
    expect(errorSummary(w, result)).toEqual(["ENOT_A_MODULE home/.xcsh/plugins/node_modules/docs/tool.md"]);
  });

  it("loads linked plugins (node_modules/<name> a symlink) the same way", async () => {
    // A link is what package.json names as `file:<folder>` (what `xcsh-tools link` records); a
    // symlink it does not name is refused (see "refuses a planted symlink" below).
    const source = await npmPlugin("linked", { tools: "./src/l.ts" }, ["src/l.ts"], "xcsh", path.join(w.root, "dev/linked"));
    await w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { linked: `file:${source}` } });
    await mkdir(path.join(plugins(), "node_modules"), { recursive: true });
    await symlink(source, path.join(plugins(), "node_modules/linked"));

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual(["npm/user/linked: home/.xcsh/plugins/node_modules/linked/src/l.ts"]);
    expect(result.errors).toEqual([]);
  });

  it("refuses a planted symlink in node_modules that package.json does not link (EPATH_OUTSIDE)", async () => {
    await dependencies("linked");
    const source = await npmPlugin("linked", { tools: "./src/l.ts" }, ["src/l.ts"], "xcsh", path.join(w.root, "dev/linked"));
    await mkdir(path.join(plugins(), "node_modules"), { recursive: true });
    await symlink(source, path.join(plugins(), "node_modules/linked"));

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result)).toEqual([]);
    expect(errorSummary(w, result)).toEqual(["EPATH_OUTSIDE home/.xcsh/plugins/node_modules/linked"]);
  });

  it("reports a dependency that is not installed, and a malformed plugin package.json or manifest", async () => {
    await dependencies("absent", "broken-json", "bad-manifest", "good");
    await w.write(path.join(plugins(), "node_modules/broken-json/package.json"), "{ nope");
    await npmPlugin("bad-manifest", { tools: 42, features: { x: { tools: "not-a-list" } } });
    await npmPlugin("good", { tools: "./g.ts" }, ["g.ts"]);

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result).map((s) => s.split(":")[0])).toEqual(["npm/user/good"]);
    expect(errorSummary(w, result)).toEqual([
      "EPLUGIN_NOT_FOUND home/.xcsh/plugins/node_modules/absent",
      "EPLUGIN_MANIFEST home/.xcsh/plugins/node_modules/broken-json/package.json",
      "EPLUGIN_MANIFEST home/.xcsh/plugins/node_modules/bad-manifest/package.json",
    ]);
    expect(result.errors[2]?.error).toContain("/xcsh/tools");
  });

  it("reports a malformed plugins package.json and leaves the other sources alone", async () => {
    await w.write(path.join(plugins(), "package.json"), "{ bad json");
    await writeTool(w, "project/.xcsh/tools/n.ts", "n");
    const result = await discoverToolPaths([], w.cwd, { home: w.home, xcshHome: w.xcshHome, env: {} });
    expect(errorSummary(w, result)).toEqual(["ESTATE_FILE home/.xcsh/plugins/package.json"]);
    expect(summarize(w, result)).toEqual(["native/project: project/.xcsh/tools/n.ts"]);

    await w.write(path.join(plugins(), "package.json"), { dependencies: ["a"] });
    const shape = await discoverToolPaths([], w.cwd, opts());
    expect(errorSummary(w, shape)).toEqual(["ESTATE_FILE home/.xcsh/plugins/package.json"]);
    expect(shape.errors[0]?.error).toContain("/dependencies");
  });

  it("fails closed on a malformed lock or overrides file: one ESTATE_FILE, no npm tools, other sources load", async () => {
    await dependencies("p");
    await npmPlugin("p", { tools: "./p.ts" }, ["p.ts"]);
    await writeTool(w, "home/.codex/tools/x.ts", "x");
    const all = { home: w.home, xcshHome: w.xcshHome, env: {} };

    await w.write(lockFile(), "{ broken");
    const badLock = await discoverToolPaths([], w.cwd, all);
    expect(errorSummary(w, badLock)).toEqual(["ESTATE_FILE home/.xcsh/plugins/xcsh-plugins.lock.json"]);
    expect(badLock.errors[0]?.error).toMatch(/no npm plugin tools were loaded/);
    expect(summarize(w, badLock)).toEqual(["codex/user: home/.codex/tools/x.ts"]);

    await w.write(lockFile(), { plugins: {} });
    await w.write(overridesFile(), { disabled: "p" });
    const badOverrides = await discoverToolPaths([], w.cwd, all);
    expect(errorSummary(w, badOverrides)).toEqual(["ESTATE_FILE project/.xcsh/plugin-overrides.json"]);
    expect(badOverrides.errors[0]?.error).toContain("/disabled");
    expect(badOverrides.errors[0]?.source?.level).toBe("project");
    expect(summarize(w, badOverrides)).toEqual(["codex/user: home/.codex/tools/x.ts"]);
  });

  it("spoils only the plugin whose lock or overrides entry is malformed", async () => {
    await dependencies("bad-lock", "bad-override", "fine", "../evil");
    for (const n of ["bad-lock", "bad-override", "fine"]) await npmPlugin(n, { tools: `./${n}.ts` }, [`${n}.ts`]);
    await w.write(lockFile(), { plugins: { "bad-lock": { enabled: "no" } } });
    await w.write(overridesFile(), { features: { "bad-override": "web" } });

    const result = await discoverToolPaths([], w.cwd, opts());

    expect(summarize(w, result).map((s) => s.split(":")[0])).toEqual(["npm/user/fine"]);
    expect(errorSummary(w, result)).toEqual([
      "ESTATE_ENTRY home/.xcsh/plugins/xcsh-plugins.lock.json",
      "ESTATE_ENTRY project/.xcsh/plugin-overrides.json",
      "ESTATE_ENTRY home/.xcsh/plugins/package.json",
    ]);
    expect(result.errors[0]?.error).toContain("/plugins/bad-lock/enabled");
    expect(result.errors[1]?.error).toContain("/features/bad-override");
  });
});
