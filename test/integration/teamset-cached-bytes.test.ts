/**
 * A team restore reads a warm cache's locked tarballs by their content address (issue 42's restore
 * target; docs/benchmarks.md "Team sets (issue 42)", session 29): plugins/team.ts hands the bytes
 * npm-client.ts `cachedTarball` read and cacache checked against the locked integrity to the
 * fetcher (tarball-check.ts `HELD_BYTES_OPTION`), instead of pacote opening the same cache file
 * through its stream pipeline. The tarball check and pacote's extractor run on them unchanged.
 *
 * Class 1, the shortcut is taken (in-process restore; pacote's own cache reads counted at
 * cacache's `get.stream.byDigest`, the call pacote's cached path makes): a warm restore opens no
 * cache stream for any locked tarball and installs the tree as published; npm's `prefer-online`
 * and a tarball larger than the check's in-memory size take pacote's path.
 *
 * Class 2, a hostile or broken cache (each ends with the published bytes installed or a coded
 * refusal with nothing installed): the content file's bytes altered (the shortcut declines,
 * pacote refreshes the entry from the registry); an index entry that names other bytes (the
 * index is never read: the locked integrity is the address); the content file missing (the
 * registry); a folder at the content path; a hostile tarball whose integrity the lock names
 * (ETARBALL_UNSAFE: the check runs on the held bytes); a plugin locked at another package's
 * cached bytes (EINTEGRITY); held bytes offered under another integrity than the fetcher's
 * (ignored: the fetcher reads and checks its own). The hostile tarball's refusal, which comes
 * before its siblings finish, also holds "a fetch that fails fast leaves nothing": before team.ts
 * `settledAll`, the fetches still unpacking into the restore's scratch wrote there after the
 * restore had disposed of it.
 */
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadPacote, npmOptions } from "../../src/plugins/npm-client.js";
import { HELD_BYTES_OPTION } from "../../src/plugins/tarball-check.js";
import { restoreTeamSet } from "../../src/teamset/index.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { lockedByAClonedByB, npmClientOf, teamWorldOf } from "../helpers/team-project.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { tgzBytes } from "../reliability/helpers-tar.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

interface CacacheForTests {
  get: { stream: { byDigest: (...args: unknown[]) => unknown }; hasContent: (...args: unknown[]) => unknown };
  put(cache: string, key: string, data: Buffer, opts?: Record<string, unknown>): Promise<string>;
}
/** The cacache pacote reads npm's cache with (the sources' run: the same module instance). */
const cacache = createRequire(import.meta.url)("cacache") as CacacheForTests;

let reg: RegistryHandle & { dispose(): Promise<void> };
/** The integrities npm's libraries opened npm's cache for, by their own stream (pacote's cached path, make-fetch-happen's). */
const streamed: string[] = [];
/** The integrities the shortcut looked up (`cachedTarball`; npm's libraries never call `hasContent`). */
const probed: string[] = [];
let unspy: (() => void) | undefined;
beforeAll(async () => {
  reg = await useGlobalRegistry();
  await loadPacote();
  const { stream, hasContent } = { stream: cacache.get.stream.byDigest, hasContent: cacache.get.hasContent };
  cacache.get.stream.byDigest = function counted(this: unknown, ...args: unknown[]) {
    streamed.push(String(args[1]));
    return stream.apply(this, args);
  };
  cacache.get.hasContent = function counted(this: unknown, ...args: unknown[]) {
    probed.push(String(args[1]));
    return hasContent.apply(this, args);
  };
  unspy = () => {
    cacache.get.stream.byDigest = stream;
    cacache.get.hasContent = hasContent;
  };
});
afterAll(async () => {
  unspy?.();
  await reg.dispose();
});
let tags = 0;
const tag = () => `${Math.random().toString(36).slice(2, 7)}${(tags += 1)}`;

