/**
 * A team restore reads each locked tarball once (issue 42's restore target; docs/benchmarks.md
 * "Team sets (issue 42)"): the pinned fetch unpacks each registry tarball into the restore's
 * scratch, the consent preview reads the plugins there, and npm's installer moves those folders
 * into the staging copy (plugins/unpacked.ts) instead of reading the bytes again; a library
 * several plugins lock at the same bytes is installed once, at the top, as npm dedupes it.
 *
 * Class 1, the restore's shortcuts (in-process restore, every tarball read counted at pacote's
 * `tarballStream`): each locked tarball read once and the tree as locked; a shared library at
 * two versions is not shared; the same library version whose locked dependency differs between
 * two plugins is not shared (each plugin resolves its own locked dependency); a failure after
 * the folders were moved (injected at `reify:done`) leaves every file as it was, and the next
 * restore installs the set; so does kill -9 there (the CLI paused at `reify:done`).
 *
 * Class 2, the hand-over itself (pacote's `extract` with the option, as arborist calls it): a
 * folder is taken only for the very integrity it was offered under and only by the fetcher it
 * was unpacked with; anything else reads the tarball, integrity checked: another integrity
 * (a forged one: EINTEGRITY, the folder untouched), a second destination, a destination that
 * already holds files, a folder with bundled `node_modules`, a `file:` tarball, a call without
 * the option (every other install).
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createRequire } from "node:module";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadRegistryOptions } from "../../src/plugins/npmrc.js";
import { loadPacote, npmOptions, type NpmClientOptions } from "../../src/plugins/npm-client.js";
import { UNPACKED_OPTION, UnpackedFolders } from "../../src/plugins/unpacked.js";
import { restoreTeamSet, type TeamWorld } from "../../src/teamset/index.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { marketplaceCtx } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { cliArgv, hermeticEnv, runCli } from "../helpers/run-cli.js";
import { lockedByAClonedByB, trustedTeamProject } from "../helpers/team-project.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeTmpWorld, writeTrustRecord, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
/** Every tarball pacote read (from npm's cache or the registry), by the integrity it was asked for. */
const reads: string[] = [];
let unspy: (() => void) | undefined;
beforeAll(async () => {
  reg = await useGlobalRegistry();
  const pacote = await loadPacote();
  let proto = (pacote as unknown as { RemoteFetcher: { prototype: object } }).RemoteFetcher.prototype as Record<string, unknown>;
  while (!Object.prototype.hasOwnProperty.call(proto, "tarballStream")) proto = Object.getPrototypeOf(proto) as Record<string, unknown>;
  const original = proto.tarballStream as (...args: unknown[]) => unknown;
  proto.tarballStream = function counted(this: { integrity?: unknown; spec?: { raw?: string } }, ...args: unknown[]) {
    reads.push(String(this.integrity ?? this.spec?.raw));
    return original.apply(this, args);
  };
  unspy = () => {
    proto.tarballStream = original;
  };
});
afterAll(async () => {
  unspy?.();
  await reg.dispose();
});
let tags = 0;
const tag = () => `${Math.random().toString(36).slice(2, 7)}${(tags += 1)}`;

const xcsh = (w: TmpWorld, cwd: string, args: string[]) => runCli(args, { cwd, home: w.home, timeoutMs: 120_000 });

async function client(w: TmpWorld): Promise<NpmClientOptions> {
  const registry = (await loadRegistryOptions({ home: w.home, env: {}, pluginsDir: path.join(w.xcshHome, "plugins") })).options;
  return { registry, home: w.home, allowScripts: false };
}

/** The team world of `w` at `root`, consent given, `onStep` as a fault hook. */
async function teamWorld(w: TmpWorld, root: string, onStep?: (step: string) => Promise<void>): Promise<TeamWorld> {
  return { ctx: marketplaceCtx(w, { cwd: root, approveExecutables: async () => undefined, ...(onStep ? { onStep } : {}) }), npm: await client(w) };
}

/** The restore as `install --yes` runs it: one question for the whole set, so the consent preview reads every plugin. */
const restore = async (w: TmpWorld, root: string, onStep?: (step: string) => Promise<void>) => restoreTeamSet(root, { world: await teamWorld(w, root, onStep), approveAll: async () => undefined });

const project = trustedTeamProject;

const pluginsDir = (w: TmpWorld) => path.join(w.xcshHome, "plugins");

