#!/usr/bin/env node
/**
 * Benchmark: `xcsh-tools marketplace add <git URL>` of a big catalog repository versus a plain
 * `git clone` of the same local bare repository (file://), each into fresh temp folders. The
 * repository is shaped like the biggest public Claude Code marketplace: FILES files spread over
 * PLUGINS in-repo plugins, one `.claude-plugin/marketplace.json` listing them. Prints absolute
 * times (median of RUNS) and the ratio ours / git (also against `git clone --depth 1`, which is
 * what the marketplace clone is).
 *
 * Both sides transfer the same pack over the same transport; we additionally read and check the
 * catalog, drop `.git`, and commit the new cache through the journal (under the lock).
 *
 *   node bench/marketplace.js            (builds dist/ first if it is missing)
 *   RUNS=5 FILES=15000 PLUGINS=250 node bench/marketplace.js
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { timeProcess } from "./lib/time.js";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RUNS = Number(process.env.RUNS ?? 3);
const FILES = Number(process.env.FILES ?? 15000);
const PLUGINS = Number(process.env.PLUGINS ?? 250);
if (![RUNS, FILES, PLUGINS].every((n) => Number.isInteger(n) && n > 0)) throw new Error("bench: RUNS, FILES and PLUGINS must be positive integers");

if (!existsSync(path.join(repo, "dist", "cli", "main.js"))) {
  execFileSync("npm", ["run", "build"], { cwd: repo, stdio: "inherit" });
}

const work = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-bench-marketplace-"));
const gitEnv = (home) => ({
  PATH: process.env.PATH,
  HOME: home,
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "Bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
  NO_COLOR: "1",
});

try {
  // The repository: PLUGINS plugins with skills, commands and agents, FILES files in all.
  const tree = path.join(work, "tree");
  mkdirSync(path.join(tree, ".claude-plugin"), { recursive: true });
  const perPlugin = Math.max(1, Math.floor((FILES - 2) / PLUGINS) - 1);
  const plugins = [];
  let written = 1;
  for (let p = 0; p < PLUGINS; p++) {
    const name = `plugin-${p}`;
    const dir = path.join(tree, "plugins", name);
    mkdirSync(path.join(dir, ".claude-plugin"), { recursive: true });
    writeFileSync(path.join(dir, ".claude-plugin", "plugin.json"), JSON.stringify({ name, version: "1.0.0", description: `Bench plugin ${p}` }));
    written++;
    for (let f = 0; f < perPlugin && written < FILES; f++, written++) {
      const kind = ["skills", "commands", "agents"][f % 3];
      const file = kind === "skills" ? path.join(dir, "skills", `s${f}`, "SKILL.md") : path.join(dir, kind, `${kind}-${f}.md`);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `---\nname: ${kind}-${p}-${f}\ndescription: bench ${kind} ${f} of plugin ${p}\n---\n\n${"Lorem ipsum dolor sit amet. ".repeat(20 + (f % 40))}\n`);
    }
    plugins.push({ name, source: `./plugins/${name}`, description: `Bench plugin ${p}` });
  }
  for (let extra = 0; written < FILES; extra++, written++) {
    const file = path.join(tree, "docs", `d${Math.floor(extra / 500)}`, `page-${extra}.md`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `# Page ${extra}\n\n${"Some documentation text. ".repeat(30)}\n`);
  }
  writeFileSync(path.join(tree, ".claude-plugin", "marketplace.json"), JSON.stringify({ name: "bench-market", owner: { name: "Bench" }, plugins }, null, 2));
  const env = gitEnv(work);
  const git = (args, cwd) => execFileSync("git", args, { cwd, env, stdio: ["ignore", "ignore", "inherit"] });
  git(["init", "-q", "-b", "main"], tree);
  git(["add", "-A"], tree);
  git(["commit", "-q", "-m", "bench catalog"], tree);
  const bare = path.join(work, "bench-market.git");
  git(["clone", "-q", "--bare", "--", tree, bare], work);
  rmSync(tree, { recursive: true, force: true });
  const url = pathToFileURL(bare).href;
  const count = execFileSync("git", ["ls-tree", "-r", "--name-only", "HEAD"], { cwd: bare, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }).split("\n").filter(Boolean).length;

  const time = timeProcess;
  const gitRun = (extra = []) => () => {
    const home = mkdtempSync(path.join(work, "git-"));
    return time("git", ["clone", "-q", ...extra, "--", url, path.join(home, "clone")], { cwd: home, env: gitEnv(home) });
  };
  const oursRun = () => {
    const home = mkdtempSync(path.join(work, "ours-"));
    return time(process.execPath, [path.join(repo, "bin", "xcsh-tools.js"), "marketplace", "add", url], { cwd: home, env: { ...gitEnv(home), XCSH_HOME: path.join(home, ".xcsh") } });
  };

  // Each run takes the three in a rotated order, so page-cache warmth favours none of them.
  const sides = [["git", gitRun()], ["shallow", gitRun(["--depth", "1"])], ["ours", oursRun]];
  const results = { git: [], shallow: [], ours: [] };
  for (let run = 0; run < RUNS; run++) {
    for (let i = 0; i < sides.length; i++) {
      const [name, fn] = sides[(run + i) % sides.length];
      results[name].push(fn());
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fmt = (ms) => `${(ms / 1000).toFixed(2)} s`;
  const gitVersion = execFileSync("git", ["--version"], { encoding: "utf8" }).trim();
  const g = median(results.git);
  const d = median(results.shallow);
  const o = median(results.ours);
  console.log(`marketplace add of a ${count}-file repository (${PLUGINS} plugins) from a local bare repo over file://, median of ${RUNS} (${gitVersion}, Node ${process.version})`);
  console.log(`  git clone ${fmt(g)}   git clone --depth 1 ${fmt(d)}   xcsh-tools marketplace add ${fmt(o)}   ratio ${(o / g).toFixed(2)}x (${(o / d).toFixed(2)}x the shallow clone)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
