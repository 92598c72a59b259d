/**
 * The no-op restore's check (teamset/fast.ts) and the stamp it reads (teamset/stamp.ts): what the
 * CLI's hot path loads, and every way a stamp must fail to say "up to date"; the warm restore's
 * record (teamset/warm.ts), which must never name a folder outside the plugin cache.
 */
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { teamPaths, teamStampFile, xcshPaths } from "../../src/core/paths.js";
import { fastRestore } from "../../src/teamset/fast.js";
import { identityOf, inputDigest, readInputDigests, readStamp, stampText, STAMP_VERSION, type RestoreStamp } from "../../src/teamset/stamp.js";
import { contentHashesText, readContentHashes, reusableFolder } from "../../src/teamset/warm.js";
import { worldPerTest, writeTrustRecord, type TmpWorld } from "../helpers/tmp-home.js";

const SRC = path.resolve(import.meta.dirname, "../../src");

/** The module specifiers `file` imports statically (imports and re-exports: what loads with it), read from its text. */
async function importsOf(file: string): Promise<string[]> {
  const text = await readFile(file, "utf8");
  return [...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+"([^"]+)"|^\s*import\s+"([^"]+)"/gm)].map((m) => m[1] ?? m[2]!);
}

describe("what the CLI's hot path loads for `install`", () => {
  it("fast.ts reaches only node: built-ins, core modules and the stamp's reader: no engine, no library", async () => {
    const seen = new Set<string>();
    const outside: string[] = [];
    const walk = async (file: string): Promise<void> => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const spec of await importsOf(file)) {
        if (spec.startsWith("node:")) continue;
        if (!spec.startsWith(".")) {
          outside.push(`${path.relative(SRC, file)} imports ${spec}`);
          continue;
        }
        await walk(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")));
      }
    };
    await walk(path.join(SRC, "teamset/fast.ts"));
    expect(outside).toEqual([]);
    // Nor anything on demand: the check itself never imports another module when it runs.
    for (const own of ["teamset/fast.ts", "teamset/stamp.ts"]) expect(await readFile(path.join(SRC, own), "utf8"), own).not.toMatch(/\bimport\(/);
    const files = [...seen].map((f) => path.relative(SRC, f)).sort();
    expect(files.filter((f) => !f.startsWith("core/") && f !== "teamset/fast.ts" && f !== "teamset/stamp.ts")).toEqual([]);
    // The core modules it reaches are those the CLI's program chunk loads anyway (scripts/lib/bundle.mjs HOT_CHUNKS "boot-index").
    const bundle = await readFile(path.join(SRC, "../scripts/lib/bundle.mjs"), "utf8");
    const hot = JSON.parse(/"boot-index": (\[[^\]]*\])/.exec(bundle)![1]!) as string[];
    expect(files.filter((f) => f.startsWith("core/") && !hot.includes(f.replace(/\.ts$/, "")))).toEqual([]);
  });
});

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-team-fast-unit-");

/** A project restored as far as the stamp can tell: its files, the user's trust, a stamp that matches now. */
async function stamped(more: Partial<RestoreStamp> = {}): Promise<{ stampFile: string; stamp: RestoreStamp; output: string }> {
  await w.write(path.join(w.cwd, "xcsh-team.json"), { version: 1, plugins: { a: { spec: "^1.0.0" } } });
  await w.write(path.join(w.cwd, "xcsh-team.lock.json"), { lockfileVersion: 1 });
  await mkdir(path.join(w.cwd, ".xcsh"), { recursive: true });
  const output = await w.write(path.join(w.cwd, ".xcsh/plugins/installed_plugins.json"), { version: 2, plugins: {} });
  await writeTrustRecord(w.xcshHome, [w.cwd]);
  const roots = { home: w.home, xcshHome: w.xcshHome };
  const paths = teamPaths(w.cwd);
  const stamp: RestoreStamp = {
    version: STAMP_VERSION,
    root: w.cwd,
    inputs: inputDigest(paths, readInputDigests(paths)),
    plugins: 1,
    frozenOk: true,
    npm: { a: "1.0.0" },
    trust: identityOf(xcshPaths(roots).trustedProjects),
    outputs: [identityOf(output), identityOf(path.join(w.cwd, ".xcsh/plugin-overrides.json"))],
    ...more,
  };
  const stampFile = teamStampFile(xcshPaths(roots).ours, w.cwd);
  await mkdir(path.dirname(stampFile), { recursive: true });
  await writeFile(stampFile, stampText(stamp));
  return { stampFile, stamp, output };
}

