#!/usr/bin/env node
/**
 * Benchmark of the changes that download nothing (issue 44, point 1): on a plugins folder of
 * PLUGINS (20) npm plugins installed from a local Verdaccio (plus one plugin with features and
 * settings), each of `disable`, `enable`, `features --enable/--disable`, `config set`, `link` of a
 * local folder and `unlink` is timed as a whole process, paired in the same loop with
 * `<runtime> -e 0`; `uninstall` of one plugin is paired with `npm uninstall` of the same package
 * in an npm project holding the same packages (each is put back, untimed, after its run).
 * Targets: the changes <= 0.3 s and <= 3x `-e 0`; uninstall <= 1.0x `npm uninstall`.
 * Medians of RUNS; wall and CPU (/usr/bin/time). Every runtime of bench/lib/runtimes.js but Bun.
 *
 *   node bench/changes.js
 *   RUNS=5 PLUGINS=20 BENCH_RUNTIMES=node22,node24 node bench/changes.js
 *   BENCH_SOURCE=main node bench/changes.js      (the work tree and main, interleaved)
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createJiti } from "jiti";
import { benchEnv, benchPublisher, median } from "./lib/bench-plugins.js";
import { buildAll, repo } from "./lib/build.js";
import { findRuntimes } from "./lib/runtimes.js";
import { timeProcessClocks } from "./lib/time.js";

const RUNS = Number(process.env.RUNS ?? 5);
const COUNT = Number(process.env.PLUGINS ?? 20);

const builds = buildAll("xcsh-tools-bench-changes");
const runtimes = findRuntimes().filter((runtime) => runtime.id !== "bun");
const npmCli = realpathSync(execFileSync(process.platform === "win32" ? "where" : "which", ["npm"], { encoding: "utf8" }).trim().split("\n")[0]);

const jiti = createJiti(import.meta.url);
const { startRegistry } = await jiti.import(path.join(repo, "test", "helpers", "registry.ts"));

const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-changes-"));
const registry = await startRegistry();
const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

/** A plugin with a feature (off by default) and a setting: what `features` and `config` change. */
async function publishFeatured(name) {
  const tool = (toolName) => `export default (api) => ({ name: "${toolName}", label: "${toolName}", description: "bench", parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`;
  await registry.publish({
    name,
    version: "1.0.0",
    packageJson: {
      type: "module",
      xcsh: {
        tools: "./tools/main.js",
        features: { extra: { description: "an extra tool", default: false, tools: ["./tools/extra.js"] } },
        settings: { level: { type: "string", description: "a level" } },
      },
    },
    files: { "tools/main.js": tool("bench_featured_main"), "tools/extra.js": tool("bench_featured_extra") },
  });
}

/** A plugin folder as `xcsh-tools new` leaves it: one tool, no dependencies. */
function localPlugin(dir, name) {
  mkdirSync(path.join(dir, "tools"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), `${JSON.stringify({ name, version: "0.1.0", type: "module", xcsh: { tools: "./tools/index.js" } }, null, 2)}\n`);
  writeFileSync(path.join(dir, "tools", "index.js"), `export default (api) => ({ name: "bench_linked", label: "Linked", description: "linked", parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`);
  return dir;
}

