/**
 * Where a fetch's scratch goes (marketplace/tree.ts `makeScratch`): always beside the folder the
 * result is renamed into (our own tmp folder), never in the system temp folder, whose parents
 * anyone may fill with node_modules; folders made for it go again.
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
  it("never in the system temp folder: inside near, and the folders it made are removed again", async () => {
    const near = path.join(root, "xcsh/plugins/.xcsh-tools/tmp");
    const { mkdir } = await import("node:fs/promises");
    await mkdir(path.join(root, "xcsh/plugins"), { recursive: true });
    const scratch = await makeScratch("add", near);
    expect(path.dirname(scratch.dir)).toBe(near);
    expect(path.relative(os.tmpdir(), scratch.dir).startsWith(`xcsh-tools-add-`)).toBe(false);
    expect(path.basename(scratch.dir)).toMatch(new RegExp(`^\\.xcsh-tools-add-${process.pid}-`));
    await writeFile(path.join(scratch.dir, "file"), "x");
    await scratch.dispose();
    expect(await exists(path.join(root, "xcsh/plugins/.xcsh-tools"))).toBe(false);
    expect(await exists(path.join(root, "xcsh/plugins"))).toBe(true);
  });

  it("a folder that was already there, or still holds another scratch, stays", async () => {
    const near = path.join(root, "ours/tmp");
    const first = await makeScratch("add", near);
    const second = await makeScratch("update", near);
    await first.dispose();
    expect(await exists(second.dir)).toBe(true);
    await second.dispose();
    expect(await exists(path.join(root, "ours"))).toBe(true);
    expect(await exists(near)).toBe(true);
  });

  it("a scratch abandoned by a killed command is swept by the next one; a live command's stays", async () => {
    const near = path.join(root, "ours/tmp");
    const { mkdir } = await import("node:fs/promises");
    const { spawnSync } = await import("node:child_process");
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    const abandoned = path.join(near, `.xcsh-tools-mkt-${dead}-abc123`);
    await mkdir(abandoned, { recursive: true });
    await writeFile(path.join(abandoned, "copy"), "x");
    // pid 1 is always alive: another command's scratch in use.
    const othersLive = path.join(near, ".xcsh-tools-add-1-def456");
    await mkdir(othersLive, { recursive: true });
    const live = await makeScratch("update", near);
    const scratch = await makeScratch("mkt", near);
    expect(await exists(abandoned)).toBe(false);
    expect(await exists(othersLive)).toBe(true);
    expect(await exists(live.dir)).toBe(true);
    await scratch.dispose();
    await live.dispose();
  });
});
