/**
 * What a lazy boot computes by hand to save calls in cold code must say exactly what the calls it
 * replaces would: the file type of a signature from the mode bits (boot/fingerprint.ts), and the
 * walk of a recorded symbol's JSON pointer without `split` (host/lazy-definition.ts
 * `restoreSchema`), and the index's shape check, which runs each list's plain test in one loop
 * and walks item by item only to name a refused one (boot/format.ts `arrayOf`, `recordOf`).
 * Each case compares with the long way, on every kind of input a boot meets or a hand-edited
 * index can hold.
 */
import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { lstatSync, statSync, type Stats } from "node:fs";
import net from "node:net";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { captureFingerprints, currentSignature, firstChange, signatureOf } from "../../src/boot/fingerprint.js";
import { BOOT_INDEX_VERSION, readBootIndex } from "../../src/boot/format.js";
import { restoreSchema, type SchemaSymbols } from "../../src/host/lazy-definition.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

/** The signature as it was computed with `Stats`'s methods. */
function longWay(info: Stats | undefined): string {
  if (!info) return "missing";
  const type = info.isSymbolicLink() ? "l" : info.isDirectory() ? "d" : info.isFile() ? "f" : "o";
  return `${type}:${info.size}:${info.mtimeMs}:${info.ino}`;
}

describe("a signature's file type read from the mode bits is the one Stats's methods give", () => {
  let w: TmpWorld;
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-tools-lazy-shortcuts-");
  });
  afterEach(async () => w.cleanup());

  it("for a file, a folder, a link to each, a dangling link, a FIFO, a socket and a missing path, by stat and by lstat", async () => {
    const dir = path.join(w.root, "kinds");
    await mkdir(path.join(dir, "folder"), { recursive: true });
    await writeFile(path.join(dir, "file"), "x");
    await symlink(path.join(dir, "file"), path.join(dir, "link-to-file"));
    await symlink(path.join(dir, "folder"), path.join(dir, "link-to-folder"));
    await symlink(path.join(dir, "nowhere"), path.join(dir, "dangling"));
    const names = ["file", "folder", "link-to-file", "link-to-folder", "dangling", "missing"];
    if (process.platform !== "win32") {
      execFileSync("mkfifo", [path.join(dir, "fifo")]);
      names.push("fifo");
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(path.join(dir, "socket"), resolve));
      names.push("socket");
      try {
        for (const name of names) {
          const file = path.join(dir, name);
          for (const [kind, statOf] of [["stat", statSync], ["lstat", lstatSync]] as const) {
            const expected = longWay(statOf(file, { throwIfNoEntry: false }));
            expect(currentSignature(file, kind), `${kind} ${name}`).toBe(expected);
            expect(signatureOf(statOf(file, { throwIfNoEntry: false })), `${kind} ${name}`).toBe(expected);
          }
        }
        const types = names.map((name) => currentSignature(path.join(dir, name), "lstat").split(":")[0]);
        expect(types).toEqual(["f", "d", "l", "l", "l", "missing", "o", "o"]);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });

  it("firstChange's regular files are the regular files that are not links, and an input whose type changed is seen", async () => {
    const dir = path.join(w.root, "regular");
    await mkdir(path.join(dir, "folder"), { recursive: true });
    await writeFile(path.join(dir, "file"), "x");
    await symlink(path.join(dir, "file"), path.join(dir, "link"));
    if (process.platform !== "win32") execFileSync("mkfifo", [path.join(dir, "fifo")]);
    const paths = ["file", "folder", "link", ...(process.platform !== "win32" ? ["fifo"] : [])].map((name) => path.join(dir, name));
    const fps = await captureFingerprints(paths.map((p) => ({ path: p })));
    const regular = new Set<string>();
    expect(await firstChange(fps, regular)).toBeUndefined();
    expect([...regular]).toEqual([path.join(dir, "file")]);
    // The same size, mtime and inode under another type is a change: the type letter is read.
    const forged = fps.map((fp) => (fp.path.endsWith("/file") ? { ...fp, sig: fp.sig.replace(/^f:/, "o:") } : fp));
    expect(await firstChange(forged, new Set())).toBe(`${path.join(dir, "file")} changed`);
  });
});

/** The walk as it was: `split("/")`, every part after the first. */
function longWalk(schema: unknown, symbols: SchemaSymbols): unknown {
  for (const at of Object.keys(symbols)) {
    let target: unknown = schema;
    const parts = at.split("/");
    for (let i = 1; i < parts.length; i++) {
      if (target === null || typeof target !== "object") break;
      const part = parts[i]!;
      target = (target as Record<string, unknown>)[part.includes("~") ? part.replace(/~1/g, "/").replace(/~0/g, "~") : part];
    }
    if (target === null || typeof target !== "object") throw new Error(`the recorded schema has no value at ${at || "/"}`);
    for (const key of Object.keys(symbols[at]!)) (target as Record<symbol, unknown>)[Symbol.for(key)] = symbols[at]![key];
  }
  return schema;
}

