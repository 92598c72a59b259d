import { readFile, readdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isXcshToolsError } from "../../src/core/errors.js";
import { acquireLock, lockFilePath, readLockOwner, withLock } from "../../src/core/lock.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { runTs, spawnTs, type TsChild } from "../helpers/ts-child.js";

const CHILD = "test/fixtures/core/child.ts";
let world: TmpWorld;
let dir: string;
const children: TsChild[] = [];

beforeEach(async () => {
  world = await makeTmpWorld("xcsh-tools-test-", { trustProject: false }); // these tests own our folder: no trust record in it
  dir = path.join(world.xcshHome, "plugins", ".xcsh-tools");
});
afterEach(async () => {
  for (const c of children.splice(0)) c.child.kill("SIGKILL");
  await world.cleanup();
});

function lockChild(params: Record<string, unknown>): TsChild {
  const c = spawnTs(CHILD, ["lock", JSON.stringify({ dir, ...params })]);
  children.push(c);
  return c;
}

/** Leave a lock behind by killing its holder with SIGKILL. */
async function leaveStaleLock(): Promise<number> {
  const holder = lockChild({ id: "doomed", holdMs: "forever", waitMs: 0 });
  await holder.waitFor((m) => m.held);
  const pid = holder.child.pid!;
  holder.child.kill("SIGKILL");
  await holder.exited;
  expect((await readLockOwner(dir))?.pid).toBe(pid);
  return pid;
}

function lastResult(c: TsChild) {
  return c.messages.find((m) => "ok" in m);
}

describe("withLock across processes", () => {
  it("a second process waits, reports once, and fails with ELOCKED naming the holder", async () => {
    // The holder keeps the lock until told: a fixed hold ran out before a slow machine started the waiter.
    const releaseFile = path.join(world.root, "release-A");
    const holder = lockChild({ id: "A", holdMs: 0, waitMs: 0, releaseFile });
    await holder.waitFor((m) => m.held);
    const waiter = await runTs(CHILD, ["lock", JSON.stringify({ dir, id: "B", holdMs: 0, waitMs: 400 })]);
    await writeFile(releaseFile, "");
    const result = waiter.messages.find((m) => "ok" in m);
    expect(result).toMatchObject({ ok: false, code: "ELOCKED", waits: 1 });
    expect(result.message).toContain(`pid ${holder.child.pid}`);
    expect(result.message).toContain("test A");
    expect(result.hint).toContain(lockFilePath(dir));
  });

  it("a waiter with enough patience gets the lock after the holder releases it", async () => {
    const releaseFile = path.join(world.root, "release-A");
    const holder = lockChild({ id: "A", holdMs: 0, waitMs: 0, releaseFile });
    await holder.waitFor((m) => m.held);
    const waiter = lockChild({ id: "B", holdMs: 0, waitMs: 10_000 });
    await waiter.waitFor((m) => m.waiting);
    await writeFile(releaseFile, "");
    const [a, b] = await Promise.all([holder.waitFor((m) => "ok" in m), waiter.waitFor((m) => "ok" in m)]);
    expect(a.ok).toBe(true);
    expect(b).toMatchObject({ ok: true, waits: 1 });
    expect(b.enteredAt).toBeGreaterThanOrEqual(a.leftAt);
    // Both released on their way out: nothing is left in the folder.
    await Promise.all([holder.exited, waiter.exited]);
    expect(await readdir(dir)).toEqual([]);
  });

  it("takes over a lock whose holder was killed with SIGKILL, without waiting", async () => {
    const deadPid = await leaveStaleLock();
    let waited = 0;
    await withLock(dir, async (lock) => {
      expect(lock.owner.pid).toBe(process.pid);
      expect((await readLockOwner(dir))?.token).toBe(lock.owner.token);
    }, { waitMs: 5000, onWait: () => (waited += 1) });
    expect(waited, "a dead holder's lock is taken over, not waited for").toBe(0);
    expect(deadPid).not.toBe(process.pid);
    expect(await readdir(dir)).toEqual([]);
  });

  it("when several waiters race for one stale lock, exactly one wins", async () => {
    for (let round = 0; round < 2; round++) {
      await leaveStaleLock();
      const startAt = Date.now() + 1500; // all children are loaded and spinning by then
      const racers = Array.from({ length: 6 }, (_, i) => lockChild({ id: `R${i}`, holdMs: 2500, waitMs: 300, startAt }));
      const results = await Promise.all(racers.map((r) => r.waitFor((m) => "ok" in m)));
      expect(results.filter((r) => r.ok)).toHaveLength(1);
      expect(results.filter((r) => !r.ok).map((r) => r.code)).toEqual(Array(5).fill("ELOCKED"));
      await Promise.all(racers.map((r) => r.exited));
    }
  });

  it("keeps mutual exclusion for many contenders starting from a stale lock", async () => {
    await leaveStaleLock();
    const log = path.join(world.root, "log.txt");
    await writeFile(log, "");
    const startAt = Date.now() + 1500;
    const racers = Array.from({ length: 6 }, (_, i) => lockChild({ id: `M${i}`, holdMs: 60, waitMs: 20_000, startAt, log }));
    const results = await Promise.all(racers.map((r) => r.waitFor((m) => "ok" in m)));
    expect(results.every((r) => r.ok)).toBe(true);
    const lines = (await readFile(log, "utf8")).trim().split("\n").map((l) => l.split(" "));
    expect(lines).toHaveLength(12);
    // Strictly alternating enter/leave of the same id: no two holders ever overlapped.
    for (let i = 0; i < lines.length; i += 2) {
      expect(lines[i]![0]).toBe("enter");
      expect(lines[i + 1]![0]).toBe("leave");
      expect(lines[i + 1]![1]).toBe(lines[i]![1]);
    }
  });
});

