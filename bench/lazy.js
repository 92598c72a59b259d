#!/usr/bin/env node
/**
 * Lazy tools (docs/lazy-tools.md): a host that asks for lazy tools boots in a time that does not
 * grow with the tools installed. For 10, 200 and 1,000 tools (npm plugins of 5 TypeScript tools
 * each, every plugin declaring `staticTools`, the boot index as an install leaves it), each boot
 * in a fresh process, paired run by run with the JS import floor of the same tools: `Promise.all`
 * of `import()` of every tool pre-built as JavaScript, then every factory (bench/lib/lazy-child.js).
 *
 * Targets (issue 44): lazy boot ≤ 0.2× the floor at 200 and 1,000 tools, and within 1.5× of the
 * lazy boot with 10 tools (a flat curve). Also shown: the first `execute` of a lazy tool (its
 * module's import and factory, paid once, at first use).
 *
 *   node bench/lazy.js
 *   RUNS=9 SIZES=10,200,1000 BENCH_RUNTIMES=node22,node24 node bench/lazy.js
 *   BENCH_SOURCE=main node bench/lazy.js    # also main's build, interleaved run by run (bench/lib/build.js)
 *
 * With baselines, every run boots each build in turn on the same fixture and index, and the
 * report adds, per baseline, the work tree's CPU over the baseline's, paired run by run, and each
 * build's whole boot over its own 10-tool boot, paired the same way.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildAll, repo } from "./lib/build.js";
import { writeBenchFixture } from "./lib/fixtures.js";
import { findRuntimes } from "./lib/runtimes.js";
import { median } from "./lib/time.js";

const RUNS = Number(process.env.RUNS ?? 7);
const SIZES = (process.env.SIZES ?? "10,200,1000").split(",").map(Number);
const TOOLS_PER_PLUGIN = 5;
const CHILD = path.join(repo, "bench", "lib", "lazy-child.js");
const CLOCKS = { call: "the call", total: "whole boot", cpuCall: "call, cpu", cpuTotal: "whole, cpu" };

const ms = (x) => `${x.toFixed(1)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;

function child(runtime, job, fx, build) {
  const env = { PATH: process.env.PATH, HOME: fx.home, XCSH_HOME: fx.xcshHome, NO_COLOR: "1", ...build?.env };
  const r = spawnSync(runtime.command, [CHILD, JSON.stringify(job)], { cwd: fx.cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`bench: ${job.mode} under ${runtime.label} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

/** The boot fixture (bench/lib/fixtures.js), every plugin declaring `staticTools`. */
function lazyFixture(work, tools) {
  const fx = writeBenchFixture(mkdtempSync(path.join(work, `fx${tools}-`)), { plugins: Math.ceil(tools / TOOLS_PER_PLUGIN), toolsPerPlugin: TOOLS_PER_PLUGIN });
  for (const file of new Set(fx.tsFiles.map((f) => path.join(path.dirname(path.dirname(f)), "package.json")))) {
    const pkg = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, `${JSON.stringify({ ...pkg, xcsh: { ...pkg.xcsh, staticTools: true } }, null, 2)}\n`);
  }
  return fx;
}

