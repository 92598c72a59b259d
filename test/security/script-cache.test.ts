/**
 * The code cache of npm's libraries (src/plugins/script-cache.ts) holds code we run: V8 checks a
 * cached script against the *length* of its source only, so cached data read for other bytes of
 * the same length runs the old code. The hostile cases below plant exactly that: a cache made for
 * `base + 1` under the name of a script that says `base + 2`, where the run must answer 43.
 * CLASS A (where a cache is read from): only a folder of this user's that nobody else can write;
 * never a planted world- or group-writable one, nor a symlink to a folder elsewhere.
 * CLASS B (what a cache is used for): only the very bytes and runtime it was made from, and only
 * whole (its own hash checks); a cache V8 refuses or ours refuses is made again.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/runtimes.js";

const JITI_REGISTER = pathToFileURL(path.join(REPO_ROOT, "node_modules", "jiti", "lib", "jiti-register.mjs")).href;
const CHILD = path.join(REPO_ROOT, "test", "helpers", "script-cache-child.ts");
const V1 = "(function (base) {\n  return { answer: () => base + 1, other: () => base - 1 };\n})";
// The same length as V1: V8's own check of cached data cannot tell them apart.
const V2 = V1.replace("base + 1", "base + 2");
const FOLDER = `xcsh-v8-cache-${process.getuid?.() ?? ""}`.replace(/-$/, "");

let tmp: string;
let script: string;
beforeEach(() => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-script-cache-"));
  mkdirSync(path.join(tmp, "temp"));
  script = path.join(tmp, "libs.script");
  writeFileSync(script, V1);
});
afterEach(() => rmSync(tmp, { recursive: true, force: true }));

/** Run the script through the cache with TMPDIR at `temp`; the answers of the exports `calls`. */
function run(calls: string[], temp = path.join(tmp, "temp"), env: NodeJS.ProcessEnv = {}): number[] {
  const result = spawnSync(process.execPath, ["--import", JITI_REGISTER, CHILD, script, ...calls], { cwd: REPO_ROOT, encoding: "utf8", env: { PATH: process.env.PATH, TMPDIR: temp, ...env } });
  expect(result.stderr).toBe("");
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout.trim()).answers;
}

/** The cache files in `dir`, name to bytes. */
function cacheFiles(dir = path.join(tmp, "temp", FOLDER)): Record<string, Buffer> {
  return Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(path.join(dir, name))]));
}

/** The cache file `name` is whole and used: one more run reads it and leaves it as it is. */
function expectUsable(name: string, answers: number[]): void {
  const before = cacheFiles()[name];
  expect(before?.length ?? 0).toBeGreaterThan(0);
  expect(run(["answer"])).toEqual(answers);
  expect(cacheFiles()).toEqual({ [name]: before });
}

/** A cache made for V1's bytes, saved under the name V2's bytes are cached under: what V8 alone would accept. */
function forgeV1AsV2(): { name: string; bytes: Buffer } {
  const scratch = mkdtempSync(path.join(tmp, "scratch-"));
  expect(run(["answer"], scratch)).toEqual([42]);
  const [v1] = Object.values(cacheFiles(path.join(scratch, FOLDER)));
  writeFileSync(script, V2);
  rmSync(scratch, { recursive: true });
  mkdirSync(scratch);
  expect(run(["answer"], scratch)).toEqual([43]);
  const [name] = Object.keys(cacheFiles(path.join(scratch, FOLDER)));
  rmSync(scratch, { recursive: true });
  return { name: name!, bytes: v1! };
}

describe("the code cache of npm's libraries", () => {
  it("is made at the first run in a 0700 folder of this user's, as one 0600 file, and read after without being written again", () => {
    expect(run(["answer"])).toEqual([42]);
    const dir = path.join(tmp, "temp", FOLDER);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    const first = cacheFiles();
    expect(Object.keys(first)).toHaveLength(1);
    const [name] = Object.keys(first);
    expect(statSync(path.join(dir, name!)).mode & 0o777).toBe(0o600);
    const before = statSync(path.join(dir, name!)).mtimeMs;
    expect(run(["answer"])).toEqual([42]);
    expect(cacheFiles()).toEqual(first);
    expect(statSync(path.join(dir, name!)).mtimeMs).toBe(before);
    // A cache is not the commands' scratch (`xcsh-tools-*` in TMPDIR, which a failed command leaves none of).
    expect(readdirSync(path.join(tmp, "temp")).filter((entry) => entry.startsWith("xcsh-tools-"))).toEqual([]);
  });

  it("is written again when a run uses a library the cached run did not, and then keeps both", () => {
    run(["answer"]);
    const first = cacheFiles();
    expect(run(["other"])).toEqual([40]);
    const second = cacheFiles();
    expect(Object.keys(second)).toEqual(Object.keys(first));
    expect(second).not.toEqual(first);
    expect(run(["answer", "other"])).toEqual([42, 40]);
    expect(cacheFiles()).toEqual(second);
  });

  it("is neither read nor written with NODE_DISABLE_COMPILE_CACHE=1", () => {
    const { name, bytes } = forgeV1AsV2();
    const dir = path.join(tmp, "temp", FOLDER);
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(path.join(dir, name), bytes);
    expect(run(["answer"], undefined, { NODE_DISABLE_COMPILE_CACHE: "1" })).toEqual([43]);
    expect(cacheFiles()).toEqual({ [name]: bytes });
  });
});

