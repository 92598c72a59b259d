/**
 * Issue 41, class C: copies and reads are bounded.
 *
 * Copies: a plugin folder whose links fan out (d0 holds two links to d1, d1 two links to d2, ...
 * 25 levels: 2^24 copies of the leaf when every link is copied as what it points at) is copied in
 * time linear in its entries, whatever brings it (a local marketplace, an archive source, a local
 * folder install, a link), and a copy past its limits is ECOPY_LIMIT with nothing left behind.
 *
 * Reads: a FIFO (a read that never returns), `/dev/zero` or `/dev/urandom` (a read that never
 * ends) in place of each kind of state file makes `list`, `tools` and the library's boot finish
 * with a coded error naming the file (core/bounded-read.ts), never hang or take gigabytes; in a
 * project that is not trusted, its registries are not read at all.
 *
 * Every CLI and boot run is a child with a SIGKILL timeout: a hang fails the test, it cannot hang it.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { copyTree } from "../../src/core/atomic-fs.js";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog, catalogPath, toolModule, writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { hermeticEnv, runCli, runProcess, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { tgzBytes, type TarEntry } from "../reliability/helpers-tar.js";

let w: TmpWorld;
let server: TestHttpServer | undefined;

beforeAll(async () => {
  await buildDist();
}, 180_000);
afterEach(async () => {
  await server?.close();
  server = undefined;
  await w?.cleanup();
});

/** Kill a child after this long: the bounded runs take a second or two. */
const CHILD_MS = 30_000;
const LEVELS = 25;

/** `d0..d<levels-1>` under `dir`, each but the last with links `a` and `b` to the next; a file at the bottom. */
async function writeFanOut(dir: string, levels = LEVELS): Promise<void> {
  for (let i = 0; i < levels; i++) await mkdir(path.join(dir, `d${i}`), { recursive: true });
  await writeFile(path.join(dir, `d${levels - 1}`, "leaf.txt"), "leaf\n");
  for (let i = 0; i < levels - 1; i++) {
    await symlink(`../d${i + 1}`, path.join(dir, `d${i}`, "a"));
    await symlink(`../d${i + 1}`, path.join(dir, `d${i}`, "b"));
  }
}

/** The same fan-out as archive entries under `prefix`. */
function fanOutEntries(prefix: string, levels = LEVELS): TarEntry[] {
  const entries: TarEntry[] = [];
  for (let i = 0; i < levels; i++) entries.push({ name: `${prefix}/d${i}/`, type: "dir" });
  entries.push({ name: `${prefix}/d${levels - 1}/leaf.txt`, content: "leaf\n" });
  for (let i = 0; i < levels - 1; i++) {
    entries.push({ name: `${prefix}/d${i}/a`, type: "symlink", linkname: `../d${i + 1}` });
    entries.push({ name: `${prefix}/d${i}/b`, type: "symlink", linkname: `../d${i + 1}` });
  }
  return entries;
}

/** Entries (files, folders, links) under `dir`, links not followed. */
async function countEntries(dir: string): Promise<number> {
  let n = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    n += 1;
    if (entry.isDirectory()) n += await countEntries(path.join(dir, entry.name));
  }
  return n;
}

const cli = (args: string[], cwd = w.cwd) => runCli(args, { cwd, home: w.home, timeoutMs: CHILD_MS });

/** Finished in time, exit 0 or 1 (a coded failure), no crash of the runtime. */
function finished(r: ProcessResult, what: string): void {
  const shown = `${what}\n--- exit ${r.code ?? r.signal}\n--- stdout\n${r.stdout.slice(0, 2000)}\n--- stderr\n${r.stderr.slice(0, 2000)}`;
  expect(r.timedOut, `${what} hung (killed after ${CHILD_MS} ms)\n${shown}`).toBe(false);
  expect([0, 1], shown).toContain(r.code);
  expect(r.stdout + r.stderr, shown).not.toMatch(/bad_alloc|heap out of memory|ERR_FS_FILE_TOO_LARGE|Invalid string length/);
}

async function pluginTools(): Promise<string[]> {
  const r = await cli(["tools", "--json"]);
  finished(r, "tools --json");
  return (r.json().tools as { name: string }[]).map((t) => t.name).sort();
}

