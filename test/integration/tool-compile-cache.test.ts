/**
 * The boot's compile caches (issue 44) on the real runtimes, in child processes (vitest's module
 * runner intercepts `import()`): Node's compile cache, turned on in the transpile-cache folder
 * before the first native import (host/import/node-hooks.ts), and on Node 22, whose compile
 * cache keeps no stripped TypeScript, the strip cache (host/import/strip-cache.ts); on Node 24,
 * whose compile cache keeps it, the memo of the module format Node detected (host/import/format-memo.ts).
 *
 * The class: a cache may only make a load cheaper, never change what it loads. Each hostile case
 * changes one input the cached answer depends on (the tool's bytes, the package scope's `type`,
 * a folder that cannot be written) and expects exactly what a process without any cache gets.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { REPO_ROOT, requireRuntime, runtimeIt, runtimes, skipNote, type RuntimeId } from "../helpers/runtimes.js";

let world: TmpWorld;
let pkg: string;

/** Loads every file named on the command line with `cacheDir`; prints tools (name → value) and error codes. */
const PROBE = `
import * as ours from ${JSON.stringify(pathToFileURL(path.join(REPO_ROOT, "dist", "index.js")).href)};
const [cacheDir, ...files] = process.argv.slice(2);
const result = await ours.loadCustomTools(files.map((f) => ({ path: f })), process.cwd(), [], undefined, { cacheDir });
const tools = Object.fromEntries(result.tools.map((t) => [t.tool.name, t.tool.meta]));
process.stdout.write(JSON.stringify({ tools, errors: result.errors.map((e) => e.code) }));
`;

/** A seed-style tool: no import, TypeBox from the API, TypeScript to strip. */
const SEED_TOOL = (name: string, value: number) => `interface Api { typebox: { Type: any } }
const value: number = ${value};
export default function factory(api: Api) {
  return { name: ${JSON.stringify(name)}, description: "d", parameters: api.typebox.Type.Object({}), execute: async () => ({ content: [] }), meta: value };
}
`;

interface ProbeRun {
  out: { tools: Record<string, unknown>; errors: string[] };
  stderr: string;
}

function probe(command: string, cacheDir: string, files: string[], env: NodeJS.ProcessEnv = {}): ProbeRun {
  const run = spawnSync(command, [path.join(pkg, "probe.mjs"), cacheDir, ...files], {
    cwd: pkg,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...hostEnv(), HOME: world.home, XCSH_HOME: world.xcshHome, ...env },
  });
  if (run.status !== 0) throw new Error(`probe failed (${run.status}): ${run.stderr}\n${run.stdout}`);
  return { out: JSON.parse(run.stdout) as ProbeRun["out"], stderr: run.stderr };
}

/** The environment without the variables that turn Node's compile cache on or off for everyone. */
function hostEnv(): NodeJS.ProcessEnv {
  const { NODE_COMPILE_CACHE: _on, NODE_DISABLE_COMPILE_CACHE: _off, ...env } = process.env;
  return env;
}

