/**
 * The packaging model: the package has no runtime dependencies. `npm run build` bundles every
 * entry point with all third-party code inside (scripts/build.mjs), so what runs is dist/ alone;
 * `npm audit` of the repository's lockfile covers the versions bundled. Checked here: package.json
 * declares no dependency a user's npm would install, dist/ imports nothing but Node built-ins
 * and its own files, and the packed tarball, installed into a temp prefix offline with no
 * node_modules of ours anywhere above it, runs the CLI (an install of a plugin folder, `list`,
 * `tools`) and serves the package's two entries, under every runtime the package supports.
 *
 * TypeBox, bundled too, is the one library a host shares with its tools: without `modules`, tools
 * get the host's own copy when one resolves from the installed package (the optional peer
 * dependency), else the bundled one; `modules` wins over both (host/import/module-map.ts
 * `defaultTypeBox`). Checked per runtime with a host that has no TypeBox, one that has its own,
 * and one that passes `modules`.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { cliArgv, hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const EXAMPLE_PLUGIN = path.join(REPO, "examples", "plugin-greet");
const pkg = JSON.parse(readFileSync(path.join(REPO, "package.json"), "utf8")) as Record<string, unknown>;

let w: TmpWorld;
/** The installed package folder inside the temp prefix. */
let installed: string;
let bin: string;
/** A host project with its own TypeBox beside a copy of the installed package in its node_modules. */
let hostApp: string;
/** A tool that imports TypeBox by bare name and records what it got, and what `api.typebox` is. */
let probeTool: string;

const PROBE_TOOL = `import * as bare from "@sinclair/typebox";
export default (api) => {
  globalThis.__typeboxSeen = { api: api.typebox, bare };
  return { name: "typebox_probe", label: "probe", description: "records its TypeBox", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } };
};
`;

/**
 * A host (run as \`host.mjs <tool> none|own|modules\`): no TypeBox of its own, its own (with a
 * format registered in it), or its own passed as \`modules\` (a copy of the namespace, marked).
 */
const TYPEBOX_HOST = `const [tool, mode] = process.argv.slice(2);
const lib = await import("xcsh-tools");
const own = mode === "none" ? undefined : await import("@sinclair/typebox");
// Asked before loading: the loader's module map then answers the bare name in this process too.
let hostResolvesNone = false;
if (!own) await import("@sinclair/typebox").catch(() => { hostResolvesNone = true; });
own?.FormatRegistry.Set("host-format", () => true);
const modules = mode === "modules" ? { "@sinclair/typebox": { ...own, passedAs: "modules" } } : undefined;
const result = await lib.loadCustomTools([{ path: tool }], process.cwd(), [], undefined, modules ? { modules } : {});
const seen = globalThis.__typeboxSeen;
console.log(JSON.stringify({
  errors: result.errors.map((e) => e.error),
  tools: result.tools.length,
  oneInstance: seen.api.Type === seen.bare.Type && seen.api.FormatRegistry === seen.bare.FormatRegistry,
  apiIsHosts: own ? seen.api.FormatRegistry === own.FormatRegistry && seen.api.FormatRegistry.Has("host-format") : null,
  bareIsHosts: own ? seen.bare.FormatRegistry === own.FormatRegistry : null,
  apiIsModules: modules ? seen.api === modules["@sinclair/typebox"] : null,
  bareIsModules: modules ? seen.bare.passedAs === "modules" : null,
  hostResolvesNone,
}));
`;

