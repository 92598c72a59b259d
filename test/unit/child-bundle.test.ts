/**
 * The built validation child is one module (scripts/bundle-child.mjs): it imports nothing of ours
 * and no package but our dependencies other than TypeBox, and checking a tool through it reads no
 * file of ours nor of the TypeBox package, while the tool still gets one TypeBox (its bare import
 * is `api.typebox`) and our public API under the bare name `xcsh-tools`.
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { nonBuiltinImports, ownDependencies, packageOf } from "../helpers/bundle-imports.js";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const CHILD = path.join(REPO, "dist", "validate", "child.js");
const MODULE_CHECK = pathToFileURL(path.join(REPO, "dist", "validate", "module-check.js")).href;

let w: TmpWorld;
beforeAll(buildDist, 120_000);
beforeEach(async () => {
  w = await makeTmpWorld();
});
afterEach(async () => w?.cleanup());

describe("the built validation child (scripts/bundle-child.mjs)", () => {
  it("is one module: it imports only Node built-ins and our dependencies, TypeBox not among them", async () => {
    const text = await readFile(CHILD, "utf8");
    expect(text.startsWith("// Bundled by scripts/bundle-child.mjs")).toBe(true);
    const outside = nonBuiltinImports(text);
    const dependencies = ownDependencies();
    expect(outside.filter((s) => !dependencies.has(packageOf(s)))).toEqual([]);
    expect(outside.filter((s) => packageOf(s) === "@sinclair/typebox")).toEqual([]);
  });

  it("checks a tool reading no module of ours or of TypeBox from disk; the tool gets one TypeBox and our API by bare name", { timeout: 60_000 }, async () => {
    // One log per process: the parent's and the child's.
    const logs = path.join(w.root, "resolved");
    await mkdir(logs);
    const hooks = path.join(w.root, "log-hooks.mjs");
    await writeFile(hooks, `import { appendFileSync } from "node:fs";\nexport async function resolve(specifier, context, next) {\n  const result = await next(specifier, context);\n  appendFileSync(${JSON.stringify(logs)} + "/" + process.pid, result.url + "\\n");\n  return result;\n}\n`);
    const register = path.join(w.root, "register.mjs");
    await writeFile(register, `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
    // In a folder without node_modules: both bare names resolve through the module map only.
    const tool = path.join(w.cwd, "tool.mjs");
    await writeFile(
      tool,
      `import { Type } from "@sinclair/typebox";\nimport { isObjectSchema, XcshToolsError } from "xcsh-tools";\n` +
        `export default (api) => ({ name: "bundled_tool", label: "B", description: [Type === api.typebox.Type, isObjectSchema(Type.Object({})), typeof XcshToolsError].join(" "), parameters: Type.Object({}), async execute() { return { content: [] }; } });\n`,
    );
    const script = path.join(w.root, "check.mjs");
    await writeFile(
      script,
      `import { checkModules } from ${JSON.stringify(MODULE_CHECK)};\nconst [cwd, tool, root] = process.argv.slice(2);\n` +
        `const outcomes = await checkModules([tool], { cwd, home: root + "/home", xcshHome: root + "/scratch", cacheDir: root + "/scratch/transpile" });\n` +
        `console.log(JSON.stringify(outcomes.map((o) => ({ tools: o.tools.map((t) => [t.name, t.description]), failure: o.failure ?? null }))));\n`,
    );
    // The parent imports module-check.js before the hook is registered in it; the child inherits
    // NODE_OPTIONS and logs every module it resolves.
    const r = await runProcess(process.execPath, [script, w.cwd, tool, w.root], { cwd: w.cwd, env: hermeticEnv(w.home, { NODE_OPTIONS: `--import=${pathToFileURL(register).href}` }), timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toEqual([{ tools: [["bundled_tool", "true true function"]], failure: null }]);
    const perProcess = await Promise.all((await readdir(logs)).map(async (pid) => (await readFile(path.join(logs, pid), "utf8")).split("\n").filter(Boolean)));
    const childUrls = perProcess.find((urls) => urls.includes(pathToFileURL(CHILD).href));
    expect(perProcess).toHaveLength(2);
    expect(childUrls).toBeDefined();
    // The tool itself and the module map's shims are read; nothing of TypeBox or of our dist but the child.
    expect(childUrls).toContain(pathToFileURL(tool).href);
    expect(childUrls!.filter((url) => url.includes("/@sinclair/typebox/"))).toEqual([]);
    expect(childUrls!.filter((url) => url.startsWith(pathToFileURL(path.join(REPO, "dist")).href) && url !== pathToFileURL(CHILD).href)).toEqual([]);
  });
});
