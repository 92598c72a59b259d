#!/usr/bin/env node
/**
 * Benchmark of team sets (issue 42, docs/design/team-sets.md (f)): `xcsh-tools install` restoring
 * a locked set of PLUGINS (20) npm plugins versus `npm ci` of a package.json + package-lock.json
 * naming the same plugins, from the same local Verdaccio, in the shapes of bench/lib/bench-plugins.js:
 * - cold: an empty npm cache and an empty plugins folder (npm: no node_modules);
 * - warm: the cache the cold run filled, the plugins folder empty again (a fresh home);
 * and a restore with nothing to do (the second `install`, answered from the restore stamp) versus
 * `<runtime> -e 0`, CPU per process from the kernel's counters over batches of START_BATCH
 * processes (bench/lib/time.js childrenCpuMs: its 10 ms ticks divided by the batch).
 * Targets: restore <= 1.0x `npm ci`, cold and warm; the no-op <= 2x `-e 0`. Also printed: the
 * restore against `npm ci` + one `node` importing the restored tools (issue 44's yardstick).
 * Every runtime of bench/lib/runtimes.js but Bun (npm's CLI is run by the same runtime); each run
 * in fresh temp folders; medians of RUNS; wall and CPU (/usr/bin/time). The lock is written once
 * by the first build (as a teammate's `install` writes it and commits it); the user trusted the
 * project (`xcsh-tools trust`, as the README's team flow says) and passes `--yes`.
 *
 *   node bench/team.js
 *   RUNS=5 PLUGINS=20 SHAPES=shared START_BATCH=10 BENCH_RUNTIMES=node22,node24 node bench/team.js
 *   BENCH_SOURCE=HEAD~3 node bench/team.js
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createJiti } from "jiti";
import { benchEnv, benchPublisher, median, SHAPE_NAMES, shapeDescription } from "./lib/bench-plugins.js";
import { buildAll, repo } from "./lib/build.js";
import { findRuntimes } from "./lib/runtimes.js";
import { childrenCpuMs, timeProcessClocks } from "./lib/time.js";

const RUNS = Number(process.env.RUNS ?? 3);
const COUNT = Number(process.env.PLUGINS ?? 20);
const START_BATCH = Number(process.env.START_BATCH ?? 10);
const SHAPES = (process.env.SHAPES ?? SHAPE_NAMES.join(",")).split(",").filter(Boolean);

const builds = buildAll("xcsh-tools-bench-team");
const runtimes = findRuntimes().filter((runtime) => runtime.id !== "bun");
const npmCli = realpathSync(execFileSync(process.platform === "win32" ? "where" : "which", ["npm"], { encoding: "utf8" }).trim().split("\n")[0]);

const jiti = createJiti(import.meta.url);
const { startRegistry } = await jiti.import(path.join(repo, "test", "helpers", "registry.ts"));

const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-team-"));
const registry = await startRegistry();
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const ratio = (a, b) => `${(a / b).toFixed(2)}x`;

/** A fresh home whose npm reads only the bench registry. */
/** One process importing every plugin's tools once, as the restore's module check does (bench/lib/import-installed.mjs). */
const IMPORTER = path.join(repo, "bench", "lib", "import-installed.mjs");

function freshHome() {
  const home = mkdtempSync(path.join(work, "home-"));
  writeFileSync(path.join(home, ".npmrc"), `registry=${registry.url}\n`);
  return home;
}

/**
 * A fresh project folder in `home` holding `files` (name → text), committed in a git repository of
 * its own: a teammate restores in the clone of the team's repository, so the restore's check that
 * its generated files are not tracked asks git, as it does for a user (a folder outside any
 * repository would let the restore skip that child).
 */
function freshProject(home, files) {
  const project = path.join(home, "project");
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(project, name)), { recursive: true });
    writeFileSync(path.join(project, name), text);
  }
  const git = (...args) => execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@localhost", ...args], { cwd: project, stdio: "ignore", env: { PATH: process.env.PATH, HOME: home, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: path.join(home, ".gitconfig") } });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "team set");
  return project;
}