describe("class C: a plugin folder whose symlinks fan out is copied once per real folder", () => {
  it("a local marketplace's plugin: `marketplace add` and `install` finish, the cache holds each folder once, the tool loads", async () => {
    w = await makeTmpWorld();
    const root = await writeFolderMarketplace(path.join(w.root, "fan-market"), { name: "fan-market", tools: ["fan_tool"] });
    await writeFanOut(path.join(root, "plugins", "hello", "fan"));
    const add = await cli(["marketplace", "add", root]);
    finished(add, "marketplace add");
    expect(add.code, add.stderr).toBe(0);
    const install = await cli(["install", "hello@fan-market", "--yes"]);
    finished(install, "install hello@fan-market");
    expect(install.code, install.stderr).toBe(0);
    const cache = path.join(w.xcshHome, "plugins", "cache", "plugins");
    // 25 folders, 48 links and a leaf per copy of the fan-out: linear, never 2^24.
    expect(await countEntries(cache)).toBeLessThan(1000);
    expect(await pluginTools()).toEqual(["fan_tool"]);
  }, 120_000);

  it("an archive source: a 1 KB .tar.gz whose links fan out installs in linear time", async () => {
    w = await makeTmpWorld();
    server = await startHttpServer();
    const bytes = tgzBytes([
      { name: "arch/.claude-plugin/plugin.json", content: JSON.stringify({ name: "arch" }) },
      { name: "arch/tools/arch_tool.mjs", content: toolModule("arch_tool") },
      ...fanOutEntries("arch/fan"),
    ]);
    expect(bytes.length).toBeLessThan(2048);
    server.set("/arch.tar.gz", bytes);
    const root = path.join(w.root, "arch-market");
    await w.write(path.join(root, catalogPath("claude")), catalog("arch-market", [{ name: "arch", source: { source: "archive", url: `${server.url}/arch.tar.gz` } }]));
    expect((await cli(["marketplace", "add", root])).code).toBe(0);
    const install = await cli(["install", "arch@arch-market", "--yes"]);
    finished(install, "install arch@arch-market");
    expect(install.code, install.stderr).toBe(0);
    expect(await countEntries(path.join(w.xcshHome, "plugins", "cache", "plugins"))).toBeLessThan(1000);
    expect(await pluginTools()).toEqual(["arch_tool"]);
  }, 120_000);

  it("a local folder npm install (`install ./folder`) and a link: finish, and list, tools and doctor too", async () => {
    w = await makeTmpWorld();
    const folder = path.join(w.root, "fan-plugin");
    await w.write(path.join(folder, "package.json"), { name: "fan-plugin", version: "1.0.0", type: "module", xcsh: { tools: ["tools/fan_tool.mjs"] } });
    await w.write(path.join(folder, "tools", "fan_tool.mjs"), toolModule("fan_tool"));
    await writeFanOut(path.join(folder, "fan"));
    const install = await cli(["install", folder]);
    finished(install, "install ./folder");
    expect(install.code, install.stderr).toBe(0);
    // npm's packer leaves links out: the installed copy has no fan-out at all.
    expect(await countEntries(path.join(w.xcshHome, "plugins", "node_modules", "fan-plugin"))).toBeLessThan(200);
    expect(await pluginTools()).toEqual(["fan_tool"]);
    expect((await cli(["uninstall", "fan-plugin"])).code).toBe(0);
    const link = await cli(["link", folder]);
    finished(link, "link ./folder");
    expect(link.code, link.stderr).toBe(0);
    for (const args of [["list"], ["doctor"]]) finished(await cli(args), args.join(" "));
    expect(await pluginTools()).toEqual(["fan_tool"]);
  }, 120_000);

  it("the copier itself: 2^24 leaves behind 25 levels of links copy as 25 folders; a loop is ETREE_DEPTH; past a limit ECOPY_LIMIT, nothing left", async () => {
    w = await makeTmpWorld();
    const src = path.join(w.root, "src");
    await writeFanOut(src);
    const started = Date.now();
    await copyTree(src, path.join(w.root, "copy"), { within: src, limits: { entries: 10_000, bytes: 1_000_000, ms: 60_000 } });
    expect(Date.now() - started).toBeLessThan(20_000);
    // The second link to each folder is a relative link to the first copy, which reads the same.
    expect(await countEntries(path.join(w.root, "copy"))).toBeLessThan(500);
    expect((await lstat(path.join(w.root, "copy", "d0", "b"))).isSymbolicLink()).toBe(true);
    expect(await readFile(path.join(w.root, "copy", "d0", "b", ...Array<string>(LEVELS - 2).fill("a"), "leaf.txt"), "utf8")).toBe("leaf\n");
    expect(await readFile(path.join(w.root, "copy", "d23", "b", "leaf.txt"), "utf8")).toBe("leaf\n");

    const loop = path.join(w.root, "loop");
    await mkdir(path.join(loop, "x"), { recursive: true });
    await symlink("..", path.join(loop, "x", "up"));
    await expect(copyTree(loop, path.join(w.root, "loop-copy"), { within: loop })).rejects.toMatchObject({ code: "ETREE_DEPTH" });
    expect(existsSync(path.join(w.root, "loop-copy"))).toBe(false);

    const many = path.join(w.root, "many");
    for (let i = 0; i < 50; i++) await w.write(path.join(many, `f${i}.txt`), "x".repeat(100));
    for (const [limit, value] of [["entries", 20], ["bytes", 1000]] as const) {
      const dest = path.join(w.root, `many-${limit}`);
      const error = await copyTree(many, dest, { within: many, limits: { [limit]: value } }).then(() => undefined, (e: unknown) => e);
      expect(error).toMatchObject({ code: "ECOPY_LIMIT", file: many, message: expect.stringContaining(`the limit of ${limit} of one copy`) });
      expect(existsSync(dest), `the partial copy over the ${limit} limit was left`).toBe(false);
    }
  }, 60_000);
});