const check = (flags: { cwd?: string; home?: string; frozen?: boolean } = {}, cwd = w.cwd) => fastRestore({ cwd, env: { HOME: w.home, XCSH_HOME: w.xcshHome }, flags });

describe("fastRestore: up to date only when everything the stamp names is equal", () => {
  it("a stamp that matches: up to date, with its count, also from a subfolder and with --cwd", async () => {
    await stamped();
    expect(check()).toEqual({ plugins: 1 });
    expect(check({ frozen: true })).toEqual({ plugins: 1 });
    await mkdir(path.join(w.cwd, "sub"));
    expect(check({}, path.join(w.cwd, "sub"))).toEqual({ plugins: 1 });
    expect(check({ cwd: w.cwd }, w.root)).toEqual({ plugins: 1 });
  });

  it("the same stamp under --home naming another xcsh root: not found there, the engine decides", async () => {
    await stamped();
    await mkdir(path.join(w.root, "other-root"));
    expect(check({ home: path.join(w.root, "other-root") })).toBeUndefined();
  });

  describe("hostile or stale stamps and worlds: each answers undefined (the engine decides)", () => {
    it("no stamp, or an empty one", async () => {
      const { stampFile } = await stamped();
      await writeFile(stampFile, "");
      expect(check()).toBeUndefined();
      await rm(stampFile);
      expect(check()).toBeUndefined();
    });
    it("a stamp of another format version", async () => {
      await stamped({ version: 2 as typeof STAMP_VERSION });
      expect(check()).toBeUndefined();
    });
    it("a stamp whose fields have the wrong types", async () => {
      const { stampFile, stamp } = await stamped();
      for (const bad of [{ plugins: "1" }, { outputs: [{ file: 1, size: 0, mtimeMs: 0 }] }, { trust: null }, { frozenOk: "yes" }, { inputs: 7 }, { npm: { a: 1 } }, { npm: null }]) {
        await writeFile(stampFile, JSON.stringify({ ...stamp, ...bad }));
        expect(readStamp(stampFile), JSON.stringify(bad)).toBeUndefined();
        expect(check()).toBeUndefined();
      }
    });
    it("a stamp that is not JSON (a write cut short)", async () => {
      const { stampFile, stamp } = await stamped();
      await writeFile(stampFile, stampText(stamp).slice(0, 40));
      expect(check()).toBeUndefined();
    });
    it("a stamp copied from another project (its root is not this one)", async () => {
      await stamped({ root: path.join(w.root, "elsewhere") });
      expect(check()).toBeUndefined();
    });
    it("an input file edited (one byte)", async () => {
      await stamped();
      await writeFile(path.join(w.cwd, "xcsh-team.lock.json"), '{"lockfileVersion": 1} ');
      expect(check()).toBeUndefined();
    });
    it("an input file that appeared (the personal file)", async () => {
      await stamped();
      await w.write(path.join(w.cwd, ".xcsh/team.local.json"), { version: 1, plugins: {} });
      expect(check()).toBeUndefined();
    });
    it("an output that changed, and one that appeared where the stamp saw none", async () => {
      const { output } = await stamped();
      await writeFile(output, "{}\n");
      expect(check()).toBeUndefined();
      await stamped();
      await w.write(path.join(w.cwd, ".xcsh/plugin-overrides.json"), { disabled: ["a"] });
      expect(check()).toBeUndefined();
    });
    it("--frozen when the restore that stamped found the lock not frozen-clean", async () => {
      await stamped({ frozenOk: false });
      expect(check()).toEqual({ plugins: 1 });
      expect(check({ frozen: true })).toBeUndefined();
    });
    it("the project no longer trusted (record emptied), or the record rewritten", async () => {
      await stamped();
      await writeTrustRecord(w.xcshHome, []);
      expect(check()).toBeUndefined();
      await stamped({ trust: { file: path.join(w.root, "another-record.json"), size: -1, mtimeMs: 0 } });
      expect(check()).toBeUndefined();
    });
    it("a --cwd that is no folder: never the answer of the folder above it", async () => {
      await stamped();
      await writeFile(path.join(w.cwd, "file"), "");
      expect(check({ cwd: path.join(w.cwd, "missing") })).toBeUndefined();
      expect(check({ cwd: path.join(w.cwd, "file") })).toBeUndefined();
    });
    it("a command left work behind: a journal to recover, or a commit whose boot index refresh did not run", async () => {
      await stamped();
      const ours = xcshPaths({ home: w.home, xcshHome: w.xcshHome }).ours;
      await mkdir(path.join(ours, "journal"), { recursive: true });
      expect(check()).toEqual({ plugins: 1 });
      await mkdir(path.join(ours, "journal", "tx-1"));
      expect(check()).toBeUndefined();
      await rm(path.join(ours, "journal", "tx-1"), { recursive: true });
      await writeFile(path.join(ours, "boot-refresh-pending"), "");
      expect(check()).toBeUndefined();
    });
    it("an input that cannot be read as a file (a folder in its place)", async () => {
      await stamped();
      await mkdir(path.join(w.cwd, ".claude/settings.json"), { recursive: true });
      expect(check()).toBeUndefined();
    });
  });
});

