/**
 * The real runtimes, in child processes: vitest's own module runner intercepts `import()`, so the
 * strategies (native import + resolve hooks, jiti, Bun plugins) are exercised against a fresh
 * build of src in a temp folder, the package's own (scripts/build.mjs: the bundle, TypeBox and
 * jiti inside it). The probe plays a host with its own TypeBox beside the package, which it does
 * not pass as `modules`: tools must see that instance (host/import/module-map.ts
 * `defaultTypeBox`). Node 22 and Bun are found by test/helpers/runtimes.ts.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { REPO_ROOT, requireRuntime, runtimeIt, runtimes, skipNote, type RuntimeId } from "../helpers/runtimes.js";

/** This Node strips types natively (then nothing goes through jiti for plain .ts). */
const stripsTypes = Boolean((process.features as { typescript?: unknown }).typescript);

let world: TmpWorld;
let pkg: string;
let toolsDir: string;

const PROBE = `
import { Type } from "@sinclair/typebox";
import * as ours from "./dist/index.js";
const [toolsDir, cacheDir] = process.argv.slice(2);
const files = ["strip.ts", "needs-jiti.ts", "enum.ts", "plain.mjs"];
const result = await ours.loadCustomTools(files.map((f) => ({ path: toolsDir + "/" + f })), toolsDir, [], undefined, { cacheDir });
const out = { errors: result.errors, tools: {}, strategies: {} };
for (const t of result.tools) {
  const m = t.tool.meta;
  out.tools[t.tool.name] = {
    typeIsOurs: m.Type === Type,
    defaultTypeIsOurs: m.defaultType === undefined ? null : m.defaultType === Type,
    adapterIsOurs: m.adapter === undefined ? null : m.adapter === ours.CustomToolAdapter,
    value: m.value ?? null,
  };
}
for (const f of files) out.strategies[f] = (await ours.importToolModule(toolsDir + "/" + f, { cacheDir })).strategy;
process.stdout.write(JSON.stringify(out));
`;

/**
 * Paths a URL parser would misread (a fragment, an escape): Bun gets a file URL for them. (A `?`
 * in a folder name Bun 1.4 cannot import at all, as a path or as a URL.)
 */
const ODD_PROBE = `
import * as ours from "./dist/index.js";
const [file, cacheDir] = process.argv.slice(2);
const result = await ours.loadCustomTools([{ path: file }], process.cwd(), [], undefined, { cacheDir });
process.stdout.write(JSON.stringify({ errors: result.errors, tools: result.tools.map((t) => [t.tool.name, t.resolvedPath]) }));
`;

const TOOL = (name: string, body: string, meta: string) => `${body}
export default () => ({ name: ${JSON.stringify(name)}, description: "d", parameters: Type.Object({}),
  execute: async () => ({ content: [] }), meta: { ${meta} } });
`;

beforeAll(async () => {
  world = await makeTmpWorld("xcsh-tools-runtimes-", { trustProject: true });
  pkg = path.join(world.root, "pkg");
  execFileSync(process.execPath, [path.join(REPO_ROOT, "scripts", "build.mjs"), "--out", path.join(pkg, "dist"), "--no-types"], { stdio: "pipe" });
  writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "xcsh-tools-under-test", type: "module" }));
  // The probe's own TypeBox (the host's, which the package finds beside it); the bundle needs none.
  symlinkSync(path.join(REPO_ROOT, "node_modules"), path.join(pkg, "node_modules"));
  writeFileSync(path.join(pkg, "probe.mjs"), PROBE);
  writeFileSync(path.join(pkg, "odd-probe.mjs"), ODD_PROBE);

  toolsDir = path.join(world.root, "tools");
  await world.write(
    path.join(toolsDir, "strip.ts"),
    TOOL("strip_tool", `import { Type } from "@sinclair/typebox";\nimport * as xcsh from "xcsh-tools";\nconst v: number = 3;`, "Type, adapter: xcsh.CustomToolAdapter, value: v"),
  );
  await world.write(
    path.join(toolsDir, "needs-jiti.ts"),
    TOOL("helper_tool", `import { Type } from "@sinclair/typebox";\nimport { helper } from "./helper.js";`, "Type, value: helper(1)"),
  );
  await world.write(path.join(toolsDir, "helper.ts"), `export function helper(n: number): number { return n + 1; }\n`);
  await world.write(
    path.join(toolsDir, "enum.ts"),
    TOOL("enum_tool", `import { Type } from "@sinclair/typebox";\nenum Color { Red, Green }`, "Type, value: Color.Green"),
  );
  await world.write(
    path.join(toolsDir, "plain.mjs"),
    TOOL("mjs_tool", `import { Type } from "@sinclair/typebox";\nimport tb from "@sinclair/typebox";`, "Type, defaultType: tb.Type, value: 'mjs'"),
  );
}, 120_000);

