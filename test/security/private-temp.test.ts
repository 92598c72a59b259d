/**
 * Issue 41, CLASS B (folders we own): the per-user temp folders whose names are predictable (the
 * module shims when the xcsh root is read-only, the testing kit's transpile cache) hold code we
 * import, so one that another user made first, or anyone can write, or that is a symlink, is
 * never used: the process gets a fresh private folder instead (core/atomic-fs.ts privateTempDir).
 */
import { chmod, lstat, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { privateTempDir } from "../../src/core/atomic-fs.js";

let tmp: string;
let saved: string | undefined;
beforeEach(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-private-temp-"));
  saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
});
afterEach(async () => {
  if (saved === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = saved;
  await rm(tmp, { recursive: true, force: true });
});

describe("privateTempDir: a predictable temp folder is used only when it is ours alone", () => {
  it("made fresh: 0700, and the same folder on the next call", async () => {
    const dir = privateTempDir("xcsh-tools-shims-test");
    expect(dir).toBe(path.join(tmp, "xcsh-tools-shims-test"));
    expect((await lstat(dir)).mode & 0o777).toBe(0o700);
    expect(privateTempDir("xcsh-tools-shims-test")).toBe(dir);
  });

  it("planted world-writable (anyone could swap the shims in it): not used", async () => {
    const planted = path.join(tmp, "xcsh-tools-shims-test");
    await mkdir(planted);
    await chmod(planted, 0o777);
    const dir = privateTempDir("xcsh-tools-shims-test");
    expect(dir).not.toBe(planted);
    expect(path.dirname(dir)).toBe(tmp);
    expect((await lstat(dir)).mode & 0o077).toBe(0);
  });

  it("planted as a symlink to a folder elsewhere: not used", async () => {
    const elsewhere = await mkdtemp(path.join(tmp, "elsewhere-"));
    await symlink(elsewhere, path.join(tmp, "xcsh-tools-shims-test"));
    const dir = privateTempDir("xcsh-tools-shims-test");
    expect(dir).not.toBe(path.join(tmp, "xcsh-tools-shims-test"));
    expect(dir.startsWith(elsewhere)).toBe(false);
  });
});
