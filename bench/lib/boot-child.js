/**
 * One boot, in a fresh process (run under Node or Bun by bench/boot.js): loads a fixture's tools
 * one way and prints `{"ms": <in-process ms>, "tools": <n>}` as one JSON line.
 *
 *   ours    import the built library and call `discoverAndLoadCustomTools` (discovery included)
 *   floor   `import()` each pre-built .js tool in order and call its factory: the least any
 *           loader can do
 *   native  the same loop over the .ts files (Bun runs them natively)
 *   floor-all every file `import()`ed at once (`Promise.all`), then each factory called in order:
 *           the floor of seed-style tools (issue 44), which take TypeBox from `api.typebox`;
 *           with `compileCache: <dir>` (floor and floor-all), the same with Node's compile cache on
 *           (`module.enableCompileCache`), turned on at the child's start, before TypeBox
 *   refresh what an install leaves for the next boot: `refreshBootIndex` of the boot index
 *           (src/boot), which compiles new TypeScript entries into the transpile cache
 *
 * Two clocks, both printed: `total` starts at the child's first line, so it counts importing
 * TypeBox and (for ours) the xcsh-tools library; `call` starts once both are imported, as they
 * are in a running host, and counts only discovery + loading (ours) or the import loop (floor).
 * `cpu*` are the same spans in CPU time (user + system, all threads), steadier than wall time on
 * a busy machine. A run that loads a different number of tools than the fixture holds, or
 * reports any error, exits 1: a fast wrong boot is not a result.
 *
 *   node bench/lib/boot-child.js '<json job>'
 */
import { pathToFileURL } from "node:url";

const started = performance.now();
const startedCpu = process.cpuUsage();
const cpuSince = (from) => {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1000;
};
const job = JSON.parse(process.argv[2] ?? "{}");

function fail(message) {
  process.stderr.write(`boot-child (${job.mode}): ${message}\n`);
  process.exit(1);
}

/** The API a factory receives in the floor loops (no discovery, no checks); `typebox` is set once imported. */
const api = { cwd: job.cwd, exec: async () => ({ stdout: "", stderr: "", code: 0, killed: false }), hasUI: false, typebox: undefined };

async function instantiate(module) {
  const factory = module.default ?? module;
  const result = await factory(api);
  return Array.isArray(result) ? result.length : 1;
}

async function importLoop(files) {
  let count = 0;
  for (const file of files) count += await instantiate(await import(pathToFileURL(file).href));
  return count;
}

async function importAll(files) {
  const modules = await Promise.all(files.map((file) => import(pathToFileURL(file).href)));
  let count = 0;
  for (const module of modules) count += await instantiate(module);
  return count;
}

// The floor with Node's compile cache (`compileCache`, floor and floor-all): any loader may turn it on,
// so the least a loader could do includes it; its second and later runs read a warm cache.
// `hostCompileCache` (ours): the same host, turning it on at its start, then running our boot.
if (job.compileCache ?? job.hostCompileCache) {
  const { enableCompileCache } = await import("node:module");
  enableCompileCache?.(job.compileCache ?? job.hostCompileCache);
}

let tools;
let callStarted = started;
let callStartedCpu = startedCpu;
// The host's TypeBox: tools get it through the module map (ours) or node_modules (floor).
api.typebox = await import("@sinclair/typebox");
if (job.mode === "ours") {
  const { discoverAndLoadCustomTools } = await import(pathToFileURL(job.library).href);
  callStarted = performance.now();
  callStartedCpu = process.cpuUsage();
  const result = await discoverAndLoadCustomTools([], job.cwd, [], undefined, {
    home: job.home,
    xcshHome: job.xcshHome,
    // `XCSH_PLUGIN_SEED_DIR` for bench/seed.js; nothing else of the process's environment.
    env: job.env ?? {},
  });
  if (result.errors.length > 0) fail(`${result.errors.length} errors, first: ${JSON.stringify(result.errors[0])}`);
  tools = result.tools.length;
} else if (job.mode === "floor" || job.mode === "native") {
  callStarted = performance.now();
  callStartedCpu = process.cpuUsage();
  tools = await importLoop(job.files);
} else if (job.mode === "floor-all") {
  callStarted = performance.now();
  callStartedCpu = process.cpuUsage();
  tools = await importAll(job.files);
} else if (job.mode === "refresh") {
  const { refreshBootIndex } = await import(pathToFileURL(job.bootModule).href);
  await refreshBootIndex({ home: job.home, xcshHome: job.xcshHome, cwd: job.cwd, env: job.env ?? {} });
  tools = job.expect;
} else {
  fail(`unknown mode ${job.mode}`);
}
const now = performance.now();
const cpuTotal = cpuSince(startedCpu);
const cpuCall = cpuSince(callStartedCpu);
if (tools !== job.expect) fail(`loaded ${tools} tools, expected ${job.expect}`);
process.stdout.write(`${JSON.stringify({ total: now - started, call: now - callStarted, cpuTotal, cpuCall, tools })}\n`);
