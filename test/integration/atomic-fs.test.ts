import { chmod, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { copyTree, movePath, removeTree, writeFileAtomic, writeJsonAtomic } from "../../src/core/atomic-fs.js";
import { isXcshToolsError } from "../../src/core/errors.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";
import { spawnTs } from "../helpers/ts-child.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";

let world: TmpWorld;
worldPerTest((made) => (world = made), "xcsh-tools-test-", { trustProject: true });

describe("writeFileAtomic", () => {
  it("writes the content and leaves no temp file behind", async () => {
    const file = path.join(world.root, "state", "a.json");
    await mkdir(path.dirname(file));
    await writeJsonAtomic(file, { a: 1, b: [1, 2] });
    await writeJsonAtomic(file, { a: 2 });
    expect(await readFile(file, "utf8")).toBe('{\n  "a": 2\n}\n');
    expect(await readdir(path.dirname(file))).toEqual(["a.json"]);
  });

  it("keeps an existing file's mode", async () => {
    const file = path.join(world.root, "secret.json");
    await writeFile(file, "{}");
    await chmod(file, 0o600);
    await writeFileAtomic(file, "x");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await chmod(file, 0o640);
    await writeFileAtomic(file, "y");
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    expect(await readFile(file, "utf8")).toBe("y");
    const fresh = path.join(world.root, "fresh.txt");
    await writeFileAtomic(fresh, "z");
    // A new state file is owner-only (it may hold a URL with a credential).
    expect((await stat(fresh)).mode & 0o777).toBe(0o600);
  });

  it("fails with EWRITE and removes its temp file when the rename cannot happen", async () => {
    const target = path.join(world.root, "is-a-dir");
    await mkdir(path.join(target, "child"), { recursive: true });
    const error = await writeFileAtomic(target, "data").catch((e: unknown) => e);
    expect(isXcshToolsError(error, "EWRITE")).toBe(true);
    expect((await readdir(world.root)).sort()).toEqual(["home", "is-a-dir", "project"]);
    const missing = await writeFileAtomic(path.join(world.root, "nope", "f"), "x").catch((e: unknown) => e);
    expect(isXcshToolsError(missing, "EWRITE")).toBe(true);
  });

  it("never shows a torn file to a reader while several processes write at once", async () => {
    const file = path.join(world.root, "shared.json");
    await writeJsonAtomic(file, { writer: "seed", iteration: 0, items: [], sum: 0 });
    const writers = [0, 1, 2, 3].map((id) =>
      spawnTs("test/fixtures/core/child.ts", ["atomic-writer", JSON.stringify({ file, id, iterations: 40, size: 20_000 })]),
    );
    const done = Promise.all(writers.map((w) => w.exited));
    let finished = false;
    void done.then(() => (finished = true));
    let reads = 0;
    const seen = new Set<string>();
    while (!finished) {
      const doc = JSON.parse(await readFile(file, "utf8")) as { writer: unknown; items: string[]; sum: number; iteration: number };
      expect(doc.items.length).toBe(doc.sum);
      if (doc.items.length) expect(doc.items[doc.items.length - 1]).toBe(`${doc.writer}-${doc.iteration}-${doc.sum - 1}`);
      seen.add(String(doc.writer));
      reads++;
    }
    for (const result of await done) expect(result.code, result.stderr).toBe(0);
    expect(reads).toBeGreaterThan(10);
    expect(seen.size).toBeGreaterThan(1);
    expect(await readdir(world.root)).toEqual(["home", "project", "shared.json"]);
  });
});

describe("tree helpers", () => {
  it("copyTree keeps bytes, modes and symlinks; movePath and removeTree", async () => {
    const src = path.join(world.root, "src");
    await world.write("src/a/b.txt", "hello");
    await world.write("src/run.sh", "#!/bin/sh\n");
    await chmod(path.join(src, "run.sh"), 0o751);
    await chmod(path.join(src, "a"), 0o705);
    const { symlink } = await import("node:fs/promises");
    await symlink("a/b.txt", path.join(src, "link"));
    await symlink("does-not-exist", path.join(src, "dangling"));
    const before = await snapshotTree(src);
    await copyTree(src, path.join(world.root, "copy"), { sync: true });
    expect(await snapshotTree(path.join(world.root, "copy"))).toEqual(before);
    await movePath(path.join(world.root, "copy"), path.join(world.root, "moved"));
    expect(await snapshotTree(path.join(world.root, "moved"))).toEqual(before);
    await removeTree(path.join(world.root, "moved"));
    await removeTree(path.join(world.root, "moved"));
    expect((await readdir(world.root)).sort()).toEqual(["home", "project", "src"]);
    await expect(removeTree("/")).rejects.toMatchObject({ code: "EUNSAFE_REMOVE" });
    await expect(removeTree("relative/path")).rejects.toMatchObject({ code: "EUNSAFE_REMOVE" });
  });
});
