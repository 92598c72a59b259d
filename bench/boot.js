#!/usr/bin/env node
/**
 * Boot benchmarks (issue 7), every figure measured side by side in this one run, each boot in a
 * fresh child process, median of RUNS:
 *
 * 1. boot   40 npm plugins × 5 TypeScript tools: `discoverAndLoadCustomTools` (discovery, import,
 *           factories, checks) against the floor, a loop that `import()`s the same 200 tools
 *           pre-built as JavaScript and calls their factories. First boot after install (the
 *           transpile cache and boot index as an install leaves them: `refreshBootIndex` when
 *           the build has it, else empty) and warm boot (the next start). Under Bun also against a
 *           sequential native `import()` loop over the same .ts files.
 * 2. scale  the same at 0, 10, 200 and 1000 tools: ms per tool and the marginal cost per tool
 *           between sizes (linear growth keeps it flat).
 * 3. query  `xcsh-tools tools --json` against `node -e 0` (whole processes), 200 tools installed.
 *
 * Times are in-process (from the child's first line to its last tool) for boots, and whole-process
 * wall time for the query. The current sources are compiled into
 * node_modules/.cache/xcsh-tools-bench (never into dist/, which tests rebuild concurrently), and
 * the query runs bin/xcsh-tools.js's one-line shim from there.
 *
 *   node bench/boot.js
 *   RUNS=7 SCALE=10,200,1000 BENCH_ONLY=boot,scale,query node bench/boot.js
 *   BENCH_SOURCE=HEAD node bench/boot.js      (compile a commit, e.g. HEAD, instead of the work tree)
 *   BENCH_SOURCE_DIR=/tmp/x node bench/boot.js (compile the src/ and tsconfig*.json in that folder)
 *
 * Node 22, Node 24 and Bun come from $XCSH_TOOLS_TEST_NODE22 / $XCSH_TOOLS_TEST_NODE24 /
 * $XCSH_TOOLS_TEST_BUN, else from where .ci/run installs them (.ci/runtimes/node_modules/.bin and
 * .ci/runtimes/node24/node_modules/.bin); a missing one is reported and skipped.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeBenchFixture } from "./lib/fixtures.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = Number(process.env.RUNS ?? 5);
const SCALE = (process.env.SCALE ?? "10,200,1000").split(",").map(Number);
const ONLY = new Set((process.env.BENCH_ONLY ?? "boot,scale,query").split(","));
const TOOLS_PER_PLUGIN = 5;
const CHILD = path.join(repo, "bench", "lib", "boot-child.js");

// ---------------------------------------------------------------------------------------------
// The build under test.

const buildRoot = path.join(repo, "node_modules", ".cache", "xcsh-tools-bench");

function build() {
  rmSync(buildRoot, { recursive: true, force: true });
  mkdirSync(buildRoot, { recursive: true });
  let project = repo;
  const rev = process.env.BENCH_SOURCE;
  if (process.env.BENCH_SOURCE_DIR) {
    project = path.resolve(process.env.BENCH_SOURCE_DIR);
  } else if (rev) {
    project = path.join(buildRoot, "src-rev");
    mkdirSync(project, { recursive: true });
    const archive = execFileSync("git", ["archive", rev, "src", "tsconfig.json", "tsconfig.build.json"], { cwd: repo, maxBuffer: 256 * 1024 * 1024 });
    execFileSync("tar", ["-x", "-C", project], { input: archive });
  }
  const outDir = path.join(buildRoot, "dist");
  const tsc = path.join(repo, "node_modules", "typescript", "bin", "tsc");
  const args = [tsc, "-p", path.join(project, "tsconfig.build.json"), "--outDir", outDir, "--declaration", "false", "--sourceMap", "false"];
  const result = spawnSync(process.execPath, args, { cwd: project, encoding: "utf8" });
  if (!existsSync(path.join(outDir, "index.js"))) throw new Error(`bench: tsc emitted nothing:\n${result.stdout}${result.stderr}`);
  if (result.status !== 0) console.log(`(tsc reported type errors in the ${project === repo ? "work tree" : project} sources; benchmarking what it emitted)`);
  // As `npm run build` does for what a boot or a query loads: TypeBox for our schemas, and the
  // validation child a query may start (a revision from before the bundled TypeBox has no
  // manifest/typebox.js). npm's libraries, which neither loads, are left as packages.
  if (existsSync(path.join(outDir, "manifest", "typebox.js"))) {
    execFileSync(process.execPath, [path.join(repo, "scripts", "bundle-typebox.mjs"), outDir], { stdio: "inherit" });
    execFileSync(process.execPath, [path.join(repo, "scripts", "bundle-child.mjs"), outDir], { stdio: "inherit" });
  }
  // What dist/ finds around itself in a package: its package.json, templates, the bin shim.
  copyFileSync(path.join(repo, "package.json"), path.join(buildRoot, "package.json"));
  mkdirSync(path.join(buildRoot, "bin"), { recursive: true });
  copyFileSync(path.join(repo, "bin", "xcsh-tools.js"), path.join(buildRoot, "bin", "xcsh-tools.js"));
  return {
    library: path.join(outDir, "index.js"),
    bootModule: existsSync(path.join(outDir, "boot", "index.js")) ? path.join(outDir, "boot", "index.js") : undefined,
    bin: path.join(buildRoot, "bin", "xcsh-tools.js"),
    source: process.env.BENCH_SOURCE_DIR
      ? `sources in ${project}`
      : rev
        ? `${rev} (${execFileSync("git", ["rev-parse", "--short", rev], { cwd: repo, encoding: "utf8" }).trim()})`
        : "work tree",
  };
}

// ---------------------------------------------------------------------------------------------
// Runtimes.

function probe(command) {
  const r = spawnSync(command, ["--version"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function findRuntimes() {
  const found = [{ id: "node", label: `Node ${process.version}`, command: process.execPath }];
  for (const [id, name, envVar, bin] of [
    ["node22", "Node", "XCSH_TOOLS_TEST_NODE22", "node_modules/.bin/node"],
    ["node24", "Node", "XCSH_TOOLS_TEST_NODE24", "node24/node_modules/.bin/node"],
    ["bun", "Bun", "XCSH_TOOLS_TEST_BUN", "node_modules/.bin/bun"],
  ]) {
    const command = process.env[envVar] || path.join(repo, ".ci", "runtimes", ...bin.split("/"));
    const version = existsSync(command) ? probe(command) : undefined;
    if (version) found.push({ id, label: `${name} ${version}`, command });
    else console.log(`(${id} not found at ${command}: skipped; see .ci/run for how it installs the runtimes)`);
  }
  return found;
}

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

/** A whole process, wall clock. */
function wall(command, args, fx, check) {
  const started = process.hrtime.bigint();
  const r = spawnSync(command, args, { cwd: fx.cwd, env: childEnv(fx), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (r.status !== 0) throw new Error(`bench: ${command} ${args.join(" ")} failed (${r.status}):\n${r.stdout}${r.stderr}`);
  check?.(r.stdout);
  return elapsed;
}

function fixture(work, tools) {
  const root = mkdtempSync(path.join(work, `fx${tools}-`));
  return writeBenchFixture(root, { plugins: Math.ceil(tools / TOOLS_PER_PLUGIN), toolsPerPlugin: TOOLS_PER_PLUGIN });
}

/** Put the xcsh root in the state an install of the fixture leaves it in. */
function afterInstall(built, fx, installer) {
  rmSync(path.join(fx.xcshHome, "plugins", ".xcsh-tools"), { recursive: true, force: true });
  if (built.bootModule) boot(installer, { mode: "refresh", bootModule: built.bootModule, home: fx.home, xcshHome: fx.xcshHome, cwd: fx.cwd, expect: 0 }, fx);
}

const oursJob = (built, fx) => ({ mode: "ours", library: built.library, cwd: fx.cwd, home: fx.home, xcshHome: fx.xcshHome, expect: fx.tsFiles.length });
const loopJob = (mode, fx) => ({ mode, files: mode === "floor" ? fx.jsFiles : fx.tsFiles, cwd: fx.cwd, expect: fx.tsFiles.length });

const CLOCKS = ["total", "call", "cpuCall"];
const ALL_CLOCKS = [...CLOCKS, "cpuTotal"];

/** first boot, warm boot, floor (and the native .ts loop under Bun), interleaved per repetition; medians per clock. */
function measureBoots(built, runtime, fx, installer, runs) {
  const samples = { first: [], warm: [], floor: [], native: [] };
  for (let run = 0; run < runs; run++) {
    afterInstall(built, fx, installer);
    samples.first.push(boot(runtime, oursJob(built, fx), fx));
    samples.warm.push(boot(runtime, oursJob(built, fx), fx));
    samples.floor.push(boot(runtime, loopJob("floor", fx), fx));
    if (runtime.id === "bun") samples.native.push(boot(runtime, loopJob("native", fx), fx));
  }
  const out = {};
  for (const [phase, list] of Object.entries(samples)) {
    if (list.length) out[phase] = Object.fromEntries(ALL_CLOCKS.map((clock) => [clock, median(list.map((sample) => sample[clock]))]));
  }
  return out;
}

const CLOCK_LABELS = { total: "whole boot", call: "the call", cpuCall: "call, cpu" };

function printBoots(runtime, m) {
  console.log(`  ${runtime.label}`);
  for (const clock of CLOCKS) {
    const cell = (phase, base) => `${ms(m[phase][clock]).padStart(8)} ${ratio(m[phase][clock], m[base][clock]).padStart(6)}`;
    let line = `    ${CLOCK_LABELS[clock].padEnd(11)} floor ${ms(m.floor[clock]).padStart(8)}   first boot ${cell("first", "floor")}   warm boot ${cell("warm", "floor")}`;
    if (m.native) line += `   | native .ts loop ${ms(m.native[clock]).padStart(8)}: first ${ratio(m.first[clock], m.native[clock])}, warm ${ratio(m.warm[clock], m.native[clock])}`;
    console.log(line);
  }
}

// ---------------------------------------------------------------------------------------------

const built = build();
const runtimes = findRuntimes();
const installer = runtimes[0];
const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-boot-"));
const results = { machine: { cores: os.cpus().length, platform: `${os.platform()} ${os.arch()}` }, source: built.source, runtimes: runtimes.map((r) => r.label), boot: {}, scale: {}, query: {} };
const load = () => os.loadavg()[0].toFixed(1);
console.log(`boot benchmarks: ${built.source}, ${os.cpus().length} cores, load average ${load()}, median of ${RUNS}; first boot after install = ${built.bootModule ? "refreshBootIndex (as an install runs it)" : "empty transpile cache"}`);

try {
  const fx200 = fixture(work, 200);

  if (ONLY.has("boot")) {
    console.log(`\n1. boot: ${fx200.tsFiles.length} TypeScript tools in ${fx200.tsFiles.length / TOOLS_PER_PLUGIN} npm plugins, discoverAndLoadCustomTools vs the floor (import() of the same tools pre-built as .js)`);
    for (const runtime of runtimes) {
      const m = measureBoots(built, runtime, fx200, installer, RUNS);
      results.boot[runtime.id] = m;
      printBoots(runtime, m);
    }
    console.log("  (whole boot: from the process's first line, TypeBox and the xcsh-tools library imported inside the clock;\n   the call: discoverAndLoadCustomTools alone vs the import loop alone, both imported beforehand as in a running host)");
  }

  if (ONLY.has("scale")) {
    const sizes = [0, ...SCALE];
    const scaleRuns = Number(process.env.SCALE_RUNS ?? 3);
    console.log(`\n2. scale: ${sizes.join(", ")} tools (median of ${scaleRuns}); ms per tool, and marginal ms per added tool between sizes`);
    const fixtures = new Map(sizes.map((n) => [n, n === 200 ? fx200 : fixture(work, n)]));
    for (const runtime of runtimes.filter((r) => r.id !== "node22" && r.id !== "node24")) {
      const rows = sizes.map((n) => ({ n, ...measureBoots(built, runtime, fixtures.get(n), installer, scaleRuns) }));
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
      const samples = { empty: [], first: [], warm: [] };
      for (let run = 0; run < RUNS; run++) {
        afterInstall(built, fx200, installer);
        samples.first.push(wall(runtime.command, [built.bin, "tools", "--json"], fx200, check));
        samples.warm.push(wall(runtime.command, [built.bin, "tools", "--json"], fx200, check));
        samples.empty.push(wall(runtime.command, ["-e", "0"], fx200));
      }
      const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
      results.query[runtime.id] = m;
      console.log(`  ${runtime.label.padEnd(14)} -e 0 ${ms(m.empty)}   tools --json after install ${ms(m.first)} (${ratio(m.first, m.empty)})   again ${ms(m.warm)} (${ratio(m.warm, m.empty)})`);
    }
  }
  console.log(`\n(load average at the end: ${load()}; figures taken on a busy machine vary from run to run, their ratios much less)`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(results, null, 2)}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
