/**
 * The no-op restore through the built CLI (docs/design/team-sets.md (d) step 0): a second
 * `install` in a restored project answers "Up to date" from the restore stamp, writes nothing and
 * loads neither commander nor the engine; every change a restore must act on sends it to the
 * engine instead (never a wrong "up to date"). And the warm path: a cache folder a restore
 * created is installed again without fetching its marketplace.
 */
import { lstat, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist, modulesOfLoadedFiles } from "../helpers/build-dist.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { cliArgv, hermeticEnv, runCli, runProcess } from "../helpers/run-cli.js";
import { worldPerTest, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

const MKT = "tools/marketplace";
let reg: RegistryHandle & { dispose(): Promise<void> };
const tag = Math.random().toString(36).slice(2, 8);
const npmPlugin = `@teamfast/p1-${tag}`;

beforeAll(async () => {
  await buildDist();
  reg = await useGlobalRegistry();
  await reg.publish({ name: npmPlugin, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(npmPlugin)) } });
}, 180_000);
afterAll(async () => {
  await reg?.dispose();
});

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-team-fast-");

/** The project: a directory marketplace inside it with one plugin, one npm plugin, the declaration. */
async function writeProject(): Promise<void> {
  const plugin = `${MKT}/plugins/hello`;
  await w.write(path.join(w.cwd, MKT, catalogPath()), catalog("in-repo", [{ name: "hello", source: "./plugins/hello", version: "1.0.0" }]));
  await w.write(path.join(w.cwd, plugin, ".xcsh-plugin/plugin.json"), { name: "hello", version: "1.0.0", description: "the hello plugin" });
  await w.write(path.join(w.cwd, plugin, "skills/hi/SKILL.md"), "---\nname: hi\ndescription: says hi\n---\nSay hi.\n");
  await w.write(path.join(w.cwd, "xcsh-team.json"), {
    version: 1,
    marketplaces: { "in-repo": { source: { source: "directory", path: `./${MKT}` } } },
    plugins: { "hello@in-repo": {}, [npmPlugin]: { spec: "^1.0.0" } },
  });
  await w.write(path.join(w.cwd, ".xcsh/.keep"), "");
}

const cli = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home, timeoutMs: 120_000 });

/** `install --json` as the user runs it; the answer's JSON. */
async function install(...more: string[]): Promise<Record<string, unknown>> {
  const r = await cli(["install", "--json", ...more]);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return r.json();
}

/** Every file and folder below `root` with its size and mtime (what a write changes). */
async function mtimes(root: string, out: Record<string, string> = {}): Promise<Record<string, string>> {
  for (const name of await readdir(root)) {
    const file = path.join(root, name);
    const s = await lstat(file);
    out[file] = `${s.size}:${s.mtimeMs}`;
    if (s.isDirectory() && name !== ".git") await mtimes(file, out);
  }
  return out;
}

/** The project restored once by the engine, the user having trusted it. */
async function restored(): Promise<void> {
  await writeProject();
  await writeUserNpmrc(w.home, reg.url);
  const trusted = await cli(["trust"]);
  expect(trusted.code, trusted.stderr).toBe(0);
  const first = await install("--yes");
  expect(first).toMatchObject({ ok: true, lockChanged: true });
  expect(first.upToDate).toBeUndefined();
}

const FAST = { ok: true, upToDate: true, plugins: 2 };

