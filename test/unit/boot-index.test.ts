/**
 * Pure parts of the boot index: fingerprints (stat first, hash only when the stat moved), the
 * index reader's verdicts, and the load simulation's mapping of the validation child's failure
 * texts to the loader's.
 */
import { mkdir, rm, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { captureFingerprints, firstChange, inputChange } from "../../src/boot/fingerprint.js";
import { BOOT_INDEX_VERSION, readBootIndex } from "../../src/boot/format.js";
import { loaderFailureMessage, simulateLoad, type PreparedModule } from "../../src/boot/simulate.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-boot-unit-", { trustProject: true });

describe("fingerprints", () => {
  it("firstChange names as regular only the stat inputs that are regular files and not links, with the signatures a stat gives", async () => {
    const { symlink } = await import("node:fs/promises");
    const file = await w.write("tools/a.js", "a\n");
    const target = await w.write("tools/b.js", "b\n");
    const link = path.join(w.root, "tools", "link.js");
    await symlink(target, link);
    const folder = path.join(w.root, "tools");
    const dangling = path.join(w.root, "tools", "dangling.js");
    await symlink(path.join(w.root, "nowhere.js"), dangling);
    const absent = path.join(w.root, "absent.js");
    const fps = await captureFingerprints([{ path: file, hash: true }, { path: link, hash: true }, { path: folder }, { path: dangling }, { path: absent }, { path: target, kind: "lstat" }]);
    const regular = new Set<string>();
    // The same verdict as plain stats: the link's signature is its target's, the dangling link is missing.
    expect(await firstChange(fps, regular)).toBeUndefined();
    expect(fps[3]?.sig).toBe("missing");
    // Only what an lstat finds a regular file; a link (even to a regular file), a folder, a dangling
    // link, a missing path and an lstat input (its kind says it is looked at as itself) are not.
    expect([...regular]).toEqual([file]);
    // A link swapped in for the file is a change, whatever it points to.
    await rm(file);
    await symlink(target, file);
    const after = new Set<string>();
    expect(await firstChange(fps, after)).toBe(`${file} changed`);
    expect(after.has(file)).toBe(false);
  });

  it("a hashed file keeps its fingerprint through a touch, not through an edit", async () => {
    const file = await w.write("state.json", '{"a":1}\n');
    const [fp] = await captureFingerprints([{ path: file, hash: true }]);
    expect(fp?.sha).toMatch(/^[0-9a-f]{64}$/);
    await utimes(file, new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    expect(await inputChange(fp!)).toBeUndefined();
    await writeFile(file, '{"a":2}\n');
    expect(await inputChange(fp!)).toBe(`${file} changed`);
  });

  it("an unhashed file or folder is judged by its stat alone; missing and appearing are named", async () => {
    const file = await w.write("tool.js", "x\n");
    const dir = path.join(w.root, "tools");
    const absent = path.join(w.root, "later.js");
    await mkdir(dir);
    const fps = await captureFingerprints([{ path: file }, { path: dir }, { path: absent }, { path: file }]);
    expect(fps.map((f) => f.path)).toEqual([file, dir, absent]);
    expect(fps[2]?.sig).toBe("missing");
    expect(await firstChange(fps)).toBeUndefined();
    await utimes(file, new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    expect(await inputChange(fps[0]!)).toBe(`${file} changed`);
    await writeFile(path.join(dir, "new.js"), "y\n");
    expect(await inputChange(fps[1]!)).toBe(`${dir} changed`);
    await writeFile(absent, "z\n");
    expect(await inputChange(fps[2]!)).toBe(`${absent} appeared`);
    await rm(file);
    expect(await inputChange(fps[0]!)).toBe(`${file} was removed`);
  });
});

describe("readBootIndex", () => {
  const generator = "xcsh-tools@1.2.3";
  const valid = { version: BOOT_INDEX_VERSION, generator, writtenAt: "2026-01-01T00:00:00.000Z", views: [] };
  it.each([
    ["missing", undefined],
    ["corrupt", "{"],
    ["corrupt", JSON.stringify({ ...valid, views: {} })],
    ["unknown-version", JSON.stringify({ ...valid, version: 1 })],
    ["unknown-version", "null"],
    ["other-generator", JSON.stringify({ ...valid, generator: "xcsh-tools@0.0.1" })],
    ["ok", JSON.stringify(valid)],
  ])("%s: %s", async (status, content) => {
    const views = path.join(w.root, "boot-index.json");
    if (content !== undefined) await writeFile(views, content);
    expect((await readBootIndex({ views, modules: path.join(w.root, "boot-modules.json") }, generator)).status).toBe(status);
  });
});

describe("readBootIndex: the hand-written shape check names the first wrong place", () => {
  const generator = "xcsh-tools@1.2.3";
  const view = { key: { home: "/h", cwd: "/c", configuredPaths: [], providers: ["native"], trusted: true }, builtAt: "t", inputs: [{ path: "/a", kind: "stat", sig: "1:2" }], paths: [{ path: "/a/t.ts", source: { provider: "native", providerName: "Native", level: "user" } }], errors: [] };
  const record = { file: "/a/t.ts", sig: "1:2", runtime: "node", tools: [{ name: "t", problems: [] }] };
  const header = { version: BOOT_INDEX_VERSION, generator, writtenAt: "w" };
  const viewsText = (patch: Record<string, unknown>) => JSON.stringify({ ...header, views: [view], ...patch });
  const modulesText = (patch: Record<string, unknown>) => JSON.stringify({ ...header, modules: { "/a/t.ts": { node: record } }, ...patch });
  const files = () => ({ views: path.join(w.root, "boot-index.json"), modules: path.join(w.root, "boot-modules.json") });

  it.each([
    [viewsText({}), "ok", undefined],
    [viewsText({ writtenAt: 5 }), "corrupt", "/writtenAt: expected string"],
    [viewsText({ views: [{ ...view, key: { ...view.key, providers: "native" } }] }), "corrupt", "/views/0/key/providers: expected array"],
    [viewsText({ views: [{ ...view, inputs: [{ path: "/a", kind: "open", sig: "1" }] }] }), "corrupt", "/views/0/inputs/0/kind: expected one of stat, lstat"],
    [viewsText({ views: [{ ...view, paths: [{ path: "/a/t.ts", source: { provider: "native", providerName: "Native", level: "team" } }] }] }), "corrupt", "/views/0/paths/0/source/level: expected one of user, project"],
    [viewsText({ views: [null] }), "corrupt", "/views/0: expected object"],
    [viewsText({ views: [{ ...view, inputs: [{ path: "/a", kind: "stat", sig: "1", sha: 5 }] }] }), "corrupt", "/views/0/inputs/0/sha: expected string"],
    [viewsText({ views: [{ ...view, inputs: [{ path: "/a", kind: "stat" }] }] }), "corrupt", "/views/0/inputs/0/sig: required"],
    [viewsText({ views: [{ ...view, paths: [{ path: "/a/t.ts", source: { ...view.paths[0]!.source, plugin: 3 } }] }] }), "corrupt", "/views/0/paths/0/source/plugin: expected string"],
    [viewsText({ views: [{ ...view, paths: [{ path: "/a/t.ts" }] }] }), "corrupt", "/views/0/paths/0/source: required"],
  ])("views %#: %s", async (content, status, where) => {
    await writeFile(files().views, content);
    await writeFile(files().modules, modulesText({}));
    const read = await readBootIndex(files(), generator, true);
    expect(read.status).toBe(status);
    if (where !== undefined) expect(read.status === "ok" ? "" : read.reason).toBe(`${files().views} has the wrong shape at ${where}`);
    if (read.status === "ok") expect(read.index.modules).toEqual({ "/a/t.ts": { node: record } });
  });

  it.each([
    [modulesText({ modules: { "/a/t.ts": { node: { ...record, sha: 1 } } } }), "/modules//a/t.ts/node/sha: expected string"],
    [modulesText({ modules: { "/a/t.ts": { node: { ...record, tools: [{ name: "t" }] } } } }), "/modules//a/t.ts/node/tools/0/problems: required"],
    [modulesText({ modules: { "/a/t.ts": { node: { ...record, tools: [{ name: "t", index: "0", problems: [] }] } } } }), "/modules//a/t.ts/node/tools/0/index: expected number"],
    [modulesText({ modules: { "/a/t.ts": { node: { ...record, tools: [{ name: "t", problems: [{ code: "E", field: "f" }] }] } } } }), "/modules//a/t.ts/node/tools/0/problems/0/message: required"],
    [modulesText({ modules: { "/a/t.ts": { node: { ...record, failure: { code: 1, message: "m" } } } } }), "/modules//a/t.ts/node/failure/code: expected string"],
    // Version 4's shape (one record per file) under today's version number.
    [modulesText({ modules: { "/a/t.ts": record } }), "/modules//a/t.ts/file: expected object"],
  ])("records %#: a wrong records file reads as no records, and says why", async (content, where) => {
    await writeFile(files().views, viewsText({}));
    await writeFile(files().modules, content);
    const read = await readBootIndex(files(), generator, true);
    expect(read).toMatchObject({ status: "ok", modulesProblem: `${files().modules} has the wrong shape at ${where}` });
    expect(read.status === "ok" && read.index.modules).toEqual({});
  });

  it("a boot reads the views alone: a wrong records file does not matter to it", async () => {
    await writeFile(files().views, viewsText({}));
    await writeFile(files().modules, "not json");
    const read = await readBootIndex(files(), generator);
    expect(read).toEqual({ status: "ok", index: { ...header, views: [view], modules: {} } });
  });
});

describe("simulateLoad", () => {
  const file = "/x/tool.js";
  it.each([
    [{ code: "EIMPORT", message: "Unexpected token" }, "Failed to load tool: Unexpected token"],
    [{ code: "ENOT_A_FACTORY", message: "the module's default export is a value of type number, not a factory function" }, `Tool must export a default function: ${file} exports a value of type number as its default`],
    [{ code: "ENOT_A_FACTORY", message: "reading the default export threw: nope" }, "Tool must export a default function (nope)"],
    [{ code: "EFACTORY_THROW", message: "the factory threw: boom" }, "Failed to load tool: boom"],
    [{ code: "EFACTORY_TIMEOUT", message: "the factory did not settle within 4500 ms" }, `Failed to load tool: factory of ${file} did not settle within 4500 ms`],
    [{ code: "EFACTORY_RESULT", message: "the factory returned null; expected a tool or an array of tools" }, `Failed to load tool: the factory of ${file} returned null; expected a tool or an array of tools`],
    [{ code: "EMODULE_EXIT", message: "the process exited with code 3" }, "Failed to load tool: the process exited with code 3"],
  ])("maps %j to the loader's text", (failure, expected) => {
    expect(loaderFailureMessage(failure, file)).toBe(expected);
  });

  it("dedupes by real path, reports conflicts first-wins, and an unvalidated entry as unknown", () => {
    const source = { provider: "native", providerName: "xcsh", level: "user" as const };
    const record = (name: string) => ({ file, sig: "s", runtime: "node", tools: [{ name, description: name, problems: [] }] });
    const modules: PreparedModule[] = [
      { entry: { path: "/a.js", source }, file: "/a.js", key: "/a.js", record: { ...record("one"), file: "/a.js" } },
      { entry: { path: "/alias.js", source }, file: "/alias.js", key: "/a.js", record: { ...record("one"), file: "/alias.js" } },
      { entry: { path: "/b.js", source }, file: "/b.js", key: "/b.js", record: { ...record("one"), file: "/b.js" } },
      { entry: { path: "/c.js", source }, file: "/c.js", key: "/c.js", record: { ...record("read"), file: "/c.js" } },
      { entry: { path: "/d.js", source }, file: "/d.js", key: "/d.js", record: undefined },
    ];
    const result = simulateLoad(modules, ["read"]);
    expect(result.tools.map((t) => `${t.name} ${t.path}`)).toEqual(["one /a.js"]);
    expect(result.errors.map((e) => `${e.code} ${e.path}`)).toEqual(["ECONFLICT /b.js", "ECONFLICT_BUILTIN /c.js", "EIMPORT /d.js"]);
    expect(result.errors[0]?.conflictsWith).toEqual({ path: "/a.js", source });
  });
});
