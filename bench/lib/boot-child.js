/**
 * One boot, in a fresh process (run under Node or Bun by bench/boot.js): loads a fixture's tools
 * one way and prints `{"ms": <in-process ms>, "tools": <n>}` as one JSON line.
 *
 *   ours    import the built library and call `discoverAndLoadCustomTools` (discovery included)
 *   floor   `import()` each pre-built .js tool in order and call its factory: the least any
 *           loader can do
 *   native  the same loop over the .ts files (Bun runs them natively)
 *   refresh what an install leaves for the next boot: `refreshBootIndex` of the boot index
 *           (src/boot), which compiles new TypeScript entries into the transpile cache
 *
 * The clock starts before the library (or the first tool) is imported, so what the host pays
 * for loading xcsh-tools itself is counted. A run that loads a different number of tools than
 * the fixture holds, or reports any error, exits 1: a fast wrong boot is not a result.
 *
 *   node bench/lib/boot-child.js '<json job>'
 */
import { pathToFileURL } from "node:url";

const started = performance.now();
const job = JSON.parse(process.argv[2] ?? "{}");

function fail(message) {
  process.stderr.write(`boot-child (${job.mode}): ${message}\n`);
  process.exit(1);
}

/** The API a factory receives in the floor loops (no discovery, no checks). */
const api = { cwd: job.cwd, exec: async () => ({ stdout: "", stderr: "", code: 0, killed: false }), hasUI: false };

async function importLoop(files) {
  let count = 0;
  for (const file of files) {
    const module = await import(pathToFileURL(file).href);
    const factory = module.default ?? module;
    const result = await factory(api);
    count += Array.isArray(result) ? result.length : 1;
  }
  return count;
}

let tools;
if (job.mode === "ours") {
  const { discoverAndLoadCustomTools } = await import(pathToFileURL(job.library).href);
  const result = await discoverAndLoadCustomTools([], job.cwd, [], undefined, {
    home: job.home,
    xcshHome: job.xcshHome,
    env: {},
  });
  if (result.errors.length > 0) fail(`${result.errors.length} errors, first: ${JSON.stringify(result.errors[0])}`);
  tools = result.tools.length;
} else if (job.mode === "floor" || job.mode === "native") {
  tools = await importLoop(job.files);
} else if (job.mode === "refresh") {
  const { refreshBootIndex } = await import(pathToFileURL(job.bootModule).href);
  await refreshBootIndex({ home: job.home, xcshHome: job.xcshHome, cwd: job.cwd, env: {} });
  tools = job.expect;
} else {
  fail(`unknown mode ${job.mode}`);
}
const ms = performance.now() - started;
if (tools !== job.expect) fail(`loaded ${tools} tools, expected ${job.expect}`);
process.stdout.write(`${JSON.stringify({ ms, tools })}\n`);
