/**
 * The boot index (src/boot): a boot with a fresh index loads exactly what a full scan loads
 * (same tools, same order, same errors and conflicts); every kind of change behind its back
 * (a tool edited, added or removed, a package deleted by hand, a manifest edited, a feature
 * enabled in the runtime lock, project overrides, another cwd or configured path) makes the next
 * boot scan again and rewrite it; a corrupt or unknown-version index is ignored and rebuilt.
 */
import { appendFile, mkdir, readFile, readdir, rm, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { BOOT_INDEX_VERSION, checkBootIndex, discoverWithBootIndex, listInstalledTools, refreshBootIndex } from "../../src/boot/index.js";
import { xcshPaths } from "../../src/core/paths.js";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import type { CustomToolsLoadResult } from "../../src/core/contract.js";
import { buildDist } from "../helpers/build-dist.js";
import { writeTrustRecord, type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { installEntry, writeTool } from "./discovery-fixtures.js";

beforeAll(async () => {
  // listInstalledTools and refreshBootIndex validate in the built child (dist/validate/child.js).
  await buildDist();
}, 180_000);

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-boot-", { trustProject: true });

const BUILT_INS = ["read", "bash", "edit", "write"];
const opts = () => ({ home: w.home, xcshHome: w.xcshHome, env: {} });
const plugins = () => path.join(w.xcshHome, "plugins");
const nm = () => path.join(plugins(), "node_modules");
const indexFile = () => xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootIndex;
const lockFile = () => path.join(plugins(), "xcsh-plugins.lock.json");
const marker = () => path.join(w.root, "imported.log");

/** A .mjs tool that appends `<pid> <name>` to the marker file when imported. */
function markedTool(name: string, description = `tool ${name}`): string {
  return `import { appendFileSync } from "node:fs";
appendFileSync(${JSON.stringify(marker())}, process.pid + " ${name}\\n");
export default () => ({
  name: ${JSON.stringify(name)},
  description: ${JSON.stringify(description)},
  parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
  async execute() { return { content: [{ type: "text", text: ${JSON.stringify(name)} }] }; },
});
`;
}

async function lock(plugins: Record<string, unknown>): Promise<void> {
  await w.write(lockFile(), { plugins, settings: {} });
}

/** Tools in every kind of place, with conflicts and broken modules. */
async function populate(): Promise<void> {
  await writeTool(w, "project/.xcsh/tools/proj_native.ts", "proj_native");
  await writeTool(w, "project/.xcsh/tools/shadowed.ts", "shadowed");
  await writeTool(w, "project/.xcsh/tools/folder_tool/index.ts", "folder_tool");
  await w.write("project/.xcsh/tools/notes.md", "# metadata\n");
  await writeTool(w, "home/.xcsh/agent/tools/user_native.js", "user_native");
  await writeTool(w, "home/.xcsh/agent/tools/shadowed.js", "shadowed");
  await writeTool(w, "home/.xcsh/agent/tools/bash.ts", "bash");
  await w.write("home/.xcsh/agent/tools/marked.mjs", markedTool("marked"));
  await w.write("home/.xcsh/agent/tools/broken.ts", "export default (\n");
  await w.write("home/.xcsh/agent/tools/not_factory.js", "export default 42;\n");
  await w.write("home/.xcsh/agent/tools/throws.js", "export default () => { throw new Error('boom'); };\n");
  await w.write("home/.xcsh/agent/tools/bad_shape.js", "export default () => ({ name: 'bad shape', description: 'x', parameters: { type: 'object' }, execute: async () => ({ content: [] }) });\n");
  await w.write("home/.xcsh/agent/tools/pair.js", "export default () => [{ name: 'pair_a', description: 'a', parameters: { type: 'object' }, execute: async () => ({ content: [] }) }, { name: 'user_native', description: 'dup', parameters: { type: 'object' }, execute: async () => ({ content: [] }) }];\n");
  await writeTool(w, "project/.claude/tools/proj_claude.mjs", "proj_claude");
  await writeTool(w, "home/.codex/tools/dup.ts", "dup");
  const cache = path.join(plugins(), "cache/plugins");
  await writeTool(w, path.join(cache, "mkt___xp-user___1.0.0/tools/xp_user.js"), "xp_user");
  await w.write(path.join(plugins(), "installed_plugins.json"), {
    version: 2,
    plugins: { "xp-user@mkt": [installEntry(path.join(cache, "mkt___xp-user___1.0.0"))], "gone@mkt": [installEntry(path.join(cache, "gone"))] },
  });
  await w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-a": "^1.0.0", "npm-b": "^1.0.0" } });
  await w.write(path.join(nm(), "npm-a/package.json"), {
    name: "npm-a",
    version: "1.0.0",
    xcsh: {
      tools: ["./tools/npm_base.ts", "./tools/missing.ts"],
      features: {
        web: { default: true, tools: ["./tools/npm_web.js", "./tools/dup.js"] },
        extra: { default: false, tools: ["./tools/npm_extra.ts"] },
      },
    },
  });
  await writeTool(w, path.join(nm(), "npm-a/tools/npm_base.ts"), "npm_base");
  await writeTool(w, path.join(nm(), "npm-a/tools/npm_web.js"), "npm_web");
  await writeTool(w, path.join(nm(), "npm-a/tools/dup.js"), "dup");
  await writeTool(w, path.join(nm(), "npm-a/tools/npm_extra.ts"), "npm_extra");
  await w.write(path.join(nm(), "npm-b/package.json"), { name: "npm-b", version: "1.0.0", xcsh: { tools: "./b.ts" } });
  await writeTool(w, path.join(nm(), "npm-b/b.ts"), "npm_b");
  await lock({ "npm-a": { version: "1.0.0", enabledFeatures: null, enabled: true }, "npm-b": { version: "1.0.0", enabledFeatures: null, enabled: true } });
  await writeTool(w, "project/cfg/cfg_tool.ts", "cfg_tool");
}

/** What a load result is, as plain data: tools with paths and sources, errors whole. */
function shape(result: CustomToolsLoadResult) {
  return {
    tools: result.tools.map((t) => ({ name: t.tool.name, path: t.path, resolvedPath: t.resolvedPath, source: t.source })),
    errors: result.errors.map((e) => ({ ...e })),
  };
}

async function boot(configured: string[] = [], cwd = w.cwd, extra: Record<string, unknown> = {}) {
  return shape(await discoverAndLoadCustomTools(configured, cwd, BUILT_INS, undefined, { ...opts(), ...extra }));
}

/** A boot with the index, checked against a boot that scans and ignores the index. */
async function bootMatchesScan(configured: string[] = [], cwd = w.cwd) {
  const indexed = await boot(configured, cwd);
  const scanned = await boot(configured, cwd, { bootIndex: false });
  expect(indexed).toEqual(scanned);
  return indexed;
}

async function freshness(configured: string[] = [], cwd = w.cwd) {
  return (await discoverWithBootIndex(configured, cwd, opts())).index;
}

async function bumpMtime(file: string): Promise<void> {
  const info = await stat(file);
  const later = new Date(info.mtimeMs + 5000);
  await utimes(file, later, later);
}

describe("boot index: host boots", () => {
  it("a scan writes the index; the next boot uses it and loads exactly what a scan loads", async () => {
    await populate();
    const first = await freshness(["./cfg/cfg_tool.ts"]);
    expect(first).toMatchObject({ fresh: false, written: true });
    expect(first.reason).toMatch(/does not exist/);
    const doc = JSON.parse(await readFile(indexFile(), "utf8"));
    expect(doc.version).toBe(BOOT_INDEX_VERSION);
    expect(await freshness(["./cfg/cfg_tool.ts"])).toEqual({ fresh: true, reason: "fresh", written: false });

    const result = await bootMatchesScan(["./cfg/cfg_tool.ts"]);
    expect(result.tools.map((t) => t.name)).toEqual([
      "folder_tool",
      "proj_native",
      "shadowed",
      "marked",
      "pair_a",
      "user_native",
      "proj_claude",
      "dup",
      "xp_user",
      "npm_base",
      "npm_web",
      "npm_b",
      "cfg_tool",
    ]);
    expect(result.errors.map((e) => `${e.code} ${path.basename(e.path)}`)).toEqual([
      "EPLUGIN_NOT_FOUND gone",
      "EENTRY_NOT_FOUND missing.ts",
      "ETOOL_NAME bad_shape.js",
      "ECONFLICT_BUILTIN bash.ts",
      "EIMPORT broken.ts",
      "ENOT_A_FACTORY not_factory.js",
      "ECONFLICT shadowed.js",
      "EFACTORY_THROW throws.js",
      // pair.js (sorted before it) returned a user_native first.
      "ECONFLICT user_native.js",
      "ECONFLICT dup.js",
    ]);
    // The boot used the index: it is still fresh and was not rewritten.
    expect(await freshness(["./cfg/cfg_tool.ts"])).toMatchObject({ fresh: true });
  });

  const changes: { title: string; change: () => Promise<void>; reason: RegExp; expect?: (r: Awaited<ReturnType<typeof boot>>) => void }[] = [
    {
      title: "a tool file edited",
      change: async () => void (await appendFile(path.join(w.xcshHome, "agent/tools/user_native.js"), "\n// edited\n")),
      reason: /user_native\.js changed/,
    },
    {
      title: "a tool added to a tools folder",
      change: async () => void (await writeTool(w, "home/.xcsh/agent/tools/added.js", "added")),
      reason: /agent[/\\]tools changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).toContain("added"),
    },
    {
      title: "a tool removed from a tools folder",
      change: () => rm(path.join(w.cwd, ".xcsh/tools/proj_native.ts")),
      reason: /proj_native\.ts was removed|tools changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).not.toContain("proj_native"),
    },
    {
      title: "an index file added to a tool folder without one",
      change: async () => {
        await mkdir(path.join(w.cwd, ".xcsh/tools/later"), { recursive: true });
        await bootMatchesScan();
        await writeTool(w, "project/.xcsh/tools/later/index.js", "later");
      },
      reason: /later changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).toContain("later"),
    },
    {
      title: "a package deleted by hand",
      change: () => rm(path.join(nm(), "npm-b"), { recursive: true }),
      reason: /npm-b/,
      expect: (r) => expect(r.errors.map((e) => e.code)).toContain("EPLUGIN_NOT_FOUND"),
    },
    {
      title: "a plugin manifest changed",
      change: async () => void (await w.write(path.join(nm(), "npm-b/package.json"), { name: "npm-b", version: "1.0.0", xcsh: { tools: [] } })),
      reason: /npm-b[/\\]package\.json changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).not.toContain("npm_b"),
    },
    {
      title: "a feature enabled in the runtime lock",
      change: () =>
        lock({ "npm-a": { version: "1.0.0", enabledFeatures: ["extra"], enabled: true }, "npm-b": { version: "1.0.0", enabledFeatures: null, enabled: true } }),
      reason: /xcsh-plugins\.lock\.json changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).toContain("npm_extra"),
    },
    {
      title: "a plugin disabled in the runtime lock",
      change: () =>
        lock({ "npm-a": { version: "1.0.0", enabledFeatures: null, enabled: true }, "npm-b": { version: "1.0.0", enabledFeatures: null, enabled: false } }),
      reason: /xcsh-plugins\.lock\.json changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).not.toContain("npm_b"),
    },
    {
      title: "project overrides written",
      change: async () => void (await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), { disabled: ["npm-a"] })),
      reason: /plugin-overrides\.json appeared/,
      expect: (r) => expect(r.tools.map((t) => t.name)).not.toContain("npm_base"),
    },
    {
      title: "the plugins package.json changed",
      change: async () => void (await w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-b": "^1.0.0" } })),
      reason: /plugins[/\\]package\.json changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).not.toContain("npm_web"),
    },
    {
      title: "a marketplace plugin folder removed",
      change: () => rm(path.join(plugins(), "cache/plugins/mkt___xp-user___1.0.0"), { recursive: true }),
      reason: /xp-user/,
      expect: (r) => expect(r.tools.map((t) => t.name)).not.toContain("xp_user"),
    },
    {
      title: "a linked plugin re-pointed",
      change: async () => {
        const other = path.join(w.root, "elsewhere/npm-b");
        await w.write(path.join(other, "package.json"), { name: "npm-b", version: "2.0.0", xcsh: { tools: "./b2.js" } });
        await writeTool(w, path.join(other, "b2.js"), "npm_b2");
        await rm(path.join(nm(), "npm-b"), { recursive: true });
        const { symlink } = await import("node:fs/promises");
        await symlink(other, path.join(nm(), "npm-b"), "dir");
        // A linked plugin is one package.json names as `file:<folder>` (what `link` records).
        await w.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-a": "^1.0.0", "npm-b": `file:${other}` } });
      },
      reason: /npm-b|plugins[/\\]package\.json changed/,
      expect: (r) => expect(r.tools.map((t) => t.name)).toContain("npm_b2"),
    },
  ];

  for (const item of changes) {
    it(`notices ${item.title}; the next boot rescans, rewrites the index and loads what a scan loads`, async () => {
      await populate();
      await bootMatchesScan();
      expect(await freshness()).toMatchObject({ fresh: true });
      await item.change();
      const stale = await freshness();
      expect(stale.fresh).toBe(false);
      expect(stale.reason).toMatch(item.reason);
      expect(stale.written).toBe(true);
      const after = await bootMatchesScan();
      item.expect?.(after);
      expect(await freshness()).toMatchObject({ fresh: true });
    });
  }

  it("a fresh index's eager boot deduplicates as a scan does: a link to a sibling tool, and a link to a tool folder, are that tool", async () => {
    // The eager boot takes from a fresh index the files it found regular (not links), so the
    // loader does not lstat them again: a link must never be taken for a regular file of its own.
    const tools = path.join(w.xcshHome, "agent", "tools");
    await writeTool(w, "home/.xcsh/agent/tools/a_real.js", "real_tool");
    await writeTool(w, "home/.xcsh/agent/tools/folder_real/index.js", "folder_real");
    const { symlink } = await import("node:fs/promises");
    await symlink(path.join(tools, "a_real.js"), path.join(tools, "b_link.js"));
    await symlink(path.join(tools, "folder_real"), path.join(tools, "c_folder_link"), "dir");
    await bootMatchesScan();
    expect(await freshness()).toMatchObject({ fresh: true });
    const indexed = await bootMatchesScan();
    expect(indexed.tools.map((t) => t.name)).toEqual(["real_tool", "folder_real"]);
    expect(indexed.errors).toEqual([]);
  });

  it("stays fresh when a state file is rewritten with the same bytes (hash, not mtime)", async () => {
    await populate();
    await bootMatchesScan();
    await bumpMtime(lockFile());
    await writeFile(path.join(plugins(), "package.json"), await readFile(path.join(plugins(), "package.json")));
    expect(await freshness()).toMatchObject({ fresh: true });
  });

  it("keeps one view per question: another cwd or other configured paths are scanned, not served", async () => {
    await populate();
    const other = path.join(w.root, "other");
    await mkdir(other, { recursive: true });
    await bootMatchesScan();
    expect((await freshness([], other)).fresh).toBe(false);
    expect((await freshness(["./cfg/cfg_tool.ts"])).fresh).toBe(false);
    expect((await freshness(["./cfg/cfg_tool.ts"], w.cwd)).fresh).toBe(true);
    // All three views are kept side by side.
    expect((await freshness()).fresh).toBe(true);
    expect((await freshness([], other)).fresh).toBe(true);
    const other2 = await bootMatchesScan([], other);
    expect(other2.tools.map((t) => t.name)).not.toContain("proj_native");
    expect((await freshness(["./cfg/cfg_tool.ts"], w.cwd)).fresh).toBe(true);
  });

  it("ignores a corrupt, unknown-version or foreign index and rebuilds it; checkBootIndex says why", async () => {
    await populate();
    const expected = await boot([], w.cwd, { bootIndex: false });
    await mkdir(path.dirname(indexFile()), { recursive: true });
    for (const [content, state] of [
      ["{ not json", "corrupt"],
      [JSON.stringify({ version: 99 }), "unknown-version"],
      [JSON.stringify({ version: BOOT_INDEX_VERSION, views: "nope" }), "corrupt"],
      [JSON.stringify({ version: BOOT_INDEX_VERSION, generator: "xcsh-tools@0.0.0-other", writtenAt: "", views: [] }), "other-generator"],
    ] as const) {
      await writeFile(indexFile(), content);
      expect(await checkBootIndex({ ...opts(), cwd: w.cwd })).toMatchObject({ state, fresh: false });
      expect(await boot()).toEqual(expected);
      expect(await checkBootIndex({ ...opts(), cwd: w.cwd })).toMatchObject({ state: "fresh", fresh: true });
    }
    // A folder where the file should be: the host still boots, from a scan.
    await rm(indexFile());
    await mkdir(indexFile());
    expect(await boot()).toEqual(expected);
    expect((await checkBootIndex(opts())).state).toBe("corrupt");
  });

  it("checkBootIndex reports missing, no view, stale and fresh without writing anything", async () => {
    await populate();
    expect(await checkBootIndex({ ...opts(), cwd: w.cwd })).toMatchObject({ state: "missing", fresh: false });
    await boot();
    expect(await checkBootIndex({ ...opts(), cwd: path.join(w.root, "nowhere") })).toMatchObject({ state: "no-view" });
    expect(await checkBootIndex(opts())).toMatchObject({ state: "fresh", fresh: true, views: 1 });
    const before = await readFile(indexFile(), "utf8");
    await writeTool(w, "home/.codex/tools/new.ts", "new_codex");
    const check = await checkBootIndex(opts());
    expect(check).toMatchObject({ state: "stale", fresh: false });
    expect(check.reason).toMatch(/codex[/\\]tools changed/);
    expect(await readFile(indexFile(), "utf8")).toBe(before);
  });

  it("bootIndex: false neither reads nor writes the index", async () => {
    await populate();
    await boot([], w.cwd, { bootIndex: false });
    await expect(stat(indexFile())).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("boot index: listInstalledTools", () => {
  it("answers like a real load, from the index, without importing plugin code in this process", async () => {
    await populate();
    const real = await boot(["./cfg/cfg_tool.ts"], w.cwd, { bootIndex: false });
    await writeFile(marker(), "");

    const first = await listInstalledTools({ ...opts(), cwd: w.cwd, configuredPaths: ["./cfg/cfg_tool.ts"], builtInToolNames: BUILT_INS });
    expect(first.index.fresh).toBe(false);
    expect(first.index.validated).toBeGreaterThan(10);
    // Validated in the child: the marked tool was imported, but not by this process.
    const lines = (await readFile(marker(), "utf8")).trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d+ marked$/);
    expect(lines[0]!.startsWith(`${process.pid} `)).toBe(false);

    const check = (list: typeof first) => {
      expect(list.tools.map((t) => ({ name: t.name, path: t.path, resolvedPath: t.file, source: t.source }))).toEqual(real.tools);
      expect(list.errors).toEqual(real.errors);
    };
    check(first);
    expect(first.tools.find((t) => t.name === "marked")).toMatchObject({
      description: "tool marked",
      parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
    });

    const second = await listInstalledTools({ ...opts(), cwd: w.cwd, configuredPaths: ["./cfg/cfg_tool.ts"], builtInToolNames: BUILT_INS });
    expect(second.index).toMatchObject({ fresh: true, validated: 0, written: false });
    check(second);
    // Fresh: nothing imported anywhere.
    expect((await readFile(marker(), "utf8")).trim().split("\n")).toHaveLength(1);
  });

  it("sees an edited tool: revalidates only that entry and reports its new description", async () => {
    await populate();
    await listInstalledTools({ ...opts(), cwd: w.cwd });
    await w.write("home/.xcsh/agent/tools/marked.mjs", markedTool("marked", "a new description"));
    const after = await listInstalledTools({ ...opts(), cwd: w.cwd });
    expect(after.index).toMatchObject({ fresh: false, validated: 1 });
    expect(after.tools.find((t) => t.name === "marked")?.description).toBe("a new description");
  });

  it("records live apart from the views: a boot never needs them, a broken records file only means validating again", async () => {
    await populate();
    const first = await listInstalledTools({ ...opts(), cwd: w.cwd });
    const modulesFile = xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootModules;
    const records = JSON.parse(await readFile(modulesFile, "utf8")) as { version: number; modules: Record<string, unknown> };
    expect(records.version).toBe(BOOT_INDEX_VERSION);
    expect(Object.keys(records.modules).length).toBeGreaterThan(10);
    expect(JSON.parse(await readFile(indexFile(), "utf8")).modules).toBeUndefined();

    await writeFile(modulesFile, "{ broken");
    const viewsBefore = await readFile(indexFile(), "utf8");
    expect((await discoverWithBootIndex([], w.cwd, opts())).index).toEqual({ fresh: true, reason: "fresh", written: false });
    const check = await checkBootIndex({ ...opts(), cwd: w.cwd });
    expect(check).toMatchObject({ state: "fresh", modules: 0 });
    expect(check.modulesProblem?.startsWith(`${modulesFile} is not JSON: `), check.modulesProblem).toBe(true);
    expect(check.unvalidated).toBeGreaterThan(10);

    await writeFile(marker(), "");
    const again = await listInstalledTools({ ...opts(), cwd: w.cwd });
    expect(again.index).toMatchObject({ validated: first.index.validated, written: true });
    expect(again.tools).toEqual(first.tools);
    expect((await readFile(marker(), "utf8")).trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(await readFile(modulesFile, "utf8"))).toEqual({ ...records, writtenAt: expect.any(String) });
    expect(JSON.parse(await readFile(indexFile(), "utf8")).views).toEqual(JSON.parse(viewsBefore).views);
  });

  it("validate: false never imports: entries without a record are reported, not loaded", async () => {
    await populate();
    await boot();
    await writeFile(marker(), "");
    const list = await listInstalledTools({ ...opts(), cwd: w.cwd, validate: false });
    expect(list.index.fresh).toBe(false);
    expect(list.index.reason).toMatch(/never validated/);
    expect(list.tools).toEqual([]);
    expect(await readFile(marker(), "utf8")).toBe("");
  });
});

describe("boot index: refreshBootIndex (after every mutation)", () => {
  it("validates new entries, compiles TypeScript ahead, and the next boot compiles nothing", async () => {
    await populate();
    const transpile = xcshPaths({ home: w.home, xcshHome: w.xcshHome }).transpileCache;
    const report = await refreshBootIndex({ ...opts(), cwd: w.cwd });
    expect(report).toMatchObject({ views: 1, written: true });
    expect(report.validated).toBeGreaterThan(10);
    const cached = async () => {
      const names = (await readdir(transpile)).filter((n) => n.endsWith(".mjs") || n.endsWith(".cjs")).sort();
      return Promise.all(names.map(async (n) => `${n} ${(await stat(path.join(transpile, n))).mtimeMs}`));
    };
    const before = await cached();
    // Every TypeScript entry the host will import through jiti is there already.
    for (const ts of ["npm_base", "npm_b", "proj_native", "folder_tool", "shadowed", "bash", "dup"]) {
      expect(before.some((line) => line.includes(ts === "folder_tool" ? "folder_tool-index" : ts))).toBe(true);
    }
    // A boot with the default transpile cache: loads everything, writes no cache entry.
    const result = await discoverAndLoadCustomTools([], w.cwd, BUILT_INS, undefined, opts());
    expect(result.tools.map((t) => t.tool.name)).toContain("npm_base");
    expect(await cached()).toEqual(before);

    // Unchanged entries are not validated again.
    expect((await refreshBootIndex({ ...opts(), cwd: w.cwd })).validated).toBe(0);
    // A listing is fresh after a refresh.
    expect((await listInstalledTools({ ...opts(), cwd: w.cwd })).index).toMatchObject({ fresh: true, validated: 0 });
  });

  it("rescans every kept view, and drops records nobody references", async () => {
    await populate();
    const other = path.join(w.root, "other");
    await writeTool(w, "other/.xcsh/tools/other_tool.js", "other_tool");
    // Its project tools are validated only because the user trusts it too.
    await writeTrustRecord(w.xcshHome, [w.cwd, other]);
    await refreshBootIndex({ ...opts(), cwd: w.cwd });
    await refreshBootIndex({ ...opts(), cwd: other });
    await rm(path.join(w.xcshHome, "agent/tools/marked.mjs"));
    const report = await refreshBootIndex(opts());
    expect(report.views).toBe(2);
    expect((await freshness([], other)).fresh).toBe(true);
    expect((await freshness([], w.cwd)).fresh).toBe(true);
    const doc = JSON.parse(await readFile(xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootModules, "utf8"));
    expect(Object.keys(doc.modules).some((k) => k.endsWith("marked.mjs"))).toBe(false);
    expect(Object.keys(doc.modules).some((k) => k.endsWith("other_tool.js"))).toBe(true);
  });
});
