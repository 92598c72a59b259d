/**
 * One boot for bench/lazy.js, in a fresh process; prints `{"total", "call", "cpuTotal", "cpuCall",
 * "tools", "firstUse"?}` (ms) as one JSON line.
 *
 *   lazy     import the built library and call `discoverAndLoadCustomTools` with `lazyTools: true`
 *            and the host's TypeBox (`modules`), as a host asking for lazy tools does; then time
 *            the first `execute` of the first tool (its module's import) as `firstUse`
 *   floor    `Promise.all` of `import()` of every pre-built .js tool, and their factories: the
 *            least a loader that imports can do (every import in flight at once)
 *   refresh  what an install leaves for the next boot: `refreshBootIndex`, which validates the
 *            entries in the child and records their static definitions
 *
 * `total` counts from the first line (TypeBox and the library imported inside the clock); `call`
 * from when both are imported, as in a running host. A run that loads another number of tools
 * than the fixture holds, or reports an error, exits 1.
 *
 *   node bench/lib/lazy-child.js '<json job>'
 */
import { pathToFileURL } from "node:url";
import { cpuMsSince as cpuSince } from "./time.js";

const started = performance.now();
const startedCpu = process.cpuUsage();
const job = JSON.parse(process.argv[2] ?? "{}");
const fail = (message) => {
  process.stderr.write(`lazy-child (${job.mode}): ${message}\n`);
  process.exit(1);
};

const typebox = await import("@sinclair/typebox");
let tools;
let firstUse;
let callStarted = started;
let callStartedCpu = startedCpu;
let clocks;
/** The clocks at the end of the boot (the lazy run's first use comes after, on its own clock). */
const endCall = () => {
  const now = performance.now();
  clocks = { total: now - started, call: now - callStarted, cpuTotal: cpuSince(startedCpu), cpuCall: cpuSince(callStartedCpu) };
};
if (job.mode === "lazy") {
  const { discoverAndLoadCustomTools } = await import(pathToFileURL(job.library).href);
  callStarted = performance.now();
  callStartedCpu = process.cpuUsage();
  const result = await discoverAndLoadCustomTools([], job.cwd, [], undefined, { home: job.home, xcshHome: job.xcshHome, env: {}, lazyTools: true, modules: { "@sinclair/typebox": typebox } });
  endCall();
  if (result.errors.length > 0) fail(`${result.errors.length} errors, first: ${JSON.stringify(result.errors[0])}`);
  tools = result.tools.length;
  const before = performance.now();
  const answer = await result.tools[0].tool.execute("bench", { query: "q" }, undefined, {});
  firstUse = performance.now() - before;
  if (!answer?.content?.[0]?.text?.startsWith("q")) fail(`the first tool answered ${JSON.stringify(answer)}`);
} else if (job.mode === "floor") {
  const api = { cwd: job.cwd, typebox, exec: async () => ({ stdout: "", stderr: "", code: 0, killed: false }), hasUI: false };
  callStarted = performance.now();
  callStartedCpu = process.cpuUsage();
  const results = await Promise.all(job.files.map(async (file) => (await import(pathToFileURL(file).href)).default(api)));
  endCall();
  tools = results.reduce((n, r) => n + (Array.isArray(r) ? r.length : 1), 0);
} else if (job.mode === "refresh") {
  const { refreshBootIndex } = await import(pathToFileURL(job.bootModule).href);
  await refreshBootIndex({ home: job.home, xcshHome: job.xcshHome, cwd: job.cwd, env: {} });
  endCall();
  tools = job.expect;
} else fail(`unknown mode ${job.mode}`);
if (tools !== job.expect) fail(`loaded ${tools} tools, expected ${job.expect}`);
process.stdout.write(`${JSON.stringify({ ...clocks, tools, ...(firstUse !== undefined ? { firstUse } : {}) })}\n`);
