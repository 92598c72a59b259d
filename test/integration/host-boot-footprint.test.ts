/**
 * What a host's boot loads (issue 44 point 4): `discoverAndLoadCustomTools` from the built
 * package, in a process of its own on each Node, loads the boot's chunks and nothing of the CLI,
 * and no Node builtin it does not use on that runtime. Each of these was once on every host's
 * boot, unseen, because a module on the boot path imported it statically for a rare case: the
 * organization policy's filter pulled in the CLI's query chunk (64 KB: the program, the `tools`
 * command) for its JSON reader; core/paths.ts loaded `node:crypto` for team stamps; the resolve
 * hook's module loaded `node:worker_threads` for the hook flavour of Node < 22.15 only.
 *
 * The class: a module of the boot path may reach a rare dependency only when it is needed. The
 * probe boots a seed-style tool and an npm plugin's tool (so the policy filter runs: it stats for a
 * policy file when a plugin's tool is there) and reports every file its resolver saw and every
 * builtin the process loaded meanwhile.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { xcshPaths } from "../../src/core/paths.js";
import { modulesOfLoadedFiles } from "../helpers/build-dist.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { REPO_ROOT, requireRuntime, runtimeIt, runtimes, skipNote, type Runtime } from "../helpers/runtimes.js";

let world: TmpWorld;
let probeFile: string;

/**
 * Logs every resolved URL (in-thread where Node can: `module.register` itself starts a worker),
 * then boots; prints the tools, the error codes, the URLs, and the builtins loaded since the hook.
 */
const PROBE = `
import { appendFileSync } from "node:fs";
import nodeModule from "node:module";
const urls = [];
const log = ${JSON.stringify("__LOG__")};
if (typeof nodeModule.registerHooks === "function") {
  nodeModule.registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); urls.push(r.url); return r; } });
} else {
  const source = "import { appendFileSync } from 'node:fs'; export async function resolve(s, c, n) { const r = await n(s, c); appendFileSync(" + JSON.stringify(log) + ", r.url + '\\\\n'); return r; }";
  nodeModule.register("data:text/javascript," + encodeURIComponent(source));
}
const before = new Set(process.moduleLoadList);
const ours = await import(${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, "dist", "index.js")).href)});
const result = await ours.discoverAndLoadCustomTools([], process.cwd(), [], undefined, { home: process.env.HOME, xcshHome: process.env.XCSH_HOME, env: {} });
const builtins = process.moduleLoadList.filter((m) => !before.has(m) && m.startsWith("NativeModule ")).map((m) => m.slice("NativeModule ".length));
process.stdout.write(JSON.stringify({ tools: result.tools.map((t) => t.tool.name).sort(), errors: result.errors.map((e) => e.code), urls, builtins }));
`;

interface Footprint {
  tools: string[];
  errors: string[];
  /** Our modules (dist/ files stand for the modules the bundle put in them) and any other file loaded. */
  modules: string[];
  builtins: string[];
}

/** Boot under `runtime`; `scan`: with no boot index, so the boot scans and writes one (the next boot reads it fresh). */
function boot(runtime: Runtime, scan = false): Footprint {
  if (scan) rmSync(xcshPaths({ home: world.home, xcshHome: world.xcshHome }).bootIndex, { force: true });
  const log = path.join(world.root, `resolved-${runtime.id}.log`);
  writeFileSync(log, "");
  writeFileSync(probeFile, PROBE.replace(JSON.stringify("__LOG__"), JSON.stringify(log)));
  const run = spawnSync(requireRuntime(runtime), [probeFile], {
    cwd: world.cwd,
    encoding: "utf8",
    timeout: 60_000,
    env: { PATH: process.env.PATH, HOME: world.home, XCSH_HOME: world.xcshHome },
  });
  if (run.status !== 0) throw new Error(`probe failed under ${runtime.id} (${run.status}): ${run.stderr}\n${run.stdout}`);
  const out = JSON.parse(run.stdout) as { tools: string[]; errors: string[]; urls: string[]; builtins: string[] };
  const logged = readFileSync(log, "utf8").split("\n").filter(Boolean);
  return { tools: out.tools, errors: out.errors, modules: modulesOfLoadedFiles([...out.urls, ...logged]), builtins: out.builtins };
}

