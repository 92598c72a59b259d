/**
 * Module records per runtime (src/boot/module-records.ts): a record made under Node and one made
 * under Bun for the same file both survive a query or a refresh under the other runtime, so the
 * records no longer ping-pong; another runtime's success answers without importing the tool
 * again, another runtime's failure is checked again here. The Node side runs in this process
 * (records say "node"); the Bun side runs the built library under `$XCSH_TOOLS_TEST_BUN`
 * (test/helpers/runtimes.ts), and the cases that need no Bun stand a Bun record in by hand.
 */
import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { BOOT_INDEX_VERSION, checkBootIndex, listInstalledTools, refreshBootIndex } from "../../src/boot/index.js";
import { readBootIndex } from "../../src/boot/format.js";
import { bootIndexGenerator } from "../../src/boot/world.js";
import { xcshPaths } from "../../src/core/paths.js";
import { buildDist } from "../helpers/build-dist.js";
import { cliArgv, hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT, requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

beforeAll(async () => {
  // Validation runs the built child (dist/validate/child.js); the Bun driver imports dist/index.js.
  await buildDist();
}, 180_000);

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-boot-runtimes-", { trustProject: true });

const BUN = runtimes().find((r) => r.id === "bun")!;
const opts = () => ({ home: w.home, xcshHome: w.xcshHome, env: {}, cwd: w.cwd });
const marker = () => path.join(w.root, "imported.log");
const modulesFile = () => xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootModules;

/**
 * Two user tools that log `<runtime> <name>` to the marker when imported: `plain` loads
 * everywhere; `bun_only` calls `Bun.version` in its factory, so it fails under Node.
 */
async function writeTools(): Promise<void> {
  const log = (name: string) => `import { appendFileSync } from "node:fs";
appendFileSync(${JSON.stringify(marker())}, (process.versions.bun ? "bun" : "node") + " ${name}\\n");`;
  const tool = (name: string, description: string) => `{ name: "${name}", description: ${description}, parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } }`;
  await w.write("home/.xcsh/agent/tools/plain.mjs", `${log("plain")}\nexport default () => (${tool("plain", '"everywhere"')});\n`);
  await w.write("home/.xcsh/agent/tools/bun-only.mjs", `${log("bun_only")}\nexport default () => (${tool("bun_only", '"Bun " + Bun.version.split(".")[0]')});\n`);
  await writeFile(marker(), "");
}

/** Imports since the last call, as `<runtime> <name>` lines. */
async function imports(): Promise<string[]> {
  const lines = (await readFile(marker(), "utf8")).split("\n").filter(Boolean);
  await writeFile(marker(), "");
  return lines.sort();
}

interface Stored {
  [file: string]: Record<string, { runtime: string; failure?: { code: string } }>;
}
async function storedRecords(): Promise<Record<string, Record<string, string>>> {
  const doc = JSON.parse(await readFile(modulesFile(), "utf8")) as { modules: Stored };
  return Object.fromEntries(
    Object.entries(doc.modules).map(([file, byRuntime]) => [
      path.basename(file),
      Object.fromEntries(Object.entries(byRuntime).map(([runtime, record]) => [runtime, record.failure ? record.failure.code : "ok"])),
    ]),
  );
}

/** Rewrite the stored Node records as if Bun had made them (what a Bun-run install would leave). */
async function recordsMadeUnderBun(): Promise<void> {
  const doc = JSON.parse(await readFile(modulesFile(), "utf8")) as { modules: Stored };
  for (const byRuntime of Object.values(doc.modules)) {
    byRuntime.bun = { ...byRuntime.node!, runtime: "bun" };
    delete byRuntime.node;
  }
  await writeFile(modulesFile(), JSON.stringify(doc));
}

const summary = (list: Awaited<ReturnType<typeof listInstalledTools>>) => ({
  validated: list.index.validated,
  tools: list.tools.map((t) => t.name),
  errors: list.errors.map((e) => `${path.basename(e.path)} ${e.code}`),
});

describe("module records per runtime (no Bun needed)", () => {
  it("another runtime's success answers without validating; its failure is validated again here", async () => {
    await writeTools();
    await refreshBootIndex(opts());
    expect(await imports()).toEqual(["node bun_only", "node plain"]);
    await recordsMadeUnderBun();

    const list = await listInstalledTools(opts());
    // bun_only failed under "Bun" only by our hand: checked again, it fails under Node for real.
    expect(summary(list)).toEqual({ validated: 1, tools: ["plain"], errors: ["bun-only.mjs EFACTORY_THROW"] });
    expect(list.tools[0]).toMatchObject({ description: "everywhere", parameters: { type: "object", properties: {} } });
    expect(await imports()).toEqual(["node bun_only"]);
    // The Bun record stays beside the Node one.
    expect(await storedRecords()).toEqual({ "plain.mjs": { bun: "ok" }, "bun-only.mjs": { bun: "EFACTORY_THROW", node: "EFACTORY_THROW" } });

    const again = await listInstalledTools(opts());
    expect(again.index).toMatchObject({ fresh: true, validated: 0, written: false });
    expect(await checkBootIndex(opts())).toMatchObject({ fresh: true, modules: 3, unvalidated: 0 });

    // A refresh (what every install runs) keeps both runtimes' records of unchanged bytes.
    expect((await refreshBootIndex(opts())).validated).toBe(0);
    expect(await storedRecords()).toEqual({ "plain.mjs": { bun: "ok" }, "bun-only.mjs": { bun: "EFACTORY_THROW", node: "EFACTORY_THROW" } });
    expect(await imports()).toEqual([]);
  });

  it("new bytes drop every runtime's record of the old ones", async () => {
    await writeTools();
    await refreshBootIndex(opts());
    await recordsMadeUnderBun();
    await listInstalledTools(opts());
    await w.write("home/.xcsh/agent/tools/bun-only.mjs", `export default () => ({ name: "bun_only", description: "fixed", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } });\n`);
    const list = await listInstalledTools(opts());
    expect(summary(list)).toEqual({ validated: 1, tools: ["bun_only", "plain"], errors: [] });
    expect(await storedRecords()).toEqual({ "plain.mjs": { bun: "ok" }, "bun-only.mjs": { node: "ok" } });
  });

  it("a records file of version 4 (one record per file) reads as no records, never as an error", async () => {
    await writeTools();
    await refreshBootIndex(opts());
    const doc = JSON.parse(await readFile(modulesFile(), "utf8")) as { modules: Stored };
    const old = { ...doc, version: 4, modules: Object.fromEntries(Object.entries(doc.modules).map(([file, byRuntime]) => [file, byRuntime.node])) };
    await writeFile(modulesFile(), JSON.stringify(old));
    const files = { views: xcshPaths({ home: w.home, xcshHome: w.xcshHome }).bootIndex, modules: modulesFile() };
    const read = await readBootIndex(files, bootIndexGenerator(), true);
    expect(read).toMatchObject({ status: "ok", index: { modules: {} }, modulesProblem: `${modulesFile()} has version 4; this xcsh-tools reads version ${BOOT_INDEX_VERSION}` });
    await imports();
    expect(summary(await listInstalledTools(opts()))).toEqual({ validated: 2, tools: ["plain"], errors: ["bun-only.mjs EFACTORY_THROW"] });
    expect(JSON.parse(await readFile(modulesFile(), "utf8")).version).toBe(BOOT_INDEX_VERSION);
  });
});

/** `listInstalledTools` (or `refreshBootIndex`) of the built library under Bun, summarized. */
async function underBun(call: "list" | "refresh"): Promise<{ validated: number; tools: string[]; errors: string[] }> {
  const script = `
const input = JSON.parse(process.argv[1]);
const ours = await import(input.dist);
const options = { home: input.home, xcshHome: input.xcshHome, env: {}, cwd: input.cwd };
if (input.call === "refresh") {
  const report = await ours.refreshBootIndex(options);
  process.stdout.write(JSON.stringify({ validated: report.validated, tools: [], errors: [] }));
} else {
  const list = await ours.listInstalledTools(options);
  process.stdout.write(JSON.stringify({ validated: list.index.validated, tools: list.tools.map((t) => t.name), errors: list.errors.map((e) => e.path.split("/").pop() + " " + e.code) }));
}
`;
  const input = { dist: pathToFileURL(path.join(REPO_ROOT, "dist", "index.js")).href, home: w.home, xcshHome: w.xcshHome, cwd: w.cwd, call };
  const r = await runProcess(requireRuntime(BUN), ["-e", script, JSON.stringify(input)], { cwd: w.cwd, env: { PATH: process.env.PATH, HOME: w.home }, timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { validated: number; tools: string[]; errors: string[] };
}

describe(`module records per runtime under Bun${skipNote(BUN)}`, () => {
  runtimeIt(BUN)("a Node record and a Bun record of one file both survive queries under the other runtime: no ping-pong", { timeout: 120_000 }, async () => {
    await writeTools();
    // An install run by Node: both validated under Node, bun_only fails there.
    await refreshBootIndex(opts());
    expect(await imports()).toEqual(["node bun_only", "node plain"]);

    // The first Bun query: plain answers from the Node success; bun_only's Node failure is checked under Bun.
    expect(await underBun("list")).toEqual({ validated: 1, tools: ["bun_only", "plain"], errors: [] });
    expect(await imports()).toEqual(["bun bun_only"]);
    expect(await storedRecords()).toEqual({ "plain.mjs": { node: "ok" }, "bun-only.mjs": { node: "EFACTORY_THROW", bun: "ok" } });

    // Each runtime again: its own record (or the other's success) answers; nothing is imported.
    expect(summary(await listInstalledTools(opts()))).toEqual({ validated: 0, tools: ["plain"], errors: ["bun-only.mjs EFACTORY_THROW"] });
    expect(await underBun("list")).toEqual({ validated: 0, tools: ["bun_only", "plain"], errors: [] });
    expect(summary(await listInstalledTools(opts()))).toEqual({ validated: 0, tools: ["plain"], errors: ["bun-only.mjs EFACTORY_THROW"] });
    expect(await imports()).toEqual([]);

    // A refresh under either runtime keeps the other's records.
    expect((await refreshBootIndex(opts())).validated).toBe(0);
    expect(await underBun("refresh")).toMatchObject({ validated: 0 });
    expect(await storedRecords()).toEqual({ "plain.mjs": { node: "ok" }, "bun-only.mjs": { node: "EFACTORY_THROW", bun: "ok" } });
    expect(await underBun("list")).toEqual({ validated: 0, tools: ["bun_only", "plain"], errors: [] });
    expect(await imports()).toEqual([]);
  });
});

/**
 * A preload for Bun that logs every read of `process.stdout`, `stderr` or `stdin`: under Bun the
 * first read loads node:stream (cli/main.ts writes to pipes and files directly instead).
 */
const STREAM_TRAP = `const fs = require("node:fs");
for (const name of ["stdout", "stderr", "stdin"]) {
  const own = Object.getOwnPropertyDescriptor(process, name);
  Object.defineProperty(process, name, { configurable: true, enumerable: true, get() { fs.appendFileSync(process.env.TRAP_LOG, name + "\\n"); return own.get ? own.get.call(process) : own.value; } });
}
`;

describe(`the CLI's output under Bun${skipNote(BUN)}`, () => {
  runtimeIt(BUN)("tools --json to a pipe answers without building a process stream; errors and a closed pipe behave as under Node", { timeout: 120_000 }, async () => {
    await writeTools();
    await refreshBootIndex(opts());
    const trap = path.join(w.root, "trap.js");
    const log = path.join(w.root, "trap.log");
    await writeFile(trap, STREAM_TRAP);
    await writeFile(log, "");
    const env = hermeticEnv(w.home, { TRAP_LOG: log, NO_COLOR: "1" }, w.xcshHome);
    const bun = requireRuntime(BUN);
    const json = await runProcess(bun, ["--preload", trap, ...cliArgv(w.home, ["tools", "--json"], { runtime: bun })], { cwd: w.cwd, env });
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).tools.map((t: { name: string }) => t.name)).toEqual(["bun_only", "plain"]);
    expect(await readFile(log, "utf8")).toBe("");

    const human = await runProcess(bun, cliArgv(w.home, ["tools"], { runtime: bun }), { cwd: w.cwd, env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^bun_only {2}.*\n {2}Bun 1\n/);
    const usage = await runProcess(bun, cliArgv(w.home, ["no-such-command"], { runtime: bun }), { cwd: w.cwd, env });
    expect(usage).toMatchObject({ code: 2, stdout: "" });
    expect(usage.stderr).toMatch(/unknown command 'no-such-command'[\s\S]*Code: EUSAGE/);

    // Closed before the CLI prints anything: every write meets EPIPE, and the command still ends well.
    const child = spawn(bun, cliArgv(w.home, ["tools", "--json"], { runtime: bun }), { cwd: w.cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });
});

describe("the real path a record is keyed by", () => {
  it("is the loader's through symbolic links to a folder and to a file, so aliases dedupe as at boot", async () => {
    const { mkdir, symlink } = await import("node:fs/promises");
    const { realpathSync } = await import("node:fs");
    const { discoverAndLoadCustomTools } = await import("../../src/index.js");
    await writeTools();
    const real = path.join(w.root, "elsewhere", "real-tools");
    await mkdir(real, { recursive: true });
    await w.write("elsewhere/real-tools/far.mjs", `export default () => ({ name: "far", description: "far", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } });\n`);
    // The folder through a link, and the file through a link from the user's tools folder.
    await symlink(path.join(w.root, "elsewhere"), path.join(w.root, "linked"), "dir");
    await symlink(path.join(real, "far.mjs"), path.join(w.xcshHome, "agent", "tools", "far-link.mjs"));
    const configuredPaths = [path.join(w.root, "linked", "real-tools", "far.mjs"), path.join(real, "far.mjs")];
    const list = await listInstalledTools({ ...opts(), configuredPaths, builtInToolNames: [] });
    const boot = await discoverAndLoadCustomTools(configuredPaths, w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: {} });
    expect(list.tools.map((t) => [t.name, t.path])).toEqual(boot.tools.map((t) => [t.tool.name, t.path]));
    expect(list.tools.filter((t) => t.name === "far")).toHaveLength(1);
    const doc = JSON.parse(await readFile(modulesFile(), "utf8")) as { modules: Stored };
    const farKeys = Object.keys(doc.modules).filter((key) => key.endsWith("far.mjs"));
    expect(farKeys).toEqual([realpathSync.native(path.join(real, "far.mjs"))]);
    expect(list.errors.map((e) => e.code)).toEqual(boot.errors.map((e) => e.code));
  });
});
