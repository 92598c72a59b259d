/**
 * The builds a benchmark compares, each built the way its own revision's `npm run build` builds
 * it (its tsc config and, when it has one, its scripts/bundle.mjs), into a folder of its own under
 * node_modules/.cache (never into dist/, which tests rebuild concurrently), with the bin shim,
 * package.json and templates beside dist/ as in a package. Packages resolve from the repository's
 * node_modules, above that folder.
 *
 * `BENCH_SOURCE=<rev>` (or a comma-separated list) adds each revision as a baseline: every
 * benchmark then runs all builds, interleaved, in the same run. `BENCH_SOURCE_DIR=<folder>` builds the sources in that folder
 * instead of the work tree.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Build one revision (`rev`), the sources in `dir`, or the work tree, into `root`. */
function buildOne(root, { rev, dir, label }) {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  let project = dir ?? repo;
  const parts = ["src", "scripts", "bin", "templates", "package.json", "tsconfig.json", "tsconfig.build.json"];
  if (rev) {
    project = path.join(root, "src-rev");
    mkdirSync(project, { recursive: true });
    const present = parts.filter((part) => spawnSync("git", ["cat-file", "-e", `${rev}:${part}`], { cwd: repo }).status === 0);
    const archive = execFileSync("git", ["archive", rev, ...present], { cwd: repo, maxBuffer: 256 * 1024 * 1024 });
    execFileSync("tar", ["-x", "-C", project], { input: archive });
  }
  const outDir = path.join(root, "dist");
  const tsc = path.join(repo, "node_modules", "typescript", "bin", "tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", path.join(project, "tsconfig.build.json"), "--outDir", outDir, "--declaration", "false", "--sourceMap", "false"], { cwd: project, encoding: "utf8" });
  if (!existsSync(path.join(outDir, "index.js"))) throw new Error(`bench: tsc emitted nothing for ${label}:\n${result.stdout}${result.stderr}`);
  if (result.status !== 0) console.log(`(tsc reported type errors in ${label}; benchmarking what it emitted)`);
  const after = path.join(project, "scripts", "bundle.mjs");
  if (existsSync(after)) execFileSync(process.execPath, [after, outDir], { cwd: project, stdio: "inherit" });
  for (const part of ["bin", "templates", "package.json"]) {
    if (existsSync(path.join(project, part))) cpSync(path.join(project, part), path.join(root, part), { recursive: true });
  }
  return {
    label,
    root,
    library: path.join(outDir, "index.js"),
    bootModule: existsSync(path.join(outDir, "boot", "index.js")) ? path.join(outDir, "boot", "index.js") : undefined,
    bin: path.join(root, "bin", "xcsh-tools.js"),
  };
}

/** The builds under test: the work tree (or BENCH_SOURCE_DIR), then the BENCH_SOURCE baselines if any. */
export function buildAll(name) {
  const base = path.join(repo, "node_modules", ".cache", name);
  const builds = [buildOne(path.join(base, "current"), process.env.BENCH_SOURCE_DIR ? { dir: path.resolve(process.env.BENCH_SOURCE_DIR), label: `sources in ${process.env.BENCH_SOURCE_DIR}` } : { label: "work tree" })];
  const revs = (process.env.BENCH_SOURCE ?? "").split(",").filter(Boolean);
  revs.forEach((rev, i) => {
    const short = execFileSync("git", ["rev-parse", "--short", rev], { cwd: repo, encoding: "utf8" }).trim();
    builds.push(buildOne(path.join(base, `baseline-${i}`), { rev, label: rev === short ? rev : `${rev} (${short})` }));
  });
  // `BENCH_ENV=NAME=value` adds the work tree's build once more, run with that variable set (a
  // switch the code reads, e.g. NODE_DISABLE_COMPILE_CACHE=1 for the bin shim's compile cache).
  const variant = process.env.BENCH_ENV;
  if (variant) {
    const at = variant.indexOf("=");
    builds.push({ ...builds[0], label: `${builds[0].label}, ${variant}`, env: { [variant.slice(0, at)]: variant.slice(at + 1) } });
  }
  return builds;
}