/** Every registered symbol of `value`, by path, as a comparable list. */
function symbolsOf(value: unknown, at = "", out: string[] = []): string[] {
  if (value === null || typeof value !== "object") return out;
  for (const symbol of Object.getOwnPropertySymbols(value)) out.push(`${at} ${Symbol.keyFor(symbol)}=${String((value as Record<symbol, unknown>)[symbol])}`);
  for (const [key, item] of Object.entries(value)) symbolsOf(item, `${at}/${key}`, out);
  return out;
}

describe("a recorded pointer is walked part by part exactly as split would walk it", () => {
  const schema = () => ({ "": { k: 1, "": { deep: true } }, a: { "": {}, b: { c: {} } }, "x/y": { "~z": {} }, list: [{}, { n: {} }], text: "s" });
  const pointers: [string, boolean][] = [
    ["", true], // the root
    ["/", true], // the property named "" at the root
    ["//", true], // "" under ""
    ["/a", true],
    ["/a/", true], // a trailing empty part
    ["/a/b/c", true],
    ["/x~1y/~0z", true], // escapes
    ["/list/1/n", true], // through an array
    ["no-slash", true], // a hand-edited pointer without a leading "/": no part, the root
    ["lead/a/b", true], // what precedes the first "/" is not a part
    ["/a/missing", false],
    ["/text/more", false], // through a string
    ["/list/7", false],
    ["/a/b/c/d/e", false],
  ];

  for (const [at, exists] of pointers) {
    it(`${JSON.stringify(at)}: ${exists ? "the same place" : "the same refusal"}`, () => {
      const symbols: SchemaSymbols = { [at]: { "TypeBox.Kind": "Object", "TypeBox.Optional": "Optional" } };
      if (!exists) {
        expect(() => longWalk(schema(), symbols)).toThrow();
        expect(() => restoreSchema(schema(), symbols)).toThrow(`the recorded schema has no value at ${at || "/"}`);
        return;
      }
      const expected = symbolsOf(longWalk(schema(), symbols));
      expect(expected).toHaveLength(2);
      expect(symbolsOf(restoreSchema(schema(), symbols))).toEqual(expected);
    });
  }

  it("many pointers at once, symbols shared between them, land where the long way puts them", () => {
    const symbols: SchemaSymbols = Object.fromEntries(pointers.filter(([, exists]) => exists).map(([at], i) => [at, { "TypeBox.Kind": `K${i}`, ...(i % 2 ? { "TypeBox.Readonly": "Readonly" } : {}) }]));
    expect(symbolsOf(restoreSchema(schema(), symbols))).toEqual(symbolsOf(longWalk(schema(), symbols)));
    // The symbols are the registered ones: what the host's TypeBox reads.
    const restored = restoreSchema({ type: "object" }, { "": { "TypeBox.Kind": "Object" } }) as Record<symbol, unknown>;
    expect(restored[Symbol.for("TypeBox.Kind")]).toBe("Object");
  });

  it("a pointer's parts kept from an earlier tool walk each later schema afresh: found where it is, refused where it is not", () => {
    // restoreSchema keeps the parts by pointer across tools (a boot restores the same pointers on every tool): the
    // schema differs from tool to tool, so what is kept must be the parts, never a place or an answer.
    const elsewhere = () => ({ a: { b: "text" }, "x/y": 1, list: [], "": { "": "leaf" } });
    for (const [at, exists] of pointers) {
      const symbols: SchemaSymbols = { [at]: { "TypeBox.Kind": "Object" } };
      for (let round = 0; round < 2; round++) {
        if (exists) expect(symbolsOf(restoreSchema(schema(), symbols)), at).toEqual(symbolsOf(longWalk(schema(), symbols)));
        else expect(() => restoreSchema(schema(), symbols), at).toThrow(`the recorded schema has no value at ${at || "/"}`);
        let long: unknown;
        try {
          long = symbolsOf(longWalk(elsewhere(), symbols));
        } catch {
          long = "refused";
        }
        let short: unknown;
        try {
          short = symbolsOf(restoreSchema(elsewhere(), symbols));
        } catch (error) {
          expect(String(error)).toContain(`the recorded schema has no value at ${at || "/"}`);
          short = "refused";
        }
        expect(short, at).toEqual(long);
      }
    }
  });
});

