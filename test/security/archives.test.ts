/**
 * Hostile archives: every tarball an install takes (a registry plugin, a registry dependency of
 * a plugin, a tarball URL, a local .tgz) is checked while it streams, before anything is
 * extracted. A gzip bomb (1 GiB of zeros in ~1 MiB) is refused with ETARBALL_TOO_LARGE in
 * bounded memory; too many entries, too long a path, absolute and `..` paths, links out of the
 * package and device entries are refused; a limit lowered by a setting refuses a normal package
 * and names the setting. Each case checks that `<xcsh root>/plugins` is byte-identical
 * afterwards and ends with `assertUntouched()`.
 *
 * Plus errors that tell the truth: a tarball URL answering 404 or refusing the connection is
 * ETARBALL naming that URL; an unreachable registry is still EREGISTRY naming the registry.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { cliArgv, hermeticEnv, runCli, type ProcessResult } from "../helpers/run-cli.js";
import { writeUserNpmrc } from "../helpers/tmp-home.js";
import { snapshotTree, type TreeSnapshot } from "../helpers/tree-snapshot.js";
import { pluginEntries, tgzBytes, type TarEntry } from "../reliability/helpers-tar.js";
import { writeZeroBomb } from "./archive-fixtures.js";
import { makeHostileWorld, type HostileWorld } from "./hostile-world.js";
import { publishRaw } from "../helpers/publish-raw.js";

const GIB = 1024 * 1024 * 1024;
/** Well under what a process that held the bomb's contents would need. */
const RSS_LIMIT_KB = 256 * 1024;

let fixtures: string;
/** The bomb as a plugin: a valid plugin's files, then `package/zeros.bin` of 1 GiB of zeros. */
let pluginBomb: string;
/** The bomb as a plain package (a dependency). */
let depBomb: string;
let reg: RegistryHandle & { dispose(): Promise<void> };
const prefix = `arch-${Date.now().toString(36)}`;

beforeAll(async () => {
  await buildDist();
  const { useGlobalRegistry } = await import("../helpers/global-registry.js");
  reg = await useGlobalRegistry();
  fixtures = await import("node:fs/promises").then((fs) => fs.mkdtemp(path.join(os.tmpdir(), "xcsh-tools-archives-")));
  pluginBomb = path.join(fixtures, "plugin-bomb.tgz");
  depBomb = path.join(fixtures, "dep-bomb.tgz");
  await writeZeroBomb(pluginBomb, pluginEntries(`${prefix}-bomb`, "bomb_tool"), "package/zeros.bin", GIB);
  await writeZeroBomb(depBomb, [{ name: "package/package.json", content: JSON.stringify({ name: `${prefix}-depbomb`, version: "1.0.0" }) }], "package/zeros.bin", GIB);
}, 240_000);

afterAll(async () => {
  await reg?.dispose();
  if (fixtures) await rm(fixtures, { recursive: true, force: true });
});

/** A world whose npm config points at the shared registry (or a dead port). */
async function world(registry = reg.url): Promise<HostileWorld> {
  const w = await makeHostileWorld({ trusted: true });
  await writeUserNpmrc(w.home, registry);
  return w;
}

/** Everything of ours: the plugins folder (staging and live state), absent or not. */
async function pluginsTree(w: HostileWorld): Promise<TreeSnapshot> {
  return snapshotTree(path.join(w.xcshHome, "plugins"));
}

