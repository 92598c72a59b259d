/**
 * `kill -9` at every step of a `link` and an `unlink` written by hand (src/plugins/direct-edit.ts:
 * no staging copy, the link itself journaled): the next command recovers exactly the old or the
 * new state (the linked folder, which is part of the snapshot, never changes), as crash.test.ts
 * requires of the reify path.
 */
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { publishFixtures, toolSource, type FixtureNames } from "../integration/plugins-fixtures.js";
import { collectOutput, killHard, lockHolderAlive, makeFixedWorld, snapshotDiff, snapshotState, stateProblems, waitForFile, type FixedWorld } from "./crash-helpers.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: FixtureNames;
beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  n = await publishFixtures(reg, `cd${Date.now().toString(36)}`);
}, 240_000);
afterAll(async () => {
  await reg?.dispose();
});

async function ok(w: FixedWorld, args: string[]): Promise<string> {
  const r = await w.cli(args);
  expect(r.code, `${args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(0);
  return `${r.stdout}${r.stderr}`;
}

const cases = [
  { name: "link", linkedBefore: false, args: (w: FixedWorld) => ["link", path.join(w.root, "dev")] },
  { name: "unlink", linkedBefore: true, args: () => ["unlink", "crash-direct-dev"] },
];

describe("kill -9 at every step of a direct link and unlink", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s: the next command recovers exactly the old or the new state", async (_name, c) => {
    const w = await makeFixedWorld(reg, `xcsh-crash-direct-${c.name}-`);
    try {
      await ok(w, ["install", n.extra[0]!]);
      await w.write("dev/package.json", { name: "crash-direct-dev", version: "0.0.1", type: "module", xcsh: { tools: "./t.js" } });
      await w.write("dev/t.js", toolSource("crash_direct_dev"));
      if (c.linkedBefore) await ok(w, ["link", path.join(w.root, "dev")]);
      await w.saveTemplate("old");
      await w.restore("old");
      const oldState = await snapshotState(w);
      const log = path.join(w.scratch, "steps.log");
      const out = (await w.cli(c.args(w), { XCSH_TOOLS_TEST_STEP_LOG: log })).stdout;
      expect(out).toContain(c.name === "link" ? "Linked" : "Unlinked");
      const newState = await snapshotState(w);
      expect(snapshotDiff(oldState, newState).length).toBeGreaterThan(0);
      const steps = [...new Set((await readFile(log, "utf8")).split("\n").filter(Boolean).map((line) => line.slice(line.indexOf(" ") + 1)))];
      // The direct path: no staging copy, no reify.
      expect(steps).not.toContain("apply:copied");
      expect(steps).not.toContain("reify:start");
      const marked = steps.indexOf("commit:marked");
      expect(marked).toBeGreaterThan(0);
      for (const [index, step] of steps.entries()) {
        await w.restore("old");
        const marker = path.join(w.scratch, `paused-${index}`);
        await rm(marker, { force: true });
        const child = w.spawnCli(c.args(w), { XCSH_TOOLS_TEST_PAUSE: step, XCSH_TOOLS_TEST_PAUSE_FILE: marker });
        const output = collectOutput(child);
        await waitForFile(marker, child, step).catch((error: Error) => {
          throw new Error(`${error.message}\n${output.text()}`);
        });
        await killHard(child);
        const recovered = await w.cli(["list", "--json"]);
        expect(recovered.code, `${step}: ${recovered.stderr}`).toBe(0);
        const state = await snapshotState(w);
        const expected = index < marked ? oldState : newState;
        expect(snapshotDiff(state, expected), `kill at ${step}`).toEqual([]);
        expect(await stateProblems(w), `kill at ${step}: state files agree`).toEqual([]);
        expect(await lockHolderAlive(w)).toBe(false);
      }
    } finally {
      await w.cleanup();
    }
  }, 1_800_000);
});