beforeAll(async () => {
  await buildDist();
  // Outside the repository (no node_modules of ours above it), in the OS temp folder.
  w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
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
  // The host project: the package as the host's npm would install it, and the host's TypeBox.
  hostApp = path.join(w.root, "host-app");
  cpSync(installed, path.join(hostApp, "node_modules", "xcsh-tools"), { recursive: true });
  await mkdir(path.join(hostApp, "node_modules", "@sinclair"), { recursive: true });
  symlinkSync(path.join(REPO, "node_modules", "@sinclair", "typebox"), path.join(hostApp, "node_modules", "@sinclair", "typebox"), "dir");
  await writeFile(path.join(hostApp, "host.mjs"), TYPEBOX_HOST);
  await mkdir(path.join(w.root, "tools"), { recursive: true });
  probeTool = path.join(w.root, "tools", "probe.mjs");
  await writeFile(probeTool, PROBE_TOOL);
}, 240_000);
afterAll(async () => w?.cleanup());

describe("the packaging model: one bundle, no runtime dependencies", () => {
  it("package.json declares no dependency a user's install would fetch", () => {
    for (const field of ["dependencies", "optionalDependencies", "bundleDependencies", "bundledDependencies"]) expect(pkg[field], field).toBeUndefined();
    // TypeBox only as an optional peer: the host's copy when it has one (npm never installs it for us).
    expect(pkg.peerDependencies).toEqual({ "@sinclair/typebox": "^0.34" });
    expect(pkg.peerDependenciesMeta).toEqual({ "@sinclair/typebox": { optional: true } });
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
    const world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
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
        const world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
        try {
          const env = hermeticEnv(world.home);
          const version = await runProcess(command, cliArgv(world.home, ["--version"], { runtime, bin: path.join(installed, "bin", "xcsh-tools.js") }), { cwd: world.cwd, env, timeoutMs: 60_000 });
          expect(version.code, version.stderr).toBe(0);
          expect(version.stdout.trim()).toBe(pkg.version);
          const tools = await runProcess(command, cliArgv(world.home, ["tools", "--json"], { runtime, bin: path.join(installed, "bin", "xcsh-tools.js") }), { cwd: world.cwd, env, timeoutMs: 60_000 });
          expect(tools.code, tools.stderr).toBe(0);
          expect(JSON.parse(tools.stdout)).toMatchObject({ tools: [] });
          // A host's import of the package by name, from a folder beside the prefix's node_modules.
          const host = path.join(path.dirname(installed), "..", "host.mjs");
          await writeFile(host, `const lib = await import("xcsh-tools");\nconst testing = await import("xcsh-tools/testing");\nconsole.log(JSON.stringify({ lib: typeof lib.discoverAndLoadCustomTools, testing: typeof testing.createToolHarness }));\n`);
          const imported = await runProcess(command, [host], { cwd: world.cwd, env, timeoutMs: 60_000 });
          expect(imported.code, imported.stderr).toBe(0);
          expect(JSON.parse(imported.stdout)).toEqual({ lib: "function", testing: "function" });

          // TypeBox: no copy beside the package (the prefix) -> the bundled one, one instance for the tool.
          await writeFile(path.join(path.dirname(host), "typebox-host.mjs"), TYPEBOX_HOST);
          const typebox = async (script: string, mode: string) => {
            const r = await runProcess(command, [script, probeTool, mode], { cwd: path.dirname(script), env, timeoutMs: 60_000 });
            expect(r.code, r.stderr).toBe(0);
            return JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, unknown>;
          };
          const base = { errors: [], tools: 1, oneInstance: true };
          expect(await typebox(path.join(path.dirname(host), "typebox-host.mjs"), "none")).toEqual({ ...base, apiIsHosts: null, bareIsHosts: null, apiIsModules: null, bareIsModules: null, hostResolvesNone: true });
          // The host's own copy beside the package -> that instance, in api.typebox and in the bare import.
          const hostScript = path.join(hostApp, "host.mjs");
          expect(await typebox(hostScript, "own")).toEqual({ ...base, apiIsHosts: true, bareIsHosts: true, apiIsModules: null, bareIsModules: null, hostResolvesNone: false });
          // modules wins over the host's copy.
          expect(await typebox(hostScript, "modules")).toMatchObject({ ...base, apiIsModules: true, bareIsModules: true });
        } finally {
          await world.cleanup();
        }
      });
    }
  });
});