/**
 * How each special file is put in place of a state file, and the node it is (checked unchanged
 * after the run). The devices are made in the test's own folder with `/dev/zero`'s and
 * `/dev/urandom`'s numbers (1,5 and 1,9; CI runs as root, as this machine does; mknod failing fails
 * the test), never linked to the real ones: a write that follows the link and renames over its
 * target replaces the node it points at, for the whole machine (it happened while writing this
 * test, before writeFileAtomic refused non-regular targets).
 */
const SPECIALS: Record<string, (file: string) => Promise<string>> = {
  fifo: async (file) => {
    execFileSync("mkfifo", [file]);
    return file;
  },
  "/dev/zero": (file) => linkToDevice(file, "zero", 5),
  "/dev/urandom": (file) => linkToDevice(file, "urandom", 9),
};

async function linkToDevice(file: string, name: string, minor: number): Promise<string> {
  const node = path.join(w.root, "dev", name);
  if (!existsSync(node)) {
    await mkdir(path.dirname(node), { recursive: true });
    execFileSync("mknod", ["-m", "666", node, "c", "1", String(minor)]);
  }
  await symlink(node, file);
  return node;
}

/** The special node is still what it was: nothing wrote through the link and replaced it. */
async function stillSpecial(node: string): Promise<void> {
  const info = await lstat(node);
  expect(info.isFIFO() || info.isCharacterDevice(), `${node} was replaced by a ${info.isFile() ? "regular file" : "non-special file"}`).toBe(true);
}

/** The state files a command or the boot reads, relative to the world: `project/...` or `xcsh/...`. */
const STATE_FILES = [
  "project/.xcsh/plugins/installed_plugins.json",
  "project/.xcsh/plugin-overrides.json",
  "project/.xcsh/marketplaces.json",
  "xcsh/plugins/installed_plugins.json",
  "xcsh/marketplaces.json",
  "xcsh/plugins/package.json",
  "xcsh/plugins/xcsh-plugins.lock.json",
  "xcsh/plugins/.xcsh-tools/boot-index.json",
];

const placeOf = (rel: string) => (rel.startsWith("project/") ? path.join(w.cwd, rel.slice("project/".length)) : path.join(w.xcshHome, rel.slice("xcsh/".length)));

