/**
 * Under Bun the loader imports a load's modules in batches started together (host/loader.ts
 * `importInBatches`, host/module-import.ts `importToolModulesUnderBun`): one set-up and one
 * deadline per batch instead of a wrapper per import, as the floor does (`Promise.all` of
 * `import()`); on Node it keeps its pool of slots. The class: however imports are started, each
 * keeps every guarantee of one import at a time. Each case runs the built package under Bun,
 * Node 22 and Node 24 (the native imports of the pool) in a process of its own and compares a load of the
 * whole set in one call with the oracle, the same loader fed one entry at a time (each import and
 * factory over before the next starts: the sequential semantics by construction), and checks the
 * codes, paths and messages a user sees.
 *
 * - a hostile mixed set: each failure is its own coded error on its own entry, its siblings load;
 * - a module that never settles: `EIMPORT_TIMEOUT` on that entry alone, at the one deadline, and a
 *   sibling that settles later than another's failure still loads;
 * - the module map is in place before the batch's first import (a bare host name resolves), and
 *   put in place once per load;
 * - never more than `IMPORT_CONCURRENCY` imports in flight, and the batch filled;
 * - nothing of a tool runs before its own import: factories run in input order after it.
 */
import { spawnSync } from "node:child_process";
import { symlinkSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect } from "vitest";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { REPO_ROOT, requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";

/** Bun (batches) and the Nodes that strip types (the pool, every file here native first but the enum). */
const RUNTIMES = runtimes().filter((r) => r.id === "bun" || r.id === "node22" || r.id === "node24");
/** loader.ts IMPORT_CONCURRENCY on each (this test runs under another Node, so it cannot read it). */
const BOUND: Record<string, number> = { bun: 256, node22: 32, node24: 32 };
const BUILTINS = ["bash", "read"];

interface Summary {
  tools: { name: string; path: string; resolvedPath: string }[];
  errors: { path: string; code: string; error: string; toolName?: string }[];
}
interface ProbeOut {
  batched: Summary;
  sequential: Summary;
  ms: number;
  trace: { evaluated: string[]; factories: string[]; max?: number };
  listings: number;
}

/**
 * Loads `entries` twice in one process, all at once and then one at a time on a second
 * loader (the modules are cached by then, so the oracle's imports settle at once: its answer is
 * the sequential loader's), and prints both.
 */
const PROBE = `
const ours = await import(__LIBRARY__);
const job = JSON.parse(process.argv[2]);
let listings = 0;
const modules = new Proxy({ "bun-batch-host-lib": { answer: 42 } }, { ownKeys: (t) => (listings++, Reflect.ownKeys(t)) });
const options = { home: process.env.HOME, xcshHome: process.env.XCSH_HOME, importTimeoutMs: job.importTimeoutMs, factoryTimeoutMs: 5000, modules };
const summary = (r) => ({
  tools: r.tools.map((t) => ({ name: t.tool.name, path: t.path, resolvedPath: t.resolvedPath })),
  errors: r.errors.map((e) => ({ path: e.path, code: e.code, error: e.error, ...(e.toolName ? { toolName: e.toolName } : {}) })),
});
const started = performance.now();
const batched = summary(await ours.loadCustomTools(job.entries, process.cwd(), ${JSON.stringify(BUILTINS)}, undefined, options));
const ms = performance.now() - started;
const listed = listings;
const g = globalThis.__bunBatch ?? { evaluated: [], factories: [] };
const trace = { evaluated: [...g.evaluated], factories: [...g.factories], max: g.max };
const loader = new ours.CustomToolLoader(undefined, process.cwd(), ${JSON.stringify(BUILTINS)}, undefined, options);
for (const entry of job.entries) await loader.load([entry]);
process.stdout.write(JSON.stringify({ batched, sequential: summary(loader), ms, trace, listings: listed }));
process.exit(0);
`;

for (const RUNTIME of RUNTIMES) describe(`the loader's batched imports under ${RUNTIME.id}${skipNote(RUNTIME)}`, () => {
  let world: TmpWorld;
  let dir: string;

  beforeEach(async () => {
    world = await makeTmpWorld("xcsh-tools-bun-batch-");
    dir = path.join(world.root, "tools");
  });
  afterEach(async () => {
    await world?.cleanup();
  });

  const write = (file: string, content: string) => world.write(path.join(dir, file), content);
  const tool = (name: string) => `({ name: ${JSON.stringify(name)}, description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) })`;
  /** A module that records its evaluation and its factory call, in order. */
  const tracked = (id: string, returns: string, before = "") => `const g = (globalThis.__bunBatch ??= { evaluated: [], factories: [] });
${before}
g.evaluated.push(${JSON.stringify(id)});
export default () => { g.factories.push(${JSON.stringify(id)}); return ${returns}; };
`;

  async function probe(entries: { path: string }[], importTimeoutMs = 20_000): Promise<ProbeOut> {
    const file = await world.write("probe/probe.mjs", PROBE.replace("__LIBRARY__", JSON.stringify(pathToFileURL(path.join(REPO_ROOT, "dist", "index.js")).href)));
    const run = spawnSync(requireRuntime(RUNTIME), [file, JSON.stringify({ entries, importTimeoutMs })], {
      cwd: world.cwd,
      encoding: "utf8",
      timeout: 120_000,
      env: { PATH: process.env.PATH, HOME: world.home, XCSH_HOME: world.xcshHome },
    });
    if (run.status !== 0) throw new Error(`probe failed under ${RUNTIME.id} (${run.status}): ${run.stderr}\n${run.stdout}`);
    return JSON.parse(run.stdout) as ProbeOut;
  }

  runtimeIt(RUNTIME)("a hostile mixed set: every failure coded on its own entry, every sibling loaded, the sequential loader's exact answer", { timeout: 120_000 }, async () => {
    const entries = [
      { path: await write("good_a.ts", tracked("good_a", tool("good_a"))) },
      { path: await write("syntax.ts", "export default () => ({ name: ;\n") },
      { path: await write("throws.ts", `throw new Error("top-level failure of throws.ts");\n`) },
      { path: path.join(dir, "missing.ts") },
      { path: await write("declarative.json", "{}") },
      { path: await write("not_factory.ts", "export default 42;\n") },
      { path: await write("builtin.ts", tracked("builtin", tool("bash"))) },
      { path: await write("good_b.ts", tracked("good_b", `[${tool("good_b")}, ${tool("good_a")}]`)) },
      { path: await write("bad_import.ts", `import "./nowhere.ts";\nexport default () => (${tool("never")});\n`) },
      { path: await write("host_lib.ts", `import lib from "bun-batch-host-lib";\nexport default () => ({ ...${tool("host_lib")}, description: "answer " + lib.answer });\n`) },
      { path: await write("factory_throws.ts", `export default () => { throw new Error("factory of factory_throws.ts"); };\n`) },
      { path: await write("good_c.ts", tracked("good_c", tool("good_c"))) },
      // An enum: Node's stripping refuses it, and the import falls back to jiti for that file alone.
      { path: await write("enum_tool.ts", `enum E { A = 1 }\nexport default () => ({ ...${tool("enum_tool")}, description: "E.A = " + E.A });\n`) },
    ];
    const alias = path.join(dir, "alias_of_a.ts");
    symlinkSync(entries[0]!.path, alias);
    entries.push({ path: alias });

    const out = await probe(entries);
    expect(out.batched).toEqual(out.sequential);
    expect(out.batched.tools.map((t) => [t.name, path.basename(t.path)])).toEqual([
      ["good_a", "good_a.ts"],
      ["good_b", "good_b.ts"],
      ["host_lib", "host_lib.ts"],
      ["good_c", "good_c.ts"],
      ["enum_tool", "enum_tool.ts"],
    ]);
    expect(out.batched.errors.map((e) => [path.basename(e.path), e.code, e.toolName])).toEqual([
      ["syntax.ts", "EIMPORT", undefined],
      ["throws.ts", "EIMPORT", undefined],
      ["missing.ts", "EIMPORT", undefined],
      ["declarative.json", "EDECLARATIVE", undefined],
      ["not_factory.ts", "ENOT_A_FACTORY", undefined],
      ["builtin.ts", "ECONFLICT_BUILTIN", "bash"],
      ["good_b.ts", "ECONFLICT", "good_a"],
      ["bad_import.ts", "EIMPORT", undefined],
      ["factory_throws.ts", "EFACTORY_THROW", undefined],
    ]);
    const byFile = Object.fromEntries(out.batched.errors.map((e) => [path.basename(e.path), e.error]));
    expect(byFile["throws.ts"]).toMatch(/^Failed to load tool: .*top-level failure of throws\.ts/);
    expect(byFile["missing.ts"]).toMatch(/^Failed to load tool: .*missing\.ts/);
    expect(byFile["bad_import.ts"]).toMatch(/^Failed to load tool: .*nowhere\.ts/);
    expect(byFile["not_factory.ts"]).toContain("not_factory.ts exports a value of type number");
    // The module map was in place before the batch's first import, and put there once for the load.
    expect(out.listings).toBe(1);
    // Nothing of a tool ran before its own import; factories ran in input order, after.
    expect(out.trace.factories).toEqual(["good_a", "builtin", "good_b", "good_c"]);
  });

  runtimeIt(RUNTIME)("a module that never settles: EIMPORT_TIMEOUT on that entry alone at the deadline; later failures and successes keep theirs", { timeout: 120_000 }, async () => {
    const entries = [
      { path: await write("first.ts", tracked("first", tool("first"))) },
      { path: await write("hangs.ts", `await new Promise(() => {});\nexport default () => (${tool("hangs")});\n`) },
      // Settles after the others but before the deadline: its outcome must not be cut off.
      { path: await write("late.ts", tracked("late", tool("late"), "await new Promise((r) => setTimeout(r, 300));")) },
      { path: await write("late_throw.ts", `await new Promise((r) => setTimeout(r, 200));\nthrow new Error("late_throw.ts failed late");\n`) },
      { path: await write("last.ts", tracked("last", tool("last"))) },
    ];
    const out = await probe(entries, 1500);
    expect(out.batched.tools.map((t) => t.name)).toEqual(["first", "late", "last"]);
    expect(out.batched.errors.map((e) => [path.basename(e.path), e.code])).toEqual([
      ["hangs.ts", "EIMPORT_TIMEOUT"],
      ["late_throw.ts", "EIMPORT"],
    ]);
    expect(out.batched.errors[0]!.error).toBe(`Failed to load tool: Importing ${entries[1]!.path} did not settle within 1500 ms`);
    expect(out.batched.errors[1]!.error).toContain("late_throw.ts failed late");
    // One deadline, not one per import after another: the load ends at about the timeout.
    expect(out.ms).toBeGreaterThanOrEqual(1400);
    expect(out.ms).toBeLessThan(1500 * 2);
    // The oracle's second import of the hanging module waits on the runtime's cached one: the same answer.
    expect(out.sequential).toEqual(out.batched);
  });

  runtimeIt(RUNTIME)("never more than IMPORT_CONCURRENCY imports in flight, and each batch filled", { timeout: 120_000 }, async () => {
    // Each module counts itself in flight and waits until the count reaches the bound, and 100 ms
    // more (time for any import started past the bound to be counted):
    // fewer in flight would hang to the import timeout, more would exceed the count.
    const bound = BOUND[RUNTIME.id] as number;
    const entries: { path: string }[] = [];
    const gate = `(g.gate ??= (() => { let open; const promise = new Promise((r) => (open = r)); return { promise, open }; })())`;
    const before = `g.inflight = (g.inflight ?? 0) + 1; g.max = Math.max(g.max ?? 0, g.inflight);
if (g.inflight === ${bound}) setTimeout(() => ${gate}.open(), 100);
await ${gate}.promise;
g.inflight--;`;
    for (let i = 0; i < bound * 2 + 7; i++) entries.push({ path: await write(`p${i}.mjs`, tracked(`p${i}`, tool(`pool_${i}`), before)) });
    const out = await probe(entries, 20_000);
    expect(out.batched.errors).toEqual([]);
    expect(out.batched.tools.map((t) => t.name)).toEqual(entries.map((_, i) => `pool_${i}`));
    expect(out.trace.max).toBe(bound);
    expect(out.trace.factories).toEqual(entries.map((_, i) => `p${i}`));
  });
});
