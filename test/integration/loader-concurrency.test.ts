/**
 * Concurrent imports must not change what the loader produces. The oracle is the loader itself
 * fed one entry at a time (`load([entry])` per entry on one loader: each import and factory
 * finishes before the next starts), which is the sequential semantics by construction. A mixed
 * set (import errors, declarative files, duplicates, conflicts with loaded and built-in tools,
 * bad exports and results, a TypeScript tool) loaded in one `load()` call must give exactly the
 * oracle's `tools` and `errors`, while imports demonstrably finish out of order.
 *
 * "Demonstrably" without timing: modules wait on latches that only a LATER module opens, so a
 * loader that imported one module at a time would hang (and fail on its import timeout).
 */
import { symlink } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CustomToolLoader, IMPORT_CONCURRENCY, JITI_IMPORT_SLOTS, loadCustomTools } from "../../src/host/loader.js";
import type { CustomToolsLoadResult, ToolPathWithSource } from "../../src/core/contract.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const BUILTINS = ["bash", "read"];
let counter = 0;

/** The comparable part of a load result: everything but the tool objects' functions. */
function summary(result: Pick<CustomToolsLoadResult, "tools" | "errors">) {
  return {
    tools: result.tools.map((t) => ({ name: t.tool.name, path: t.path, resolvedPath: t.resolvedPath, source: t.source })),
    errors: result.errors,
  };
}

/** Load `entries` one at a time: the sequential loader's answer. */
async function loadSequentially(entries: ToolPathWithSource[], cwd: string, options: object) {
  const loader = new CustomToolLoader(undefined, cwd, BUILTINS, undefined, options);
  for (const entry of entries) await loader.load([entry]);
  return summary(loader);
}