/** The user's trust record naming `project`, as `xcsh-tools trust` writes it. */
function trust(xcshHome, project) {
  const file = path.join(xcshHome, "plugins", ".xcsh-tools", "trusted-projects.json");
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ version: 1, projects: [{ path: realpathSync(project), trustedAt: new Date().toISOString() }] }, null, 2)}\n`);
}

const oursEnv = (build, home, cache) => ({ ...benchEnv(home, cache), XCSH_HOME: path.join(home, ".xcsh"), ...build.env });

try {
  const prefix = `team${Date.now().toString(36)}`;
  const publishShape = await benchPublisher(registry, prefix, COUNT);
  const npmVersion = execFileSync("npm", ["--version"], { encoding: "utf8" }).trim();
  console.log(`team sets: restore of ${COUNT} locked npm plugins vs npm ci of the same, from a local Verdaccio, median of ${RUNS} (npm ${npmVersion}); ${builds.map((b) => b.label).join(" vs ")}; load average ${os.loadavg()[0].toFixed(1)}`);
  console.log(`  (targets: install (restore) <= 1.00x npm ci, cold and warm; install with nothing to do <= 2.00x -e 0; ratios wall / cpu)`);
  for (const shape of SHAPES) {
    const names = await publishShape(shape);
    // What a team commits: npm's package.json + package-lock.json, and our declaration + lock.
    const npmFiles = { "package.json": `${JSON.stringify({ name: "bench", private: true, dependencies: Object.fromEntries(names.map((n) => [n, "^1.0.0"])) }, null, 2)}\n` };
    {
      const home = freshHome();
      const project = freshProject(home, npmFiles);
      execFileSync(process.execPath, [npmCli, "install", "--package-lock-only", "--ignore-scripts", "--loglevel=error"], { cwd: project, env: benchEnv(home, path.join(home, ".npm")) });
      npmFiles["package-lock.json"] = readFileSync(path.join(project, "package-lock.json"), "utf8");
    }
    const teamFiles = { "xcsh-team.json": `${JSON.stringify({ version: 1, plugins: Object.fromEntries(names.map((n) => [n, { spec: "^1.0.0" }])) }, null, 2)}\n`, ".xcsh/.keep": "" };
    {
      const home = freshHome();
      const project = freshProject(home, teamFiles);
      trust(path.join(home, ".xcsh"), project);
      execFileSync(process.execPath, [builds[0].bin, "install", "--yes"], { cwd: project, env: oursEnv(builds[0], home, path.join(home, ".npm")) });
      teamFiles["xcsh-team.lock.json"] = readFileSync(path.join(project, "xcsh-team.lock.json"), "utf8");
    }
    console.log(`  plugins ${shapeDescription(shape, COUNT)}`);
    for (const runtime of runtimes) {
      const npmCi = (cache) => {
        const home = freshHome();
        const project = freshProject(home, npmFiles);
        const env = benchEnv(home, cache);
        const npm = timeProcessClocks(runtime.command, [npmCli, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: project, env });
        // Then the guarantee a restore gives, reached by hand (issue 44's yardstick for install):
        // one process importing every restored plugin's tools once (not in npm's own clocks).
        const check = timeProcessClocks(runtime.command, [IMPORTER, project, ...names], { cwd: project, env });
        return { ...npm, checkWall: check.wall, checkCpu: check.cpu };
      };
      const restore = (build) => (cache) => {
        const home = freshHome();
        const project = freshProject(home, teamFiles);
        trust(path.join(home, ".xcsh"), project);
        const env = oursEnv(build, home, cache);
        const timed = timeProcessClocks(runtime.command, [build.bin, "install", "--yes"], { cwd: project, env });
        return { ...timed, project, env };
      };
      /** CPU per process of `args`, a batch of START_BATCH processes (kernel counters), and the wall clock of one. */
      const batch = (args, cwd, env, check) => {
        const before = childrenCpuMs();
        let wall = 0;
        for (let i = 0; i < START_BATCH; i++) {
          const started = process.hrtime.bigint();
          const r = spawnSync(runtime.command, args, { cwd, env, encoding: "utf8" });
          wall += Number(process.hrtime.bigint() - started) / 1e6;
          if (r.status !== 0) throw new Error(`bench: ${args.join(" ")} failed (${r.status}):\n${r.stdout}${r.stderr}`);
          check?.(r.stdout);
        }
        const after = childrenCpuMs();
        return { wall: wall / START_BATCH, cpu: before === undefined ? undefined : (after - before) / START_BATCH };
      };
      const upToDate = (stdout) => {
        if (stdout !== `Up to date: ${COUNT} plugins (xcsh-team.lock.json)\n`) throw new Error(`bench: the second install did not answer from the stamp:\n${stdout}`);
      };
      const sides = [["npm ci", npmCi], ...builds.map((b) => [b.label, restore(b)])];
      const results = Object.fromEntries(sides.map(([side]) => [side, { cold: [], warm: [] }]));
      const noop = { empty: [], ...Object.fromEntries(builds.map((b) => [b.label, []])) };
      for (let run = 0; run < RUNS; run++) {
        for (const [side, fn] of sides) {
          const cache = mkdtempSync(path.join(work, "cache-"));
          results[side].cold.push(fn(cache));
          const warm = fn(cache);
          results[side].warm.push(warm);
          if (warm.project) noop[side].push(batch([builds.find((b) => b.label === side).bin, "install"], warm.project, warm.env, upToDate));
          rmSync(cache, { recursive: true, force: true });
        }
        noop.empty.push(batch(["-e", "0"], work, { PATH: process.env.PATH }));
      }
      const clocks = (xs) => ({ wall: median(xs.map((x) => x.wall)), cpu: xs[0].cpu === undefined ? undefined : median(xs.map((x) => x.cpu)) });
      const cell = (x, base, target) => `${fmt(x.wall)}${x.cpu === undefined ? "" : `, cpu ${fmt(x.cpu)}`} (${ratio(x.wall, base.wall)}${x.cpu && base.cpu ? ` / ${ratio(x.cpu, base.cpu)}` : ""}${x.wall / base.wall <= target ? "" : " over"})`;
      console.log(`    ${runtime.label}`);
      for (const phase of ["cold", "warm"]) {
        const npm = clocks(results["npm ci"][phase]);
        console.log(`      ${phase} cache: npm ci ${fmt(npm.wall)}${npm.cpu === undefined ? "" : `, cpu ${fmt(npm.cpu)}`}   ${builds.map((b) => `${b.label}: install ${cell(clocks(results[b.label][phase]), npm, 1)}`).join("   ")}`);
        const xs = results["npm ci"][phase];
        const withCheck = { wall: median(xs.map((x) => x.wall + x.checkWall)), cpu: xs[0].cpu === undefined || xs[0].checkCpu === undefined ? undefined : median(xs.map((x) => x.cpu + x.checkCpu)) };
        console.log(`        npm ci + one node importing the tools ${fmt(withCheck.wall)}${withCheck.cpu === undefined ? "" : `, cpu ${fmt(withCheck.cpu)}`}   ${builds.map((b) => `${b.label}: install ${cell(clocks(results[b.label][phase]), withCheck, 1)}`).join("   ")}`);
      }
      const empty = clocks(noop.empty);
      console.log(`      nothing to do: -e 0 ${fmt(empty.wall)}${empty.cpu === undefined ? "" : `, cpu ${fmt(empty.cpu)}`}   ${builds.map((b) => `${b.label}: install ${cell(clocks(noop[b.label]), empty, 2)}`).join("   ")}`);
    }
  }
  console.log(`  (load average at the end: ${os.loadavg()[0].toFixed(1)})`);
} finally {
  await registry.stop();
  rmSync(work, { recursive: true, force: true });
}
