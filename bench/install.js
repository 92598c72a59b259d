#!/usr/bin/env node
/**
 * Benchmark: `xcsh-tools install` of 20 plugins versus `npm install` of the same 20 packages from
 * the same local Verdaccio, cold (empty npm cache) and warm (the cache the cold run filled), each
 * run in fresh temp folders, under every runtime of bench/lib/runtimes.js but Bun (npm's CLI is
 * run by the same runtime). Prints absolute times (median of RUNS; wall and CPU) and, side by
 * side, the ratios issue 44 judges an install by, as a user compares it:
 * - wall time against `npm install` of the same plugins followed by one `node` process that
 *   imports their tool modules once (bench/lib/import-installed.mjs: the guarantee of our module
 *   check, reached by hand), target <= 1.0x;
 * - the CLI's own process's CPU against `npm install`'s CPU, target <= 1.0x (from runs of their
 *   own in which every process reports its CPU, bench/lib/own-cpu.mjs);
 * - and, as before, wall / CPU against `npm install` alone.
 * The build is made as `npm run build` makes it, into node_modules/.cache (bench/lib/build.js);
 * `BENCH_SOURCE=<rev>` adds that revision, interleaved.
 *
 * Two shapes of plugins, side by side in one run:
 * - shared: every plugin depends on one shared library (21 packages; arborist meets that
 *   dependency once);
 * - own: every plugin also depends on a library of its own (41 packages), as plugins with
 *   dependencies of their own do.
 * `LATENCY_MS=40` (or a list, `0,40`) adds rows through a loopback proxy that holds each request
 * that long (bench/lib/delay-proxy.js): a registry some network distance away.
 *
 * Both sides fetch the same packuments and tarballs through the same cacache layout (we use npm's
 * own cache folder and libraries); we additionally validate every plugin (tools loaded in a child
 * process) and commit through the journal, which npm does not do. A last line per runtime and
 * shape splits the first build's CPU, cold and warm, by process (bench/lib/own-cpu.mjs, in runs of
 * their own): the CLI's own process against npm's, and the module checker it forks.
 *
 *   node bench/install.js
 *   RUNS=5 PLUGINS=20 SHAPES=shared,own LATENCY_MS=0,40 BENCH_RUNTIMES=node22,node24 node bench/install.js
 *   BENCH_SOURCE=HEAD~3 node bench/install.js
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { createJiti } from "jiti";
import { benchEnv, benchPublisher, median, SHAPE_NAMES, shapeDescription } from "./lib/bench-plugins.js";
import { buildAll, repo } from "./lib/build.js";
import { findRuntimes } from "./lib/runtimes.js";
import { timeProcessClocks } from "./lib/time.js";

const RUNS = Number(process.env.RUNS ?? 3);
const COUNT = Number(process.env.PLUGINS ?? 20);
const SHAPES = (process.env.SHAPES ?? SHAPE_NAMES.join(",")).split(",").filter(Boolean);
const LATENCIES = (process.env.LATENCY_MS ?? "0").split(",").map(Number);
if (LATENCIES.some((ms) => !Number.isFinite(ms) || ms < 0)) throw new Error(`bench: LATENCY_MS must be milliseconds, got ${process.env.LATENCY_MS}`);

const builds = buildAll("xcsh-tools-bench-install");
const runtimes = findRuntimes().filter((runtime) => runtime.id !== "bun");
// npm's own CLI, run by each runtime as `npm` would run it.
const IMPORTER = path.join(repo, "bench", "lib", "import-installed.mjs");
const npmCli = realpathSync(execFileSync(process.platform === "win32" ? "where" : "which", ["npm"], { encoding: "utf8" }).trim().split("\n")[0]);

const jiti = createJiti(import.meta.url);
const { startRegistry } = await jiti.import(path.join(repo, "test", "helpers", "registry.ts"));
const { startDelayProxy } = await import("./lib/delay-proxy.js");

const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-install-"));
const registry = await startRegistry();
try {
  const prefix = `bench${Date.now().toString(36)}`;
  const publishShape = await benchPublisher(registry, prefix, COUNT);
  const shapes = [];
  for (const shape of SHAPES) shapes.push({ shape, names: await publishShape(shape) });

  const baseEnv = benchEnv;
  const freshHome = (url) => {
    const home = mkdtempSync(path.join(work, "home-"));
    writeFileSync(path.join(home, ".npmrc"), `registry=${url}\n`);
    return home;
  };
  const time = timeProcessClocks;

  const npmRun = (runtime, url, names, cache, extraEnv = {}) => {
    const home = freshHome(url);
    const project = path.join(home, "project");
    mkdirSync(project);
    writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "bench", private: true, dependencies: {} }));
    const env = { ...baseEnv(home, cache), ...extraEnv };
    const npm = time(runtime.command, [npmCli, "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error", ...names], { cwd: project, env });
    // Then the hand-made check (not in `npm`'s own clocks): one process importing the tools once.
    if (extraEnv.NODE_OPTIONS) return npm;
    const check = time(runtime.command, [IMPORTER, project, ...names], { cwd: project, env });
    return { ...npm, checkWall: check.wall, checkCpu: check.cpu };
  };
  const oursRun = (build) => (runtime, url, names, cache, extraEnv = {}) => {
    const home = freshHome(url);
    return time(runtime.command, [build.bin, "install", ...names], { cwd: home, env: { ...baseEnv(home, cache), XCSH_HOME: path.join(home, ".xcsh"), ...build.env, ...extraEnv } });
  };
  /**
   * One run with every Node process reporting its own CPU (bench/lib/own-cpu.mjs): the whole
   * run's CPU, the top process's own (the script `fn` runs), and the rest, which is what it forked
   * and reaped (/usr/bin/time counts only reaped children: a lower bound). Kept apart from the
   * timed runs above, whose processes load no extra module.
   */
  const ownCpuFile = path.join(work, "own-cpu.jsonl");
  const ownCpuHook = pathToFileURL(path.join(repo, "bench", "lib", "own-cpu.mjs")).href;
  const splitRun = (fn, script, runtime, url, names, cache) => {
    rmSync(ownCpuFile, { force: true });
    const whole = fn(runtime, url, names, cache, { NODE_OPTIONS: `--import=${ownCpuHook}`, BENCH_OWN_CPU_FILE: ownCpuFile });
    const lines = readFileSync(ownCpuFile, "utf8").trim().split("\n").map((line) => JSON.parse(line));
    // The top process exits last: its line is the last of its script's.
    const own = lines.findLast((line) => realpathSync(line.script) === realpathSync(script))?.cpu;
    if (own === undefined || whole.cpu === undefined) return undefined;
    return { own, children: Math.max(0, whole.cpu - own) };
  };

  const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
  const npmVersion = execFileSync("npm", ["--version"], { encoding: "utf8" }).trim();
  console.log(`install of ${COUNT} plugins from a local Verdaccio, median of ${RUNS} (npm ${npmVersion}); ${builds.map((b) => b.label).join(" vs ")}; load average ${os.loadavg()[0].toFixed(1)}`);
  console.log("  (targets, cold and warm: wall <= 1.00x `npm install` + one `node` importing the same tools; the CLI's own process <= 1.00x npm install's CPU.\n   Also wall / cpu against npm install alone, the target before issue 44)");
  const sides = [["npm", npmRun], ...builds.map((build) => [build.label, oursRun(build)])];
  for (const latency of LATENCIES) {
    const proxy = latency > 0 ? await startDelayProxy(registry.url, latency) : undefined;
    try {
      const url = proxy ? proxy.url : registry.url;
      for (const { shape, names } of shapes) {
        const what = shapeDescription(shape, COUNT);
        console.log(`  plugins ${what}${latency > 0 ? `, ${latency} ms per request (loopback delay proxy)` : ""}`);
        for (const runtime of runtimes) {
          const results = Object.fromEntries(sides.map(([side]) => [side, { cold: [], warm: [] }]));
          for (let run = 0; run < RUNS; run++) {
            for (const [side, fn] of sides) {
              const cache = mkdtempSync(path.join(work, "cache-"));
              results[side].cold.push(fn(runtime, url, names, cache));
              results[side].warm.push(fn(runtime, url, names, cache));
            }
          }
          console.log(`    ${runtime.label}`);
          for (const phase of ["cold", "warm"]) {
            const clocks = (side) => ({ wall: median(results[side][phase].map((x) => x.wall)), cpu: median(results[side][phase].map((x) => x.cpu ?? 0)) });
            const npm = clocks("npm");
            // npm + the hand-made check, pair by pair (the same run's npm and import), then the median.
            const byHand = median(results.npm[phase].map((x) => x.wall + x.checkWall));
            const check = { wall: median(results.npm[phase].map((x) => x.checkWall)), cpu: median(results.npm[phase].map((x) => x.checkCpu ?? 0)) };
            const cpu = (x) => (x.cpu ? `, cpu ${fmt(x.cpu)}` : "");
            console.log(`      ${phase} cache: npm install ${fmt(npm.wall)}${cpu(npm)}; + node importing the tools ${fmt(check.wall)}${cpu(check)}; together ${fmt(byHand)}`);
            for (const build of builds) {
              const ours = clocks(build.label);
              const vsHand = ours.wall / byHand;
              const vsNpm = `${(ours.wall / npm.wall).toFixed(2)}x${npm.cpu ? ` / ${(ours.cpu / npm.cpu).toFixed(2)}x` : ""}`;
              console.log(`        ${build.label}: ${fmt(ours.wall)}${cpu(ours)}   wall vs npm + import ${vsHand.toFixed(2)}x${vsHand <= 1 ? "" : " over"}   (vs npm install alone ${vsNpm})`);
            }
          }
          // Where the first build's CPU goes, cold and warm: its own process and the module checker it forks.
          const split = { npm: { cold: [], warm: [] }, ours: { cold: [], warm: [] } };
          for (let run = 0; run < RUNS; run++) {
            for (const [side, fn, script] of [["npm", npmRun, npmCli], ["ours", oursRun(builds[0]), builds[0].bin]]) {
              const cache = mkdtempSync(path.join(work, "cache-"));
              for (const phase of ["cold", "warm"]) {
                const measured = splitRun(fn, script, runtime, url, names, cache);
                if (measured) split[side][phase].push(measured);
              }
            }
          }
          for (const phase of ["cold", "warm"]) {
            if (split.npm[phase].length === 0 || split.ours[phase].length === 0) continue;
            const npmOwn = median(split.npm[phase].map((x) => x.own));
            const ours = { own: median(split.ours[phase].map((x) => x.own)), children: median(split.ours[phase].map((x) => x.children)) };
            const own = ours.own / npmOwn;
            console.log(`      ${phase} cache, cpu by process: npm install ${fmt(npmOwn)}; ${builds[0].label}: the CLI's own process ${fmt(ours.own)} (${own.toFixed(2)}x${own <= 1 ? "" : " over"}), the processes it forks (the module checker), at least ${fmt(ours.children)} (${(ours.children / npmOwn).toFixed(2)}x)`);
          }
        }
      }
    } finally {
      await proxy?.close();
    }
  }
} finally {
  await registry.stop();
  rmSync(work, { recursive: true, force: true });
}
