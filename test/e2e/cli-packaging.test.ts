/**
 * The packaging model: the package has no runtime dependencies. `npm run build` bundles every
 * entry point with all third-party code inside (scripts/build.mjs), so what runs is dist/ alone;
 * `npm audit` of the repository's lockfile covers the versions bundled. Checked here: package.json
 * declares no dependency a user's npm would install, dist/ imports nothing but Node built-ins
 * and its own files, and the packed tarball, installed into a temp prefix offline with no
 * node_modules of ours anywhere above it, runs the CLI (an install of a plugin folder, `list`,
 * `tools`) and serves the package's two entries, under every runtime the package supports.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const EXAMPLE_PLUGIN = path.join(REPO, "examples", "plugin-greet");
const pkg = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as Record<string, unknown>;

let w: TmpWorld;
/** The installed package folder inside the temp prefix. */
let installed: string;
let bin: string;

beforeAll(async () => {
  await buildDist();
  // Outside the repository (no node_modules of ours above it), in the OS temp folder.
  w = await makeTmpWorld();
  const packs = path.join(w.root, "packs");
  const prefix = path.join(w.root, "prefix");
  await mkdir(packs, { recursive: true });
  await mkdir(prefix, { recursive: true });
  // --ignore-scripts: `prepare` would rebuild dist/ under the other test files.
  const tarball = execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", packs], { cwd: REPO, encoding: "utf8" }).trim().split("\n").pop()!;
  // Offline, with no cache: an install that needed any registry package would fail.
  execFileSync("npm", ["install", "--global", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--prefix", prefix, "--cache", path.join(w.root, "empty-cache"), path.join(packs, tarball)], { cwd: w.root, encoding: "utf8", stdio: "pipe" });
  installed = path.join(prefix, "lib", "node_modules", "xcsh-tools");
  bin = path.join(prefix, "bin", "xcsh-tools");
}, 240_000);
afterAll(async () => w?.cleanup());

describe("the packaging model: one bundle, no runtime dependencies", () => {
  it("package.json declares no dependency a user's install would fetch", () => {
    for (const field of ["dependencies", "optionalDependencies", "peerDependencies", "bundleDependencies", "bundledDependencies"]) expect(pkg[field], field).toBeUndefined();
    const ls = JSON.parse(execFileSync("npm", ["ls", "--omit=dev", "--json"], { cwd: REPO, encoding: "utf8" })) as { dependencies?: object };
    expect(ls.dependencies ?? {}).toEqual({});
  });

  it("dist/ imports nothing but Node built-ins and its own files", async () => {
    const files = (await readdir(path.join(REPO, "dist"), { recursive: true })).map(String).filter((f) => f.endsWith(".js"));
    expect(files).toEqual(expect.arrayContaining(["index.js", "testing.js", path.join("cli", "main.js"), path.join("validate", "child.js")]));
    const builtins = new Set((await import("node:module")).builtinModules);
    const outside: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(REPO, "dist", file), "utf8");
      const specifiers = [
        ...[...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s*"([^"]+)"/gm)].map((m) => m[1]!),
        ...[...text.matchAll(/^\s*import\s*"([^"]+)"/gm)].map((m) => m[1]!),
        ...[...text.matchAll(/\b(?:__require|import)\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!),
      ];
      for (const s of specifiers) {
        if (s.startsWith(".") || s.startsWith("node:") || builtins.has(s)) continue;
        // The debug package's optional require of supports-color, inside a try.
        if (s === "supports-color") continue;
        outside.push(`${file}: ${s}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it("the installed tarball holds no node_modules and nothing of ours lies above it", () => {
    expect(existsSync(path.join(installed, "package.json"))).toBe(true);
    expect(existsSync(path.join(installed, "node_modules"))).toBe(false);
    for (let dir = path.dirname(path.dirname(installed)); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      // The prefix's own lib/node_modules holds only us.
      const modules = path.join(dir, "node_modules");
      if (existsSync(modules)) expect(readdirSync(modules), modules).toEqual(["xcsh-tools"]);
    }
  });

  it("the installed CLI installs a plugin folder and lists it, loading only its own files", { timeout: 120_000 }, async () => {
    const world = await makeTmpWorld();
    try {
      const logs = path.join(world.root, "logs");
      await mkdir(logs, { recursive: true });
      // Every module resolved for `import` and every CommonJS file loaded, per process.
      const hooks = path.join(world.root, "log-hooks.mjs");
      await writeFile(hooks, `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(logs)} + "/" + process.pid, result.url + "\\n");\n  return result;\n}\n`);
      const register = path.join(world.root, "register.mjs");
      await writeFile(
        register,
        `import { register, createRequire } from "node:module";\nimport { appendFileSync } from "node:fs";\nimport { pathToFileURL } from "node:url";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n` +
          `const cache = createRequire(import.meta.url).cache;\nprocess.on("exit", () => appendFileSync(${JSON.stringify(logs)} + "/" + process.pid, Object.keys(cache).map((f) => pathToFileURL(f).href).join("\\n") + "\\n"));\n`,
      );
      const env = hermeticEnv(world.home, { NODE_OPTIONS: `--import=${pathToFileURL(register).href}` });
      const install = await runProcess(process.execPath, [bin, "install", EXAMPLE_PLUGIN], { cwd: world.cwd, env, timeoutMs: 60_000 });
      expect(install.code, install.stderr).toBe(0);
      const list = await runProcess(process.execPath, [bin, "list", "--json"], { cwd: world.cwd, env, timeoutMs: 60_000 });
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.stringify(JSON.parse(list.stdout))).toContain("@example/xcsh-greet");
      const files = new Set<string>();
      for (const pid of await readdir(logs)) for (const url of (await readFile(path.join(logs, pid), "utf8")).split("\n")) if (url.startsWith("file:")) files.add(fileURLToPath(url));
      // The install forked the validation child, which loaded the plugin's tools (they are the plugin's own files).
      expect([...files].some((f) => f.startsWith(path.join(installed, "dist", "validate") + path.sep))).toBe(true);
      const strays = [...files].filter((f) => !f.startsWith(installed + path.sep) && !f.startsWith(world.root + path.sep));
      expect(strays).toEqual([]);
      expect([...files].filter((f) => f.startsWith(REPO + path.sep))).toEqual([]);
    } finally {
      await world.cleanup();
    }
  });

  describe("the installed package runs under each runtime: the CLI and both entries", () => {
    for (const runtime of runtimes()) {
      runtimeIt(runtime)(`${runtime.label}${skipNote(runtime)}`, { timeout: 120_000 }, async () => {
        const command = requireRuntime(runtime);
        const world = await makeTmpWorld();
        try {
          const env = hermeticEnv(world.home);
          const version = await runProcess(command, [path.join(installed, "bin", "xcsh-tools.js"), "--version"], { cwd: world.cwd, env, timeoutMs: 60_000 });
          expect(version.code, version.stderr).toBe(0);
          expect(version.stdout.trim()).toBe(pkg.version);
          const tools = await runProcess(command, [path.join(installed, "bin", "xcsh-tools.js"), "tools", "--json"], { cwd: world.cwd, env, timeoutMs: 60_000 });
          expect(tools.code, tools.stderr).toBe(0);
          expect(JSON.parse(tools.stdout)).toMatchObject({ tools: [] });
          // A host's import of the package by name, from a folder beside the prefix's node_modules.
          const host = path.join(path.dirname(installed), "..", "host.mjs");
          await writeFile(host, `const lib = await import("xcsh-tools");\nconst testing = await import("xcsh-tools/testing");\nconsole.log(JSON.stringify({ lib: typeof lib.discoverAndLoadCustomTools, testing: typeof testing.createToolHarness }));\n`);
          const imported = await runProcess(command, [host], { cwd: world.cwd, env, timeoutMs: 60_000 });
          expect(imported.code, imported.stderr).toBe(0);
          expect(JSON.parse(imported.stdout)).toEqual({ lib: "function", testing: "function" });
        } finally {
          await world.cleanup();
        }
      });
    }
  });
});