afterAll(async () => {
  await world?.cleanup();
});

interface ProbeOutput {
  errors: unknown[];
  tools: Record<string, { typeIsOurs: boolean; defaultTypeIsOurs: boolean | null; adapterIsOurs: boolean | null; value: unknown }>;
  strategies: Record<string, string>;
}

function runProbe(command: string, cacheDir: string, extraArgs: string[] = []): ProbeOutput {
  const run = spawnSync(command, [...extraArgs, path.join(pkg, "probe.mjs"), toolsDir, cacheDir], {
    cwd: pkg,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, HOME: world.home, XCSH_HOME: world.xcshHome },
  });
  if (run.status !== 0) throw new Error(`probe failed (${run.status}): ${run.stderr}\n${run.stdout}`);
  return JSON.parse(run.stdout) as ProbeOutput;
}

function expectSameInstances(out: ProbeOutput): void {
  expect(out.errors).toEqual([]);
  expect(out.tools).toEqual({
    strip_tool: { typeIsOurs: true, defaultTypeIsOurs: null, adapterIsOurs: true, value: 3 },
    helper_tool: { typeIsOurs: true, defaultTypeIsOurs: null, adapterIsOurs: null, value: 2 },
    enum_tool: { typeIsOurs: true, defaultTypeIsOurs: null, adapterIsOurs: null, value: 1 },
    mjs_tool: { typeIsOurs: true, defaultTypeIsOurs: true, adapterIsOurs: null, value: "mjs" },
  });
}

describe("module import on real runtimes", () => {
  const runtime = (id: RuntimeId) => runtimes().find((r) => r.id === id)!;
  const [node, bun] = [runtime("node"), runtime("bun")];

  runtimeIt(node)(`${node.label}: module map identity, jiti for .ts, native .mjs through the resolve hook`, () => {
    const cacheDir = path.join(world.root, "cache-node");
    const out = runProbe(requireRuntime(node), cacheDir);
    expectSameInstances(out);
    if (!stripsTypes) {
      expect(out.strategies).toEqual({ "strip.ts": "jiti", "needs-jiti.ts": "jiti", "enum.ts": "jiti", "plain.mjs": "node-native" });
    }
  });

  runtimeIt(node)(`${node.label}: the second boot reuses jiti's transpile cache instead of compiling`, () => {
    if (stripsTypes) return; // this Node strips types natively: nothing to cache
    const cacheDir = path.join(world.root, "cache-reuse");
    expectSameInstances(runProbe(requireRuntime(node), cacheDir));
    const files = readdirSync(cacheDir).filter((f) => f !== "shims");
    const stripEntry = files.find((f) => f.includes("strip"));
    expect(stripEntry).toBeDefined();
    // Edit the cached output (keeping jiti's hash trailer): a fresh process that reuses the cache
    // runs the edited code; one that recompiled would report the original value.
    const cached = path.join(cacheDir, stripEntry as string);
    const text = readFileSync(cached, "utf8");
    expect(text).toMatch(/= 3;/);
    writeFileSync(cached, text.replace(/= 3;/, "= 33;"));
    const second = runProbe(requireRuntime(node), cacheDir);
    expect(second.tools.strip_tool?.value).toBe(33);
    expect(readdirSync(cacheDir).filter((f) => f !== "shims").sort()).toEqual(files.sort());
  });

  for (const stripping of [runtime("node22"), runtime("node24")]) {
    runtimeIt(stripping)(`${stripping.id}${skipNote(stripping)}: native stripping, jiti fallback for .js→.ts and enums`, () => {
      const out = runProbe(requireRuntime(stripping), path.join(world.root, `cache-${stripping.id}`));
      expectSameInstances(out);
      expect(out.strategies).toEqual({ "strip.ts": "node-native", "needs-jiti.ts": "jiti", "enum.ts": "jiti", "plain.mjs": "node-native" });
    });
  }

  runtimeIt(bun)(`bun${skipNote(bun)}: native import with Bun plugin virtual modules`, () => {
    const out = runProbe(requireRuntime(bun), path.join(world.root, "cache-bun"), ["--no-install"]);
    expectSameInstances(out);
    expect(Object.values(out.strategies)).toEqual(["bun", "bun", "bun", "bun"]);
  });

  runtimeIt(bun)(`bun${skipNote(bun)}: a tool whose path holds '#' and '%41' loads from that very file`, async () => {
    const file = await world.write(
      path.join(world.root, "odd #1 %41", "tool.ts"),
      TOOL("odd_tool", `import { Type } from "@sinclair/typebox";`, "value: 1"),
    );
    const run = spawnSync(requireRuntime(bun), ["--no-install", path.join(pkg, "odd-probe.mjs"), file, path.join(world.root, "cache-odd")], {
      cwd: pkg,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, HOME: world.home, XCSH_HOME: world.xcshHome },
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ errors: [], tools: [["odd_tool", file]] });
  });
});