describe("CustomToolLoader with concurrent imports", () => {
  let world: TmpWorld;
  let dir: string;
  /** A global of this test only: modules of different tests never share state. */
  let key: string;
  const user = { provider: "native", providerName: "xcsh", level: "user" as const };
  const project = { provider: "native", providerName: "xcsh", level: "project" as const };
  const opts = () => ({ home: world.home, xcshHome: world.xcshHome, factoryTimeoutMs: 5000, importTimeoutMs: 20_000 });
  const write = (file: string, content: string) => world.write(path.join(dir, file), content);

  /** Module text that records its evaluation and factory call in this test's global. */
  const tracked = (id: string, body: string, before = "") => `
const g = (globalThis[${JSON.stringify(key)}] ??= { evaluated: [], factories: [], latches: {} });
${before}
g.evaluated.push(${JSON.stringify(id)});
export default (api) => { g.factories.push(${JSON.stringify(id)}); ${body} };
`;
  const tool = (name: string) =>
    `({ name: ${JSON.stringify(name)}, description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [] }) })`;
  const latch = (name: string) =>
    `(g.latches[${JSON.stringify(name)}] ??= (() => { let open; const promise = new Promise((r) => (open = r)); return { promise, open }; })())`;
  const state = () => (globalThis as Record<string, unknown>)[key] as { evaluated: string[]; factories: string[]; max?: number };

  beforeEach(async () => {
    world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
    dir = path.join(world.root, "tools");
    key = `__xcshToolsConcurrency${process.pid}_${counter++}`;
  });
  afterEach(async () => {
    delete (globalThis as Record<string, unknown>)[key];
    await world.cleanup();
  });

  it("a mixed set gives exactly the sequential loader's tools, conflicts and errors, in input order", { timeout: 60_000 }, async () => {
    // `slow` is first in input order but can only finish after `opener` (near the end) ran.
    const slow = await write("slow.mjs", tracked("slow", `return ${tool("shared_name")};`, `await ${latch("a")}.promise;`));
    const alpha = await write("alpha.mjs", tracked("alpha", `return ${tool("alpha")};`));
    const broken = await write("broken.mjs", `${tracked("broken", "return null;")}\nthrow new Error("kaboom at import");`);
    const declarative = await write("notes.md", "# metadata, never imported");
    const link = path.join(dir, "alpha-link.mjs");
    await symlink(alpha, link);
    const conflict = await write("conflict.mjs", tracked("conflict", `return ${tool("alpha")};`));
    const builtin = await write("builtin.mjs", tracked("builtin", `return ${tool("bash")};`));
    const notFactory = await write("not-factory.mjs", "export default 42;\n");
    const throws = await write("throws.mjs", tracked("throws", `throw new Error("factory failed");`));
    const many = await write(
      "many.mjs",
      tracked("many", `return [${tool("beta")}, { name: "no_execute", description: "d", parameters: { type: "object" } }, ${tool("alpha")}];`),
    );
    const empty = await write("empty.mjs", tracked("empty", "return undefined;"));
    const typed = await write(
      "typed.ts",
      tracked("typed", `const t: { name: string } = ${tool("gamma")}; return t;`).replace("(api) =>", "(api: unknown) =>"),
    );
    const missing = path.join(dir, "missing.mjs");
    // Opens the latch `slow` waits on, and claims the name `slow` returns: `slow` still wins it,
    // because it comes first in input order although its import finished last.
    const opener = await write("opener.mjs", tracked("opener", `return ${tool("shared_name")};`, `${latch("a")}.open();`));
    const folder = await write("folder/index.mjs", tracked("folder", `return ${tool("delta")};`));

    const entries: ToolPathWithSource[] = [
      { path: slow, source: project },
      { path: alpha, source: project },
      { path: broken, source: user },
      { path: declarative, source: user },
      { path: alpha, source: user },
      { path: link, source: user },
      { path: conflict, source: user },
      { path: builtin, source: user },
      { path: notFactory },
      { path: throws, source: user },
      { path: many, source: user },
      { path: empty },
      { path: typed, source: user },
      { path: missing, source: user },
      { path: opener, source: user },
      { path: path.dirname(folder), source: user },
    ];

    const concurrent = summary(await loadCustomTools(entries, world.cwd, BUILTINS, undefined, opts()));
    const run = state();
    // Imports overlapped: `slow` was evaluated after `opener`, yet factories ran in input order.
    expect(run.evaluated.indexOf("opener")).toBeLessThan(run.evaluated.indexOf("slow"));
    expect(run.factories).toEqual(["slow", "alpha", "conflict", "builtin", "throws", "many", "empty", "typed", "opener", "folder"]);

    run.factories.length = 0;
    const sequential = await loadSequentially(entries, world.cwd, opts());
    expect(run.factories).toEqual(["slow", "alpha", "conflict", "builtin", "throws", "many", "empty", "typed", "opener", "folder"]);
    expect(concurrent).toEqual(sequential);

    // And the answer itself is the one the rules give, spelled out.
    expect(concurrent.tools.map((t) => [t.name, t.path])).toEqual([
      ["shared_name", slow],
      ["alpha", alpha],
      ["beta", many],
      ["gamma", typed],
      ["delta", path.dirname(folder)],
    ]);
    expect(concurrent.errors.map((e) => [e.code, e.path, e.toolName])).toEqual([
      ["EIMPORT", broken, undefined],
      ["EDECLARATIVE", declarative, undefined],
      ["ECONFLICT", conflict, "alpha"],
      ["ECONFLICT_BUILTIN", builtin, "bash"],
      ["ENOT_A_FACTORY", notFactory, undefined],
      ["EFACTORY_THROW", throws, undefined],
      ["ETOOL_SHAPE", many, "no_execute"],
      ["ECONFLICT", many, "alpha"],
      ["EFACTORY_RESULT", empty, undefined],
      ["EIMPORT", missing, undefined],
      ["ECONFLICT", opener, "shared_name"],
    ]);
    expect(concurrent.errors.find((e) => e.path === opener)?.conflictsWith).toEqual({ path: slow, source: project });
  });

  it("modules finishing in reverse order still give the sequential answer", { timeout: 60_000 }, async () => {
    // A chain of latches: module i waits for module i+1 to open its latch, so imports finish
    // last-to-first. The chain needs every module in flight at once, so it is as long as the
    // pool is wide. Names repeat, so first-wins decides real conflicts.
    const count = IMPORT_CONCURRENCY;
    const ids: string[] = [];
    const entries: ToolPathWithSource[] = [];
    for (let i = 0; i < count; i++) {
      const wait = i < count - 1 ? `await ${latch(`m${i}`)}.promise;` : "";
      const release = i > 0 ? `${latch(`m${i - 1}`)}.open();` : "";
      const file = await write(`m${i}.mjs`, tracked(`m${i}`, `return ${tool(`name_${i % 4}`)};`, `${wait}\n${release}`));
      ids.push(`m${i}`);
      entries.push({ path: file, source: i % 2 ? user : project });
    }
    const concurrent = summary(await loadCustomTools(entries, world.cwd, BUILTINS, undefined, opts()));
    const run = state();
    expect(run.evaluated).toEqual([...ids].reverse());
    expect(run.factories).toEqual(ids);
    run.factories.length = 0;
    expect(concurrent).toEqual(await loadSequentially(entries, world.cwd, opts()));
    expect(concurrent.tools.map((t) => [t.name, t.path])).toEqual(entries.slice(0, 4).map((e, i) => [`name_${i}`, e.path]));
    expect(concurrent.errors.map((e) => [e.code, e.path, e.toolName])).toEqual(
      entries.slice(4).map((e, i) => ["ECONFLICT", e.path, `name_${i % 4}`]),
    );
  });

  it("puts the module map in place once per load, not once for each import started before it was", { timeout: 60_000 }, async () => {
    // registerModules lists the host's `modules` once per registration: count the listings.
    let listings = 0;
    const modules = new Proxy({ [`${key}-module`]: { value: 1 } }, { ownKeys: (target) => (listings++, Reflect.ownKeys(target)) });
    const entries: ToolPathWithSource[] = [];
    for (let i = 0; i < 4; i++) entries.push({ path: await write(`r${i}.mjs`, tracked(`r${i}`, `return ${tool(`registered_${i}`)};`)) });
    const result = await loadCustomTools(entries, world.cwd, BUILTINS, undefined, { ...opts(), modules });
    expect(result.errors).toEqual([]);
    expect(result.tools.map((t) => t.tool.name)).toEqual(["registered_0", "registered_1", "registered_2", "registered_3"]);
    expect(listings).toBe(1);
  });

  it(`keeps at most IMPORT_CONCURRENCY (${IMPORT_CONCURRENCY}) imports in flight, and fills the pool`, { timeout: 60_000 }, async () => {
    // Each module counts itself in flight and waits until the count reaches the bound: a loader
    // with a smaller pool would hang (import timeout), one with a larger pool would exceed it.
    const count = IMPORT_CONCURRENCY * 3;
    const entries: ToolPathWithSource[] = [];
    const gate = latch("gate");
    for (let i = 0; i < count; i++) {
      const before = `g.inflight = (g.inflight ?? 0) + 1; g.max = Math.max(g.max ?? 0, g.inflight);
if (g.inflight >= ${IMPORT_CONCURRENCY}) ${gate}.open();
await ${gate}.promise;
g.inflight--;`;
      entries.push({ path: await write(`p${i}.mjs`, tracked(`p${i}`, `return ${tool(`pool_${i}`)};`, before)) });
    }
    const result = await loadCustomTools(entries, world.cwd, BUILTINS, undefined, opts());
    expect(result.errors).toEqual([]);
    expect(result.tools.map((t) => t.tool.name)).toEqual(entries.map((_, i) => `pool_${i}`));
    expect(state().max).toBe(IMPORT_CONCURRENCY);
  });

  // The slots (loader.ts): a native import takes one, a jiti import JITI_IMPORT_SLOTS (TypeScript
  // under node_modules goes to jiti on every Node). Each module counts itself in flight by kind
  // and waits for a gate that opens at a count only the right bound reaches: a pool too small
  // hangs (import timeout), one too large exceeds the count.
  const inFlight = (kind: string, opensAt: number) => `g.inflight = (g.inflight ?? 0) + 1; g.max = Math.max(g.max ?? 0, g.inflight);
g.${kind} = (g.${kind} ?? 0) + 1; g.max_${kind} = Math.max(g.max_${kind} ?? 0, g.${kind});
if (g.inflight >= ${opensAt}) ${latch("gate")}.open();
await ${latch("gate")}.promise;
g.inflight--; g.${kind}--;`;
  const jitiFile = (name: string, body: string) => world.write(path.join(dir, "node_modules", "pkg", `${name}.ts`), body);
  const jitiSlots = Math.floor(IMPORT_CONCURRENCY / JITI_IMPORT_SLOTS);

  it("fills the slots a few jiti imports leave with native ones, all in flight at once", { timeout: 60_000 }, async () => {
    const jiti = Math.floor(jitiSlots / 2);
    const native = IMPORT_CONCURRENCY - jiti * JITI_IMPORT_SLOTS;
    const opensAt = jiti + native;
    const entries: ToolPathWithSource[] = [];
    for (let i = 0; i < jiti; i++) entries.push({ path: await jitiFile(`j${i}`, tracked(`j${i}`, `return ${tool(`jiti_${i}`)};`, inFlight("jiti", opensAt))) });
    for (let i = 0; i < native; i++) entries.push({ path: await write(`n${i}.mjs`, tracked(`n${i}`, `return ${tool(`native_${i}`)};`, inFlight("native", opensAt))) });
    const result = await loadCustomTools(entries, world.cwd, BUILTINS, undefined, { ...opts(), importTimeoutMs: 10_000 });
    expect(result.errors).toEqual([]);
    expect(result.tools.map((t) => t.tool.name)).toEqual([...Array.from({ length: jiti }, (_, i) => `jiti_${i}`), ...Array.from({ length: native }, (_, i) => `native_${i}`)]);
    expect(state()).toMatchObject({ max: opensAt, max_jiti: jiti, max_native: native });
  });

  it(`keeps at most IMPORT_CONCURRENCY / JITI_IMPORT_SLOTS (${jitiSlots}) jiti imports in flight, and fills that`, { timeout: 60_000 }, async () => {
    const entries: ToolPathWithSource[] = [];
    for (let i = 0; i < jitiSlots * 3; i++) entries.push({ path: await jitiFile(`j${i}`, tracked(`j${i}`, `return ${tool(`jiti_${i}`)};`, inFlight("jiti", jitiSlots))) });
    const result = await loadCustomTools(entries, world.cwd, BUILTINS, undefined, opts());
    expect(result.errors).toEqual([]);
    expect(result.tools.map((t) => t.tool.name)).toEqual(entries.map((_, i) => `jiti_${i}`));
    expect(state().max).toBe(jitiSlots);
  });

  it("starts imports in input order: a native import never passes a jiti one waiting for room", { timeout: 60_000 }, async () => {
    // All but one slot taken by native imports held at the gate; then a jiti import (needs more
    // than the one slot left) and a native one (would fit). The gate opens with the native ones.
    const held = IMPORT_CONCURRENCY - 1;
    const entries: ToolPathWithSource[] = [];
    for (let i = 0; i < held; i++) entries.push({ path: await write(`n${i}.mjs`, tracked(`n${i}`, `return ${tool(`native_${i}`)};`, inFlight("native", held))) });
    entries.push({ path: await jitiFile("late", tracked("late_jiti", `return ${tool("late_jiti")};`)) });
    entries.push({ path: await write("last.mjs", tracked("last_native", `return ${tool("last_native")};`)) });
    const result = await loadCustomTools(entries, world.cwd, BUILTINS, undefined, opts());
    expect(result.errors).toEqual([]);
    expect(state().max).toBe(held);
    expect(state().evaluated.slice(-2)).toEqual(["late_jiti", "last_native"]);
  });
});