/** The library's boot (`discoverAndLoadCustomTools`) in a child of its own, from the built package. */
function boot(): Promise<ProcessResult> {
  const script = `import { discoverAndLoadCustomTools } from ${JSON.stringify(path.join(REPO, "dist", "index.js"))};
const r = await discoverAndLoadCustomTools([], process.cwd(), [], undefined, { home: process.env.HOME, xcshHome: process.env.XCSH_HOME });
process.stdout.write(JSON.stringify({ tools: r.tools.map((t) => t.tool.name), errors: r.errors }));`;
  return runProcess(process.execPath, ["--input-type=module", "-e", script], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: CHILD_MS });
}

/** Every problem `output` reports about `file` says it is not a regular file (it went through the bounded reader). */
function namedAsNotAFile(output: string, file: string): void {
  for (const line of output.split("\n").filter((l) => l.includes(file) && /^Error:|expected|JSON|read|found|size/i.test(l.split(file).join("")))) {
    expect(line, "a special file was read as if it were a file").toMatch(/not a regular file/);
  }
}

describe("class C: a FIFO or a device in place of a state file", () => {
  for (const rel of STATE_FILES) {
    for (const [kind, make] of Object.entries(SPECIALS)) {
      it(`${rel} as ${kind}: list, tools and the library boot finish, a coded error names it`, async () => {
        // A project's registry is read only while the project is trusted: a once-trusted project whose file was replaced.
        w = await makeTmpWorld("xcsh-tools-bounds-", { trustProject: rel.startsWith("project/") });
        const file = placeOf(rel);
        await mkdir(path.dirname(file), { recursive: true });
        await rm(file, { force: true });
        const node = await make(file);
        const outputs: string[] = [];
        for (const args of [["list"], ["tools"]]) {
          const r = await cli(args);
          finished(r, args.join(" "));
          outputs.push(r.stdout + r.stderr);
          namedAsNotAFile(r.stdout + r.stderr, file);
        }
        const started = await boot();
        finished(started, "discoverAndLoadCustomTools");
        expect(started.code, started.stderr).toBe(0);
        const result = started.json() as { errors: { path: string; code: string; error: string }[] };
        for (const error of result.errors.filter((e) => e.path === file)) expect(error).toMatchObject({ code: "ESTATE_FILE", error: expect.stringContaining("not a regular file") });
        if (rel.endsWith("installed_plugins.json")) {
          // The registries every command and the boot read: each says so, naming the file.
          expect(result.errors).toContainEqual(expect.objectContaining({ path: file, code: "ESTATE_FILE", error: expect.stringContaining("not a regular file") }));
          expect(outputs[1]).toContain(`${file} is ${kind === "fifo" ? "a named pipe (FIFO)" : "a device"}, not a regular file`);
        }
        await stillSpecial(node);
      }, 120_000);
    }
  }
});

describe("class C: the registries of a project that is not trusted are not read at all", () => {
  it("FIFOs and a /dev/zero link in its .xcsh/: list, tools, marketplace list, doctor and the boot finish and only say the project is not trusted", async () => {
    w = await makeTmpWorld("xcsh-tools-bounds-", { trustProject: false });
    for (const rel of ["project/.xcsh/plugins/installed_plugins.json", "project/.xcsh/plugin-overrides.json"]) {
      await mkdir(path.dirname(placeOf(rel)), { recursive: true });
      await SPECIALS.fifo!(placeOf(rel));
    }
    const zero = await SPECIALS["/dev/zero"]!(placeOf("project/.xcsh/marketplaces.json"));
    for (const args of [["list"], ["tools"], ["marketplace", "list"], ["doctor"]]) {
      const r = await cli(args);
      finished(r, args.join(" "));
      expect(r.stdout + r.stderr, args.join(" ")).toMatch(/not trusted/);
      // Read by nothing: a read would have been refused with "not a regular file".
      expect(r.stdout + r.stderr, args.join(" ")).not.toMatch(/not a regular file/);
    }
    const started = await boot();
    finished(started, "discoverAndLoadCustomTools");
    expect(started.json().errors).toEqual([]);
    for (const node of [placeOf("project/.xcsh/plugins/installed_plugins.json"), placeOf("project/.xcsh/plugin-overrides.json"), zero]) await stillSpecial(node);
  }, 120_000);
});