/**
 * Our modules a host's boot has no use for: the CLI, installers, team sets. (The JSON file reader,
 * 6 KB, is in the boot-index chunk on purpose: a boot that scans reads manifests with it, and the
 * policy filter a policy file; elsewhere it pulled the CLI's query chunk into those boots.)
 */
const NOT_ON_BOOT = /\/src\/(cli|marketplace|plugins|teamset|validate|components)\/|\/src\/core\/(config|journal|lock|policy)\.ts$/;

beforeAll(async () => {
  // The package as the test run built it (vitest's global setup builds dist/ from src).
  world = await makeTmpWorld("xcsh-tools-boot-footprint-", { trustProject: true });
  probeFile = path.join(world.root, "probe", "probe.mjs");
  mkdirSync(path.dirname(probeFile), { recursive: true });
  await world.write("home/.xcsh/agent/tools/seed_tool.ts", `interface Api { typebox: { Type: any } }\nexport default (api: Api) => ({ name: "seed_tool", description: "d", parameters: api.typebox.Type.Object({}), execute: async () => ({ content: [] }) });\n`);
  const plugins = path.join(world.xcshHome, "plugins");
  await world.write(path.join(plugins, "package.json"), { name: "xcsh-plugins", private: true, dependencies: { "npm-tool": "^1.0.0" } });
  await world.write(path.join(plugins, "node_modules/npm-tool/package.json"), { name: "npm-tool", version: "1.0.0", type: "module", xcsh: { tools: "./tool.js" } });
  await world.write(path.join(plugins, "node_modules/npm-tool/tool.js"), `export default () => ({ name: "npm_tool", description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) });\n`);
});

afterAll(async () => {
  await world?.cleanup();
});

describe("a host's boot loads the boot's modules only", () => {
  const nodes = runtimes().filter((r) => r.id !== "bun");

  for (const node of nodes) {
    runtimeIt(node)(`${node.id}${skipNote(node)}: discoverAndLoadCustomTools of a seed-style and an npm plugin's tool, from a fresh boot index, loads none of the CLI's modules`, () => {
      // A boot that finds no index scans and writes one: still nothing of the CLI.
      const scanned = boot(node, true);
      expect(scanned.tools).toEqual(["npm_tool", "seed_tool"]);
      expect(scanned.modules.filter((m) => NOT_ON_BOOT.test(m))).toEqual([]);
      const footprint = boot(node);
      expect({ tools: footprint.tools, errors: footprint.errors }).toEqual({ tools: ["npm_tool", "seed_tool"], errors: [] });
      expect(footprint.modules.some((m) => m.endsWith("/src/host/loader.ts"))).toBe(true);
      // The index was only read: atomic-fs.ts, its writer, stayed unloaded too.
      expect(footprint.modules.filter((m) => NOT_ON_BOOT.test(m) || m.endsWith("/src/core/atomic-fs.ts"))).toEqual([]);
    });
  }

  const node22 = runtimes().find((r) => r.id === "node22")!;
  const node24 = runtimes().find((r) => r.id === "node24")!;

  runtimeIt(node24)(`node24${skipNote(node24)}: no node:crypto (Node 24's compile cache keeps the stripped TypeScript: no strip cache) and no node:worker_threads (in-thread hooks)`, () => {
    boot(node24, true);
    const { builtins, tools } = boot(node24);
    expect(tools).toEqual(["npm_tool", "seed_tool"]);
    expect(builtins.filter((m) => m === "crypto" || m === "worker_threads" || m.startsWith("internal/worker"))).toEqual([]);
  });

  runtimeIt(node22)(`node22${skipNote(node22)}: no node:worker_threads (Node 22.15+ hooks run in-thread); node:crypto only for the strip cache, which still loads`, () => {
    boot(node22, true);
    const { builtins, tools } = boot(node22);
    expect(tools).toEqual(["npm_tool", "seed_tool"]);
    expect(builtins.filter((m) => m === "worker_threads" || m.startsWith("internal/worker"))).toEqual([]);
  });
});
