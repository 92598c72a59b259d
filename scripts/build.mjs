#!/usr/bin/env node
/**
 * `npm run build`: the package's one build. The published package has no runtime dependencies:
 * every entry point and all third-party code it may load (pacote, arborist, semver,
 * npm-package-arg, TypeBox, commander, listr2, cosmiconfig, yaml, ini, tar, jiti...) are bundled
 * by rolldown into ESM files under dist/, with shared chunks, so a process loads each module once
 * and a command loads only the chunks it imports. tsc writes only the declarations (.d.ts).
 * Each entry has exactly one output: nothing at run time chooses between builds. Why a bundle and
 * not node_modules: docs/benchmarks.md (issue 32's packaging rule).
 *
 * Layout (every file two folders below the package root, so `new URL("../../package.json",
 * import.meta.url)` and `../../templates/` mean the same in any chunk as in src/):
 *   dist/cli/main.js          the CLI process (bin/xcsh-tools.js imports it)
 *   dist/lib/index.js         the package's entry ("xcsh-tools"; dist/index.js re-exports it)
 *   dist/lib/testing.js       "xcsh-tools/testing" (dist/testing.js re-exports it)
 *   dist/validate/child.js    the module-checking child that validate and install fork
 *   dist/chunks/*.js          code shared by the entries or loaded on first use
 *   dist/vendor/              files a bundled library reads at run time by path (below)
 *   dist/modules.json         which modules each file holds (for tests; not published)
 *
 * What the bundler cannot see, handled by scripts/lib/bundle.mjs:
 * - `const require = createRequire(import.meta.url); // unbundled only` in our sources: the line is
 *   dropped, so each `require("pkg")` in that module is the bundler's and bundles the package
 *   (CommonJS, evaluated on first call). Any other line marked `// unbundled only` is dropped too.
 * - sigstore, @npmcli/run-script, arborist's query selector, pacote's git client and folder
 *   packer, which pacote and arborist require at load but an install never or rarely calls
 *   (bundle.mjs `LAZY`): each becomes a stand-in that evaluates the real module on first use.
 * - @npmcli/agent's proxy module, which requires the three proxy agents at load but uses them only
 *   with a proxy: rewritten to require them on first use (bundle.mjs `lazyProxyAgents`).
 * - jiti's Babel transform (1.5 MB, needed only when a tool is transpiled, not when its cached
 *   output is read): kept out of the chunks, copied to dist/vendor/ and required from there.
 * - @npmcli/run-script's node-gyp shim folder (put on PATH for lifecycle scripts): copied beside
 *   the chunks where its `__dirname`-relative path points.
 * Node built-ins stay imports; the result is checked to import nothing else, but for one import
 * of a name held in a variable, which the bundler leaves to the runtime on purpose: the host's own
 * TypeBox, when one resolves beside the installed package (src/host/import/module-map.ts
 * `defaultTypeBox`; package.json declares it as an optional peer).
 *
 * A build of the very inputs dist/ was last built from is skipped: dist/.build-id holds a hash of
 * them (src/, scripts/, package.json, the lockfile, the tsconfigs). npm runs `prepare` on every
 * `npm install` in the clone and, where its script policy allows, when the clone is installed as
 * a `file:` link (a plugin scaffolded from a clone depends on it so); a rebuild of unchanged
 * sources would only remove dist/ under anything running from it.
 *
 *   node scripts/build.mjs [--out <folder>] [--no-types] [--force]
 * (--out: another dist folder, e.g. the benchmarks' builds; --no-types: the bundle alone;
 * --force: build even when dist/ was built from the same inputs)
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { bundle, isBuiltin, JITI_BABEL, repo } from "./lib/bundle.mjs";

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const dist = outAt >= 0 ? path.resolve(args[outAt + 1]) : path.join(repo, "dist");
const withTypes = !args.includes("--no-types");
const requireFromRepo = createRequire(path.join(repo, "package.json"));

const ENTRIES = {
  "cli/main": "src/cli/main.ts",
  "lib/index": "src/index.ts",
  "lib/testing": "src/testing.ts",
  "validate/child": "src/validate/child.ts",
};
/** Re-exports at the paths the package's exports name (and hosts import by path). */
const FACADES = { "index.js": "./lib/index.js", "testing.js": "./lib/testing.js" };

