#!/usr/bin/env node
/**
 * Benchmark of plugin seeds (issue 43, docs/design/fleets.md), both figures side by side in this
 * one run, medians of RUNS:
 *
 * 1. boot   200 TypeScript tools in 40 npm plugins held by a seed (XCSH_PLUGIN_SEED_DIR), the
 *           user's own plugins folder empty: `discoverAndLoadCustomTools` in a fresh process
 *           (first boot after `refreshBootIndex`, as an install leaves it, and warm boot) against
 *           the floor, an `import()` loop over the same tools pre-built as JavaScript
 *           (bench/lib/boot-child.js). Target: <= 1.0x the floor.
 * 2. restore  a locked set of PLUGINS (20) npm plugins: `xcsh-tools install --frozen --yes
 *           --offline` in a fresh home with an empty npm cache and the seed built from that lock
 *           (`xcsh-tools seed --from`; no network: --offline fails rather than fetch), against
 *           `npm ci` of a package.json + package-lock.json naming the same plugins from a warm
 *           npm cache, from the same local Verdaccio. Target: <= 0.5x npm ci. Also the same restore
 *           through the engine (a repeated --yes leaves the seed-satisfied fast path), for the pair.
 *
 * Wall and CPU (/usr/bin/time) per process. Every runtime of bench/lib/runtimes.js but Bun (npm's
 * CLI runs under the same runtime as ours), `BENCH_RUNTIMES=node22,node24` to choose; the seed is
 * built once per build (under the Node running this script, as an image build would) and restored
 * under each runtime. `BENCH_SOURCE=main` adds main's build, each build restoring from the seed it
 * built, interleaved in the same loop. `PARTS=restore` (or `boot`) runs one part only; `BENCH_KEEP=1`
 * keeps the homes and seeds (the registry stops: profile with --offline from a seed).
 *
 *   node bench/seed.js
 *   RUNS=5 PLUGINS=20 SHAPES=shared node bench/seed.js
 *   RUNS=3 SHAPES=shared PARTS=restore BENCH_RUNTIMES=node,node22,node24 BENCH_SOURCE=main node bench/seed.js
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createJiti } from "jiti";
import { benchEnv, benchPublisher, median, SHAPE_NAMES, shapeDescription } from "./lib/bench-plugins.js";
import { buildAll, repo } from "./lib/build.js";
import { findRuntimes } from "./lib/runtimes.js";
import { writeBenchFixture } from "./lib/fixtures.js";
import { timeProcessClocks } from "./lib/time.js";

const RUNS = Number(process.env.RUNS ?? 5);
const COUNT = Number(process.env.PLUGINS ?? 20);
const SHAPES = (process.env.SHAPES ?? SHAPE_NAMES.join(",")).split(",").filter(Boolean);
const CHILD = path.join(repo, "bench", "lib", "boot-child.js");

const PARTS = (process.env.PARTS ?? "boot,restore").split(",");
const builds = buildAll("xcsh-tools-bench-seed");
const built = builds[0];
const runtimes = findRuntimes().filter((runtime) => runtime.id !== "bun");
const jiti = createJiti(import.meta.url);
const { startRegistry } = await jiti.import(path.join(repo, "test", "helpers", "registry.ts"));
const { seedTreeHash } = await jiti.import(path.join(repo, "src", "teamset", "seed.ts"));
const npmCli = realpathSync(execFileSync("which", ["npm"], { encoding: "utf8" }).trim().split("\n")[0]);
const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-seed-"));
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;
const load = () => os.loadavg()[0].toFixed(1);

/** One boot in a fresh process (bench/lib/boot-child.js): its clocks. */
function boot(job, fx, runtime) {
  const r = spawnSync(runtime.command, [CHILD, JSON.stringify(job)], { cwd: fx.cwd, env: { PATH: process.env.PATH, HOME: fx.home, NO_COLOR: "1" }, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`bench: ${job.mode} boot failed (${r.status}):\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

/** The bench fixture's 200 tools moved into a seed: its plugins folder becomes `<seed>/plugins`, the user's is empty. */
async function seededFixture() {
  const fx = writeBenchFixture(mkdtempSync(path.join(work, "fx-")), { plugins: 40, toolsPerPlugin: 5 });
  const seed = path.join(fx.root, "seed");
  mkdirSync(seed);
  renameSync(path.join(fx.xcshHome, "plugins"), path.join(seed, "plugins"));
  const names = Object.keys(JSON.parse(readFileSync(path.join(seed, "plugins", "package.json"), "utf8")).dependencies);
  const plugins = {};
  for (const name of names) plugins[name] = { version: "1.0.0", integrity: "sha512-bench", tree: await seedTreeHash(path.join(seed, "plugins", "node_modules", name)) };
  writeFileSync(path.join(seed, "xcsh-seed.json"), `${JSON.stringify({ seedFormat: 1, generator: "bench", from: { kind: "specs", specs: names }, plugins }, null, 2)}\n`);
  return { ...fx, seed };
}

const registry = await startRegistry();
try {
  console.log(`seed benchmarks: ${built.label}, ${os.cpus().length} cores, load average ${load()} (the machine is shared: read the ratios), median of ${RUNS}`);

  // 1. boot from a seed
  for (const runtime of PARTS.includes("boot") ? runtimes : []) {
  const fx = await seededFixture();
  const env = { XCSH_PLUGIN_SEED_DIR: fx.seed };
  const oursJob = { mode: "ours", library: built.library, cwd: fx.cwd, home: fx.home, xcshHome: fx.xcshHome, env, expect: fx.tsFiles.length };
  const samples = { first: [], warm: [], floor: [] };
  for (let run = 0; run < RUNS; run++) {
    rmSync(path.join(fx.xcshHome), { recursive: true, force: true });
    if (built.bootModule) boot({ mode: "refresh", bootModule: built.bootModule, home: fx.home, xcshHome: fx.xcshHome, cwd: fx.cwd, env, expect: 0 }, fx, runtime);
    samples.first.push(boot(oursJob, fx, runtime));
    samples.warm.push(boot(oursJob, fx, runtime));
    samples.floor.push(boot({ mode: "floor", files: fx.jsFiles, cwd: fx.cwd, expect: fx.jsFiles.length }, fx, runtime));
  }
  console.log(`\n1. boot (${runtime.label}): ${fx.tsFiles.length} TypeScript tools in 40 npm plugins from a seed, discoverAndLoadCustomTools vs the floor (target <= 1.00x)`);
  for (const [clock, label] of [["total", "whole boot"], ["cpuTotal", "whole, cpu"], ["call", "the call"], ["cpuCall", "call, cpu"]]) {
    const m = Object.fromEntries(Object.entries(samples).map(([phase, xs]) => [phase, median(xs.map((x) => x[clock]))]));
    console.log(`   ${label.padEnd(11)} floor ${fmt(m.floor).padStart(7)}   first boot ${fmt(m.first).padStart(7)} ${ratio(m.first, m.floor)}   warm boot ${fmt(m.warm).padStart(7)} ${ratio(m.warm, m.floor)}`);
  }
  }

  // 2. restore from a seed vs npm ci from a warm cache
  if (PARTS.includes("restore")) {
  console.log(`\n2. restore: ${COUNT} locked npm plugins, install --frozen --yes --offline from a seed (empty npm cache) vs npm ci from a warm cache (target <= 0.50x)`);
  const prefix = `seed${Date.now().toString(36)}`;
  const publishShape = await benchPublisher(registry, prefix, COUNT);
  const freshHome = () => {
    const home = mkdtempSync(path.join(work, "home-"));
    writeFileSync(path.join(home, ".npmrc"), `registry=${registry.url}\n`);
    return home;
  };
  const project = (home, files) => {
    const dir = path.join(home, "project");
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), text);
    }
    return dir;
  };
  const ourEnv = (home, cache, extra = {}) => ({ ...benchEnv(home, cache), XCSH_HOME: path.join(home, ".xcsh"), ...extra });
  const ours = (build, home, dir, args, extra) => {
    const r = spawnSync(process.execPath, [build.bin, ...args], { cwd: dir, env: ourEnv(home, path.join(home, ".npm"), extra), encoding: "utf8" });
    if (r.status !== 0) throw new Error(`bench: xcsh-tools ${args.join(" ")} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  };
  for (const shape of SHAPES) {
    const names = await publishShape(shape);
    const npmFiles = { "package.json": `${JSON.stringify({ name: "bench", private: true, dependencies: Object.fromEntries(names.map((n) => [n, "^1.0.0"])) }, null, 2)}\n` };
    const teamFiles = { "xcsh-team.json": `${JSON.stringify({ version: 1, plugins: Object.fromEntries(names.map((n) => [n, { spec: "^1.0.0" }])) }, null, 2)}\n`, ".xcsh/.keep": "" };
    {
      const home = freshHome();
      const dir = project(home, npmFiles);
      execFileSync(process.execPath, [npmCli, "install", "--package-lock-only", "--ignore-scripts", "--loglevel=error"], { cwd: dir, env: benchEnv(home, path.join(home, ".npm")) });
      npmFiles["package-lock.json"] = readFileSync(path.join(dir, "package-lock.json"), "utf8");
    }
    {
      // The image build: lock the set (once, so every build seeds the same lock), then each build seeds it.
      const home = freshHome();
      const dir = project(home, teamFiles);
      ours(built, home, dir, ["trust"]);
      ours(built, home, dir, ["install", "--yes"]);
      teamFiles["xcsh-team.lock.json"] = readFileSync(path.join(dir, "xcsh-team.lock.json"), "utf8");
    }
    const seeds = builds.map((build, i) => {
      const seed = path.join(work, `seed-${shape}-${i}`);
      const home = freshHome();
      const dir = project(home, teamFiles);
      ours(build, home, dir, ["trust"]);
      ours(build, home, dir, ["seed", seed, "--from", ".", "--yes"]);
      return seed;
    });
    console.log(`   plugins ${shapeDescription(shape, COUNT)}`);
    for (const runtime of runtimes) {
      const warmCache = mkdtempSync(path.join(work, "cache-"));
      execFileSync(runtime.command, [npmCli, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: project(freshHome(), npmFiles), env: benchEnv(freshHome(), warmCache) });
      const npmCi = [];
      const fromSeed = builds.map(() => []);
      const viaEngine = builds.map(() => []);
      /** One restore from build `i`'s seed in a fresh trusted home: `extra` args after the restore's own. */
      const restore = (i, extra) => {
        const home = freshHome();
        const dir = project(home, teamFiles);
        ours(builds[i], home, dir, ["trust"]);
        return timeProcessClocks(runtime.command, [builds[i].bin, "install", "--frozen", "--yes", "--offline", ...extra], { cwd: dir, env: ourEnv(home, mkdtempSync(path.join(work, "empty-cache-")), { XCSH_PLUGIN_SEED_DIR: seeds[i] }) });
      };
      for (let run = 0; run < RUNS; run++) {
        const npmHome = freshHome();
        npmCi.push(timeProcessClocks(runtime.command, [npmCli, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: project(npmHome, npmFiles), env: benchEnv(npmHome, warmCache) }));
        builds.forEach((_, i) => {
          fromSeed[i].push(restore(i, []));
          // The same restore through the engine: a repeated --yes is commander's to read, so the fast paths leave it (teamset/fast-seed.ts).
          viaEngine[i].push(restore(i, ["--yes"]));
        });
      }
      const clocks = (xs) => ({ wall: median(xs.map((x) => x.wall)), cpu: xs[0].cpu === undefined ? undefined : median(xs.map((x) => x.cpu)) });
      const npm = clocks(npmCi);
      const cpu = (x) => (x.cpu === undefined ? "" : `, cpu ${fmt(x.cpu)}`);
      const against = (x) => `${ratio(x.wall, npm.wall)}${npm.cpu && x.cpu ? ` / cpu ${ratio(x.cpu, npm.cpu)}` : ""}`;
      console.log(`     ${runtime.label}: npm ci (warm cache) ${fmt(npm.wall)}${cpu(npm)}`);
      builds.forEach((build, i) => {
        const seeded = clocks(fromSeed[i]);
        const engine = clocks(viaEngine[i]);
        console.log(`       ${build.label}: install --offline from the seed ${fmt(seeded.wall)}${cpu(seeded)}   ${against(seeded)}${seeded.wall / npm.wall <= 0.5 ? "" : " over"}   through the restore engine ${fmt(engine.wall)}${cpu(engine)}   ${against(engine)}`);
      });
    }
  }
  }
  console.log(`\n  (load average at the end: ${load()})`);
} finally {
  await registry.stop();
  // BENCH_KEEP=1: the homes, project and seeds stay, to profile a command by hand.
  if (process.env.BENCH_KEEP) console.log(`(kept ${work})`);
  else rmSync(work, { recursive: true, force: true });
}