try {
  const prefix = `chg${Date.now().toString(36)}`;
  const publishShape = await benchPublisher(registry, prefix, COUNT);
  const names = await publishShape("shared");
  const featured = `${prefix}-featured`;
  await publishFeatured(featured);
  const linked = localPlugin(path.join(work, "linked-plugin"), `${prefix}-linked`);
  const victim = names[0];
  const npmVersion = execFileSync("npm", ["--version"], { encoding: "utf8" }).trim();
  console.log(`cheap changes: ${COUNT + 1} npm plugins installed from a local Verdaccio, each command paired with -e 0 (uninstall with npm uninstall of the same package), median of ${RUNS} (npm ${npmVersion}); ${builds.map((b) => b.label).join(" vs ")}; load average ${os.loadavg()[0].toFixed(1)}`);
  console.log(`  (targets: <= 0.3 s and <= 3.00x -e 0; uninstall <= 1.00x npm uninstall; ratios wall / cpu)`);

  const freshHome = () => {
    const home = mkdtempSync(path.join(work, "home-"));
    writeFileSync(path.join(home, ".npmrc"), `registry=${registry.url}\n`);
    return home;
  };
  const cache = path.join(work, "npm-cache");

  for (const runtime of runtimes) {
    // One home per build, installed once; one npm project with the same packages.
    const homes = builds.map((build) => {
      const home = freshHome();
      const env = { ...benchEnv(home, cache), XCSH_HOME: path.join(home, ".xcsh"), ...build.env };
      execFileSync(runtime.command, [build.bin, "install", ...names, featured], { cwd: home, env, stdio: "pipe" });
      return { build, home, env };
    });
    const npmHome = freshHome();
    const npmProject = path.join(npmHome, "project");
    mkdirSync(npmProject);
    writeFileSync(path.join(npmProject, "package.json"), JSON.stringify({ name: "bench", private: true, dependencies: {} }));
    const npmEnv = benchEnv(npmHome, cache);
    const npmArgs = ["--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"];
    execFileSync(runtime.command, [npmCli, "install", ...npmArgs, ...names, featured], { cwd: npmProject, env: npmEnv, stdio: "pipe" });

    // Each step: [label, args] run in order, so the folder is the same at every run's start.
    const steps = [
      ["disable", ["disable", victim]],
      ["enable", ["enable", victim]],
      ["features --enable", ["features", featured, "--enable", "extra"]],
      ["features --disable", ["features", featured, "--disable", "extra"]],
      ["config set", (run) => ["config", "set", featured, "level", `l${run}`]],
      ["link", ["link", linked]],
      ["unlink", ["unlink", `${prefix}-linked`]],
      ["uninstall", ["uninstall", victim]],
    ];
    const results = { "-e 0": [], "npm uninstall": [], ...Object.fromEntries(homes.map((h) => [h.build.label, Object.fromEntries(steps.map(([label]) => [label, []]))])) };
    for (let run = 0; run < RUNS; run++) {
      results["-e 0"].push(timeProcessClocks(runtime.command, ["-e", "0"], { cwd: work, env: { PATH: process.env.PATH } }));
      for (const { build, home, env } of homes) {
        for (const [label, args] of steps) {
          const argv = typeof args === "function" ? args(run) : args;
          results[build.label][label].push(timeProcessClocks(runtime.command, [build.bin, ...argv], { cwd: home, env }));
        }
        // Put the uninstalled plugin back, untimed.
        execFileSync(runtime.command, [build.bin, "install", victim], { cwd: home, env, stdio: "pipe" });
      }
      results["npm uninstall"].push(timeProcessClocks(runtime.command, [npmCli, "uninstall", ...npmArgs, victim], { cwd: npmProject, env: npmEnv }));
      execFileSync(runtime.command, [npmCli, "install", ...npmArgs, victim], { cwd: npmProject, env: npmEnv, stdio: "pipe" });
    }
    const clocks = (xs) => ({ wall: median(xs.map((x) => x.wall)), cpu: xs[0].cpu === undefined ? undefined : median(xs.map((x) => x.cpu)) });
    const ratio = (x, base) => `${(x.wall / base.wall).toFixed(2)}x${x.cpu && base.cpu ? ` / ${(x.cpu / base.cpu).toFixed(2)}x` : ""}`;
    const empty = clocks(results["-e 0"]);
    const npmRm = clocks(results["npm uninstall"]);
    console.log(`    ${runtime.label}: -e 0 ${fmt(empty.wall)}${empty.cpu === undefined ? "" : `, cpu ${fmt(empty.cpu)}`}; npm uninstall ${fmt(npmRm.wall)}${npmRm.cpu === undefined ? "" : `, cpu ${fmt(npmRm.cpu)}`}`);
    for (const { build } of homes) {
      const cells = steps.map(([label]) => {
        const x = clocks(results[build.label][label]);
        const uninstall = label === "uninstall";
        const base = uninstall ? npmRm : empty;
        const over = uninstall ? x.wall > npmRm.wall : x.wall > 300 || x.wall > 3 * empty.wall;
        return `${label} ${fmt(x.wall)} (${ratio(x, base)}${uninstall ? " of npm" : ""}${over ? " over" : ""})`;
      });
      console.log(`      ${build.label}: ${cells.join("; ")}`);
    }
  }
  console.log(`  (load average at the end: ${os.loadavg()[0].toFixed(1)})`);
} finally {
  await registry.stop();
  // BENCH_KEEP=1 keeps the homes (to profile a command by hand).
  if (process.env.BENCH_KEEP) console.log(`(kept ${work})`);
  else rmSync(work, { recursive: true, force: true });
}
