/**
 * Concurrency suite: 8 CLI processes changing one world at once lose nothing and tear nothing.
 *
 * The world (saved once as a template, restored each round): a plugin with settings, two plain
 * plugins, a plugin folder to link, and a git marketplace whose remote has moved on since it was
 * added. Each round starts, in a seeded order with seeded sub-50 ms staggers, all at once:
 *
 *     install A, install B, install C        three new npm plugins (one transaction each)
 *     disable P, enable P                    two writers of one flag: the last to commit wins
 *     config set S limit <n>                 a setting in the runtime lock
 *     marketplace update gm                  a new catalog from the git remote
 *     link ./dev                             a linked plugin
 *
 * with a lock wait long enough that every one waits its turn (none may fail). Afterwards every
 * effect is there: each plugin in package.json, the npm lockfile, the runtime lock, our record
 * and node_modules; P's enabled flag is that of whichever of enable/disable committed last (the
 * order of their `mutation:committed` lines in one shared step log, appended by the processes
 * themselves); the setting; the marketplace's new catalog; the state files agree and doctor
 * reports no error. While the round runs, a reader polls every JSON state file and must never
 * see one that does not parse or is missing (state files are replaced by atomic renames).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { isolatedGitEnv, makeGitRemote } from "../helpers/git-remote.js";
import { catalog, catalogPath, pluginFiles } from "../helpers/marketplace-fixtures.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { publishStateFixtures, toolSource, type StateFixtureNames } from "../integration/plugins-fixtures.js";
import {
  collectOutput,
  doctorProblems,
  makeFixedWorld,
  seededRandom,
  shuffled,
  stateProblems,
  suiteSeed,
  type FixedWorld,
} from "./crash-helpers.js";

const SEED = suiteSeed(8);
const ROUNDS = 3;

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: StateFixtureNames;
let extras: string[];
let prefix: string;
let w: FixedWorld;
let rounds = 0;
let processes = 0;

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  prefix = `cc${Date.now().toString(36)}`;
  n = await publishStateFixtures(reg, prefix);
  extras = [];
  for (const i of [1, 2, 3, 4]) {
    const name = `${prefix}-new${i}`;
    await reg.publish({ name, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(name.replace(/[^a-zA-Z0-9_]/g, "_")) } });
    extras.push(name);
  }
  w = await makeFixedWorld(reg, "xcsh-concurrency-");
  const ok = async (args: string[]) => {
    const r = await w.cli(args);
    expect(r.code, `${args.join(" ")}\n${r.stdout}${r.stderr}`).toBe(0);
  };
  // n.plain is the plugin enable and disable fight over.
  await ok(["install", `${n.state}@1.0.0`, n.plain, extras[3]!]);
  await w.write("dev/package.json", { name: `${prefix}-dev`, version: "0.0.1", type: "module", xcsh: { tools: "./t.js" } });
  await w.write("dev/t.js", toolSource(`${prefix}_dev`.replace(/[^a-zA-Z0-9_]/g, "_")));
  const gitEnv = isolatedGitEnv(w.home);
  const remote = await makeGitRemote(w.root, "gm", { [catalogPath()]: catalog("gm", [{ name: "hello", source: "./plugins/hello", version: "1.0.0" }]), ...pluginFiles("plugins/hello", "hello", ["hello_tool"]) }, gitEnv);
  await ok(["marketplace", "add", remote.url]);
  await remote.commit({ [catalogPath()]: catalog("gm", [{ name: "hello", source: "./plugins/hello", version: "2.0.0" }]) }, "hello 2.0.0");
  await w.saveTemplate("start");
}, 300_000);
afterAll(async () => {
  await reg?.dispose();
  await w?.cleanup();
  console.log(`concurrency suite: ${rounds} rounds of 8 processes (${processes} processes), seed ${SEED}`);
});

interface Run {
  label: string;
  args: string[];
}

interface Finished {
  label: string;
  pid: number;
  code: number | null;
  output: string;
}

function start(run: Run, log: string): Promise<Finished> {
  const child = w.spawnCli(run.args, { XCSH_TOOLS_LOCK_WAIT_MS: "600000", XCSH_TOOLS_TEST_STEP_LOG: log });
  const output = collectOutput(child);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => resolve({ label: run.label, pid: child.pid!, code, output: output.text() }));
  });
}

/** JSON state files that exist before and after a round: each must always parse. */
function watchedFiles(): string[] {
  return [
    path.join(w.plugins, "package.json"),
    path.join(w.plugins, "package-lock.json"),
    path.join(w.plugins, "xcsh-plugins.lock.json"),
    path.join(w.ours, "installs.json"),
    path.join(w.xcshHome, "marketplaces.json"),
  ];
}

