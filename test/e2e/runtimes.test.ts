/**
 * The built package under every runtime we support: the Node running the tests (Node 20 in
 * CI, TypeScript through jiti), Node 22 (type stripping) and Bun (the xcsh host's runtime).
 * The same temp world gives the same tools, the same error codes and the same tool results
 * everywhere; the CLI answers the same. Runtimes are found by test/helpers/runtimes.ts: a
 * missing one fails under CI=true and is skipped, with the reason in the title, locally.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hermeticEnv, runCli, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT, isCI, requireRuntime, runtimeIt, runtimes, skipNote, type Runtime } from "../helpers/runtimes.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const DIST_INDEX = path.join(REPO_ROOT, "dist", "index.js");
const DRIVER = path.join(REPO_ROOT, "test", "e2e", "fixtures", "discover-driver.mjs");
const RUNTIMES = runtimes();
const PACKAGE_VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

/** The tools every runtime must load from the world below, by name. */
const TOOL_FILES = {
  hello_ts: "home/.xcsh/agent/tools/hello.ts",
  echo_js: "home/.xcsh/agent/tools/echo.js",
  typebox_import: "home/.xcsh/agent/tools/typebox-import.ts",
  project_tool: "project/.xcsh/tools/project-tool/index.ts",
} as const;
const BROKEN_FILE = "home/.xcsh/agent/tools/broken.ts";
const BUILTIN_CLASH_FILE = "project/.xcsh/tools/read.js";

/**
 * A world with the four kinds of tools a host meets: TypeScript and JavaScript user tools, a
 * project folder tool, a tool importing `@sinclair/typebox` from a folder with no node_modules
 * above it (the loader must hand it the injected module), a module with a syntax error and a
 * tool that takes a built-in's name.
 */
async function writeToolWorld(world: TmpWorld): Promise<void> {
  await world.write(
    TOOL_FILES.hello_ts,
    `import type { CustomToolAPI, CustomToolContext } from "xcsh-tools";

interface HelloParams {
  name: string;
}

export default function factory(api: CustomToolAPI) {
  const { Type } = api.typebox;
  return {
    name: "hello_ts",
    label: "Hello (TS)",
    description: "Greets someone",
    parameters: Type.Object({ name: Type.String() }),
    async execute(toolCallId: string, params: HelloParams, onUpdate: ((r: unknown) => void) | undefined, ctx: CustomToolContext, signal?: AbortSignal) {
      onUpdate?.({ content: [{ type: "text", text: "working" }] });
      const idle: boolean = ctx.isIdle();
      return {
        content: [{ type: "text" as const, text: \`Hello, \${params.name}!\` }],
        details: { toolCallId, idle, hasSignal: signal instanceof AbortSignal, cwd: api.cwd.split("/").pop() },
      };
    },
  };
}
`,
  );
  await world.write(
    TOOL_FILES.echo_js,
    `export default (api) => ({
  name: "echo_js",
  label: "Echo (JS)",
  description: "Echoes through a subprocess",
  parameters: api.typebox.Type.Object({ text: api.typebox.Type.String() }),
  async execute(_id, params, _onUpdate, _ctx, signal) {
    const r = await api.exec(process.execPath, ["-e", "process.stdout.write(process.argv[1])", params.text], { signal });
    return { content: [{ type: "text", text: r.stdout }], details: { code: r.code, killed: r.killed } };
  },
});
`,
  );
  await world.write(
    TOOL_FILES.typebox_import,
    `import { Type, type Static } from "@sinclair/typebox";

const Params = Type.Object({ count: Type.Integer({ minimum: 1 }) });
type Params = Static<typeof Params>;

export default () => [
  {
    name: "typebox_import",
    label: "TypeBox import",
    description: "Imports @sinclair/typebox by name",
    parameters: Params,
    async execute(_id: string, params: Params) {
      return { content: [{ type: "text" as const, text: "x".repeat(params.count) }], details: { kind: Params.type } };
    },
  },
];
`,
  );
  await world.write(
    TOOL_FILES.project_tool,
    `import type { CustomToolAPI } from "xcsh-tools";
export default (api: CustomToolAPI) => ({
  name: "project_tool",
  label: "Project tool",
  description: "Lives in <cwd>/.xcsh/tools/project-tool/index.ts",
  parameters: api.typebox.Type.Object({}),
  async execute() {
    return { content: [{ type: "text" as const, text: "project" }] };
  },
});
`,
  );
  await world.write(BROKEN_FILE, `export default (api: any) => ({ name: "broken", \n`);
  await world.write(
    BUILTIN_CLASH_FILE,
    `export default (api) => ({ name: "read", label: "Read", description: "Clashes with a built-in", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`,
  );
}

