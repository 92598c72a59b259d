#!/usr/bin/env node
/**
 * Build step after `tsc` and bundle-typebox: the module-checking child of `validate` and
 * `install` (<dist>/validate/child.js) becomes one file holding every module of ours it loads and
 * the TypeBox package it hands to tools, written over the tsc output in place (same folder, so
 * the `import.meta.url`-relative paths in our code stay right). Each check then starts by reading
 * one module instead of ~230: loading the real TypeBox (some 200 small ES modules) and ours was
 * ~150 ms of the child's CPU on Node 20, paid by every install while the parent resolves and
 * extracts on the same cores; the bundle loads ~90 ms sooner. A plain `tsc` writes the unbundled
 * child again, which works the same, only slower to start.
 *
 * Only the child gets a bundled TypeBox: it is a process of our own where tools see no TypeBox but
 * the module map's, so a copy is indistinguishable from the package (same code, one instance per
 * process). The loader that hosts import keeps handing tools the real package (module-map.ts).
 * Dynamic imports of our modules (the module map's `xcsh-tools` namespace, the Node hooks) are
 * inlined, their evaluation still deferred to the first import, so the child holds one instance
 * of each. Every other package stays outside, resolved at run time from our dependencies; one
 * whose every binding was shaken off (semver: only manifest checks use it) is not loaded at all,
 * as none of our dependencies has an effect at load time. The result is checked: it imports
 * nothing of ours and no package but our own dependencies. Rolldown is vitest's own bundler.
 *
 * Not done for the CLI (measured): one file saved an install ~40-60 ms and `list` ~45 ms, but the
 * static imports of packages it hoists (semver, npm-package-arg) and the whole file's compile made
 * `tools` answering from the boot index 0.17 -> 0.25 s and `--version` ~25 ms slower.
 *
 *   node scripts/bundle-child.mjs [dist folder]
 */
import { readFileSync, renameSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { importsOf, isBare, isBuiltin, ownDependencies, packageOf } from "./lib/specifiers.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.resolve(process.argv[2] ?? path.join(repo, "dist"));
const BANNER = "// Bundled by scripts/bundle-child.mjs from the tsc output of src/validate/child.ts.";
const target = path.join(dist, "validate", "child.js");
const temp = `${target}.${process.pid}.bundle.js`;
/** The one package the bundle takes inside: the module map's TypeBox is the point of it. */
const INSIDE = "@sinclair/typebox";

const dependencies = ownDependencies(repo);

try {
  if (readFileSync(target, "utf8").startsWith(BANNER)) throw new Error(`${target} is already bundled: run tsc first`);
  const isInside = (id) => packageOf(id) === INSIDE;
  await build({
    input: target,
    platform: "node",
    logLevel: "warn",
    external: (id) => isBuiltin(id) || (isBare(id) && !isInside(id)),
    treeshake: { moduleSideEffects: (_id, external) => !external },
    output: { file: temp, format: "esm", codeSplitting: false, charset: "ascii", banner: BANNER, comments: { legal: true, annotation: false, jsdoc: false } },
  });
  const strays = [...new Set(importsOf(readFileSync(temp, "utf8")))].filter((s) => !isBuiltin(s) && !(isBare(s) && dependencies.has(packageOf(s)) && !isInside(s)));
  if (strays.length > 0) throw new Error(`the bundle still imports ${strays.join(", ")} (only Node built-ins and our dependencies other than ${INSIDE} may stay outside)`);
  renameSync(temp, target);
} catch (error) {
  rmSync(temp, { force: true });
  console.error(`bundle-child: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