describe("the warm restore's record names only folders of the plugin cache", () => {
  const HASH = `tree1-sha256:${"ab12".repeat(16)}`;
  const folder = `mkt___p___1.0.0-${"ab12".repeat(3)}`;

  it("a recorded folder with the locked hash and version is reused; another hash, version or name is not", async () => {
    const cache = path.join(w.root, "cache");
    await mkdir(path.join(cache, folder), { recursive: true });
    const record = readContentHashes(await w.write("record.json", JSON.parse(contentHashesText({}, [{ cacheDir: path.join(cache, folder), content: { hash: HASH, version: "1.0.0" } }])!)));
    expect(reusableFolder(record, cache, "mkt", "p", { version: "1.0.0", hash: HASH })).toEqual({ cacheDir: path.join(cache, folder), content: { hash: HASH, version: "1.0.0" } });
    expect(reusableFolder(record, cache, "mkt", "p", { version: "1.0.1", hash: HASH })).toBeUndefined();
    expect(reusableFolder(record, cache, "mkt", "p", { version: "1.0.0", hash: `tree1-sha256:${"cd".repeat(32)}` })).toBeUndefined();
    expect(reusableFolder(record, cache, "mkt", "q", { version: "1.0.0", hash: HASH })).toBeUndefined();
    expect(contentHashesText(record, [{ cacheDir: path.join(cache, folder), content: { hash: HASH, version: "1.0.0" } }])).toBeUndefined();
  });

  it("hostile keys (a path, `..`, a name whose hash digits are not the hash's) are ignored", async () => {
    const cache = path.join(w.root, "plugins/cache");
    await mkdir(path.join(w.root, "plugins/mkt___p___1.0.0-ab12ab12ab12"), { recursive: true });
    await mkdir(path.join(cache, "mkt___p___1.0.0-ffffffffffff"), { recursive: true });
    const file = await w.write("record.json", {
      version: 1,
      folders: {
        "../mkt___p___1.0.0-ab12ab12ab12": { hash: HASH, version: "1.0.0" },
        "..": { hash: HASH, version: "1.0.0" },
        "mkt___p___1.0.0-ffffffffffff": { hash: HASH, version: "1.0.0" },
      },
    });
    const record = readContentHashes(file);
    expect(Object.keys(record)).toEqual(["mkt___p___1.0.0-ffffffffffff"]);
    expect(reusableFolder(record, cache, "mkt", "p", { version: "1.0.0", hash: HASH })).toBeUndefined();
  });

  it("a link in the recorded folder's place is not followed, a missing folder not reused", async () => {
    const cache = path.join(w.root, "cache");
    await mkdir(path.join(w.root, "outside"), { recursive: true });
    await mkdir(cache, { recursive: true });
    await symlink(path.join(w.root, "outside"), path.join(cache, folder));
    const record = { [folder]: { hash: HASH, version: "1.0.0" } };
    expect(reusableFolder(record, cache, "mkt", "p", { version: "1.0.0", hash: HASH })).toBeUndefined();
    expect(reusableFolder(record, path.join(w.root, "empty"), "mkt", "p", { version: "1.0.0", hash: HASH })).toBeUndefined();
  });
});