/** Poll the state files until `stop` resolves; returns every torn or missing read seen. */
async function watchForTornFiles(stop: Promise<unknown>): Promise<{ reads: number; torn: string[] }> {
  let done = false;
  void stop.finally(() => (done = true));
  const torn: string[] = [];
  let reads = 0;
  while (!done) {
    for (const file of watchedFiles()) {
      try {
        JSON.parse(await readFile(file, "utf8"));
      } catch (error) {
        torn.push(`${path.relative(w.root, file)}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      reads += 1;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  return { reads, torn };
}

describe("8 processes mutating one world at once", () => {
  it.each(Array.from({ length: ROUNDS }, (_, i) => i + 1))("round %i: every effect is present and no file is torn", async (round) => {
    const random = seededRandom(SEED * 1000 + round);
    await w.restore("start");
    const limit = 11 + Math.floor(random() * 80);
    const [a, b, c] = extras;
    const runs: Run[] = [
      { label: "install A", args: ["install", a!] },
      { label: "install B", args: ["install", b!] },
      { label: "install C", args: ["install", c!] },
      { label: "disable", args: ["disable", n.plain] },
      { label: "enable", args: ["enable", n.plain] },
      { label: "config", args: ["config", "set", n.state, "limit", String(limit)] },
      { label: "marketplace update", args: ["marketplace", "update", "gm"] },
      { label: "link", args: ["link", path.join(w.root, "dev")] },
    ];
    // In even rounds "install C" also names a plugin that is already installed (a NOOP or a
    // reinstall next to an ADD, in one transaction).
    if (round % 2 === 0) runs[2] = { label: "install C", args: ["install", extras[3]!, c!] };
    const order = shuffled(runs, random);
    const log = path.join(w.scratch, `steps-${round}.log`);
    const pending: Promise<Finished>[] = [];
    for (const run of order) {
      pending.push(start(run, log));
      await new Promise((r) => setTimeout(r, Math.floor(random() * 50)));
    }
    const all = Promise.all(pending);
    const [finished, watch] = await Promise.all([all, watchForTornFiles(all)]);
    rounds += 1;
    processes += finished.length;
    for (const f of finished) expect(f.code, `${f.label} (order ${order.map((r) => r.label).join(", ")})\n${f.output}`).toBe(0);
    expect(watch.torn, `torn or missing reads among ${watch.reads}`).toEqual([]);
    expect(watch.reads).toBeGreaterThan(0);

    // Every plugin is recorded everywhere.
    const installed = [n.state, n.plain, extras[3]!, a!, b!, c!, `${prefix}-dev`].sort();
    const pkg = await w.readJson("package.json");
    expect(Object.keys(pkg.dependencies).sort()).toEqual(installed);
    expect(pkg.dependencies[`${prefix}-dev`]).toBe(`file:${path.join(w.root, "dev")}`);
    const runtime = await w.readJson("xcsh-plugins.lock.json");
    expect(Object.keys(runtime.plugins).sort()).toEqual(installed);
    expect(Object.keys((await w.readJson(".xcsh-tools/installs.json")).plugins).sort()).toEqual(installed);
    const lock = await w.readJson("package-lock.json");
    for (const name of installed) expect(lock.packages[`node_modules/${name}`], name).toBeDefined();
    for (const name of [a!, b!, c!]) expect(lock.packages[`node_modules/${name}`]).toMatchObject({ version: "1.0.0" });

    // The enabled flag of the last writer; the setting; the others untouched.
    const committed = (await readFile(log, "utf8"))
      .split("\n")
      .filter((line) => line.endsWith(" mutation:committed"))
      .map((line) => Number(line.split(" ")[0]));
    const pidOf = (label: string) => finished.find((f) => f.label === label)!.pid;
    const lastEnable = committed.lastIndexOf(pidOf("enable"));
    const lastDisable = committed.lastIndexOf(pidOf("disable"));
    expect(lastDisable, "disable always changes something, so it commits").toBeGreaterThanOrEqual(0);
    expect(runtime.plugins[n.plain].enabled, `commit order ${committed.join(" ")}`).toBe(lastEnable > lastDisable);
    expect(runtime.settings[n.state]).toEqual({ limit });
    for (const name of [n.state, extras[3]!, a!, b!, c!, `${prefix}-dev`]) expect(runtime.plugins[name].enabled, name).toBe(true);

    // The marketplace has the remote's new catalog.
    const discovered = await w.cli(["marketplace", "discover", "gm", "--json"]);
    expect(discovered.code, discovered.stderr).toBe(0);
    expect(discovered.json().plugins).toMatchObject([{ id: "hello@gm", version: "2.0.0" }]);

    expect(await stateProblems(w)).toEqual([]);
    expect(await doctorProblems(w)).toEqual([]);
  }, 600_000);
});
