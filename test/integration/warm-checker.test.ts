/**
 * The module checker an install starts ahead (validate/module-check.ts `warmUpChecker`): the next
 * check with the same cwd uses that very process, and a warm checker nobody uses neither keeps
 * its parent alive nor outlives it. Runs a small script against module-check.ts and the child,
 * bundled as the package's build bundles them (in the package's layout), in its own Node process,
 * whose children are read from /proc (Linux, as CI).
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { bundleForTest, REPO, testBundleRoot } from "../helpers/build-dist.js";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const moduleCheck = pathToFileURL(path.join(testBundleRoot("warm-checker"), "dist", "lib", "module-check.js")).href;

/**
 * The scripts' \`children({ zombies })\`: this process's child pids, read from /proc (a killed
 * child stays a zombie until it is reaped).
 */
const CHILDREN = `
import { readdirSync, readFileSync } from "node:fs";
const children = ({ zombies = true } = {}) => readdirSync("/proc").filter((name) => /^\\d+$/.test(name)).filter((pid) => {
  try {
    const [state, ppid] = readFileSync("/proc/" + pid + "/stat", "utf8").replace(/^.*\\) /, "").split(" ");
    return ppid === String(process.pid) && (zombies || state !== "Z");
  } catch { return false; }
});
`;

const script = `${CHILDREN}
import { checkModules, warmUpChecker } from ${JSON.stringify(moduleCheck)};
const [cwd, tool] = process.argv.slice(2);
warmUpChecker({ cwd });
const warm = children();
await new Promise((resolve) => setTimeout(resolve, 300));
const outcomes = await checkModules([tool], { cwd });
await new Promise((resolve) => setTimeout(resolve, 300));
const after = children();
warmUpChecker({ cwd });
const unused = children();
console.log(JSON.stringify({ warm, after, unused, tools: outcomes.map((o) => o.tools.map((t) => t.name)), failures: outcomes.map((o) => o.failure ?? null) }));
// No exit call: a warm checker left unused must not keep this process alive.
`;

/** A checker started ahead for given roots: prepares its imports writing nothing, then checks with them. */
const preparedScript = `
import { existsSync, readdirSync } from "node:fs";
import { checkModules, warmUpChecker } from ${JSON.stringify(moduleCheck)};
const [cwd, tool, root] = process.argv.slice(2);
const roots = { home: root + "/home", xcshHome: root + "/scratch", cacheDir: root + "/scratch/transpile" };
warmUpChecker({ cwd, ...roots });
await new Promise((resolve) => setTimeout(resolve, 1500));
const wroteAhead = existsSync(root + "/scratch");
const outcomes = await checkModules([tool], { cwd, ...roots });
// A checker prepared for other roots does not serve this check: its shims land in the check's own.
const other = { home: root + "/home", xcshHome: root + "/other", cacheDir: root + "/other/transpile" };
warmUpChecker({ cwd, ...roots });
await checkModules([tool], { cwd, ...other });
console.log(JSON.stringify({
  wroteAhead,
  shims: readdirSync(roots.cacheDir + "/shims").sort(),
  otherShims: readdirSync(other.cacheDir + "/shims").sort(),
  tools: outcomes.map((o) => o.tools.map((t) => [t.name, t.description])),
  failures: outcomes.map((o) => o.failure ?? null),
}));
`;

/**
 * A checker started before the roots were known (an install starts one before resolving its specs;
 * the transaction folder comes later): the same process gets the roots, prepares for them and
 * serves the check; once prepared it no longer serves other roots.
 */
const lateRootsScript = `${CHILDREN}
import { checkModules, warmUpChecker } from ${JSON.stringify(moduleCheck)};
const [cwd, tool, root] = process.argv.slice(2);
const roots = { home: root + "/home", xcshHome: root + "/scratch", cacheDir: root + "/scratch/transpile" };
warmUpChecker({ cwd });
const early = children();
await new Promise((resolve) => setTimeout(resolve, 200));
warmUpChecker({ cwd, ...roots });
const prepared = children();
const outcomes = await checkModules([tool], { cwd, ...roots });
const other = { home: root + "/home", xcshHome: root + "/other", cacheDir: root + "/other/transpile" };
await new Promise((resolve) => setTimeout(resolve, 300)); // the checker that served exits
const afterCheck = children({ zombies: false });
warmUpChecker({ cwd });
warmUpChecker({ cwd, ...roots });
const second = children();
await checkModules([tool], { cwd, ...other });
console.log(JSON.stringify({
  early, prepared, afterCheck, second,
  shims: readdirSync(roots.cacheDir + "/shims").sort(),
  otherShims: readdirSync(other.cacheDir + "/shims").sort(),
  tools: outcomes.map((o) => o.tools.map((t) => [t.name, t.description])),
  failures: outcomes.map((o) => o.failure ?? null),
}));
`;

/**
 * A checker started ahead checks a TypeScript tool under node_modules, which goes through jiti on
 * every Node (type stripping refuses node_modules): jiti loads on that first use.
 */
const noJitiAheadScript = `
import { checkModules, warmUpChecker } from ${JSON.stringify(moduleCheck)};
const [cwd, tool, root] = process.argv.slice(2);
const roots = { home: root + "/home", xcshHome: root + "/scratch", cacheDir: root + "/scratch/transpile" };
warmUpChecker({ cwd, ...roots });
await new Promise((resolve) => setTimeout(resolve, 500));
const outcomes = await checkModules([tool], { cwd, ...roots });
console.log(JSON.stringify({ tools: outcomes.map((o) => o.tools.map((t) => [t.name, t.description])), failures: outcomes.map((o) => o.failure ?? null) }));
`;

