#!/usr/bin/env node
/**
 * Build step after `tsc`: npm's libraries (pacote and @npmcli/arborist with their ~400 CommonJS
 * modules) become one file, <dist>/vendor/npm.cjs, which src/plugins/npm-client.ts loads instead
 * of the packages. Resolving, reading and wrapping that many files was a third of their load on
 * Node 20 (no compile cache there); one minified file loads ~40 ms sooner on Node 20 and 22
 * (a warm 20-plugin install: ~1.10 -> ~1.05 s). pnpm and yarn ship their CLIs bundled for the
 * same reason; npm itself does not. Rolldown is vitest's own bundler (via vite).
 *
 * Each library is evaluated on first use (the entry's getters): `outdated` never pays for
 * arborist. Kept outside the bundle, resolved at run time from our own dependencies:
 * - semver and npm-package-arg: our code uses them too, so there is one instance of each. They
 *   get a small bundle of their own, <dist>/vendor/npm-spec.cjs, holding every module of theirs
 *   the npm bundle requires, by specifier: our code takes them from it (src/core/npm-spec.ts) and
 *   npm-client.ts puts them in the npm bundle's require cache before loading it. As packages
 *   they were ~45 CommonJS files, ~25 ms of every command that parses a spec or a version;
 * - sigstore: pacote requires it eagerly, npm-client.ts defers it to its first use;
 * - @npmcli/run-script: it finds its node-gyp shims next to its own files (`__dirname`).
 * Our package.json depends on each directly (same ranges as pacote and arborist), so they
 * resolve from the bundle in any install layout; here the build checks that they are the very
 * files pacote and arborist would load. The results are checked: the npm bundle requires
 * nothing but Node built-ins and those, the spec bundle nothing but built-ins, and both load.
 * Their non-ASCII characters (Unicode tables of some dependencies) are written as escapes
 * (`charset: "ascii"`), so the code cache loader reads the npm bundle into a one-byte string
 * without UTF-8 decoding (src/core/code-cache.ts).
 *
 *   node scripts/bundle-npm.mjs [dist folder]
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { packageOf } from "./lib/specifiers.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dist = path.resolve(process.argv[2] ?? path.join(repo, "dist"));
const target = path.join(dist, "vendor", "npm.cjs");
const temp = `${target}.${process.pid}.tmp.cjs`;
const specTarget = path.join(dist, "vendor", "npm-spec.cjs");
const specTemp = `${specTarget}.${process.pid}.tmp.cjs`;
// The entries live inside the repository so that their requires resolve from our node_modules.
const entry = path.join(repo, "node_modules", ".cache", `xcsh-tools-npm-entry-${process.pid}.cjs`);
const specEntry = path.join(repo, "node_modules", ".cache", `xcsh-tools-npm-spec-entry-${process.pid}.cjs`);
/** The externals the spec bundle provides (with any of their subpaths the npm bundle requires). */
const SPEC_PACKAGES = ["semver", "npm-package-arg"];

const EXTERNAL = ["semver", "npm-package-arg", "sigstore", "@npmcli/run-script"];
const isExternal = (id) => EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`));

const ENTRY = `"use strict";
// Each library is evaluated on first access.
Object.defineProperties(exports, {
  pacote: { enumerable: true, get: () => require("pacote") },
  Arborist: { enumerable: true, get: () => require("@npmcli/arborist") },
  // node-tar, the instance pacote extracts with: src/plugins/tarball-check.ts parses with it.
  tar: { enumerable: true, get: () => require("tar") },
});
`;

/** Who requires each external, to check that the bundle's copy resolves to the same file. */
const USERS = { semver: ["pacote", "@npmcli/arborist"], "npm-package-arg": ["pacote", "@npmcli/arborist"], sigstore: ["pacote"], "@npmcli/run-script": ["pacote", "@npmcli/arborist"] };

try {
  mkdirSync(path.dirname(target), { recursive: true });
  mkdirSync(path.dirname(entry), { recursive: true });
  writeFileSync(entry, ENTRY);
  await build({
    input: entry,
    platform: "node",
    logLevel: "warn",
    external: isExternal,
    output: { file: temp, format: "cjs", minify: true, codeSplitting: false, charset: "ascii", comments: { legal: true, annotation: false, jsdoc: false } },
  });
  const text = readFileSync(temp, "utf8");
  const { builtinModules } = await import("node:module");
  const builtins = new Set(builtinModules);
  const required = [...new Set([...text.matchAll(/\brequire\(\s*[`"']([^`"']+)[`"']\s*\)/g)].map((m) => m[1]))];
  // supports-color: the debug package's optional require, inside a try.
  const strays = required.filter((s) => !s.startsWith("node:") && !builtins.has(s) && !isExternal(s) && s !== "supports-color");
  if (strays.length > 0) throw new Error(`the bundle still requires ${strays.join(", ")}`);
  const fromBundle = createRequire(temp);
  for (const [name, users] of Object.entries(USERS)) {
    const ours = fromBundle.resolve(name);
    for (const user of users) {
      const theirs = createRequire(createRequire(path.join(repo, "package.json")).resolve(user)).resolve(name);
      if (theirs !== ours) throw new Error(`${user} would load ${theirs} but the bundle loads ${ours}: align the range of ${name} in package.json with ${user}'s and reinstall`);
    }
  }
  const loaded = fromBundle(temp);
  if (typeof loaded.pacote.manifest !== "function" || typeof loaded.Arborist !== "function" || typeof loaded.tar.Parser !== "function") throw new Error("the bundle does not export pacote, Arborist and tar");

  // The spec bundle: every specifier of semver and npm-package-arg the npm bundle requires, and
  // the packages themselves for our code, each the very module it would load.
  const specIds = [...new Set([...SPEC_PACKAGES, ...required.filter((s) => SPEC_PACKAGES.includes(packageOf(s)))])].sort();
  writeFileSync(specEntry, `"use strict";\nmodule.exports = {\n${specIds.map((id) => `  ${JSON.stringify(id)}: require(${JSON.stringify(id)}),`).join("\n")}\n};\n`);
  await build({
    input: specEntry,
    platform: "node",
    logLevel: "warn",
    output: { file: specTemp, format: "cjs", minify: true, codeSplitting: false, charset: "ascii", comments: { legal: true, annotation: false, jsdoc: false } },
  });
  const specText = readFileSync(specTemp, "utf8");
  const specStrays = [...new Set([...specText.matchAll(/\brequire\(\s*[`"']([^`"']+)[`"']\s*\)/g)].map((m) => m[1]))].filter((s) => !s.startsWith("node:") && !builtins.has(s));
  if (specStrays.length > 0) throw new Error(`the spec bundle still requires ${specStrays.join(", ")}`);
  const spec = createRequire(specTemp)(specTemp);
  for (const id of specIds) if (spec[id] === undefined) throw new Error(`the spec bundle does not hold ${id}`);
  if (spec["npm-package-arg"]("a@^1").type !== "range" || spec.semver.satisfies("1.2.3", "^1") !== true) throw new Error("the spec bundle's npm-package-arg or semver does not work");
  renameSync(specTemp, specTarget);
  renameSync(temp, target);
} catch (error) {
  rmSync(temp, { force: true });
  rmSync(specTemp, { force: true });
  console.error(`bundle-npm: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
} finally {
  rmSync(entry, { force: true });
  rmSync(specEntry, { force: true });
}