describe("a wrong item in a long list of the index is named wherever it is, as the item-by-item walk names it", () => {
  let w: TmpWorld;
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-tools-lazy-shortcuts-");
  });
  afterEach(async () => w.cleanup());

  const generator = "xcsh-tools@1.2.3";
  const header = { version: BOOT_INDEX_VERSION, generator, writtenAt: "w" };
  const COUNT = 50;
  const input = (i: number) => ({ path: `/p/${i}`, kind: "stat", sig: `f:1:2:${i}`, sha: "ab" });
  const entry = (i: number) => ({ path: `/p/${i}.ts`, source: { provider: "npm", providerName: "npm", level: "user", plugin: "p" } });
  const record = (i: number) => ({ file: `/p/${i}.ts`, sig: `f:1:2:${i}`, runtime: "node", tools: [{ name: `t${i}`, problems: [] }], static: true });
  const view = (inputs: unknown[], paths: unknown[]) => ({ key: { home: "/h", cwd: "/c", configuredPaths: [], providers: ["npm"], trusted: false }, builtAt: "b", inputs, paths, errors: [] });
  const list = <T>(make: (i: number) => T, wrong: Record<number, unknown>) => Array.from({ length: COUNT }, (_, i) => (i in wrong ? wrong[i] : make(i)));
  const records = (wrong: Record<number, unknown>, runtimeWrong: Record<number, unknown> = {}) =>
    Object.fromEntries(Array.from({ length: COUNT }, (_, i) => [`/p/${i}.ts`, i in wrong ? wrong[i] : { node: i in runtimeWrong ? runtimeWrong[i] : record(i), ...(i % 7 === 0 ? { bun: record(i) } : {}) }]));

  async function read(views: unknown, modules: unknown) {
    const files = { views: path.join(w.root, "boot-index.json"), modules: path.join(w.root, "boot-modules.json") };
    await writeFile(files.views, JSON.stringify({ ...header, views }));
    await writeFile(files.modules, JSON.stringify({ ...header, modules }));
    const got = await readBootIndex(files, generator, true);
    const strip = (text: string | undefined) => text?.replace(`${files.views} has the wrong shape at `, "views ").replace(`${files.modules} has the wrong shape at `, "records ");
    return got.status === "ok" ? { status: "ok", modules: strip(got.modulesProblem) ?? Object.keys(got.index.modules).length } : { status: got.status, views: strip(got.reason) };
  }

  it("long lists with nothing wrong read whole", async () => {
    expect(await read([view(list(input, {}), list(entry, {}))], records({}))).toEqual({ status: "ok", modules: COUNT });
  });

  const last = COUNT - 1;
  const middle = COUNT >> 1;
  it.each([
    ["inputs", 0, null, "/views/0/inputs/0: expected object"],
    ["inputs", middle, [input(middle)], `/views/0/inputs/${middle}: expected object`],
    ["inputs", last, "a string", `/views/0/inputs/${last}: expected object`],
    ["inputs", middle, { ...input(middle), sig: 5 }, `/views/0/inputs/${middle}/sig: expected string`],
    ["inputs", last, { ...input(last), kind: "open" }, `/views/0/inputs/${last}/kind: expected one of stat, lstat`],
    ["inputs", 0, { path: "/p/0", kind: "stat" }, "/views/0/inputs/0/sig: required"],
    ["paths", middle, { path: `/p/${middle}.ts` }, `/views/0/paths/${middle}/source: required`],
    ["paths", last, { ...entry(last), source: { ...entry(last).source, level: "team" } }, `/views/0/paths/${last}/source/level: expected one of user, project`],
    ["paths", 0, { ...entry(0), source: null }, "/views/0/paths/0/source: expected object"],
  ])("views: %s item %i wrong (%j) is %s", async (field, at, wrong, where) => {
    const inputs = list(input, field === "inputs" ? { [at]: wrong } : {});
    const paths = list(entry, field === "paths" ? { [at]: wrong } : {});
    expect(await read([view(inputs, paths)], records({}))).toEqual({ status: "corrupt", views: `views ${where}` });
  });

  it("of two wrong items, the first is named", async () => {
    const inputs = list(input, { 7: { ...input(7), sha: 1 }, 3: { ...input(3), path: 2 } });
    expect(await read([view(inputs, list(entry, {}))], records({}))).toEqual({ status: "corrupt", views: "views /views/0/inputs/3/path: expected string" });
  });

  it.each([
    ["a module's records not an object", { [middle]: "records" }, {}, `/modules//p/${middle}.ts: expected object`],
    ["a module's records an array", { [last]: [record(last)] }, {}, `/modules//p/${last}.ts: expected object`],
    ["a record null", {}, { [0]: null }, "/modules//p/0.ts/node: expected object"],
    ["a record without its file", {}, { [middle]: { ...record(middle), file: undefined } }, `/modules//p/${middle}.ts/node/file: required`],
    ["a record's tool with a bad problem", {}, { [last]: { ...record(last), tools: [{ name: "t", problems: [{ code: "E" }] }] } }, `/modules//p/${last}.ts/node/tools/0/problems/0/field: required`],
    ["a record's failure without its message", {}, { [middle]: { ...record(middle), failure: { code: "E" } } }, `/modules//p/${middle}.ts/node/failure/message: required`],
  ])("records: %s is named, and no record is read", async (_what, wrong, runtimeWrong, where) => {
    expect(await read([view(list(input, {}), list(entry, {}))], records(wrong, runtimeWrong))).toEqual({ status: "ok", modules: `records ${where}` });
  });
});
