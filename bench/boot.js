#!/usr/bin/env node
/**
 * Boot benchmarks (issue 7), every figure measured side by side in this one run, each boot in a
 * fresh child process, median of RUNS:
 *
 * 1. boot   two kinds of 200 tools (BENCH_KINDS=pi,seed):
 *           pi    40 npm plugins × 5 TypeScript tools that import TypeBox by bare name:
 *                 `discoverAndLoadCustomTools` (discovery, import, factories, checks) against the
 *                 floor, a loop that `import()`s the same 200 tools pre-built as JavaScript and
 *                 calls their factories; under Bun also against a sequential native `import()`
 *                 loop over the same .ts files.
 *           seed  200 plain modules in the user's tools folder, written as the seed contract
 *                 shows them (TypeBox from `api.typebox`, no import at all): against the floor
 *                 that `import()`s them all at once (`Promise.all`) and calls their factories —
 *                 the same .ts files where the runtime strips types, their .js copies on Node 20.
 *           Both floors also run with Node's compile cache on (`module.enableCompileCache` at the
 *           child's start, a cache of their own, warm after the first run: what any loader can
 *           do), and each boot is printed against that floor too; on Node the warm boot is also
 *           run in a host that turned the compile cache on at its start, as that floor's host did.
 *           First boot after install (the transpile cache and boot index as an install leaves
 *           them: `refreshBootIndex` when the build has it, else empty, run by the boot's own
 *           runtime; BENCH_INSTALLER=first: by the first runtime) and warm boot (the next start).
 * 2. scale  the same at 0, 10, 200 and 1000 tools: ms per tool and the marginal cost per tool
 *           between sizes (linear growth keeps it flat).
 * 3. query  `xcsh-tools tools --json` against `node -e 0` (whole processes), 200 tools installed.
 * 4. start  what every CLI process pays (the test suite spawns thousands): `xcsh-tools --version`
 *           and `list --json` (40 plugins installed) against `-e 0`, CPU per process, each sample
 *           a batch of START_BATCH processes (kernel ticks are 10 ms; a batch divides them).
 *
 * Times are in-process (from the child's first line to its last tool) for boots, and whole-process
 * wall time for the query. The sources are built as `npm run build` builds them, into
 * node_modules/.cache/xcsh-tools-bench (bench/lib/build.js), and the query runs the bin shim from
 * there. Each figure is printed with its ratio to the target's base: boot <= 1.0x the floor
 * (Bun: the native .ts loop), `tools --json` <= 2.5x `-e 0` (Bun: 3x).
 *
 *   node bench/boot.js
 *   RUNS=7 SCALE=10,200,1000 BENCH_ONLY=boot,scale,query node bench/boot.js
 *   BENCH_KINDS=seed BENCH_ONLY=boot node bench/boot.js (the seed-style tools alone)
 *   BENCH_SOURCE=HEAD~3 node bench/boot.js     (also a baseline commit, interleaved in the same run)
 *   BENCH_SOURCE_DIR=/tmp/x node bench/boot.js (build the sources in that folder, not the work tree)
 *   BENCH_RUNTIMES=node22,node24 node bench/boot.js (bench/lib/runtimes.js)
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildAll, repo } from "./lib/build.js";
import { writeBenchFixture, writeSeedFixture } from "./lib/fixtures.js";
import { findRuntimes } from "./lib/runtimes.js";
import { childrenCpuMs, timeProcessClocks } from "./lib/time.js";

const RUNS = Number(process.env.RUNS ?? 5);
const SCALE = (process.env.SCALE ?? "10,200,1000").split(",").map(Number);
const ONLY = new Set((process.env.BENCH_ONLY ?? "boot,scale,query,start").split(","));
const START_BATCH = Number(process.env.START_BATCH ?? 10);
const KINDS = (process.env.BENCH_KINDS ?? "pi,seed").split(",").filter(Boolean);
const TOOLS_PER_PLUGIN = 5;
const CHILD = path.join(repo, "bench", "lib", "boot-child.js");

// ---------------------------------------------------------------------------------------------
// Measuring.

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const ms = (x) => `${x.toFixed(0)} ms`;
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;

function childEnv(fx) {
  return { PATH: process.env.PATH, HOME: fx.home, XCSH_HOME: fx.xcshHome, NO_COLOR: "1" };
}

/** One boot in a fresh process; returns its clocks (`total`, `call`, `cpuTotal`, `cpuCall`, in ms). */
function boot(runtime, job, fx) {
  const r = spawnSync(runtime.command, [CHILD, JSON.stringify(job)], { cwd: fx.cwd, env: childEnv(fx), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`bench: ${job.mode} boot under ${runtime.label} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

/** A whole process: wall and CPU clocks (bench/lib/time.js). */
function wall(command, args, fx, check, env = {}) {
  const r = timeProcessClocks(command, args, { cwd: fx.cwd, env: { ...childEnv(fx), ...env } });
  check?.(r.stdout);
  return r;
}

function fixture(work, tools) {
  const root = mkdtempSync(path.join(work, `fx${tools}-`));
  return writeBenchFixture(root, { plugins: Math.ceil(tools / TOOLS_PER_PLUGIN), toolsPerPlugin: TOOLS_PER_PLUGIN });
}

function seedFixture(work, tools) {
  return writeSeedFixture(mkdtempSync(path.join(work, `seed${tools}-`)), { tools });
}

/** Whether `runtime` imports TypeScript itself (Bun, Node 22.18+), probed once per runtime. */
const strips = new Map();
function stripsTypes(runtime) {
  if (!strips.has(runtime.id)) {
    const r = spawnSync(runtime.command, ["-p", "Boolean(process.versions.bun || process.features.typescript)"], { encoding: "utf8" });
    strips.set(runtime.id, r.stdout.trim() === "true");
  }
  return strips.get(runtime.id);
}

/** Put the xcsh root in the state an install of the fixture leaves it in. */
function afterInstall(built, fx, installer) {
  rmSync(path.join(fx.xcshHome, "plugins", ".xcsh-tools"), { recursive: true, force: true });
  if (built.bootModule) boot(installer, { mode: "refresh", bootModule: built.bootModule, home: fx.home, xcshHome: fx.xcshHome, cwd: fx.cwd, expect: 0 }, fx);
}

const oursJob = (built, fx) => ({ mode: "ours", library: built.library, cwd: fx.cwd, home: fx.home, xcshHome: fx.xcshHome, expect: fx.tsFiles.length });
const loopJob = (mode, fx) => ({ mode, files: mode === "floor" ? fx.jsFiles : fx.tsFiles, cwd: fx.cwd, expect: fx.tsFiles.length });
/** The seed kind's floor: every module imported at once, the loader's own .ts files when the runtime can. */
const allJob = (runtime, fx) => ({ mode: "floor-all", files: stripsTypes(runtime) ? fx.tsFiles : fx.jsFiles, cwd: fx.cwd, expect: fx.tsFiles.length });

const CLOCKS = ["total", "cpuTotal", "call", "cpuCall"];
const ALL_CLOCKS = CLOCKS;

/**
 * For each build: first boot, warm boot; once per repetition the floor (and the native .ts loop
 * under Bun); every build and the floor interleaved per repetition. Medians per clock.
 */
function measureBoots(builds, runtime, fx, installer, runs, floorJob = loopJob("floor", fx)) {
  const samples = { floor: [], floorCached: [], native: [], ...Object.fromEntries(builds.map((_, i) => [`first${i}`, []]).concat(builds.map((_, i) => [`warm${i}`, []]))) };
  for (let run = 0; run < runs; run++) {
    builds.forEach((built, i) => {
      afterInstall(built, fx, installer);
      samples[`first${i}`].push(boot(runtime, oursJob(built, fx), fx));
      samples[`warm${i}`].push(boot(runtime, oursJob(built, fx), fx));
      // The cached floor's host turned Node's compile cache on at its start: the same host running our boot (warm).
      if (runtime.id !== "bun") (samples[`hostCached${i}`] ??= []).push(boot(runtime, { ...oursJob(built, fx), hostCompileCache: path.join(fx.home, `.host-compile-cache-${i}`) }, fx));
    });
    samples.floor.push(boot(runtime, floorJob, fx));
    // The same floor with Node's compile cache on (a cache of its own, warm after the first run): what any loader could also do.
    if (runtime.id !== "bun") samples.floorCached.push(boot(runtime, { ...floorJob, compileCache: path.join(fx.home, ".floor-compile-cache") }, fx));
    if (runtime.id === "bun" && floorJob.mode === "floor") samples.native.push(boot(runtime, loopJob("native", fx), fx));
  }
  const out = {};
  for (const [phase, list] of Object.entries(samples)) {
    if (list.length) out[phase] = Object.fromEntries(ALL_CLOCKS.map((clock) => [clock, median(list.map((sample) => sample[clock]))]));
  }
  return out;
}

const CLOCK_LABELS = { total: "whole boot", cpuTotal: "whole, cpu", call: "the call", cpuCall: "call, cpu" };

/** The target a boot is held to: the floor on Node, the native .ts loop on Bun (issue 32). */
const bootBase = (runtime, m) => (m.native ? "native" : "floor");

function printBoots(runtime, m, builds, kind) {
  console.log(`  ${kind} tools, ${runtime.label}   (target: first and warm boot <= 1.00x the ${m.native ? "native .ts loop" : "floor"})`);
  for (const clock of CLOCKS) {
    const base = bootBase(runtime, m);
    let line = `    ${CLOCK_LABELS[clock].padEnd(11)} floor ${ms(m.floor[clock]).padStart(8)}`;
    if (m.floorCached) line += `   floor with Node's compile cache ${ms(m.floorCached[clock]).padStart(8)}`;
    if (m.native) line += `   native .ts loop ${ms(m.native[clock]).padStart(8)}`;
    console.log(line);
    builds.forEach((built, i) => {
      const cell = (phase) => `${ms(m[phase][clock]).padStart(8)} ${ratio(m[phase][clock], m[base][clock]).padStart(6)}${m.floorCached ? ` (${ratio(m[phase][clock], m.floorCached[clock])} of the cached floor)` : ""}`;
      console.log(`      ${built.label.padEnd(22)} first boot ${cell(`first${i}`)}   warm boot ${cell(`warm${i}`)}`);
      if (m[`hostCached${i}`]) console.log(`      ${"".padEnd(22)} warm boot in a host that turned the compile cache on at its start ${cell(`hostCached${i}`)}`);
    });
  }
}

// ---------------------------------------------------------------------------------------------

const builds = buildAll("xcsh-tools-bench");
const built = builds[0];
const runtimes = findRuntimes();
/**
 * Who runs the install's refresh before a first boot: the boot's own runtime (a user with one
 * Node), or with BENCH_INSTALLER=first the first runtime for every boot (the CLI on one runtime,
 * the host on another: Node's compile caches are per Node version, so that first boot compiles).
 */
const installerFor = (runtime) => (process.env.BENCH_INSTALLER === "first" ? runtimes[0] : runtime);
const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-boot-"));
const results = { machine: { cores: os.cpus().length, platform: `${os.platform()} ${os.arch()}` }, source: builds.map((b) => b.label), runtimes: runtimes.map((r) => r.label), boot: {}, scale: {}, query: {} };
const load = () => os.loadavg()[0].toFixed(1);
console.log(`boot benchmarks: ${builds.map((b) => b.label).join(" vs ")}, ${os.cpus().length} cores, load average ${load()}, median of ${RUNS}; first boot after install = ${built.bootModule ? "refreshBootIndex (as an install runs it)" : "empty transpile cache"}`);

try {
  const fx200 = fixture(work, 200);

  if (ONLY.has("boot")) {
    // A build run with a variable set (BENCH_ENV) differs only in what the bin shim reads: the query's.
    const bootBuilds = builds.filter((b) => !b.env);
    if (KINDS.includes("pi")) {
      console.log(`\n1. boot, pi-style: ${fx200.tsFiles.length} TypeScript tools in ${fx200.tsFiles.length / TOOLS_PER_PLUGIN} npm plugins, discoverAndLoadCustomTools vs the floor (import() of the same tools pre-built as .js, one after the other)`);
      for (const runtime of runtimes) {
        const m = measureBoots(bootBuilds, runtime, fx200, installerFor(runtime), RUNS);
        results.boot[runtime.id] = m;
        printBoots(runtime, m, bootBuilds, "pi-style");
      }
    }
    if (KINDS.includes("seed")) {
      const seed200 = seedFixture(work, 200);
      console.log(`\n1. boot, seed-style: ${seed200.tsFiles.length} plain TypeScript modules in the user's tools folder (TypeBox from api.typebox, no imports), discoverAndLoadCustomTools vs the floor (Promise.all of import() of the same .ts files, .js on Node 20, then the factories)`);
      results.bootSeed = {};
      for (const runtime of runtimes) {
        const m = measureBoots(bootBuilds, runtime, seed200, installerFor(runtime), RUNS, allJob(runtime, seed200));
        results.bootSeed[runtime.id] = m;
        printBoots(runtime, m, bootBuilds, "seed-style");
      }
    }
    console.log("  (whole boot: from the process's first line, TypeBox and the xcsh-tools library imported inside the clock;\n   the call: discoverAndLoadCustomTools alone vs the import loop alone, both imported beforehand as in a running host)");
  }

  if (ONLY.has("scale")) {
    const sizes = [0, ...SCALE];
    const scaleRuns = Number(process.env.SCALE_RUNS ?? 3);
    console.log(`\n2. scale: ${sizes.join(", ")} tools (median of ${scaleRuns}); ms per tool, and marginal ms per added tool between sizes`);
    const fixtures = new Map(sizes.map((n) => [n, n === 200 ? fx200 : fixture(work, n)]));
    for (const runtime of runtimes.filter((r) => r.id !== "node22" && r.id !== "node24")) {
      const rows = sizes.map((n) => {
        const m = measureBoots([built], runtime, fixtures.get(n), installerFor(runtime), scaleRuns);
        return { n, first: m.first0, warm: m.warm0, floor: m.floor };
      });
      results.scale[runtime.id] = rows;
      console.log(`  ${runtime.label}`);
      for (const [clock, label] of [["total", "wall"], ["cpuTotal", "cpu"]]) {
        const at = (row, phase) => row[phase][clock];
        console.log(`    whole boot, ${label} time`);
        for (const row of rows) {
          const per = (x) => (row.n ? `${(x / row.n).toFixed(2)} ms/tool` : "fixed cost");
          console.log(
            `      ${String(row.n).padStart(5)} tools: first boot ${ms(at(row, "first")).padStart(8)} ${per(at(row, "first")).padEnd(14)} ` +
              `warm ${ms(at(row, "warm")).padStart(8)} ${per(at(row, "warm")).padEnd(14)} floor ${ms(at(row, "floor")).padStart(8)} ${per(at(row, "floor"))}`,
          );
        }
        for (const phase of ["first", "warm", "floor"]) {
          const marginal = rows.slice(1).map((row, i) => (at(row, phase) - at(rows[i], phase)) / (row.n - rows[i].n));
          const perTool = rows.slice(1).map((row) => at(row, phase) / row.n);
          console.log(
            `      ${phase.padEnd(5)}: marginal ms per added tool ${marginal.map((x, i) => `${rows[i].n}→${rows[i + 1].n} ${x.toFixed(2)}`).join(", ")}; ` +
              `per-tool ${rows.at(-1).n} vs ${rows[1].n}: ${(perTool.at(-1) / perTool[0]).toFixed(2)}x; ` +
              `marginal ${rows.at(-2).n}→${rows.at(-1).n} vs ${rows.at(-3).n}→${rows.at(-2).n}: ${(marginal.at(-1) / marginal.at(-2)).toFixed(2)}x`,
          );
        }
      }
    }
    console.log("  (linear growth keeps the marginal cost per added tool flat: the last ratio near 1, not growing)");
  }

  if (ONLY.has("query")) {
    console.log(`\n3. query: xcsh-tools tools --json vs <runtime> -e 0, ${fx200.tsFiles.length} tools installed (whole processes)`);
    const check = (stdout) => {
      const doc = JSON.parse(stdout);
      if (doc.tools.length !== fx200.tsFiles.length || doc.errors.length !== 0) throw new Error(`bench: tools --json listed ${doc.tools.length} tools and ${doc.errors.length} errors`);
    };
    for (const runtime of runtimes) {
      const samples = { empty: [], ...Object.fromEntries(builds.flatMap((_, i) => [[`first${i}`, []], [`warm${i}`, []]])) };
      for (let run = 0; run < RUNS; run++) {
        builds.forEach((b, i) => {
          afterInstall(b, fx200, installerFor(runtime));
          samples[`first${i}`].push(wall(runtime.command, [b.bin, "tools", "--json"], fx200, check, b.env));
          samples[`warm${i}`].push(wall(runtime.command, [b.bin, "tools", "--json"], fx200, check, b.env));
        });
        samples.empty.push(wall(runtime.command, ["-e", "0"], fx200));
      }
      const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { wall: median(v.map((x) => x.wall)), cpu: v[0].cpu === undefined ? undefined : median(v.map((x) => x.cpu)) }]));
      results.query[runtime.id] = m;
      const target = runtime.id === "bun" ? 3 : 2.5;
      const cpu = (x) => (x.cpu === undefined ? "" : `, cpu ${ms(x.cpu)}`);
      console.log(`  ${runtime.label.padEnd(14)} -e 0 ${ms(m.empty.wall)}${cpu(m.empty)}   (target: tools --json <= ${target.toFixed(2)}x; ratios wall / cpu)`);
      builds.forEach((b, i) => {
        const cell = (phase) => {
          const x = m[phase];
          const ratios = `${ratio(x.wall, m.empty.wall)}${x.cpu === undefined ? "" : ` / ${ratio(x.cpu, m.empty.cpu)}`}`;
          return `${ms(x.wall)}${cpu(x)} (${ratios}${x.wall / m.empty.wall <= target ? "" : " over"})`;
        };
        console.log(`      ${b.label.padEnd(22)} tools --json after install ${cell(`first${i}`)}   again ${cell(`warm${i}`)}`);
      });
    }
  }
  if (ONLY.has("start") && childrenCpuMs() !== undefined) {
    console.log(`\n4. start: CPU per CLI process (user + system), median of ${RUNS} batches of ${START_BATCH}, ${fx200.tsFiles.length / TOOLS_PER_PLUGIN} plugins installed; builds interleaved`);
    const batchCpu = (command, args, env) => {
      const before = childrenCpuMs();
      for (let i = 0; i < START_BATCH; i++) {
        const r = spawnSync(command, args, { cwd: fx200.cwd, env: { ...childEnv(fx200), ...env }, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
        if (r.status !== 0) throw new Error(`bench: ${args.join(" ")} failed (${r.status}):\n${r.stdout}${r.stderr}`);
      }
      return (childrenCpuMs() - before) / START_BATCH;
    };
    const commands = { "--version": ["--version"], "list --json": ["list", "--json"] };
    for (const runtime of runtimes) {
      const samples = { empty: [] };
      for (let run = 0; run < RUNS; run++) {
        builds.forEach((b, i) => {
          for (const [name, args] of Object.entries(commands)) (samples[`${name}${i}`] ??= []).push(batchCpu(runtime.command, [b.bin, ...args], b.env));
        });
        samples.empty.push(batchCpu(runtime.command, ["-e", "0"]));
      }
      const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
      results.start ??= {};
      results.start[runtime.id] = m;
      console.log(`  ${runtime.label.padEnd(14)} -e 0 ${ms(m.empty)}`);
      builds.forEach((b, i) => {
        console.log(`      ${b.label.padEnd(22)} ${Object.keys(commands).map((name) => `${name} ${ms(m[`${name}${i}`]).padStart(7)} (${ratio(m[`${name}${i}`], m.empty)}, +${ms(m[`${name}${i}`] - m.empty)})`).join("   ")}`);
      });
    }
  }
  console.log(`\n(load average at the end: ${load()}; figures taken on a busy machine vary from run to run, their ratios much less)`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