/** The version of `dep` Node's resolution finds from the folder of `from` (a chain of names, each resolved from the previous one's folder). */
function versionAlong(w: TmpWorld, ...chain: string[]): string {
  let dir = path.join(pluginsDir(w), "node_modules", chain[0]!);
  for (const name of chain.slice(1)) dir = path.dirname(createRequire(path.join(dir, "package.json")).resolve(`${name}/package.json`));
  return JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version;
}

/** The integrity the registry gives `name@version`. */
async function integrityOf(name: string, version: string): Promise<string> {
  const doc = (await (await fetch(`${reg.url.replace(/\/$/, "")}/${name.replace("/", "%2f")}`)).json()) as { versions: Record<string, { dist: { integrity: string; tarball: string } }> };
  return doc.versions[version]!.dist.integrity;
}

describe("team restore: each locked tarball read once, a shared library installed once", () => {
  let a: TmpWorld;
  let b: TmpWorld;
  let lib: string;
  let plugins: string[];

  beforeEach(async () => {
    a = await makeTmpWorld("xcsh-readonce-a-");
    b = await makeTmpWorld("xcsh-readonce-b-");
    await writeUserNpmrc(a.home, reg.url);
    await writeUserNpmrc(b.home, reg.url);
    const t = tag();
    lib = `@readonce/lib-${t}`;
    plugins = [1, 2, 3].map((i) => `@readonce/p${i}-${t}`);
    reads.length = 0;
  });
  afterEach(async () => {
    await Promise.all([a, b].map((w) => w.cleanup()));
  });

  const publishPlugin = (name: string, deps: Record<string, string>) =>
    reg.publish({ name, version: "1.0.0", packageJson: { type: "module", dependencies: deps, xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(name)) } });

  const lockedInA = (declared: Record<string, unknown>) => lockedByAClonedByB(a, b, declared);

  it("three plugins sharing one library: each locked tarball is read once, the library is installed once at the top, every tool file as published", async () => {
    await reg.publish({ name: lib, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    for (const name of plugins) await publishPlugin(name, { [lib]: "^1.0.0" });
    const root = await lockedInA(Object.fromEntries(plugins.map((name) => [name, { spec: "^1.0.0" }])));
    const lock = JSON.parse(await readFile(path.join(root, "xcsh-team.lock.json"), "utf8"));
    reads.length = 0;
    const report = await restore(b, root);
    expect(report.npmInstalled.sort()).toEqual(plugins.map((name) => `${name}@1.0.0`).sort());
    const locked = [...plugins.map((name) => lock.npm[name].integrity), lock.npm[plugins[0]!].dependencies[`${lib}@1.0.0`]];
    expect(reads.sort()).toEqual(locked.sort());
    for (const name of plugins) {
      expect(existsSync(path.join(pluginsDir(b), "node_modules", name, "node_modules")), `${name} has no nested copy`).toBe(false);
      expect(versionAlong(b, name, lib)).toBe("1.0.0");
      expect(await readFile(path.join(pluginsDir(b), "node_modules", name, "t.js"), "utf8")).toBe(toolSource(toolName(name)));
    }
    expect(await readFile(path.join(pluginsDir(b), "node_modules", lib, "index.js"), "utf8")).toBe("export default 1;\n");
  });

  it("two plugins locking the library at two versions: not shared, each finds its own", async () => {
    await reg.publish({ name: lib, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    await reg.publish({ name: lib, version: "2.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 2;\n" } });
    await publishPlugin(plugins[0]!, { [lib]: "^1.0.0" });
    await publishPlugin(plugins[1]!, { [lib]: "^2.0.0" });
    const root = await lockedInA({ [plugins[0]!]: { spec: "^1.0.0" }, [plugins[1]!]: { spec: "^1.0.0" } });
    await restore(b, root);
    expect(versionAlong(b, plugins[0]!, lib)).toBe("1.0.0");
    expect(versionAlong(b, plugins[1]!, lib)).toBe("2.0.0");
  });

  it("the same library version whose locked dependency differs between two plugins: not shared, each plugin's library finds its own locked dependency", async () => {
    const sub = `${lib}-sub`;
    await reg.publish({ name: sub, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    await reg.publish({ name: lib, version: "1.0.0", packageJson: { type: "module", dependencies: { [sub]: "^1.0.0" } }, files: { "index.js": "export default 1;\n" } });
    await publishPlugin(plugins[0]!, { [lib]: "^1.0.0" });
    await publishPlugin(plugins[1]!, { [lib]: "^1.0.0" });
    // The first plugin is locked while sub is at 1.0.0; the second after sub 1.1.0 came out.
    const rootA = await project(a, { [plugins[0]!]: { spec: "^1.0.0" } });
    expect((await xcsh(a, rootA, ["install", "--yes"])).code).toBe(0);
    await reg.publish({ name: sub, version: "1.1.0", packageJson: { type: "module" }, files: { "index.js": "export default 2;\n" } });
    const declared = { [plugins[0]!]: { spec: "^1.0.0" }, [plugins[1]!]: { spec: "^1.0.0" } };
    await writeFile(path.join(rootA, "xcsh-team.json"), `${JSON.stringify({ version: 1, plugins: declared }, null, 2)}\n`);
    await rm(pluginsDir(a), { recursive: true, force: true });
    await writeTrustRecord(a.xcshHome, [rootA]);
    const second = await xcsh(a, rootA, ["install", "--yes"]);
    expect(second.code, second.stderr).toBe(0);
    const lock = JSON.parse(await readFile(path.join(rootA, "xcsh-team.lock.json"), "utf8"));
    expect(Object.keys(lock.npm[plugins[0]!].dependencies)).toContain(`${sub}@1.0.0`);
    expect(Object.keys(lock.npm[plugins[1]!].dependencies)).toContain(`${sub}@1.1.0`);
    const rootB = await project(b, declared);
    await writeFile(path.join(rootB, "xcsh-team.lock.json"), JSON.stringify(lock, null, 2));
    await restore(b, rootB);
    expect(versionAlong(b, plugins[0]!, lib, sub)).toBe("1.0.0");
    expect(versionAlong(b, plugins[1]!, lib, sub)).toBe("1.1.0");
  });

  it("a failure after npm's installer moved the read folders into the staging copy: every file as it was, and the next restore installs the set", async () => {
    await reg.publish({ name: lib, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    for (const name of plugins) await publishPlugin(name, { [lib]: "^1.0.0" });
    const root = await lockedInA(Object.fromEntries(plugins.map((name) => [name, { spec: "^1.0.0" }])));
    const before = await snapshotTree(b.root, { exclude: [".npm"] });
    const failed = await restore(b, root, async (step) => {
      if (step === "reify:done") throw Object.assign(new Error("injected at reify:done"), { code: "EFAULT_INJECTED" });
    }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ message: "injected at reify:done" });
    expect(await snapshotTree(b.root, { exclude: [".npm"] })).toEqual(before);
    await restore(b, root);
    for (const name of plugins) expect(versionAlong(b, name, lib)).toBe("1.0.0");
  });

  it("kill -9 after npm's installer moved the read folders in (paused at reify:done): the next command recovers the old state, and the next restore installs the set", async () => {
    await reg.publish({ name: lib, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    for (const name of plugins) await publishPlugin(name, { [lib]: "^1.0.0" });
    const root = await lockedInA(Object.fromEntries(plugins.map((name) => [name, { spec: "^1.0.0" }])));
    const marker = path.join(b.root, "paused");
    const child = spawn(process.execPath, cliArgv(b.home, ["install", "--yes"]), { cwd: root, env: hermeticEnv(b.home, { XCSH_TOOLS_TEST_PAUSE: "reify:done", XCSH_TOOLS_TEST_PAUSE_FILE: marker }), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = once(child, "exit");
    for (let i = 0; !existsSync(marker); i++) {
      if (child.exitCode !== null) throw new Error(`exited before pausing: ${stderr}`);
      if (i > 2400) throw new Error("never paused at reify:done");
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    await exited;
    const list = await xcsh(b, root, ["list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).plugins).toEqual([]);
    for (const name of [...plugins, lib]) expect(existsSync(path.join(pluginsDir(b), "node_modules", name)), name).toBe(false);
    const restored = await xcsh(b, root, ["install", "--yes"]);
    expect(restored.code, restored.stderr).toBe(0);
    for (const name of plugins) expect(versionAlong(b, name, lib)).toBe("1.0.0");
  });
});

describe("the hand-over: a read folder is taken only for the bytes it was read from", () => {
  let w: TmpWorld;
  let name: string;
  let url: string;
  let integrity: string;
  let options: Record<string, unknown>;

  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-handover-");
    await writeUserNpmrc(w.home, reg.url);
    name = `@readonce/h-${tag()}`;
    await reg.publish({ name, version: "1.0.0", packageJson: { type: "module" }, files: { "index.js": "export default 1;\n" } });
    url = `${reg.url.replace(/\/$/, "")}/${name}/-/${name.slice(name.indexOf("/") + 1)}-1.0.0.tgz`;
    integrity = await integrityOf(name, "1.0.0");
    options = npmOptions(await client(w));
    reads.length = 0;
  });
  afterEach(async () => {
    await w.cleanup();
  });

  /** A folder as the restore's fetch leaves it, with a marker the tarball does not have. */
  async function handed(extra: Record<string, string> = {}): Promise<string> {
    const dir = path.join(w.root, `handed-${tag()}`);
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0" }));
    await writeFile(path.join(dir, "MOVED"), "");
    for (const [file, text] of Object.entries(extra)) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await writeFile(path.join(dir, file), text);
    }
    return dir;
  }
  const extract = async (spec: string, dest: string, more: Record<string, unknown>) => (await loadPacote()).extract(spec, dest, { ...options, ...more } as never);
  const dest = (n = 1) => path.join(w.root, "work", `d${n}`, "node_modules", name);
  /** A read folder offered under `key` (the real integrity unless said otherwise). */
  async function offered(key = integrity, extra: Record<string, string> = {}): Promise<{ dir: string; folders: UnpackedFolders }> {
    const dir = await handed(extra);
    const folders = new UnpackedFolders();
    folders.offer(key, dir);
    return { dir, folders };
  }
  /** The registry's tarball was read once, for `asked`, and `at` holds its files (not the offered folder's). */
  async function expectReadFromTarball(at = dest(), asked = integrity): Promise<void> {
    expect(reads).toEqual([asked]);
    expect((await readdir(at)).sort()).toEqual(["index.js", "package.json"]);
  }

  it("the integrity it was read for: moved into place, the tarball not read again", async () => {
    const { dir, folders } = await offered();
    await extract(`${name}@${url}`, dest(), { integrity, [UNPACKED_OPTION]: folders });
    expect(reads).toEqual([]);
    expect((await readdir(dest())).sort()).toEqual(["MOVED", "package.json"]);
    expect(existsSync(path.join(dir, "package.json"))).toBe(false);
  });

  it("a forged integrity asked for (a lock entry that is not these bytes): the tarball is read and refused (EINTEGRITY), the folder left where it was", async () => {
    const { dir, folders } = await offered();
    const forged = `sha512-${Buffer.alloc(64, 7).toString("base64")}`;
    const error = await extract(`${name}@${url}`, dest(), { integrity: forged, [UNPACKED_OPTION]: folders }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "EINTEGRITY" });
    expect(reads).toEqual([forged]);
    expect(existsSync(path.join(dir, "MOVED"))).toBe(true);
  });

  it("offered under another integrity: the tarball is read and checked, the folder not used", async () => {
    const { dir, folders } = await offered(`sha512-${Buffer.alloc(64, 3).toString("base64")}`);
    await extract(`${name}@${url}`, dest(), { integrity, [UNPACKED_OPTION]: folders });
    await expectReadFromTarball();
    expect(existsSync(path.join(dir, "MOVED"))).toBe(true);
  });

  it("a second destination of the same bytes: read from the tarball (a folder serves one place)", async () => {
    const { folders } = await offered();
    await extract(`${name}@${url}`, dest(1), { integrity, [UNPACKED_OPTION]: folders });
    await extract(`${name}@${url}`, dest(2), { integrity, [UNPACKED_OPTION]: folders });
    await expectReadFromTarball(dest(2));
  });

  it("a destination that already holds files: read from the tarball as pacote does, the folder left where it was", async () => {
    const { dir, folders } = await offered();
    await mkdir(dest(), { recursive: true });
    await writeFile(path.join(dest(), "stale.js"), "");
    await extract(`${name}@${url}`, dest(), { integrity, [UNPACKED_OPTION]: folders });
    await expectReadFromTarball();
    expect(existsSync(path.join(dir, "MOVED"))).toBe(true);
  });

  it("a folder with a node_modules of its own (bundled dependencies): read from the tarball", async () => {
    const { folders } = await offered(integrity, { "node_modules/x/package.json": "{}" });
    await extract(`${name}@${url}`, dest(), { integrity, [UNPACKED_OPTION]: folders });
    await expectReadFromTarball();
  });

  it("a tarball file (another fetcher) with the same integrity: read from the file", async () => {
    const file = path.join(w.root, "pkg.tgz");
    await writeFile(file, Buffer.from(await (await fetch(url)).arrayBuffer()));
    const { folders } = await offered();
    await extract(`file:${file}`, dest(), { integrity, [UNPACKED_OPTION]: folders });
    await expectReadFromTarball();
  });

  it("any other install (no hand-over option): read from the tarball", async () => {
    await offered();
    await extract(`${name}@${url}`, dest(), { integrity });
    await expectReadFromTarball();
  });
});