describe("install with nothing to do", () => {
  it("answers from the stamp: the same answer as text and --json, nothing written anywhere, commander and the engine not loaded", { timeout: 240_000 }, async () => {
    await restored();
    const before = { ...(await mtimes(w.cwd)), ...(await mtimes(w.home)) };
    expect(await install()).toEqual(FAST);
    const text = await cli(["install"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toBe("Up to date: 2 plugins (xcsh-team.lock.json)\n");
    expect({ ...(await mtimes(w.cwd)), ...(await mtimes(w.home)) }).toEqual(before);

    // Which modules the process loaded: a resolve hook logs every URL (as boot-index-cli.test.ts does).
    const log = path.join(w.root, "resolved.log");
    await writeFile(log, "");
    const hooks = await w.write("hooks/log-hooks.mjs", `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(log)}, result.url + "\\n");\n  return result;\n}\n`);
    const register = await w.write("hooks/register.mjs", `import { register } from "node:module";\nregister(${JSON.stringify(`file://${hooks}`)});\n`);
    const r = await runProcess(process.execPath, ["--import", register, ...cliArgv(w.home, ["install", "--json"])], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual(FAST);
    const loaded = (await readFile(log, "utf8")).split("\n").filter(Boolean);
    const urls = modulesOfLoadedFiles(loaded);
    expect(urls.some((url) => url.endsWith("/src/teamset/fast.ts"))).toBe(true);
    // No commander, no engine: of the team-set engine only the check, the stamp's reader and the
    // notes `tools` prints on the query path (teamset/notes.ts: node-only, stat-only), and nothing of the installers or the install command (the program's hot chunks hold the rest).
    expect(urls.filter((url) => url.includes("/node_modules/") || /\/src\/(teamset\/(?!fast\.ts|stamp\.ts|notes\.ts)|marketplace\/|plugins\/|validate\/|cli\/commands\/install|cli\/team-restore)/.test(url))).toEqual([]);
    // The files of `tools`' query path (boot-index-cli.test.ts: at most 10) and the check's own chunk.
    expect(new Set(loaded.filter((url) => url.includes("/dist/"))).size).toBeLessThanOrEqual(11);
  });

  it("--frozen, --yes, --cwd and the alias i are honoured on the fast path; any other flag goes to commander", { timeout: 240_000 }, async () => {
    await restored();
    expect(await install("--frozen", "--yes")).toEqual(FAST);
    const alias = await cli(["i", "--json"]);
    expect(alias.json()).toEqual(FAST);
    const elsewhere = await runCli(["install", "--json", "--cwd", w.cwd], { cwd: w.home, home: w.home });
    expect(elsewhere.json()).toEqual(FAST);
    // --dry-run is the engine's (a dry run of the restore), never the stamp's "up to date".
    const dry = await cli(["install", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json()).toMatchObject({ ok: true, dryRun: true });
    expect(dry.json()).not.toHaveProperty("upToDate");
    // A --cwd that is no folder: the engine's EUSAGE, though the folder above it is restored.
    const missing = await cli(["install", "--json", "--cwd", path.join(w.cwd, "nope")]);
    expect(missing.code).toBe(2);
    expect(missing.json()).toMatchObject({ error: { code: "EUSAGE" } });
  });

  describe("every change a restore must act on goes to the engine", () => {
    beforeEach(async () => {
      await restored();
      expect(await install()).toEqual(FAST);
    });

    /** The next `install` ran the engine (its report, not the stamp's answer), and the one after it is fast again. */
    async function engineThenFast(plugins = 2): Promise<Record<string, unknown>> {
      const report = await install();
      expect(report.upToDate).toBeUndefined();
      expect(report).toHaveProperty("written");
      expect(await install()).toEqual({ ...FAST, plugins });
      return report;
    }

    it("the declaration edited", { timeout: 240_000 }, async () => {
      const file = path.join(w.cwd, "xcsh-team.json");
      const doc = JSON.parse(await readFile(file, "utf8"));
      await writeFile(file, JSON.stringify({ ...doc, plugins: { ...doc.plugins, "hello@in-repo": { enabled: false } } }, null, 2) + "\n");
      const report = await engineThenFast(1);
      expect(report.written).toContain(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"));
    });

    it("the lock edited (same meaning, other bytes): the engine rewrites it canonically", { timeout: 240_000 }, async () => {
      const file = path.join(w.cwd, "xcsh-team.lock.json");
      const text = await readFile(file, "utf8");
      await writeFile(file, JSON.stringify(JSON.parse(text)));
      expect((await engineThenFast()).lockChanged).toBe(true);
      expect(await readFile(file, "utf8")).toBe(text);
    });

    it("a personal file added", { timeout: 240_000 }, async () => {
      await w.write(path.join(w.cwd, ".xcsh/team.local.json"), { version: 1, plugins: { "hello@in-repo": { enabled: false } } });
      expect((await engineThenFast(1)).written).toContain(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"));
    });

    it("Claude's project settings added", { timeout: 240_000 }, async () => {
      await w.write(path.join(w.cwd, ".claude/settings.json"), { enabledPlugins: { "hello@in-repo": true } });
      await engineThenFast();
    });

    it("a generated file deleted: the engine writes it again", { timeout: 240_000 }, async () => {
      const file = path.join(w.cwd, ".xcsh/plugins/installed_plugins.json");
      await rm(file);
      expect((await engineThenFast()).written).toContain(file);
    });

    it("a cache folder the set relies on deleted: the engine installs it again", { timeout: 240_000 }, async () => {
      const cache = path.join(w.xcshHome, "plugins/cache/plugins");
      const folder = (await readdir(cache)).find((name) => name.startsWith("in-repo___hello___"))!;
      await rm(path.join(cache, folder), { recursive: true });
      await engineThenFast();
      expect((await readdir(cache)).includes(folder)).toBe(true);
    });

    it("the user uninstalled an npm plugin of the set: the engine installs it again", { timeout: 240_000 }, async () => {
      const removed = await cli(["uninstall", npmPlugin]);
      expect(removed.code, removed.stderr).toBe(0);
      expect((await engineThenFast()).npmInstalled).toEqual([`${npmPlugin}@1.0.0`]);
    });

    it("the npm plugin's folder removed by hand: the engine decides", { timeout: 240_000 }, async () => {
      await rm(path.join(w.xcshHome, "plugins/node_modules", npmPlugin), { recursive: true });
      const report = await install();
      expect(report.upToDate).toBeUndefined();
    });

    it("trust revoked: EUNTRUSTED_PROJECT from the engine, never up to date", { timeout: 240_000 }, async () => {
      const revoked = await cli(["untrust"]);
      expect(revoked.code, revoked.stderr).toBe(0);
      const r = await cli(["install", "--json"]);
      expect(r.code).toBe(1);
      expect(r.json()).toMatchObject({ error: { code: "EUNTRUSTED_PROJECT" } });
    });

    it("a stamp that lies (another input digest): the engine, which writes the true one", { timeout: 240_000 }, async () => {
      const dir = path.join(w.xcshHome, "plugins/.xcsh-tools/team");
      const stamp = (await readdir(dir)).find((name) => name !== "content-hashes.json")!;
      const doc = JSON.parse(await readFile(path.join(dir, stamp), "utf8"));
      await writeFile(path.join(dir, stamp), JSON.stringify({ ...doc, inputs: "0".repeat(64) }));
      await engineThenFast();
    });
  });
});

describe("warm restore", () => {
  it("a cache folder a restore created and recorded is installed again without fetching its marketplace", { timeout: 240_000 }, async () => {
    await restored();
    const record = JSON.parse(await readFile(path.join(w.xcshHome, "plugins/.xcsh-tools/team/content-hashes.json"), "utf8"));
    const lock = JSON.parse(await readFile(path.join(w.cwd, "xcsh-team.lock.json"), "utf8"));
    expect(Object.values(record.folders)).toEqual([{ hash: lock.marketplacePlugins["hello@in-repo"].hash, version: "1.0.0" }]);
    // The generated registry gone and the marketplace's plugin folder gone from the project: only the cache can restore it.
    await rm(path.join(w.cwd, ".xcsh/plugins"), { recursive: true });
    await rm(path.join(w.cwd, MKT, "plugins/hello"), { recursive: true });
    const report = await install();
    expect(report).toMatchObject({ installed: ["hello@in-repo"], resolved: [] });
    const registry = JSON.parse(await readFile(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), "utf8"));
    expect(registry.plugins["hello@in-repo"][0].installPath).toBe(path.join(w.xcshHome, "plugins/cache/plugins", Object.keys(record.folders)[0]!));
  });
});