interface DriverOutput {
  tools: { name: string; path: string; resolvedPath: string; provider: string | null; level: string | null; parameterKeys: string[] }[];
  errors: { path: string; code: string; provider: string | null; level: string | null; toolName: string | null }[];
  errorMessages: string[];
  runs: Record<string, unknown>;
}

/** What every runtime must print (messages aside), modulo order of the lists. */
const EXPECTED_TOOLS = [
  { name: "echo_js", path: `<root>/${TOOL_FILES.echo_js}`, resolvedPath: `<root>/${TOOL_FILES.echo_js}`, provider: "native", level: "user", parameterKeys: ["text"] },
  { name: "hello_ts", path: `<root>/${TOOL_FILES.hello_ts}`, resolvedPath: `<root>/${TOOL_FILES.hello_ts}`, provider: "native", level: "user", parameterKeys: ["name"] },
  {
    name: "project_tool",
    path: `<root>/${TOOL_FILES.project_tool}`,
    resolvedPath: `<root>/${TOOL_FILES.project_tool}`,
    provider: "native",
    level: "project",
    parameterKeys: [],
  },
  {
    name: "typebox_import",
    path: `<root>/${TOOL_FILES.typebox_import}`,
    resolvedPath: `<root>/${TOOL_FILES.typebox_import}`,
    provider: "native",
    level: "user",
    parameterKeys: ["count"],
  },
];

const EXPECTED_RUNS = {
  hello_ts: {
    name: "hello_ts",
    label: "Hello (TS)",
    content: [{ type: "text", text: "Hello, runtime!" }],
    details: { toolCallId: "call-hello_ts", idle: true, hasSignal: true, cwd: "project" },
    updates: [{ content: [{ type: "text", text: "working" }] }],
  },
  echo_js: {
    name: "echo_js",
    label: "Echo (JS)",
    content: [{ type: "text", text: "pong" }],
    details: { code: 0, killed: false },
    updates: [],
  },
  typebox_import: {
    name: "typebox_import",
    label: "TypeBox import",
    content: [{ type: "text", text: "xxx" }],
    details: { kind: "object" },
    updates: [],
  },
  project_tool: {
    name: "project_tool",
    label: "Project tool",
    content: [{ type: "text", text: "project" }],
    details: null,
    updates: [],
  },
};

const byName = <T extends { name: string }>(list: T[]) => [...list].sort((a, b) => a.name.localeCompare(b.name));

const worlds: TmpWorld[] = [];
async function freshWorld(): Promise<TmpWorld> {
  const world = await makeTmpWorld("xcsh-tools-rt-", { trustProject: true });
  worlds.push(world);
  await writeToolWorld(world);
  return world;
}
afterAll(async () => {
  await Promise.all(worlds.map((w) => w.cleanup()));
});

async function runDriver(runtime: Runtime): Promise<DriverOutput> {
  const command = requireRuntime(runtime);
  const world = await freshWorld();
  const input = { dist: pathToFileURL(DIST_INDEX).href, root: world.root, home: world.home, xcshHome: world.xcshHome, cwd: world.cwd };
  const result = await runProcess(command, [DRIVER, JSON.stringify(input)], {
    cwd: world.cwd,
    env: hermeticEnv(world.home),
    timeoutMs: 60_000,
  });
  if (result.code !== 0) {
    throw new Error(`driver failed under ${runtime.label} (exit ${result.code ?? result.signal}):\n${result.stderr}\n${result.stdout}`);
  }
  return result.json<DriverOutput>();
}

beforeAll(() => {
  if (!existsSync(DIST_INDEX)) throw new Error(`${DIST_INDEX} is missing: run \`npm run build\` (npm install does it) first`);
});