/** A fresh tools folder (outside any package) holding one seed tool; returns the tool file. */
function toolIn(folder: string, name: string, value: number): string {
  const dir = path.join(world.root, folder);
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.ts`);
  writeFileSync(file, SEED_TOOL(name, value));
  return file;
}

const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : []);

beforeAll(async () => {
  // The package as the test run built it (dist/, the bundle): vitest's global setup builds it from src.
  world = await makeTmpWorld("xcsh-tools-compile-cache-", { trustProject: true });
  pkg = path.join(world.root, "probe");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(path.join(pkg, "probe.mjs"), PROBE);
});

afterAll(async () => {
  await world?.cleanup();
});

describe("compile caches of the boot (Node 22 and 24)", () => {
  const runtime = (id: RuntimeId) => runtimes().find((r) => r.id === id)!;
  const [node22, node24] = [runtime("node22"), runtime("node24")];

  for (const node of [node22, node24]) {
    runtimeIt(node)(`${node.id}${skipNote(node)}: a load fills Node's compile cache in the transpile folder; the next process loads the same tool`, () => {
      const cacheDir = path.join(world.root, `cc-fill-${node.id}`);
      const file = toolIn(`fill-${node.id}`, "fill_tool", 1);
      expect(probe(requireRuntime(node), cacheDir, [file]).out).toEqual({ tools: { fill_tool: 1 }, errors: [] });
      expect(entries(path.join(cacheDir, "node-compile")).length).toBeGreaterThan(0);
      expect(probe(requireRuntime(node), cacheDir, [file]).out).toEqual({ tools: { fill_tool: 1 }, errors: [] });
    });

    runtimeIt(node)(`${node.id}${skipNote(node)}: a tool edited after a cached load loads its new bytes`, () => {
      const cacheDir = path.join(world.root, `cc-edit-${node.id}`);
      const file = toolIn(`edit-${node.id}`, "edit_tool", 1);
      expect(probe(requireRuntime(node), cacheDir, [file]).out.tools).toEqual({ edit_tool: 1 });
      expect(probe(requireRuntime(node), cacheDir, [file]).out.tools).toEqual({ edit_tool: 1 });
      writeFileSync(file, SEED_TOOL("edit_tool", 2));
      expect(probe(requireRuntime(node), cacheDir, [file]).out.tools).toEqual({ edit_tool: 2 });
    });

    runtimeIt(node)(`${node.id}${skipNote(node)}: a package.json that makes a cached tool CommonJS gets Node's own answer, not the cached module`, () => {
      const cacheDir = path.join(world.root, `cc-scope-${node.id}`);
      const file = toolIn(`scope-${node.id}`, "scope_tool", 1);
      expect(probe(requireRuntime(node), cacheDir, [file]).out.tools).toEqual({ scope_tool: 1 });
      writeFileSync(path.join(path.dirname(file), "package.json"), JSON.stringify({ type: "commonjs" }));
      const uncached = probe(requireRuntime(node), path.join(world.root, `cc-scope-none-${node.id}`), [file]).out;
      expect(uncached.tools).toEqual({});
      expect(probe(requireRuntime(node), cacheDir, [file]).out).toEqual(uncached);
    });

    runtimeIt(node)(`${node.id}${skipNote(node)}: a cache folder that cannot be made (a file is in its way) still loads every tool, and says nothing`, () => {
      // A file where the folder should be: no process, root included, can create folders below it.
      const cacheDir = path.join(world.root, `cc-blocked-${node.id}`);
      writeFileSync(cacheDir, "not a folder");
      const file = toolIn(`blocked-${node.id}`, "blocked_tool", 1);
      const run = probe(requireRuntime(node), cacheDir, [file]);
      expect(run.out).toEqual({ tools: { blocked_tool: 1 }, errors: [] });
      expect(run.stderr).toBe("");
    });
  }

  for (const node of [node22, node24]) {
    runtimeIt(node)(`${node.id}${skipNote(node)}: shims that cannot be written in the cache folder go to the private temp folder, and a bare TypeBox import still loads`, () => {
      const cacheDir = path.join(world.root, `cc-shims-${node.id}`);
      mkdirSync(cacheDir, { recursive: true });
      writeFileSync(path.join(cacheDir, "shims"), "a file where the shims folder should be");
      const dir = path.join(world.root, `shims-${node.id}`);
      mkdirSync(dir, { recursive: true });
      const file = path.join(dir, "bare_tool.ts");
      writeFileSync(file, `import { Type } from "@sinclair/typebox";\nexport default () => ({ name: "bare_tool", description: "d", parameters: Type.Object({}), execute: async () => ({ content: [] }), meta: 7 });\n`);
      const run = probe(requireRuntime(node), cacheDir, [file]);
      expect(run.out).toEqual({ tools: { bare_tool: 7 }, errors: [] });
    });
  }

  // The format memo (Node 24): a recorded format is used only for the same bytes under the same runtime.
  const records = (cacheDir: string) => entries(path.join(cacheDir, "node-format")).filter((e) => e.includes(path.sep));

  runtimeIt(node24)(`node24${skipNote(node24)}: the next load takes the format Node detected from the memo, not from a second detection`, () => {
    const cacheDir = path.join(world.root, "fm-served");
    const file = toolIn("fm-served", "served_tool", 4);
    expect(probe(requireRuntime(node24), cacheDir, [file]).out).toEqual({ tools: { served_tool: 4 }, errors: [] });
    const [record] = records(cacheDir);
    expect(records(cacheDir)).toHaveLength(1);
    // A record is its name: the bytes' CRC-32 and length, then the format Node detected.
    const recorded = path.join(cacheDir, "node-format", record!);
    expect(recorded).toMatch(/\/[0-9a-f]+-\d+\.module-typescript$/);
    // A record saying plain JavaScript: a process that serves the memo hands Node the TypeScript as
    // JavaScript (a syntax error); one that detected again would load the tool.
    const planted = recorded.replace(/module-typescript$/, "module");
    renameSync(recorded, planted);
    expect(probe(requireRuntime(node24), cacheDir, [file]).out).toEqual({ tools: {}, errors: ["EIMPORT"] });
    // A format that is never recorded (CommonJS) is a miss: Node detects, and records its answer.
    renameSync(planted, recorded.replace(/module-typescript$/, "commonjs"));
    expect(probe(requireRuntime(node24), cacheDir, [file]).out).toEqual({ tools: { served_tool: 4 }, errors: [] });
    expect(existsSync(recorded)).toBe(true);
  });

  runtimeIt(node24)(`node24${skipNote(node24)}: a tool rewritten as CommonJS after its ESM format was recorded gets Node's own answer`, () => {
    const cacheDir = path.join(world.root, "fm-edit");
    const file = toolIn("fm-edit", "edit_cjs", 1);
    expect(probe(requireRuntime(node24), cacheDir, [file]).out.tools).toEqual({ edit_cjs: 1 });
    expect(records(cacheDir)).toHaveLength(1);
    writeFileSync(file, `const value: number = 2;\nmodule.exports = function (api: { typebox: { Type: any } }) {\n  return { name: "edit_cjs", description: "d", parameters: api.typebox.Type.Object({}), execute: async () => ({ content: [] }), meta: value };\n};\n`);
    const uncached = probe(requireRuntime(node24), path.join(world.root, "fm-edit-none"), [file]).out;
    expect(uncached).toEqual({ tools: { edit_cjs: 2 }, errors: [] });
    expect(probe(requireRuntime(node24), cacheDir, [file]).out).toEqual(uncached);
    // CommonJS answers are never recorded: Node detects them every time.
    expect(records(cacheDir)).toHaveLength(1);
  });

  runtimeIt(node24)(`node24${skipNote(node24)}: a format recorded under other Node options is not used: a process without module detection gets Node's own answer`, () => {
    const cacheDir = path.join(world.root, "fm-options");
    const file = toolIn("fm-options", "options_tool", 1);
    expect(probe(requireRuntime(node24), cacheDir, [file]).out.tools).toEqual({ options_tool: 1 });
    const noDetection = { NODE_OPTIONS: "--no-experimental-detect-module" };
    const uncached = probe(requireRuntime(node24), path.join(world.root, "fm-options-none"), [file], noDetection).out;
    expect(uncached).toEqual({ tools: {}, errors: ["EIMPORT"] });
    expect(probe(requireRuntime(node24), cacheDir, [file], noDetection).out).toEqual(uncached);
  });

  runtimeIt(node24)(`node24${skipNote(node24)}: options that cannot change a format (the validation child's heap size) share the host's records`, () => {
    const cacheDir = path.join(world.root, "fm-heap");
    const file = toolIn("fm-heap", "heap_tool", 1);
    expect(probe(requireRuntime(node24), cacheDir, [file], { NODE_OPTIONS: "--max-old-space-size=300" }).out.tools).toEqual({ heap_tool: 1 });
    expect(probe(requireRuntime(node24), cacheDir, [file]).out.tools).toEqual({ heap_tool: 1 });
    expect(records(cacheDir)).toHaveLength(1);
    // Another option is another runtime: its own folder, its own records.
    expect(probe(requireRuntime(node24), cacheDir, [file], { NODE_OPTIONS: "--experimental-transform-types" }).out.tools).toEqual({ heap_tool: 1 });
    expect(records(cacheDir)).toHaveLength(2);
  });

  runtimeIt(node22)(`node22${skipNote(node22)}: the next load reads the stripped text from the cache, not from amaro`, () => {
    const cacheDir = path.join(world.root, "cc-strip");
    const file = toolIn("strip22", "strip_tool", 3);
    const first = probe(requireRuntime(node22), cacheDir, [file]);
    expect(first.out.tools).toEqual({ strip_tool: 3 });
    // Node's API warns that it is experimental: a host boot must not print that.
    expect(first.stderr).toBe("");
    const stripDir = path.join(cacheDir, "node-strip");
    const [entry] = entries(stripDir);
    expect(entries(stripDir)).toHaveLength(1);
    // Edit the cached text: a process that serves the cache runs the edit; one that stripped again would not.
    const cached = path.join(stripDir, entry!);
    const text = readFileSync(cached, "utf8");
    expect(text).toMatch(/value\s+= 3;/);
    writeFileSync(cached, text.replace(/= 3;/, "= 33;"));
    expect(probe(requireRuntime(node22), cacheDir, [file]).out.tools).toEqual({ strip_tool: 33 });
    // What the stripper refuses (an enum) is Node's to refuse, and the jiti fallback loads it as before.
    const enumFile = path.join(path.dirname(file), "enum_tool.ts");
    writeFileSync(enumFile, `enum Color { Red, Green }\nexport default (api: { typebox: { Type: any } }) => ({ name: "enum_tool", description: "d", parameters: api.typebox.Type.Object({}), execute: async () => ({ content: [] }), meta: Color.Green });\n`);
    expect(probe(requireRuntime(node22), cacheDir, [enumFile]).out).toEqual({ tools: { enum_tool: 1 }, errors: [] });
    expect(entries(stripDir)).toHaveLength(1);
    rmSync(cached);
    expect(probe(requireRuntime(node22), cacheDir, [file]).out.tools).toEqual({ strip_tool: 3 });
  });
});