async function cli(w: HostileWorld, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ProcessResult> {
  return runCli([...args, "--json"], { cwd: w.cwd, home: w.home, env, timeoutMs: 120_000 });
}

/**
 * Run the CLI and measure its peak resident memory: under `/usr/bin/time -v` when it exists,
 * else by polling the child's VmHWM in /proc.
 */
async function cliWithPeakRss(w: HostileWorld, args: string[]): Promise<{ result: { code: number | null; stdout: string; stderr: string }; peakKb: number }> {
  const env = hermeticEnv(w.home);
  const time = "/usr/bin/time";
  const useTime = existsSync(time);
  const command = useTime ? time : process.execPath;
  const argv = useTime ? ["-v", process.execPath, ...cliArgv(w.home, [...args, "--json"])] : cliArgv(w.home, [...args, "--json"]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: w.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let polled = 0;
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const poll = useTime
      ? undefined
      : setInterval(() => {
          readFile(`/proc/${child.pid}/status`, "utf8").then(
            (status) => (polled = Math.max(polled, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0))),
            () => undefined,
          );
        }, 20);
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      const peakKb = useTime ? Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)?.[1] ?? NaN) : polled;
      resolve({ result: { code: useTime ? Number(/Exit status: (\d+)/.exec(stderr)?.[1] ?? code) : code, stdout, stderr }, peakKb });
    });
  });
}

/** Publish to this file's registry with `manifest` as the package document. */
function publishRawTo(name: string, tgz: Buffer, manifest: Record<string, unknown>): Promise<void> {
  return publishRaw(reg, name, tgz, { manifest });
}