describe("the built library under each runtime", () => {
  const outputs = new Map<string, DriverOutput>();

  for (const runtime of RUNTIMES) {
    runtimeIt(runtime)(`${runtime.label}: discovers, loads and runs tools${skipNote(runtime)}`, { timeout: 90_000 }, async () => {
      const output = await runDriver(runtime);
      outputs.set(runtime.id, output);
      expect(byName(output.tools), JSON.stringify(output.errorMessages)).toEqual(EXPECTED_TOOLS);
      expect(output.runs).toEqual(EXPECTED_RUNS);

      const errorsByPath = Object.fromEntries(output.errors.map((e) => [e.path, e]));
      expect(Object.keys(errorsByPath).sort()).toEqual([`<root>/${BROKEN_FILE}`, `<root>/${BUILTIN_CLASH_FILE}`].sort());
      const broken = errorsByPath[`<root>/${BROKEN_FILE}`]!;
      // A syntax error is worded differently by jiti, Node's stripper and Bun: one code for all.
      expect(broken).toEqual({ path: `<root>/${BROKEN_FILE}`, code: "EIMPORT", provider: "native", level: "user", toolName: null });
      const clash = errorsByPath[`<root>/${BUILTIN_CLASH_FILE}`]!;
      expect(clash).toEqual({
        path: `<root>/${BUILTIN_CLASH_FILE}`,
        code: "ECONFLICT_BUILTIN",
        provider: "native",
        level: "project",
        toolName: "read",
      });
    });
  }

  it("every runtime gives exactly the same result (order and error codes included)", (ctx) => {
    const available = RUNTIMES.filter((r) => outputs.has(r.id));
    const missing = RUNTIMES.filter((r) => !outputs.has(r.id)).map((r) => r.label);
    // The per-runtime cases say why one is missing; in CI all of them must have produced output.
    if (isCI()) expect(missing, "runtimes whose driver produced no output").toEqual([]);
    if (available.length < 2) return ctx.skip(`fewer than two runtimes ran (missing: ${missing.join(", ")})`);
    const comparable = (o: DriverOutput) => ({ tools: o.tools, errors: o.errors, runs: o.runs });
    const reference = comparable(outputs.get(available[0]!.id)!);
    for (const runtime of available.slice(1)) {
      expect(comparable(outputs.get(runtime.id)!), `${runtime.label} vs ${available[0]!.label} (missing: ${missing.join(", ") || "none"})`).toEqual(
        reference,
      );
    }
  });
});

describe("the CLI under each runtime", () => {
  const helps = new Map<string, string>();
  const toolsJson = new Map<string, unknown>();

  for (const runtime of RUNTIMES) {
    runtimeIt(runtime)(`${runtime.label}: --version prints the package version${skipNote(runtime)}`, async () => {
      requireRuntime(runtime);
      const world = await freshWorld();
      const r = await runCli(["--version"], { cwd: world.cwd, home: world.home, runtime });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${PACKAGE_VERSION}\n`);
    });

    runtimeIt(runtime)(`${runtime.label}: --help lists the program and its global flags${skipNote(runtime)}`, async () => {
      requireRuntime(runtime);
      const world = await freshWorld();
      const r = await runCli(["--help"], { cwd: world.cwd, home: world.home, runtime });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: xcsh-tools /);
      for (const flag of ["--json", "--cwd <dir>", "--home <dir>", "--registry <url>"]) expect(r.stdout).toContain(flag);
      helps.set(runtime.id, r.stdout);
    });

    runtimeIt(runtime)(`${runtime.label}: tools --json lists what a host would load${skipNote(runtime)}`, { timeout: 60_000 }, async () => {
      requireRuntime(runtime);
      const world = await freshWorld();
      const r = await runCli(["tools", "--json", "--home", world.xcshHome, "--cwd", world.cwd], {
        cwd: world.root,
        home: world.home,
        runtime,
        timeoutMs: 60_000,
      });
      // The world holds a module that throws and a built-in's name: tools lists them and exits 1.
      expect(r.code, r.stderr).toBe(1);
      const json = JSON.parse(r.stdout.split(world.root).join("<root>")) as {
        cwd: string;
        tools: { name: string; file: string; provider: string; level: string }[];
        errors: { code: string; path: string; message: string; provider: string; level: string }[];
      };
      expect(json.cwd).toBe("<root>/project");
      expect(byName(json.tools).map(({ name, file, provider, level }) => ({ name, file, provider, level }))).toEqual(
        EXPECTED_TOOLS.map(({ name, resolvedPath, provider, level }) => ({ name, file: resolvedPath, provider, level })),
      );
      expect(json.errors.map(({ code, path, provider, level }) => ({ code, path, provider, level }))).toEqual(
        expect.arrayContaining([
          { code: "EIMPORT", path: `<root>/${BROKEN_FILE}`, provider: "native", level: "user" },
          { code: "ECONFLICT_BUILTIN", path: `<root>/${BUILTIN_CLASH_FILE}`, provider: "native", level: "project" },
        ]),
      );
      expect(json.errors).toHaveLength(2);
      for (const error of json.errors) expect(error.message).toMatch(/^(Failed to load tool: |Tool name "read" conflicts with existing tool)/);
      // Messages quote each runtime's parser; everything else must be identical.
      toolsJson.set(runtime.id, { ...json, errors: json.errors.map(({ message: _message, ...rest }) => rest) });
    });
  }

  it("--help and tools --json are identical under every runtime", (ctx) => {
    if (isCI()) expect({ help: helps.size, tools: toolsJson.size }).toEqual({ help: RUNTIMES.length, tools: RUNTIMES.length });
    if (helps.size < 2) return ctx.skip("fewer than two runtimes ran");
    for (const map of [helps, toolsJson]) {
      const values = [...map.values()];
      for (const value of values.slice(1)) expect(value).toEqual(values[0]);
    }
  });
});
