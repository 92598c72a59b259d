/**
 * Where a fetch's scratch goes (marketplace/tree.ts `makeScratch`): in the system temp folder when
 * it shares a filesystem with the folder the result is renamed into (nothing of ours created),
 * else beside that folder, so the clone reaches the cache by rename; folders made for it go again.
 */
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeScratch } from "../../src/marketplace/tree.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-scratch-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});
const exists = (p: string) => stat(p).then(() => true, () => false);

describe("makeScratch(label, near)", () => {
  it("same filesystem: in the temp folder, nothing created near", async () => {
    const near = path.join(root, "xcsh/plugins/.xcsh-tools/tmp");
    const tmpRoot = path.join(root, "tmp");
    await writeFile(path.join(root, "marker"), "");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(tmpRoot);
    const scratch = await makeScratch("add", near, { tmpRoot, sameDevice: async () => true });
    expect(path.dirname(scratch.dir)).toBe(tmpRoot);
    expect(await exists(path.join(root, "xcsh"))).toBe(false);
    await scratch.dispose();
    expect(await exists(scratch.dir)).toBe(false);
  });

  it("another filesystem: beside the target, and the folders it made are removed again", async () => {
    const near = path.join(root, "xcsh/plugins/.xcsh-tools/tmp");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(path.join(root, "xcsh/plugins"), { recursive: true });
    const scratch = await makeScratch("add", near, { tmpRoot: path.join(root, "elsewhere"), sameDevice: async () => false });
    expect(path.dirname(scratch.dir)).toBe(near);
    expect(path.basename(scratch.dir)).toMatch(/^\.xcsh-tools-add-/);
    await writeFile(path.join(scratch.dir, "file"), "x");
    await scratch.dispose();
    expect(await exists(path.join(root, "xcsh/plugins/.xcsh-tools"))).toBe(false);
    expect(await exists(path.join(root, "xcsh/plugins"))).toBe(true);
  });

  it("another filesystem: a folder that was already there, or still holds another scratch, stays", async () => {
    const near = path.join(root, "ours/tmp");
    const first = await makeScratch("add", near, { sameDevice: async () => false });
    const second = await makeScratch("update", near, { sameDevice: async () => false });
    await first.dispose();
    expect(await exists(second.dir)).toBe(true);
    await second.dispose();
    expect(await exists(path.join(root, "ours"))).toBe(true);
    expect(await exists(near)).toBe(true);
  });
});