/** A loopback server answering `routes` (a file streamed, or a status with no body). */
async function serve(routes: Record<string, { file: string } | { status: number }>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const route = routes[new URL(req.url ?? "/", "http://x").pathname];
    if (!route || "status" in route) {
      res.writeHead(route && "status" in route ? route.status : 404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/octet-stream" });
    createReadStream(route.file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The refusal every hostile case expects: the code, nothing of ours changed, the victim untouched. */
async function expectRefused(w: HostileWorld, before: TreeSnapshot, r: ProcessResult | { code: number | null; stdout: string }, code: string, message?: RegExp): Promise<{ code: string; message: string; hint?: string }> {
  const doc = JSON.parse(r.stdout) as { error: { code: string; message: string; hint?: string } };
  expect(doc.error.code, r.stdout).toBe(code);
  expect(r.code).not.toBe(0);
  if (message) expect(doc.error.message).toMatch(message);
  expect(await pluginsTree(w), "the plugins folder changed").toEqual(before);
  await w.assertUntouched();
  return doc.error;
}

describe("a gzip bomb (1 GiB of zeros in ~1 MiB) is refused with ETARBALL_TOO_LARGE in bounded memory", () => {
  it("as a local .tgz: refused, under 256 MB of peak RSS, nothing written", async () => {
    expect((await stat(pluginBomb)).size).toBeLessThan(2 * 1024 * 1024);
    const w = await world();
    try {
      await writeFile(path.join(w.cwd, "bomb.tgz"), await readFile(pluginBomb));
      const before = await pluginsTree(w);
      const { result, peakKb } = await cliWithPeakRss(w, ["install", "./bomb.tgz"]);
      const error = await expectRefused(w, before, result, "ETARBALL_TOO_LARGE", /bomb\.tgz/);
      expect(error.message).toContain("limits.tarballUnpackedBytes");
      expect(error.hint).toContain("XCSH_TOOLS_TARBALL_UNPACKED_BYTES");
      expect(result.code).toBe(2);
      expect(peakKb).toBeGreaterThan(0);
      expect(peakKb).toBeLessThan(RSS_LIMIT_KB);
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("as a tarball URL on a loopback server: refused naming the URL, under 256 MB of peak RSS", async () => {
    const server = await serve({ "/bomb-1.0.0.tgz": { file: pluginBomb } });
    const w = await world("http://127.0.0.1:9/");
    try {
      const before = await pluginsTree(w);
      const { result, peakKb } = await cliWithPeakRss(w, ["install", `${server.url}/bomb-1.0.0.tgz`]);
      await expectRefused(w, before, result, "ETARBALL_TOO_LARGE", new RegExp(`${server.url.replace(/[.]/g, "\\.")}/bomb-1\\.0\\.0\\.tgz`));
      expect(peakKb).toBeLessThan(RSS_LIMIT_KB);
    } finally {
      await server.close();
      await w.cleanup();
    }
  }, 180_000);

  it("as a plugin published to the registry: refused, under 256 MB of peak RSS", async () => {
    const name = `${prefix}-bomb`;
    await publishRawTo(name, await readFile(pluginBomb), { type: "module", xcsh: { tools: "./t.js" } });
    const w = await world();
    try {
      const before = await pluginsTree(w);
      const { result, peakKb } = await cliWithPeakRss(w, ["install", name]);
      await expectRefused(w, before, result, "ETARBALL_TOO_LARGE", new RegExp(name));
      expect(peakKb).toBeLessThan(RSS_LIMIT_KB);
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("as a registry dependency of a good plugin: refused naming the dependency before arborist extracts it", async () => {
    const dep = `${prefix}-depbomb`;
    await publishRawTo(dep, await readFile(depBomb), {});
    const plugin = `${prefix}-withbomb`;
    await publishRawTo(plugin, tgzBytes(pluginEntries(plugin, "withbomb_tool").map((e) => (e.name === "package/package.json" ? { ...e, content: JSON.stringify({ name: plugin, version: "1.0.0", type: "module", xcsh: { tools: "./t.js" }, dependencies: { [dep]: "1.0.0" } }) } : e))), {
      type: "module",
      xcsh: { tools: "./t.js" },
      dependencies: { [dep]: "1.0.0" },
    });
    const w = await world();
    try {
      const before = await pluginsTree(w);
      const { result, peakKb } = await cliWithPeakRss(w, ["install", plugin]);
      await expectRefused(w, before, result, "ETARBALL_TOO_LARGE", new RegExp(`${dep}.*${dep}-1\\.0\\.0\\.tgz`));
      expect(peakKb).toBeLessThan(RSS_LIMIT_KB);
    } finally {
      await w.cleanup();
    }
  }, 180_000);

  it("as a marketplace plugin with an npm source: refused, and the marketplace's plugin cache is unchanged", async () => {
    const name = `${prefix}-bomb`; // published by the registry case above, or here when run alone
    await publishRawTo(name, await readFile(pluginBomb), { type: "module", xcsh: { tools: "./t.js" } }).catch(() => undefined);
    const w = await world();
    try {
      const market = path.join(w.root, "market");
      await w.write(path.join(market, catalogPath()), catalog("acme", [{ name: "boom", source: { source: "npm", package: name }, description: "a bomb" }]));
      const added = await cli(w, ["marketplace", "add", market]);
      expect(added.code, added.stdout + added.stderr).toBe(0);
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", "boom@acme"]);
      await expectRefused(w, before, r, "ETARBALL_TOO_LARGE", new RegExp(name));
    } finally {
      await w.cleanup();
    }
  }, 180_000);
});

/** A local .tgz holding a valid plugin plus `evil`. */
async function installLocal(evil: TarEntry[], env: NodeJS.ProcessEnv = {}): Promise<{ w: HostileWorld; before: TreeSnapshot; r: ProcessResult }> {
  const w = await world("http://127.0.0.1:9/");
  await writeFile(path.join(w.cwd, "evil.tgz"), tgzBytes([...pluginEntries("evil-archive", "evil_archive_tool"), ...evil]));
  const before = await pluginsTree(w);
  const r = await cli(w, ["install", "./evil.tgz"], env);
  return { w, before, r };
}

describe("archives whose entries are hostile are refused before anything is extracted", () => {
  const cases: Array<[string, TarEntry[], string, RegExp]> = [
    ["an absolute entry path", [{ name: "/tmp/xcsh-tools-archive-abs", content: "x" }], "ETARBALL_UNSAFE", /absolute path/],
    ["a ../../victim/x entry path", [{ name: "package/../../victim/x", content: "x" }], "ETARBALL_UNSAFE", /climbs out/],
    ["a symlink pointing to the victim folder", [{ name: "package/ssh", type: "symlink", linkname: "../../victim/.ssh" }], "ETARBALL_UNSAFE", /symlink "package\/ssh" points out/],
    ["a symlink to an absolute path", [{ name: "package/key", type: "symlink", linkname: "/etc/passwd" }], "ETARBALL_UNSAFE", /symlink .* absolute path/],
    ["a hard link to /etc/passwd", [{ name: "package/passwd", type: "hardlink", linkname: "/etc/passwd" }], "ETARBALL_UNSAFE", /hard link .* absolute path/],
    ["a hard link climbing to the victim", [{ name: "package/key", type: "hardlink", linkname: "package/../../victim/.ssh/id_ed25519" }], "ETARBALL_UNSAFE", /hard link .* points out/],
    ["a character device", [{ name: "package/null", type: "chardev" }], "ETARBALL_UNSAFE", /device or FIFO/],
    ["a FIFO", [{ name: "package/pipe", type: "fifo" }], "ETARBALL_UNSAFE", /device or FIFO/],
  ];
  for (const [title, evil, code, message] of cases) {
    it(`${title}: ${code}`, async () => {
      const { w, before, r } = await installLocal(evil);
      try {
        await expectRefused(w, before, r, code, message);
        expect(r.code).toBe(2);
      } finally {
        await w.cleanup();
      }
    }, 60_000);
  }

  it("a registry dependency whose tarball holds a symlink to the victim and a ../ entry: ETARBALL_UNSAFE naming the dependency", async () => {
    const dep = `${prefix}-evildep`;
    await publishRawTo(dep, tgzBytes([{ name: "package/package.json", content: JSON.stringify({ name: dep, version: "1.0.0" }) }, { name: "package/ssh", type: "symlink", linkname: "../../../../victim/.ssh" }, { name: "package/../../../victim/.bashrc", content: "pwned" }]), {});
    const plugin = `${prefix}-withevildep`;
    await publishRawTo(plugin, tgzBytes(pluginEntries(plugin, "withevildep_tool").map((e) => (e.name === "package/package.json" ? { ...e, content: JSON.stringify({ name: plugin, version: "1.0.0", type: "module", xcsh: { tools: "./t.js" }, dependencies: { [dep]: "1.0.0" } }) } : e))), {
      type: "module",
      xcsh: { tools: "./t.js" },
      dependencies: { [dep]: "1.0.0" },
    });
    const w = await world();
    try {
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", plugin]);
      await expectRefused(w, before, r, "ETARBALL_UNSAFE", new RegExp(`${dep} \\(.*: refused, the symlink "package/ssh" points out of the package`));
    } finally {
      await w.cleanup();
    }
  }, 120_000);

  // A registry plugin's tarball is read once, by npm's installer (not first by the resolve step
  // too): the check npm's fetch passes through must still be the plugin's own, naming the spec as
  // typed and requiring a package.json, or these would pass as a dependency's would.
  it("a registry plugin whose own tarball holds a symlink out: ETARBALL_UNSAFE naming the spec as typed, installing and in a dry run", async () => {
    const plugin = `${prefix}-evilplugin`;
    await publishRawTo(plugin, tgzBytes([...pluginEntries(plugin, "evilplugin_tool"), { name: "package/ssh", type: "symlink", linkname: "../../../../victim/.ssh" }]), { type: "module", xcsh: { tools: "./t.js" } });
    const w = await world();
    try {
      const before = await pluginsTree(w);
      for (const dryRun of [[], ["--dry-run"]]) {
        const r = await cli(w, ["install", `${plugin}@^1.0.0`, ...dryRun]);
        await expectRefused(w, before, r, "ETARBALL_UNSAFE", new RegExp(`^${plugin}@\\^1\\.0\\.0: refused, the symlink "package/ssh" points out of the package`));
        expect(r.code).toBe(2);
      }
    } finally {
      await w.cleanup();
    }
  }, 120_000);

  it("a registry plugin whose tarball has no package.json at its root (its registry document is fine): ETARBALL naming the spec, nothing installed", async () => {
    const plugin = `${prefix}-nopkgjson`;
    await publishRawTo(plugin, tgzBytes(pluginEntries(plugin, "nopkgjson_tool").filter((e) => e.name !== "package/package.json")), { type: "module", xcsh: { tools: "./t.js" } });
    const w = await world();
    try {
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", plugin]);
      await expectRefused(w, before, r, "ETARBALL", new RegExp(`^${plugin}: not a valid package tarball \\(no package\\.json at its root\\)`));
    } finally {
      await w.cleanup();
    }
  }, 120_000);

  it("a tarball gzipped twice (pacote's extractor and the check must see the same entries): ETARBALL", async () => {
    const w = await world("http://127.0.0.1:9/");
    try {
      const { gzipSync } = await import("node:zlib");
      await writeFile(path.join(w.cwd, "twice.tgz"), gzipSync(tgzBytes([...pluginEntries("twice", "twice_tool"), { name: "package/ssh", type: "symlink", linkname: "../../victim/.ssh" }])));
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", "./twice.tgz"]);
      await expectRefused(w, before, r, "ETARBALL", /compressed twice/);
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("too many entries (a limit lowered by XCSH_TOOLS_TARBALL_ENTRIES): ETARBALL_TOO_LARGE naming limits.tarballEntries", async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ name: `package/f${i}.txt`, content: "x" }));
    const { w, before, r } = await installLocal(many, { XCSH_TOOLS_TARBALL_ENTRIES: "30" });
    try {
      const error = await expectRefused(w, before, r, "ETARBALL_TOO_LARGE", /more entries than the limit of 30 \(setting limits\.tarballEntries\)/);
      expect(error.hint).toContain("XCSH_TOOLS_TARBALL_ENTRIES");
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("a packed local folder over a lowered limit (XCSH_TOOLS_TARBALL_UNPACKED_BYTES): ETARBALL_TOO_LARGE", async () => {
    const w = await world("http://127.0.0.1:9/");
    try {
      const dir = path.join(w.root, "dev", "big-folder");
      await w.write(path.join(dir, "package.json"), { name: "big-folder", version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } });
      await w.write(path.join(dir, "t.js"), "export default () => ({});\n");
      await w.write(path.join(dir, "data.txt"), "x".repeat(64 * 1024));
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", dir], { XCSH_TOOLS_TARBALL_UNPACKED_BYTES: "16384" });
      await expectRefused(w, before, r, "ETARBALL_TOO_LARGE", /limit of 16 KiB \(setting limits\.tarballUnpackedBytes\)/);
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("too many entries at the default limit: 100,001 empty entries are refused", async () => {
    const w = await world("http://127.0.0.1:9/");
    try {
      // Headers only (no data): 100,001 entries are ~49 MiB of tar, a few hundred KiB gzipped.
      const { gzipSync } = await import("node:zlib");
      const { tarHeader } = await import("../reliability/helpers-tar.js");
      const head = tgzBytes(pluginEntries("many-entries", "many_tool"));
      const blocks: Buffer[] = [(await import("node:zlib")).gunzipSync(head).subarray(0, -1024)];
      for (let i = 0; i < 100_001; i++) blocks.push(tarHeader({ name: `package/e/${i}` }, 0));
      blocks.push(Buffer.alloc(1024));
      await writeFile(path.join(w.cwd, "many.tgz"), gzipSync(Buffer.concat(blocks)));
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", "./many.tgz"]);
      await expectRefused(w, before, r, "ETARBALL_TOO_LARGE", /limit of 100000 \(setting limits\.tarballEntries\)/);
    } finally {
      await w.cleanup();
    }
  }, 120_000);

  it("an entry path longer than the limit (pax path of ~3,000 bytes): ETARBALL_TOO_LARGE naming limits.tarballPathLength", async () => {
    const w = await world("http://127.0.0.1:9/");
    try {
      // node-tar writes the long name as a pax record, as npm does.
      const { loadTar } = await import("../../src/plugins/npm-client.js");
      const tar = await loadTar();
      const src = path.join(w.root, "src");
      const long = path.join("package", ...Array.from({ length: 30 }, () => "d".repeat(99)));
      await w.write(path.join(src, "package", "package.json"), { name: "long-path", version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } });
      await w.write(path.join(src, "package", "t.js"), "export default () => ({});\n");
      await w.write(path.join(src, long, "f.txt"), "x");
      await tar.c({ gzip: true, file: path.join(w.cwd, "long.tgz"), cwd: src, portable: true }, ["package"]);
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", "./long.tgz"]);
      await expectRefused(w, before, r, "ETARBALL_TOO_LARGE", /bytes, more than the limit of 1024 \(setting limits\.tarballPathLength\)/);
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("a limit lowered in the user's settings file refuses a normal registry package, naming the setting", async () => {
    const name = `${prefix}-normal`;
    await publishRawTo(name, tgzBytes(pluginEntries(name, "normal_tool")), { type: "module", xcsh: { tools: "./t.js" } });
    const w = await world();
    try {
      await w.write(path.join(w.xcshHome, "xcsh-tools.json"), { limits: { tarballUnpackedBytes: 1024 } });
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", name]);
      const error = await expectRefused(w, before, r, "ETARBALL_TOO_LARGE", /more than the limit of 1 KiB \(setting limits\.tarballUnpackedBytes\)/);
      expect(error.hint).toMatch(/raise "limits\.tarballUnpackedBytes"/);
      // With the default limits the same package installs.
      await rm(path.join(w.xcshHome, "xcsh-tools.json"));
      const ok = await cli(w, ["install", name]);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    } finally {
      await w.cleanup();
    }
  }, 120_000);
});

describe("errors tell the truth about what failed", () => {
  it("a tarball URL answering 404 is ETARBALL naming the URL and the status, not the registry", async () => {
    const server = await serve({});
    const w = await world("http://127.0.0.1:9/");
    try {
      const before = await pluginsTree(w);
      const url = `${server.url}/gone-1.0.0.tgz`;
      const r = await cli(w, ["install", url]);
      const error = await expectRefused(w, before, r, "ETARBALL");
      expect(error.message).toContain(url);
      expect(error.message).toContain("404");
      expect(error.message).not.toMatch(/registry/i);
    } finally {
      await server.close();
      await w.cleanup();
    }
  }, 60_000);

  it("a tarball URL whose server refuses the connection is ETARBALL naming the URL", async () => {
    const server = await serve({});
    const url = `${server.url}/x-1.0.0.tgz`;
    await server.close(); // nothing listens on that port any more
    const w = await world(reg.url);
    try {
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", url]);
      const error = await expectRefused(w, before, r, "ETARBALL");
      expect(error.message).toContain(url);
      expect(error.message).toContain("ECONNREFUSED");
      expect(error.message).not.toMatch(/registry/i);
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("a folder the user cannot write is EPERMISSION naming it (sysfs refuses even root), not an unexpected error", async () => {
    const w = await world("http://127.0.0.1:9/");
    try {
      await writeFile(path.join(w.cwd, "good.tgz"), tgzBytes(pluginEntries("perm-plugin", "perm_tool")));
      const before = await pluginsTree(w);
      const root = "/sys/xcsh-tools-archives-test";
      const r = await runCli(["install", "./good.tgz", "--json"], { cwd: w.cwd, home: w.home, xcshHome: root, timeoutMs: 60_000 });
      const error = await expectRefused(w, before, r, "EPERMISSION");
      expect(error.message).toContain(root);
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("an unreachable registry is still EREGISTRY naming the registry", async () => {
    const w = await world("http://127.0.0.1:9/");
    try {
      const before = await pluginsTree(w);
      const r = await cli(w, ["install", "some-plugin"]);
      const error = await expectRefused(w, before, r, "EREGISTRY");
      expect(error.message).toContain("registry http://127.0.0.1:9/");
    } finally {
      await w.cleanup();
    }
  }, 60_000);
});
