/**
 * Crash suite: every mutation survives `kill -9` anywhere.
 *
 * For each operation — npm install of a plugin with a dependency, update to a newer version,
 * uninstall, link of a local folder, marketplace install `name@mkt` — the world is built once in
 * its "old state" (real CLI commands) and saved as a template; a reference run gives the "new
 * state" and the list of named steps the operation goes through (XCSH_TOOLS_TEST_STEP_LOG). Then,
 * from a fresh copy of the old state each time:
 *
 *   - step kills: the CLI pauses at step k (XCSH_TOOLS_TEST_PAUSE) and is `kill -9`ed there, for
 *     EVERY step of the operation;
 *   - time kills: the CLI is `kill -9`ed after a seeded random delay in [0, T], T the measured
 *     duration of the reference run (these land inside steps: mid-copy, mid-reify, mid-rename).
 *
 * After each kill, `list --json` (any command) must succeed and recover, and then the whole
 * world must be exactly the old state or exactly the new one (crash-helpers.ts says what the
 * snapshot leaves out and why) — for a step kill, exactly the old one before the commit record
 * and the new one from it on — with package.json, the npm lockfile, node_modules, the runtime
 * lock, our install record, the marketplace registries and caches agreeing with each other,
 * an empty journal and no live lock holder; and `doctor` must report no error and a boot index
 * that is fresh (it agrees with the recovered state).
 *
 * Seeded (`XCSH_TOOLS_RELIABILITY_SEED`, printed) so a failing delay reproduces. Cases run two at
 * a time (one world per operation, at a fixed path: state files hold absolute paths).
 */
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { publishFixtures, toolSource, type FixtureNames } from "../integration/plugins-fixtures.js";
import {
  collectOutput,
  doctorProblems,
  doctorWarnings,
  killHard,
  limiter,
  lockHolderAlive,
  makeFixedWorld,
  seededRandom,
  snapshotDiff,
  snapshotState,
  stateProblems,
  suiteSeed,
  waitForFile,
  type FixedWorld,
} from "./crash-helpers.js";

const SEED = suiteSeed(20261202);
/** Points per operation, at least: every step, then time kills up to this many (and at least MIN_TIME_KILLS). */
const MIN_POINTS = 22;
const MIN_TIME_KILLS = 4;

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: FixtureNames;
let prefix: string;
const runCase = limiter(2);
const counts: Record<string, { steps: number; time: number; old: number; new: number }> = {};

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  prefix = `cr${Date.now().toString(36)}`;
  n = await publishFixtures(reg, prefix);
}, 240_000);
afterAll(async () => {
  await reg?.dispose();
  const total = Object.values(counts).reduce((s, c) => s + c.steps + c.time, 0);
  const lines = Object.entries(counts).map(([op, c]) => `  ${op}: ${c.steps + c.time} kills (${c.steps} at steps, ${c.time} timed) → ${c.old} old, ${c.new} new`);
  console.log(`crash suite: ${total} cases, seed ${SEED}\n${lines.join("\n")}`);
});