describe("CLASS A: a cache is read and written only in a folder nobody else can write", () => {
  for (const mode of [0o777, 0o770, 0o722]) {
    it(`planted ${mode.toString(8)} with a forged cache in it: neither read nor written`, () => {
      const { name, bytes } = forgeV1AsV2();
      const dir = path.join(tmp, "temp", FOLDER);
      mkdirSync(dir);
      chmodSync(dir, mode);
      writeFileSync(path.join(dir, name), bytes);
      expect(run(["answer"])).toEqual([43]);
      expect(cacheFiles()).toEqual({ [name]: bytes });
    });
  }

  it("planted as a symlink to a folder elsewhere holding a forged cache: neither read nor written", () => {
    const { name, bytes } = forgeV1AsV2();
    const elsewhere = mkdtempSync(path.join(tmp, "elsewhere-"));
    chmodSync(elsewhere, 0o700);
    writeFileSync(path.join(elsewhere, name), bytes);
    symlinkSync(elsewhere, path.join(tmp, "temp", FOLDER));
    expect(run(["answer"])).toEqual([43]);
    expect(cacheFiles(elsewhere)).toEqual({ [name]: bytes });
  });
});

describe("CLASS B: a cache is used only for the bytes it was made from, and only whole", () => {
  it("the script edited to other bytes of the same length: the new code runs, the old bytes' cache goes", () => {
    expect(run(["answer"])).toEqual([42]);
    const [old] = Object.keys(cacheFiles());
    writeFileSync(script, V2);
    expect(run(["answer"])).toEqual([43]);
    const now = Object.keys(cacheFiles());
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(old);
  });

  it("a forged cache in our own folder, its data changed (its hash no longer matches): refused and made again", () => {
    const { name, bytes } = forgeV1AsV2();
    const dir = path.join(tmp, "temp", FOLDER);
    mkdirSync(dir, { mode: 0o700 });
    // The V1 cache under V2's name, one byte of its data changed: our hash check must refuse it before V8 sees it.
    const changed = Buffer.from(bytes);
    changed[changed.length - 1]! ^= 0xff;
    writeFileSync(path.join(dir, name), changed);
    expect(run(["answer"])).toEqual([43]);
    const after = cacheFiles();
    expect(Object.keys(after)).toEqual([name]);
    expect(after[name]).not.toEqual(changed);
    expectUsable(name, [43]);
  });

  for (const [what, cut] of [["cut short", (b: Buffer) => b.subarray(0, b.length >> 1)], ["empty", () => Buffer.alloc(0)], ["its header only", (b: Buffer) => b.subarray(0, 41)]] as const) {
    it(`a cache file ${what}: refused and made again`, () => {
      expect(run(["answer"])).toEqual([42]);
      const [name, bytes] = Object.entries(cacheFiles())[0]!;
      const dir = path.join(tmp, "temp", FOLDER);
      const planted = cut(bytes);
      writeFileSync(path.join(dir, name), planted);
      expect(run(["answer"])).toEqual([42]);
      expect(cacheFiles()[name]).not.toEqual(planted);
      expectUsable(name, [42]);
    });
  }

  it("cached data of another script under this script's name, whole (V8 refuses it): made again for this script", () => {
    expect(run(["answer"])).toEqual([42]);
    const [name = ""] = Object.keys(cacheFiles());
    const other = path.join(tmp, "other.script");
    const longer = V1.replace("base - 1", "base - 1000");
    writeFileSync(other, longer);
    const saved = script;
    script = other;
    const scratch = mkdtempSync(path.join(tmp, "scratch-"));
    run(["answer"], scratch);
    const [otherBytes] = Object.values(cacheFiles(path.join(scratch, FOLDER)));
    script = saved;
    writeFileSync(path.join(tmp, "temp", FOLDER, name), otherBytes!);
    expect(run(["answer"])).toEqual([42]);
    expect(cacheFiles()[name]).not.toEqual(otherBytes);
    expectUsable(name, [42]);
  });
});

describe("the build runs npm's libraries through the cache", () => {
  it("dist's npm-libraries chunk loads pacote and arborist from its script, makes the cache once and reads it after", () => {
    const modules = JSON.parse(readFileSync(path.join(REPO_ROOT, "dist", "modules.json"), "utf8")) as Record<string, string[]>;
    const chunk = Object.entries(modules).find(([, ids]) => ids.includes("src/plugins/npm-libraries.ts"))?.[0];
    expect(chunk).toBeDefined();
    const code = readFileSync(path.join(REPO_ROOT, "dist", chunk!), "utf8");
    // The chunk is the small module; npm's libraries are in its script.
    expect(code.length).toBeLessThan(4000);
    expect(readFileSync(path.join(REPO_ROOT, "dist", chunk!.replace(/\.js$/, ".script")), "utf8")).toContain("node_modules/@npmcli/arborist/lib/arborist/index.js");
    const probe = `const libs = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, "dist", chunk!)).href)});
const pacote = libs.pacote(); const Arborist = libs.Arborist();
console.log(JSON.stringify({ answers: [typeof pacote.manifest, typeof Arborist, typeof new Arborist({ path: process.cwd() }).reify] }));`;
    const load = () => {
      const result = spawnSync(process.execPath, ["--input-type=module", "-e", probe], { cwd: tmp, encoding: "utf8", env: { PATH: process.env.PATH, TMPDIR: path.join(tmp, "temp") } });
      expect(result.stderr).toBe("");
      return JSON.parse(result.stdout.trim()).answers;
    };
    expect(load()).toEqual(["function", "function", "function"]);
    const first = cacheFiles();
    expect(Object.keys(first)).toHaveLength(1);
    expect(load()).toEqual(["function", "function", "function"]);
    expect(cacheFiles()).toEqual(first);
  });
});