/** A hash of every input of the build (and of the kind of build asked for). */
function buildId() {
  const hash = createHash("sha256").update(JSON.stringify({ withTypes }));
  const files = ["package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json"];
  for (const folder of ["src", "scripts"]) for (const file of readdirSync(path.join(repo, folder), { recursive: true })) files.push(path.join(folder, String(file)));
  for (const file of files.sort()) {
    let text;
    try {
      text = readFileSync(path.join(repo, file));
    } catch {
      continue; // a folder
    }
    hash.update(file).update("\0").update(text).update("\0");
  }
  return hash.digest("hex");
}

const idFile = path.join(dist, ".build-id");
const id = buildId();
const readId = () => {
  try {
    return readFileSync(idFile, "utf8");
  } catch {
    return undefined;
  }
};
if (!args.includes("--force") && readId() === id && existsSync(path.join(dist, "cli", "main.js"))) {
  console.error(`build: ${path.relative(repo, dist) || dist} is up to date (the same inputs; --force to build anyway)`);
  process.exit(0);
}

const started = Date.now();
rmSync(dist, { recursive: true, force: true });
// Declarations only (the package's types and the tests' type checks); the code is rolldown's.
let typesFailed = false;
try {
  const tsc = path.join(path.dirname(requireFromRepo.resolve("typescript/package.json")), "bin", "tsc");
  if (withTypes) execFileSync(process.execPath, [tsc, "-p", "tsconfig.build.json", "--emitDeclarationOnly", "--outDir", dist], { cwd: repo, stdio: "inherit" });
} catch {
  // Reported above; the bundle is still written (the tests' build runs it beside others' edits), the build fails at the end.
  typesFailed = true;
}

const output = await bundle({ input: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, path.join(repo, file)])), dir: dist });

// Which modules each chunk holds (repository-relative), for the tests that check what a command
// loads; not part of the package (package.json `files` leaves it out).
const modules = Object.fromEntries(output.filter((item) => item.type === "chunk").map((chunk) => [chunk.fileName, chunk.moduleIds.filter((id) => !id.startsWith("\0")).map((id) => path.relative(repo, id).split(path.sep).join("/"))]));
writeFileSync(path.join(dist, "modules.json"), `${JSON.stringify(modules, null, 1)}\n`);
for (const [file, target] of Object.entries(FACADES)) writeFileSync(path.join(dist, file), `export * from ${JSON.stringify(target)};\n`);

// The result imports nothing but Node built-ins, its own chunks and the vendored Babel.
const chunks = new Set(output.filter((item) => item.type === "chunk").map((chunk) => chunk.fileName));
const strays = [];
// npm's libraries' chunk runs its body as a script (bundle.mjs npmLibrariesAsScript): its requires are there.
const scriptOf = (chunk) => output.find((item) => item.type === "asset" && item.fileName === chunk.fileName.replace(/\.js$/, ".script"))?.source ?? "";
for (const chunk of output.filter((item) => item.type === "chunk")) {
  const required = [...(chunk.code + scriptOf(chunk)).matchAll(/\b__require\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]);
  for (const spec of [...chunk.imports, ...chunk.dynamicImports, ...required]) {
    // supports-color: the debug package's optional require, inside a try.
    if (isBuiltin(spec) || chunks.has(spec) || spec === `../vendor/${JITI_BABEL}` || spec === "supports-color") continue;
    strays.push(`${chunk.fileName}: ${spec}`);
  }
}
// src/plugins/npm-libraries.ts hands our tarball check the tar that pacote extracts with: one module.
const tarOfPacote = createRequire(requireFromRepo.resolve("pacote")).resolve("tar");
if (tarOfPacote !== requireFromRepo.resolve("tar")) strays.push(`tar: pacote requires ${tarOfPacote}, our code ${requireFromRepo.resolve("tar")} (align package.json's range of tar with pacote's and reinstall)`);
// ...and the cacache pacote reads npm's cache with (the restore reads a locked tarball's bytes by digest through it).
const cacacheOfPacote = createRequire(requireFromRepo.resolve("pacote")).resolve("cacache");
if (cacacheOfPacote !== requireFromRepo.resolve("cacache")) strays.push(`cacache: pacote requires ${cacacheOfPacote}, our code ${requireFromRepo.resolve("cacache")} (align package.json's range of cacache with pacote's and reinstall)`);
if (strays.length > 0) {
  console.error(`build: the bundle still imports packages:\n  ${[...new Set(strays)].join("\n  ")}`);
  process.exit(1);
}
if (typesFailed) {
  console.error("build: tsc reported errors (above); the bundle was written");
  process.exit(1);
}
writeFileSync(idFile, id);
console.error(`build: dist/ in ${Date.now() - started} ms`);