/** The state letter of process `pid` (R, S, Z…), or "gone". */
function processState(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[0]!;
  } catch {
    return "gone";
  }
}

// A bare "@sinclair/typebox" import from a folder without node_modules resolves only through the
// module map (the resolve hook and its shims).
const TYPED_TOOL = `import { Type } from "@sinclair/typebox";\nexport default () => ({ name: "typed_tool", description: Type.String().type, parameters: Type.Object({}), async execute() { return { content: [] }; } });\n`;

/** Run \`source\` (one of the scripts above) with \`cwd\`, a typed tool and the world's root. */
async function runTypedToolScript(name: string, source: string) {
  const tool = path.join(w.cwd, "typed.mjs");
  await writeFile(tool, TYPED_TOOL);
  const file = path.join(w.root, name);
  await writeFile(file, source);
  return runProcess(process.execPath, [file, w.cwd, tool, w.root], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 30_000 });
}

let w: TmpWorld;
beforeAll(async () => {
  await bundleForTest("warm-checker", { "lib/module-check": path.join(REPO, "src", "validate", "module-check.ts"), "validate/child": path.join(REPO, "src", "validate", "child.ts") });
}, 120_000);
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
});
afterEach(async () => w?.cleanup());

describe.runIf(existsSync("/proc/self/stat"))("the warm module checker", () => {
  it("serves the next check itself, and an unused one ends with its parent", { timeout: 60_000 }, async () => {
    const tool = path.join(w.cwd, "tool.mjs");
    await writeFile(tool, `export default () => ({ name: "warm_tool", label: "Warm", description: "d", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } });\n`);
    const file = path.join(w.root, "run.mjs");
    await writeFile(file, script);
    const r = await runProcess(process.execPath, [file, w.cwd, tool], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 30_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json<{ warm: string[]; after: string[]; unused: string[]; tools: string[][]; failures: unknown[] }>();
    expect(out.tools).toEqual([["warm_tool"]]);
    expect(out.failures).toEqual([null]);
    expect(out.warm).toHaveLength(1);
    // The warm process did the check (it exits when done); no other checker was left behind.
    expect(out.after).toEqual([]);
    expect(out.unused).toHaveLength(1);
    // Killed when its parent exited: gone, or a zombie its new parent has not reaped yet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(processState(out.unused[0]!)).toMatch(/^(gone|Z)$/);
  });

  it("started for the check's roots, it prepares its imports ahead writing nothing, and the check uses those roots", { timeout: 60_000 }, async () => {
    const r = await runTypedToolScript("prepared.mjs", preparedScript);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json<{ wroteAhead: boolean; shims: string[]; otherShims: string[]; tools: string[][][]; failures: unknown[] }>();
    expect(out.failures).toEqual([null]);
    expect(out.tools).toEqual([[["typed_tool", "string"]]]);
    expect(out.wroteAhead).toBe(false);
    expect(out.shims).toEqual(["_40sinclair_2ftypebox.mjs", "xcsh-tools.mjs"]);
    expect(out.otherShims).toEqual(out.shims);
  });

  it("started ahead, it checks a TypeScript tool under node_modules (jiti on every Node, loaded on first use)", { timeout: 60_000 }, async () => {
    const tool = path.join(w.cwd, "node_modules", "ts-plugin", "tool.ts");
    await mkdir(path.dirname(tool), { recursive: true });
    await writeFile(tool, TYPED_TOOL.replace("export default () =>", "const label: string = \"Typed\";\nexport default (): object =>").replace("name: \"typed_tool\",", "name: \"typed_tool\", label,"));
    const file = path.join(w.root, "no-jiti.mjs");
    await writeFile(file, noJitiAheadScript);
    const r = await runProcess(process.execPath, [file, w.cwd, tool, w.root], { cwd: w.cwd, env: hermeticEnv(w.home), timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json<{ tools: string[][][]; failures: unknown[] }>();
    expect(out.failures).toEqual([null]);
    expect(out.tools).toEqual([[["typed_tool", "string"]]]);
  });

  it("started before its roots were known, the same process prepares for them when they come and serves the check", { timeout: 60_000 }, async () => {
    const r = await runTypedToolScript("late.mjs", lateRootsScript);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json<{ early: string[]; prepared: string[]; afterCheck: string[]; second: string[]; shims: string[]; otherShims: string[]; tools: string[][][]; failures: unknown[] }>();
    expect(out.early).toHaveLength(1);
    // Given its roots, the early checker is kept (no second process).
    expect(out.prepared).toEqual(out.early);
    // It did the check itself (and exited): no other checker was started for it.
    expect(out.afterCheck).toEqual([]);
    expect(out.failures).toEqual([null]);
    expect(out.tools).toEqual([[["typed_tool", "string"]]]);
    expect(out.shims).toEqual(["_40sinclair_2ftypebox.mjs", "xcsh-tools.mjs"]);
    // A rootless warm-up followed by one with roots starts one checker, not two.
    expect(out.second).toHaveLength(1);
    expect(out.second).not.toEqual(out.early);
    // That checker, prepared for \`roots\`, did not serve the check with other roots.
    expect(out.otherShims).toEqual(out.shims);
  });
});