const restore = async (w: TmpWorld, root: string) => restoreTeamSet(root, { world: await teamWorldOf(w, root), approveAll: async () => undefined });
const failure = async (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as { code?: string; message?: string });
const pluginsDir = (w: TmpWorld) => path.join(w.xcshHome, "plugins");
/** npm's cache of `w` (`<cache>/_cacache`). */
const cacheOf = async (w: TmpWorld) => String(npmOptions(await npmClientOf(w)).cache);
/** cacache's content file for a single-hash `integrity` (cacache lib/content/path.js's layout). */
function contentPath(cache: string, integrity: string): string {
  const [algo, b64] = [integrity.slice(0, integrity.indexOf("-")), integrity.slice(integrity.indexOf("-") + 1)];
  const hex = Buffer.from(b64, "base64").toString("hex");
  return path.join(cache, "content-v2", algo, hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}
const sri = (bytes: Buffer) => `sha512-${createHash("sha512").update(bytes).digest("base64")}`;

describe("team restore: a warm cache's locked tarballs read by their content address", () => {
  let a: TmpWorld;
  let b: TmpWorld;
  let lib: string;
  let plugins: string[];
  let root: string;
  let locked: string[];

  beforeEach(async () => {
    a = await makeTmpWorld("xcsh-cached-a-");
    b = await makeTmpWorld("xcsh-cached-b-");
    await writeUserNpmrc(a.home, reg.url);
    await writeUserNpmrc(b.home, reg.url);
    const t = tag();
    lib = `@cached/lib-${t}`;
    plugins = [1, 2].map((i) => `@cached/p${i}-${t}`);
    await reg.publish({ name: lib, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    for (const name of plugins) await reg.publish({ name, version: "1.0.0", packageJson: { type: "module", dependencies: { [lib]: "^1.0.0" }, xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(name)) } });
    root = await lockedByAClonedByB(a, b, Object.fromEntries(plugins.map((name) => [name, { spec: "^1.0.0" }])));
    const lock = JSON.parse(await readFile(path.join(root, "xcsh-team.lock.json"), "utf8"));
    locked = [...plugins.map((name) => lock.npm[name].integrity as string), lock.npm[plugins[0]!].dependencies[`${lib}@1.0.0`] as string];
    // B's cache warm: a copy of the cache A's install filled.
    await mkdir(path.dirname(await cacheOf(b)), { recursive: true });
    await cp(await cacheOf(a), await cacheOf(b), { recursive: true });
    streamed.length = 0;
    probed.length = 0;
  });
  afterEach(async () => {
    await Promise.all([a, b].map((w) => w.cleanup()));
  });

  /** Every plugin and the library installed with the published files. */
  async function expectPublished(w: TmpWorld): Promise<void> {
    for (const name of plugins) expect(await readFile(path.join(pluginsDir(w), "node_modules", name, "t.js"), "utf8")).toBe(toolSource(toolName(name)));
    expect(await readFile(path.join(pluginsDir(w), "node_modules", lib, "index.js"), "utf8")).toBe("export default 1;\n");
  }

  // ---- class 1: the shortcut is taken, and only where it may be ----

  it("a warm cache: no locked tarball is streamed from the cache by pacote, and the set is installed as published", async () => {
    const report = await restore(b, root);
    expect(report.npmInstalled.sort()).toEqual(plugins.map((name) => `${name}@1.0.0`).sort());
    expect(streamed).toEqual([]);
    expect([...new Set(probed)].sort()).toEqual([...locked].sort());
    await expectPublished(b);
  });

  it("npm's prefer-online: pacote's own path (it skips the cache), the set installed", async () => {
    await writeFile(path.join(b.home, ".npmrc"), `registry=${reg.url}\nprefer-online=true\n`);
    await restore(b, root);
    expect(probed).toEqual([]);
    await expectPublished(b);
  });

  it("a tarball larger than the check's in-memory size: pacote's stream reads it, the set installed", async () => {
    const big = `@cached/big-${tag()}`;
    // Incompressible bytes, so the tarball itself is over 1 MiB.
    await reg.publish({ name: big, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(big)), "blob.txt": Array.from({ length: 40_000 }, (_, i) => createHash("sha512").update(String(i)).digest("base64")).join("") } });
    const a2 = await makeTmpWorld("xcsh-cached-a2-");
    const b2 = await makeTmpWorld("xcsh-cached-b2-");
    try {
      await writeUserNpmrc(a2.home, reg.url);
      await writeUserNpmrc(b2.home, reg.url);
      const root2 = await lockedByAClonedByB(a2, b2, { [big]: { spec: "^1.0.0" } });
      const integrity = JSON.parse(await readFile(path.join(root2, "xcsh-team.lock.json"), "utf8")).npm[big].integrity as string;
      await cp(await cacheOf(a2), await cacheOf(b2), { recursive: true });
      expect((await readFile(contentPath(await cacheOf(b2), integrity))).length).toBeGreaterThan(1024 * 1024);
      streamed.length = 0;
      await restore(b2, root2);
      expect(probed).toEqual([integrity]);
      expect(streamed).toEqual([integrity]);
      expect(existsSync(path.join(pluginsDir(b2), "node_modules", big, "blob.txt"))).toBe(true);
    } finally {
      await Promise.all([a2, b2].map((w) => w.cleanup()));
    }
  });

  // ---- class 2: a hostile or broken cache ----

  it("the cached bytes of a locked plugin altered: the shortcut declines, pacote refreshes them from the registry, the published bytes are installed", async () => {
    const file = contentPath(await cacheOf(b), locked[0]!);
    await rm(file, { force: true });
    await writeFile(file, tgzBytes([{ name: "package/package.json", content: JSON.stringify({ name: plugins[0], version: "1.0.0" }) }, { name: "package/t.js", content: "throw new Error('not the published tool');\n" }]));
    await restore(b, root);
    expect(streamed).toContain(locked[0]);
    await expectPublished(b);
  });

  it("an index entry that names other bytes for a locked tarball's URL: never read (the locked integrity is the address), the published bytes are installed", async () => {
    const cache = await cacheOf(b);
    const other = tgzBytes([{ name: "package/package.json", content: JSON.stringify({ name: plugins[0], version: "1.0.0" }) }, { name: "package/t.js", content: "throw new Error('from the lying index');\n" }]);
    const url = `${reg.url.replace(/\/$/, "")}/${plugins[0]}/-/${plugins[0]!.slice(plugins[0]!.indexOf("/") + 1)}-1.0.0.tgz`;
    for (const key of [`make-fetch-happen:request-cache:${url}`, `pacote:tarball:${url}`]) await cacache.put(cache, key, other);
    await restore(b, root);
    expect(streamed).toEqual([]);
    await expectPublished(b);
  });

  it("a locked tarball missing from the cache: fetched from the registry, the set installed", async () => {
    await rm(contentPath(await cacheOf(b), locked[1]!), { force: true });
    await restore(b, root);
    await expectPublished(b);
    expect(existsSync(contentPath(await cacheOf(b), locked[1]!))).toBe(true);
  });

  it("a folder where a locked tarball's content file belongs: not read, the set installed", async () => {
    const file = contentPath(await cacheOf(b), locked[2]!);
    await rm(file, { force: true });
    await mkdir(path.join(file, "inside"), { recursive: true });
    await restore(b, root);
    // pacote's own path meets the folder too: EISDIR, which it treats as a miss, and fetches from the registry.
    expect(streamed).toContain(locked[2]);
    await expectPublished(b);
  });

  it("a hostile tarball whose integrity the lock names, in the cache: ETARBALL_UNSAFE from the check on the held bytes, nothing installed", async () => {
    const evil = tgzBytes([
      { name: "package/package.json", content: JSON.stringify({ name: plugins[0], version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } }) },
      { name: "package/t.js", content: toolSource(toolName(plugins[0]!)) },
      { name: "package/../../escape.txt", content: "out" },
    ]);
    const integrity = sri(evil);
    await cacache.put(await cacheOf(b), `pacote:tarball:evil-${tag()}`, evil);
    expect(existsSync(contentPath(await cacheOf(b), integrity))).toBe(true);
    const lockFile = path.join(root, "xcsh-team.lock.json");
    const lock = JSON.parse(await readFile(lockFile, "utf8"));
    lock.npm[plugins[0]!].integrity = integrity;
    await writeFile(lockFile, `${JSON.stringify(lock, null, 2)}\n`);
    const before = await snapshotTree(b.root, { exclude: [".npm"] });
    const r = await failure(restore(b, root));
    expect(r?.code).toBe("ETARBALL_UNSAFE");
    expect(streamed).toEqual([]);
    expect(await snapshotTree(b.root, { exclude: [".npm"] })).toEqual(before);
  });

  it("a plugin locked at another package's bytes, both in the cache: EINTEGRITY naming the plugin, nothing installed", async () => {
    const lockFile = path.join(root, "xcsh-team.lock.json");
    const lock = JSON.parse(await readFile(lockFile, "utf8"));
    lock.npm[plugins[0]!].integrity = locked[2]; // the library's bytes, in B's cache
    await writeFile(lockFile, `${JSON.stringify(lock, null, 2)}\n`);
    const before = await snapshotTree(b.root, { exclude: [".npm"] });
    const r = await failure(restore(b, root));
    expect(r?.code).toBe("EINTEGRITY");
    expect(r?.message).toContain(plugins[0]);
    expect(await snapshotTree(b.root, { exclude: [".npm"] })).toEqual(before);
  });

  it("held bytes offered under another integrity than the fetcher asks for: ignored, the fetcher reads and checks its own bytes", async () => {
    const pacote = await loadPacote();
    const url = `${reg.url.replace(/\/$/, "")}/${lib}/-/${lib.slice(lib.indexOf("/") + 1)}-1.0.0.tgz`;
    const other = tgzBytes([{ name: "package/package.json", content: JSON.stringify({ name: lib, version: "1.0.0" }) }, { name: "package/index.js", content: "export default 'other';\n" }]);
    const dest = path.join(b.root, "x", "node_modules", lib);
    await pacote.extract(url, dest, { ...npmOptions(await npmClientOf(b)), integrity: locked[2], [HELD_BYTES_OPTION]: { integrity: sri(other), bytes: other } } as never);
    expect(await readFile(path.join(dest, "index.js"), "utf8")).toBe("export default 1;\n");
    expect(streamed).toEqual([locked[2]]);
  });
});
