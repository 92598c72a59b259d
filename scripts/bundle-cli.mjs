#!/usr/bin/env node
/**
 * Build step after `tsc` and bundle-typebox: the CLI program (<dist>/cli/program.js) and every
 * module of ours it may load, written as one more file beside it, <dist>/cli/program.bundle.js.
 * The process entry (src/cli/main.ts) runs most commands from it: Node resolves, reads, links and
 * evaluates ~80 separate ES modules for an install, which cost it ~50 ms more than this one file
 * (Node 22, warm 20-plugin install: 0.82 -> 0.77 s, A/B), `list` and `outdated` ~20-45 ms. `tools`
 * and the program's help and version keep starting from the separate modules, which load less
 * than the bundle compiles (`tools` +16..24 ms from the bundle).
 *
 * A process loads either build, never both, so every module still has one instance. The one
 * module both share, the entry's command-name.ts, stays outside the bundle (it is imported from
 * its own file). Dynamic imports of our modules are inlined with their evaluation still deferred
 * to the first import, so the bundle keeps the separate modules' lazy loading of our code (the npm
 * bundle, for instance, still loads on first use). Packages stay outside, resolved at run time
 * from our dependencies. The result is checked: it imports nothing of ours but command-name.js
 * and no package but our own dependencies. Rolldown is vitest's own bundler.
 *
 *   node scripts/bundle-cli.mjs [dist folder]
 */
import { readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { importsOf, isBare, isBuiltin, ownDependencies, packageOf } from "./lib/specifiers.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.resolve(process.argv[2] ?? path.join(repo, "dist"));
const BANNER = "// Bundled by scripts/bundle-cli.mjs from the tsc output of src/cli/program.ts.";
const input = path.join(dist, "cli", "program.js");
const target = path.join(dist, "cli", "program.bundle.js");
const temp = `${target}.${process.pid}.tmp.js`;
/** Shared with the process entry, which loads it before choosing a build. */
const SHARED = "./command-name.js";
const sharedFile = path.join(dist, "cli", "command-name.js");

const dependencies = ownDependencies(repo);

try {
  await build({
    input,
    platform: "node",
    logLevel: "warn",
    external: (id, importer) =>
      isBuiltin(id) || isBare(id) || (importer !== undefined && !path.isAbsolute(id) ? path.resolve(path.dirname(importer), id) : id) === sharedFile,
    treeshake: { moduleSideEffects: (_id, external) => !external },
    output: { file: temp, format: "esm", codeSplitting: false, charset: "ascii", banner: BANNER, comments: { legal: true, annotation: false, jsdoc: false } },
  });
  const specifiers = [...new Set(importsOf(readFileSync(temp, "utf8")))];
  const strays = specifiers.filter((s) => s !== SHARED && !isBuiltin(s) && !(isBare(s) && dependencies.has(packageOf(s))));
  if (strays.length > 0) throw new Error(`the bundle still imports ${strays.join(", ")} (only Node built-ins, our dependencies and ${SHARED} may stay outside)`);
  if (!specifiers.includes(SHARED)) throw new Error(`the bundle does not import ${SHARED}: it would hold a second copy of the module the process entry loads`);
  renameSync(temp, target);
} catch (error) {
  rmSync(temp, { force: true });
  console.error(`bundle-cli: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
