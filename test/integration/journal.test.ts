import { cp, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { beginTransaction, journalRoot, recoverPending, withTransaction } from "../../src/core/journal.js";
import { CREATED_PATHS, makeInitialTree, runJournaledOp } from "../fixtures/core/journal-op.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { runTs } from "../helpers/ts-child.js";
import { snapshotTree, type TreeSnapshot } from "../helpers/tree-snapshot.js";

const CHILD = "test/fixtures/core/child.ts";
let world: TmpWorld;

beforeEach(async () => {
  world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
});
afterEach(async () => {
  await world.cleanup();
});

/** A fresh plugins folder with our own folder inside, at `<root>/<name>`. */
async function makePlugins(name: string) {
  const root = path.join(world.root, name, "plugins");
  const ours = path.join(root, ".xcsh-tools");
  await mkdir(root, { recursive: true });
  await makeInitialTree(root);
  return { root, ours };
}

const snap = (root: string) => snapshotTree(root, { exclude: [".xcsh-tools"], absent: CREATED_PATHS });

async function journalEntries(ours: string): Promise<string[]> {
  try {
    return await readdir(journalRoot(ours));
  } catch {
    return [];
  }
}

/** The old and new snapshots, and every step the operation goes through (recorded in-process). */
async function reference() {
  const { root, ours } = await makePlugins("reference");
  const oldState = await snap(root);
  const steps: string[] = [];
  await runJournaledOp(root, ours, (step) => void steps.push(step));
  const newState = await snap(root);
  expect(newState).not.toEqual(oldState);
  expect(await journalEntries(ours)).toEqual([]);
  return { oldState, newState, steps };
}

describe("transactions in one process", () => {
  it("commit leaves the new state and an empty journal", async () => {
    const { oldState, newState } = await reference();
    expect(newState["created.txt"]).toMatch(/^file /);
    expect(newState["stale-cache.json"]).toBeUndefined();
    expect(oldState["node_modules/old-dep/lib/index.js"]).toMatch(/^file /);
    expect(newState["node_modules/old-dep/lib/index.js"]).toBeUndefined();
  });

  it("rollback after a failure at any step restores a byte- and mode-identical tree", async () => {
    const { oldState, steps } = await reference();
    const failPoints = steps.filter((s) => !s.startsWith("commit:") && !s.startsWith("finish:") && !s.startsWith("rollback:"));
    expect(failPoints.length).toBeGreaterThan(8);
    for (const [i, failAt] of failPoints.entries()) {
      const { root, ours } = await makePlugins(`fail-${i}`);
      await expect(runJournaledOp(root, ours, () => undefined, { failAt })).rejects.toThrow(`injected failure at ${failAt}`);
      expect(await snap(root), `failure at ${failAt}`).toEqual(oldState);
      expect(await journalEntries(ours)).toEqual([]);
    }
  });

  it("withTransaction rolls back on a throw and rethrows it", async () => {
    const { root, ours } = await makePlugins("wt");
    const before = await snap(root);
    await expect(
      withTransaction(ours, async (tx) => {
        await writeFile(await tx.stage(path.join(root, "package.json")), "garbage");
        throw new Error("validation failed");
      }),
    ).rejects.toThrow("validation failed");
    expect(await snap(root)).toEqual(before);
  });

  it("refuses overlapping paths and the journal itself", async () => {
    const { root, ours } = await makePlugins("overlap");
    const tx = await beginTransaction(ours);
    await tx.stage(path.join(root, "node_modules"));
    await expect(tx.stage(path.join(root, "node_modules", "old-dep"))).rejects.toMatchObject({ code: "EJOURNAL" });
    await expect(tx.stageRemoval(root, path.dirname(root))).rejects.toMatchObject({ code: "EJOURNAL" });
    await tx.rollback();
  });

  it("a staged path that was never written fails the commit before the point of no return", async () => {
    const { root, ours } = await makePlugins("unstaged");
    const before = await snap(root);
    await expect(
      withTransaction(ours, async (tx) => {
        await writeFile(await tx.stage(path.join(root, "package.json")), "{}");
        await tx.stage(path.join(root, "xcsh-plugins.lock.json"));
      }),
    ).rejects.toMatchObject({ code: "EJOURNAL" });
    expect(await snap(root)).toEqual(before);
    expect(await journalEntries(ours)).toEqual([]);
  });
});

describe("kill -9 at every step, then recovery", () => {
  it("ends in exactly the old state before the commit record and the new state after it", async () => {
    const { oldState, newState, steps } = await reference();
    const markedAt = steps.indexOf("commit:marked");
    expect(markedAt).toBeGreaterThan(0);
    const crashPoints = steps.filter((s) => !s.startsWith("rollback:"));
    const outcomes: Array<{ step: string; expected: "old" | "new" }> = [];
    // A few children at a time: each one is a real process killed with SIGKILL at its step.
    for (let start = 0; start < crashPoints.length; start += 6) {
      await Promise.all(
        crashPoints.slice(start, start + 6).map(async (crashAt, k) => {
          const { root, ours } = await makePlugins(`crash-${start + k}`);
          const child = await runTs(CHILD, ["journal-op", JSON.stringify({ root, ours, crashAt })]);
          expect(child.signal, `${crashAt}: ${child.stderr}`).toBe("SIGKILL");
          expect(child.messages).toContainEqual({ crashing: crashAt });
          const after = steps.indexOf(crashAt) >= markedAt;
          const reports = await recoverPending(ours);
          // After `finish:renamed` the outcome is already in place and only a `.done` folder is left.
          const expectedActions = crashAt.startsWith("finish:") ? [] : [after ? "completed" : "rolled-back"];
          expect(reports.map((r) => r.action), crashAt).toEqual(expectedActions);
          expect(await snap(root), `crash at ${crashAt}`).toEqual(after ? newState : oldState);
          expect(await journalEntries(ours)).toEqual([]);
          // Idempotent: running recovery again changes nothing.
          expect(await recoverPending(ours)).toEqual([]);
          expect(await snap(root)).toEqual(after ? newState : oldState);
          outcomes.push({ step: crashAt, expected: after ? "new" : "old" });
        }),
      );
    }
    expect(outcomes.filter((o) => o.expected === "old").length).toBeGreaterThan(8);
    expect(outcomes.filter((o) => o.expected === "new").length).toBeGreaterThan(3);
  });

  it("recovery killed at any of its own steps can be run again and still ends in the right state", async () => {
    const { oldState, newState } = await reference();
    // One interrupted transaction to roll back (nothing live was touched: retiring its folder is
    // the one step), one to complete (a step per swap).
    for (const [opCrash, expected, minSteps] of [
      ["mutate:4", oldState, 1],
      ["commit:marked", newState, 7],
    ] as const) {
      // Discover the recovery's steps on a scratch copy.
      const probe = await makePlugins(`probe-${opCrash}`);
      await runTs(CHILD, ["journal-op", JSON.stringify({ ...probe, crashAt: opCrash })]);
      const recoverySteps: string[] = [];
      await recoverPending(probe.ours, { onStep: (s) => void recoverySteps.push(s) });
      expect(recoverySteps.length).toBeGreaterThanOrEqual(minSteps);
      await Promise.all(
        recoverySteps.map(async (recoverCrash, k) => {
          const { root, ours } = await makePlugins(`rec-${opCrash}-${k}`);
          const op = await runTs(CHILD, ["journal-op", JSON.stringify({ root, ours, crashAt: opCrash })]);
          expect(op.signal).toBe("SIGKILL");
          const rec = await runTs(CHILD, ["journal-recover", JSON.stringify({ ours, crashAt: recoverCrash })]);
          expect(rec.signal, `${recoverCrash}: ${rec.stderr}`).toBe("SIGKILL");
          // And once more, killed at the same step again if it gets there: still converges.
          await runTs(CHILD, ["journal-recover", JSON.stringify({ ours, crashAt: recoverCrash })]);
          await recoverPending(ours);
          expect(await snap(root), `${opCrash} then recovery killed at ${recoverCrash}`).toEqual(expected);
          expect(await journalEntries(ours)).toEqual([]);
        }),
      );
    }
  });

  it("a journal folder that never got its intent is discarded without touching anything", async () => {
    const { root, ours } = await makePlugins("draft");
    const before = await snap(root);
    await mkdir(path.join(journalRoot(ours), "abc.new", "b"), { recursive: true });
    await cp(path.join(root, "package.json"), path.join(journalRoot(ours), "abc.new", "b", "0"));
    expect((await recoverPending(ours)).map((r) => r.action)).toEqual(["discarded"]);
    expect(await snap(root)).toEqual(before);
    expect(await readFile(path.join(root, "package.json"), "utf8")).toContain("old-dep");
  });
});