describe("withLock in one process", () => {
  it("excludes every other caller in the process, a nested one included (ELOCKED, no deadlock)", async () => {
    const order: string[] = [];
    const first = withLock(dir, async () => {
      order.push("first:in");
      await expect(withLock(dir, async () => order.push("nested"), { waitMs: 0 })).rejects.toMatchObject({ code: "ELOCKED" });
      await new Promise((r) => setTimeout(r, 150));
      order.push("first:out");
    });
    await new Promise((r) => setTimeout(r, 30));
    const second = withLock(dir, async () => order.push("second"), { waitMs: 5000 });
    await Promise.all([first, second]);
    expect(order).toEqual(["first:in", "first:out", "second"]);
  });

  it("a waiter makes the folder again when it was removed after the holder let go", async () => {
    const holder = await acquireLock(dir);
    let waiting!: () => void;
    const waited = new Promise<void>((resolve) => (waiting = resolve));
    const second = withLock(dir, async () => "second", { waitMs: 5000, onWait: () => waiting() });
    await waited;
    await holder.release();
    // What a failed first-ever command does once its lock is released (plugins/mutation.ts).
    const { rmdir } = await import("node:fs/promises");
    await rmdir(dir);
    expect(await second).toBe("second");
    expect(await readdir(dir)).toEqual([]);
  });

  it("releases on a thrown error", async () => {
    await expect(withLock(dir, async () => { throw new Error("boom"); })).rejects.toThrow("boom");
    expect(await readdir(dir)).toEqual([]);
  });

  it("treats a lock left by an earlier process with our own pid as stale", async () => {
    const { mkdir } = await import("node:fs/promises");
    await mkdir(dir, { recursive: true });
    await writeFile(lockFilePath(dir), JSON.stringify({ pid: process.pid, hostname: os.hostname(), token: "old-run", createdAt: "x" }));
    await withLock(dir, async (lock) => expect(lock.owner.token).not.toBe("old-run"), { waitMs: 0 });
  });

  it("breaks the guard of a breaker that died mid-takeover", async () => {
    const deadPid = await leaveStaleLock();
    const stale = await readLockOwner(dir);
    await writeFile(
      `${lockFilePath(dir)}.break-${stale!.token}`,
      JSON.stringify({ pid: deadPid, hostname: os.hostname(), token: "dead-breaker", createdAt: "x" }),
    );
    await withLock(dir, async () => undefined, { waitMs: 1000 });
    expect(await readdir(dir)).toEqual([]);
  });

  it("removes, as it takes the lock, the temp files of atomic writes a killed process left, and keeps a live one's", async () => {
    const deadPid = await leaveStaleLock();
    const livePid = process.ppid; // the test runner's parent: alive throughout
    const dead = [`.boot-modules.json.${deadPid}.8070cc432e40.tmp`, `.lock.${deadPid}.0123456789ab.tmp`];
    const kept = [`.boot-index.json.${livePid}.0123456789ab.tmp`, `.boot-index.json.${process.pid}.ba9876543210.tmp`, "notes.tmp"];
    for (const name of [...dead, ...kept]) await writeFile(path.join(dir, name), "{");
    // The sweep happens before the lock is handed over, not some time after.
    await withLock(dir, async () => expect((await readdir(dir)).filter((n) => n !== "lock").sort()).toEqual([...kept].sort()), { waitMs: 1000 });
  });

  it("does not treat a live holder's fresh lock as stale", async () => {
    const held = await acquireLock(dir, { staleMs: 60_000 });
    const error = await acquireLock(dir, { waitMs: 200, staleMs: 60_000 }).catch((e: unknown) => e);
    expect(isXcshToolsError(error, "ELOCKED")).toBe(true);
    await held.release();
  });

  it("aborts the held lock's signal when the lock is taken away", async () => {
    const held = await acquireLock(dir, { staleMs: 200 });
    await writeFile(lockFilePath(dir), JSON.stringify({ pid: 1, hostname: "elsewhere", token: "thief", createdAt: "x" }));
    await new Promise((r) => setTimeout(r, 250));
    expect(held.signal.aborted).toBe(true);
    expect((held.signal.reason as { code?: string }).code).toBe("ELOCK_LOST");
    await held.release();
    expect((await readLockOwner(dir))?.token).toBe("thief");
  });

  it("stops waiting when its signal aborts", async () => {
    const held = await acquireLock(dir);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await expect(acquireLock(dir, { waitMs: 10_000, signal: controller.signal })).rejects.toMatchObject({ code: "EABORTED" });
    await held.release();
  });
});