const builds = buildAll("xcsh-tools-bench-lazy");
const [built] = builds;
const runtimes = findRuntimes();
const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-lazy-"));
const load = () => os.loadavg()[0].toFixed(1);
console.log(`lazy tools: ${SIZES.join(", ")} tools, lazy boot vs the JS import floor (Promise.all of import() + factories), paired, median of ${RUNS}; ${os.cpus().length} cores, load average ${load()}`);
const results = {};
try {
  const fixtures = new Map(SIZES.map((n) => [n, lazyFixture(work, n)]));
  for (const runtime of runtimes) {
    const rows = new Map(SIZES.map((n) => [n, { lazy: [], floor: [], baselines: builds.slice(1).map(() => []) }]));
    for (const [n, fx] of fixtures) {
      rmSync(path.join(fx.xcshHome, "plugins", ".xcsh-tools"), { recursive: true, force: true });
      child(runtime, { mode: "refresh", bootModule: built.bootModule, home: fx.home, xcshHome: fx.xcshHome, cwd: fx.cwd, expect: n }, fx);
    }
    for (let run = 0; run < RUNS; run++) {
      for (const [n, fx] of fixtures) {
        const lazyJob = (build) => ({ mode: "lazy", library: build.library, home: fx.home, xcshHome: fx.xcshHome, cwd: fx.cwd, expect: n });
        // Which build goes first alternates by run: the second boot of the same index finds it in the page cache.
        const order = builds.map((_, i) => i);
        if (run % 2 === 1) order.reverse();
        for (const i of order) {
          const sample = child(runtime, lazyJob(builds[i]), fx, builds[i]);
          if (i === 0) rows.get(n).lazy.push(sample);
          else rows.get(n).baselines[i - 1].push(sample);
        }
        rows.get(n).floor.push(child(runtime, { mode: "floor", files: fx.jsFiles, cwd: fx.cwd, expect: n }, fx));
      }
    }
    const med = (list, clock) => median(list.map((sample) => sample[clock]));
    results[runtime.id] = Object.fromEntries([...rows].map(([n, row]) => [n, Object.fromEntries(["lazy", "floor"].map((kind) => [kind, Object.fromEntries([...Object.keys(CLOCKS), ...(kind === "lazy" ? ["firstUse"] : [])].map((c) => [c, med(row[kind], c)]))]))]));
    console.log(`  ${runtime.label}   (targets: lazy <= 0.20x the floor at 200 and 1000 tools; lazy(n) <= 1.50x lazy(${SIZES[0]}))`);
    for (const [clock, label] of Object.entries(CLOCKS)) {
      console.log(`    ${label}`);
      for (const n of SIZES) {
        const r = results[runtime.id][n];
        const paired = median(rows.get(n).lazy.map((sample, i) => sample[clock] / rows.get(n).floor[i][clock]));
        console.log(
          `      ${String(n).padStart(5)} tools: lazy ${ms(r.lazy[clock]).padStart(9)}  floor ${ms(r.floor[clock]).padStart(9)}  lazy/floor ${paired.toFixed(2)}x (paired)  lazy/lazy(${SIZES[0]}) ${ratio(r.lazy[clock], results[runtime.id][SIZES[0]].lazy[clock])}`,
        );
      }
    }
    console.log(`    first execute of a lazy tool (its import, once): ${SIZES.map((n) => `${n} tools ${ms(results[runtime.id][n].lazy.firstUse)}`).join(", ")}`);
    // Before the call, both children import the host's TypeBox; the lazy one the library too. The
    // TypeBox import alone, over the whole floor, bounds what any lazy boot's whole-process ratio can reach.
    const before = (sample) => sample.cpuTotal - sample.cpuCall;
    builds.slice(1).forEach((baseline, b) => {
      const pairedOf = (list, other, clock) => median(list.map((sample, i) => sample[clock] / other[i][clock]));
      console.log(`    ${built.label} / ${baseline.label}, cpu, paired: ${SIZES.map((n) => {
        const row = rows.get(n);
        return `${n} tools: call ${pairedOf(row.lazy, row.baselines[b], "cpuCall").toFixed(2)}x (${ms(med(row.baselines[b], "cpuCall"))} -> ${ms(med(row.lazy, "cpuCall"))}), whole ${pairedOf(row.lazy, row.baselines[b], "cpuTotal").toFixed(2)}x`;
      }).join("; ")}`);
      const curve = (list) => SIZES.slice(1).map((n) => `${n} tools ${pairedOf(list(n), list(SIZES[0]), "cpuTotal").toFixed(2)}x`).join(", ");
      console.log(`    whole boot, cpu, lazy(n) / lazy(${SIZES[0]}) paired per run: ${built.label} ${curve((n) => rows.get(n).lazy)}; ${baseline.label} ${curve((n) => rows.get(n).baselines[b])}`);
    });
    console.log(`    before the call, cpu (paired medians): ${SIZES.map((n) => {
      const row = rows.get(n);
      return `${n} tools: TypeBox ${ms(median(row.floor.map(before)))}, library ${ms(median(row.lazy.map((s, i) => before(s) - before(row.floor[i]))))}, TypeBox / floor ${median(row.floor.map((s) => before(s) / s.cpuTotal)).toFixed(2)}x`;
    }).join("; ")}`);
  }
  console.log(`\n(load average at the end: ${load()}; a busy machine moves the times, the paired ratios much less)`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