async function ok(w: FixedWorld, args: string[]): Promise<void> {
  const r = await w.cli(args);
  expect(r.code, `${args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(0);
}

/** The world every operation starts from: one npm plugin, a folder marketplace, a plugin folder to link. */
async function baseWorld(w: FixedWorld): Promise<void> {
  await ok(w, ["install", n.extra[0]!]);
  await w.write("dev/package.json", { name: `${prefix}-dev`, version: "0.0.1", type: "module", dependencies: { [n.dep]: "^1.0.0" }, xcsh: { tools: "./t.js" } });
  await w.write("dev/t.js", toolSource(`${prefix}_dev`));
  await writeFolderMarketplace(path.join(w.root, "market"), { name: "mk", tools: ["hello_tool"], entry: { version: "1.0.0" } });
  await ok(w, ["marketplace", "add", path.join(w.root, "market")]);
}

interface Operation {
  name: string;
  /** Extra setup after baseWorld (the old state). */
  setup?: (w: FixedWorld) => Promise<void>;
  args: (w: FixedWorld) => string[];
}

const operations: Operation[] = [
  { name: "install", args: () => ["install", `${n.basic}@1.0.0`] },
  { name: "update", setup: (w) => ok(w, ["install", `${n.basic}@1.0.0`]), args: () => ["update", n.basic, "--latest"] },
  { name: "uninstall", setup: (w) => ok(w, ["install", `${n.basic}@1.0.0`]), args: () => ["uninstall", n.basic] },
  { name: "link", args: (w) => ["link", path.join(w.root, "dev")] },
  { name: "marketplace install", args: () => ["install", "hello@mk"] },
];

type Point = { kind: "step"; step: string; index: number } | { kind: "time"; delayMs: number };

describe("kill -9 at every step and at random times", () => {
  it.concurrent.each(operations.map((op) => [op.name, op] as const))("%s: the next command recovers exactly the old or the new state", async (_name, op) => {
    const w = await makeFixedWorld(reg, `xcsh-crash-${op.name.replace(/ /g, "-")}-`);
    try {
      await runCase(async () => {
        await baseWorld(w);
        await op.setup?.(w);
      });
      await w.saveTemplate("old");
      await w.restore("old");
      const oldState = await snapshotState(w);
      expect(await stateProblems(w), "old state").toEqual([]);
      const allowed = new Set(await doctorWarnings(w));
      expect(await doctorProblems(w, allowed), "doctor in the old state").toEqual([]);
      expect(await snapshotState(w), "doctor writes nothing").toEqual(oldState);

      // The reference run: the new state, the steps, the duration.
      const log = path.join(w.scratch, "steps.log");
      const args = op.args(w);
      let durationMs = 0;
      await runCase(async () => {
        const started = Date.now();
        const r = await w.cli(args, { XCSH_TOOLS_TEST_STEP_LOG: log });
        durationMs = Date.now() - started;
        expect(r.code, `${args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(0);
      });
      const newState = await snapshotState(w);
      expect(await stateProblems(w), "new state").toEqual([]);
      for (const id of await doctorWarnings(w)) allowed.add(id);
      expect(await doctorProblems(w, allowed), "doctor in the new state").toEqual([]);
      expect(snapshotDiff(oldState, newState).length, "the operation changes something").toBeGreaterThan(0);
      // Lines are "<pid> <step>".
      const steps = [...new Set((await readFile(log, "utf8")).split("\n").filter(Boolean).map((line) => line.slice(line.indexOf(" ") + 1)))];
      const marked = steps.indexOf("commit:marked");
      expect(marked, `steps: ${steps.join(" ")}`).toBeGreaterThan(0);
      expect(steps).toContain("mutation:committed");

      const random = seededRandom(SEED ^ hash(op.name));
      const points: Point[] = steps.map((step, index) => ({ kind: "step", step, index }));
      const timeKills = Math.max(MIN_TIME_KILLS, MIN_POINTS - steps.length);
      for (let i = 0; i < timeKills; i++) points.push({ kind: "time", delayMs: Math.round(random() * durationMs) });
      const tally = { steps: 0, time: 0, old: 0, new: 0 };
      counts[op.name] = tally;

      for (const [i, point] of points.entries()) {
        const what = point.kind === "step" ? `kill at step ${point.step}` : `kill after ${point.delayMs} ms (of ${durationMs})`;
        const outcome = await runCase(() => crashCase(w, args, point, i, what));
        const state = await snapshotState(w);
        const isOld = snapshotDiff(state, oldState).length === 0;
        const isNew = snapshotDiff(state, newState).length === 0;
        if (!isOld && !isNew) {
          expect.fail(`${op.name}, ${what}: the state is neither the old nor the new one.\nDiffers from old: ${snapshotDiff(state, oldState).join(", ")}\nDiffers from new: ${snapshotDiff(state, newState).join(", ")}\n${outcome}`);
        }
        if (point.kind === "step") {
          expect(isOld ? "old" : "new", `${op.name}, ${what}`).toBe(point.index < marked ? "old" : "new");
          tally.steps += 1;
        } else {
          tally.time += 1;
        }
        if (isOld) tally.old += 1;
        else tally.new += 1;
        expect(await stateProblems(w), `${op.name}, ${what}: state files agree`).toEqual([]);
        expect(await lockHolderAlive(w), `${op.name}, ${what}: no live lock holder`).toBe(false);
        expect(await runCase(() => doctorProblems(w, allowed)), `${op.name}, ${what}: doctor`).toEqual([]);
      }
      expect(tally.steps + tally.time).toBeGreaterThanOrEqual(MIN_POINTS);
    } finally {
      await w.cleanup();
    }
  }, 2_400_000);
});

/** One kill and the recovery; returns the outputs (for failure messages). */
async function crashCase(w: FixedWorld, args: string[], point: Point, i: number, what: string): Promise<string> {
  await w.restore("old");
  const marker = path.join(w.scratch, `paused-${i}`);
  await rm(marker, { force: true });
  const env = point.kind === "step" ? { XCSH_TOOLS_TEST_PAUSE: point.step, XCSH_TOOLS_TEST_PAUSE_FILE: marker } : {};
  const child = w.spawnCli(args, env);
  const output = collectOutput(child);
  if (point.kind === "step") {
    await waitForFile(marker, child, what).catch((error: Error) => {
      throw new Error(`${error.message}\n--- its output\n${output.text()}`);
    });
  } else {
    await new Promise((r) => setTimeout(r, point.delayMs));
  }
  await killHard(child);
  const recovered = await w.cli(["list", "--json"]);
  expect(recovered.code, `${what}: list after the kill\n${recovered.stdout}${recovered.stderr}\n--- killed command\n${output.text()}`).toBe(0);
  expect(() => recovered.json(), `${what}: list --json prints one JSON document`).not.toThrow();
  return `--- killed command\n${output.text()}\n--- list\n${recovered.stderr}`;
}

function hash(text: string): number {
  let h = 2166136261;
  for (const c of text) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
  return h >>> 0;
}
