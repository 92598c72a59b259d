/**
 * The module-checking child of `xcsh-tools validate`. It imports each module with the loader's
 * own import (same strategies, same module map), calls its factory with a real `CustomToolAPI`
 * (the loader's), checks every returned tool with the loader's `checkTool`, and sends back a JSON
 * description. It runs in its own process so that a module that loops forever or calls
 * `process.exit` costs the parent one restart, not the run. Run only as a forked child.
 */
import os from "node:os";
import path from "node:path";
import { errorMessage, isXcshToolsError } from "../core/errors.js";
import { CustomToolLoader, DEFAULT_FACTORY_TIMEOUT_MS, describeExport } from "../host/loader.js";
import { hostExportReadCount, hostExportsFailure, loadHostExports } from "../host/host-exports.js";
import { flushToolCompileCache, importToolModule, prepareToolImports, type ImportToolModuleOptions } from "../host/module-import.js";
import { raceTimeout } from "../host/timeout.js";
import { checkTool, readField, readToolName } from "../host/tool-shape.js";
import * as bundledTypeBox from "@sinclair/typebox";
import { FENCE_CODE, setImportFence } from "../host/import/fence.js";
import { provideOwnApi } from "../host/import/module-map.js";
import { describeDefinition, definitionDifference, type StaticDefinition } from "../host/lazy-definition.js";
import { importRootsOf, type CheckRequest, type ChildMessage, type ImportRoots, type ModuleFailure, type PrepareRequest, type ToolDescriptor } from "./protocol.js";

// Tools that import `xcsh-tools` get the package's API, as in a host (host/import/module-map.ts).
provideOwnApi(() => import("../index.js"));

function send(message: ChildMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

function jsonSafe(value: unknown): unknown {
  try {
    return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
  } catch {
    return undefined;
  }
}

function describeTool(candidate: unknown, index: number | undefined): ToolDescriptor {
  const problems = checkTool(candidate).map((p) => ({ code: p.code, field: p.field, message: p.message }));
  const descriptor: ToolDescriptor = { hasExecute: false, problems };
  if (index !== undefined) descriptor.index = index;
  if (!candidate || typeof candidate !== "object") return descriptor;
  const name = readToolName(candidate);
  if (name !== undefined) descriptor.name = name;
  const field = (key: string) => {
    const r = readField(candidate, key);
    return r.ok ? r.value : undefined;
  };
  descriptor.label = jsonSafe(field("label"));
  descriptor.description = jsonSafe(field("description"));
  descriptor.parameters = jsonSafe(field("parameters"));
  const execute = field("execute");
  descriptor.hasExecute = typeof execute === "function";
  descriptor.hidden = jsonSafe(field("hidden"));
  descriptor.deferrable = jsonSafe(field("deferrable"));
  return descriptor;
}

async function checkModule(file: string, request: CheckRequest, loader: CustomToolLoader, importOptions: ImportToolModuleOptions): Promise<{ tools: ToolDescriptor[]; failure?: ModuleFailure }> {
  let module: Record<string, unknown>;
  try {
    module = (await importToolModule(file, importOptions)).module;
  } catch (error) {
    const code = isXcshToolsError(error, "EIMPORT_TIMEOUT") ? "EIMPORT_TIMEOUT" : errorMessage(error).includes(`${FENCE_CODE}: `) ? FENCE_CODE : "EIMPORT";
    return { tools: [], failure: { code, message: errorMessage(error) } };
  }
  let factory: unknown;
  try {
    factory = module.default ?? module;
  } catch (error) {
    return { tools: [], failure: { code: "ENOT_A_FACTORY", message: `reading the default export threw: ${errorMessage(error)}` } };
  }
  if (typeof factory !== "function") {
    return { tools: [], failure: { code: "ENOT_A_FACTORY", message: `the module's default export is ${describeExport(factory)}, not a factory function` } };
  }
  const timeoutMs = request.factoryTimeoutMs || DEFAULT_FACTORY_TIMEOUT_MS;
  let result: unknown;
  let timedOut = false;
  const piReads = hostExportReadCount(loader.api.pi);
  try {
    const call = Promise.resolve().then(() => (factory as (api: unknown) => unknown)(loader.api));
    call.catch(() => undefined);
    result = await raceTimeout(call, timeoutMs, () => {
      timedOut = true;
      return new Error("timeout");
    });
  } catch (error) {
    if (timedOut) return { tools: [], failure: { code: "EFACTORY_TIMEOUT", message: `the factory did not settle within ${timeoutMs} ms` } };
    const needsHost = hostExportsFailure(loader.api.pi, piReads, errorMessage(error));
    if (needsHost) return { tools: [], failure: { code: "EHOST_EXPORTS", message: needsHost } };
    return { tools: [], failure: { code: "EFACTORY_THROW", message: `the factory threw: ${errorMessage(error)}` } };
  }
  if (result === null || result === undefined || typeof result !== "object") {
    return { tools: [], failure: { code: "EFACTORY_RESULT", message: `the factory returned ${describeExport(result)}; expected a tool or an array of tools` } };
  }
  const tools = Array.isArray(result) ? result.map((candidate, i) => describeTool(candidate, i)) : [describeTool(result, undefined)];
  if (request.staticModules?.includes(file)) await checkStatic(factory as (api: unknown) => unknown, result, tools, request, pi(loader));
  return { tools };
}

const pi = (loader: CustomToolLoader) => loader.api.pi as Record<string, unknown>;

/**
 * For a plugin that declares `staticTools` (docs/lazy-tools.md): each tool's static definition,
 * and proof that it is static. The factory is called a second time in another cwd (the API's and
 * the process's) with every environment variable reading differently (plugin settings reach
 * tools through the environment); a definition that changes is the plugin's error, reported on
 * the tool with the field that moved. Runs inside the import `validate` already makes.
 */
async function checkStatic(factory: (api: unknown) => unknown, first: unknown, tools: ToolDescriptor[], request: CheckRequest, hostExports: Record<string, unknown>): Promise<void> {
  const firstList = Array.isArray(first) ? first : [first];
  const definitions = firstList.map((candidate, i) => {
    // Every tool ends with `lazy` or `staticProblem`: the record then counts as checked (boot/module-records.ts).
    if (!candidate || typeof candidate !== "object") {
      tools[i]!.staticProblem = { field: "(tool)", message: "the factory returned something that is not a tool object" };
      return undefined;
    }
    const described = describeDefinition(candidate);
    if (!described.ok) tools[i]!.staticProblem = described.problem;
    return described.ok ? described.definition : undefined;
  });
  const probeCwd = path.resolve(request.cwd) === path.resolve(os.tmpdir()) ? path.parse(os.tmpdir()).root : os.tmpdir();
  const probeApi = new CustomToolLoader(hostExports, probeCwd, [], undefined, {}).api;
  const cwd = process.cwd();
  const restoreEnv = probeEnvironment();
  let second: unknown;
  try {
    process.chdir(probeCwd);
    const call = Promise.resolve().then(() => factory(probeApi));
    call.catch(() => undefined);
    second = await raceTimeout(call, request.factoryTimeoutMs || DEFAULT_FACTORY_TIMEOUT_MS, () => new Error("the factory did not settle"));
  } catch (error) {
    for (const tool of tools) tool.staticProblem ??= { field: "(factory)", message: `the factory failed when called again in another cwd and environment: ${errorMessage(error)}` };
    return;
  } finally {
    restoreEnv();
    process.chdir(cwd);
  }
  const secondList = Array.isArray(second) ? second : [second];
  tools.forEach((tool, i) => {
    const recorded = definitions[i];
    if (!recorded || tool.staticProblem) return;
    const again = secondList[i] && typeof secondList[i] === "object" ? describeDefinition(secondList[i] as object) : undefined;
    const field = again?.ok ? definitionDifference(recorded, again.definition) : "(tool)";
    if (field !== undefined) {
      tool.staticProblem = { field, message: `tool "${String(recorded.name)}": "${field}" is not the same when the factory runs in another cwd or with other environment variables or settings` };
      return;
    }
    tool.lazy = lazyPart(recorded);
  });
  if (secondList.length !== firstList.length) {
    for (const tool of tools) {
      delete tool.lazy;
      tool.staticProblem ??= { field: "(factory)", message: `the factory returned ${secondList.length} tools in another cwd and environment, ${firstList.length} here` };
    }
  }
}

const lazyPart = ({ symbols, data, methods }: StaticDefinition) => ({ symbols, data, methods });

const probeValue = (key: string) => `xcsh-tools-static-probe-${key}`;

/**
 * Make every environment variable read differently until the returned function is called: a
 * proxy where `process.env` may be replaced (Node), else every existing variable rewritten in
 * place (a runtime whose `process.env` cannot be replaced). Returns the undo.
 */
function probeEnvironment(): () => void {
  const env = process.env;
  const proxy = new Proxy(env, { get: (target, key) => (typeof key === "string" ? probeValue(key) : Reflect.get(target, key)) });
  try {
    process.env = proxy;
  } catch {
    // not replaceable: rewritten below
  }
  if (process.env === proxy) return () => void (process.env = env);
  const saved = { ...env };
  for (const key of Object.keys(saved)) env[key] = probeValue(key);
  return () => {
    for (const key of Object.keys(env)) if (!(key in saved)) delete env[key];
    Object.assign(env, saved);
  };
}

async function run(request: CheckRequest): Promise<void> {
  await preparing;
  // Before anything of the checked modules is resolved: bare imports stay inside these folders.
  setImportFence(request.confineTo);
  // `api.pi`: the module `--pi` names, else the host package where the tool modules' folders resolve it.
  let pi: Record<string, unknown> | undefined;
  try {
    pi = (await loadHostExports({ cwd: request.cwd, alsoFrom: request.modules.map((m) => path.dirname(m)), ...(request.piModule !== undefined ? { module: request.piModule } : {}), ...(request.confineTo ? { within: request.confineTo } : {}) }))?.exports;
  } catch (error) {
    // Checked by the parent before the child starts; here it can only be a race. Every module fails alike.
    for (let index = 0; index < request.modules.length; index++) {
      await send({ type: "start", index });
      await send({ type: "result", index, tools: [], failure: { code: "EHOST_EXPORTS", message: errorMessage(error) }, ms: 0 });
    }
    await send({ type: "done" });
    process.exit(0);
  }
  const loader = new CustomToolLoader(pi, request.cwd, [], undefined, {});
  // One options object for every module, as the loader does: the module map, the transpile
  // cache's folder and the shims are set up once per run (or were, ahead, for these roots).
  const importOptions: ImportToolModuleOptions = prepared && sameRoots(prepared, request) ? prepared : childImportOptions(request);
  importOptions.importTimeoutMs = request.importTimeoutMs;
  for (let index = 0; index < request.modules.length; index++) {
    await send({ type: "start", index });
    const started = Date.now();
    const outcome = await checkModule(request.modules[index]!, request, loader, importOptions);
    await send({ type: "result", index, ...outcome, ms: Date.now() - started });
  }
  // The parent may kill us once it has "done": the next boot's compile cache is written first.
  await flushToolCompileCache().catch(() => undefined);
  await send({ type: "done" });
  // Tools may leave timers or sockets open; the parent also kills us, this is the polite way.
  process.exit(0);
}

const sameRoots = (a: ImportRoots, b: ImportRoots) => a.cacheDir === b.cacheDir && a.home === b.home && a.xcshHome === b.xcshHome;

/** What to prepare imports for while the parent is still busy (a checker started ahead). */
function preparationFromArgv(): Omit<PrepareRequest, "type"> | undefined {
  try {
    const ahead = JSON.parse(process.argv[2] ?? "null") as unknown;
    return ahead !== null && typeof ahead === "object" ? (ahead as Omit<PrepareRequest, "type">) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The import options of one set of roots. Tools get the TypeBox the package bundles, passed as a
 * host passes its own: this child is ours, not a host, and which copy a tool gets does not change
 * whether it loads, while looking for another (module-map.ts `defaultTypeBox`) would load a
 * second TypeBox in a process every install starts.
 */
function childImportOptions(roots: ImportRoots): ImportToolModuleOptions {
  return { ...importRootsOf(roots), modules: { "@sinclair/typebox": bundledTypeBox } };
}

let prepared: ImportToolModuleOptions | undefined;
let preparing: Promise<void> | undefined;
/** Best effort: whatever fails here fails again, with its module's name, at the first import. */
function prepareFor({ roots }: Omit<PrepareRequest, "type">): Promise<void> {
  prepared = childImportOptions(roots);
  preparing = prepareToolImports(prepared).catch(() => undefined);
  return preparing;
}

const ahead = preparationFromArgv();
if (ahead?.roots && typeof ahead.roots === "object") await prepareFor(ahead);

process.on("message", (message: unknown) => {
  const request = message as CheckRequest | PrepareRequest;
  if (request?.type === "prepare" && !prepared && request.roots && typeof request.roots === "object") void prepareFor(request);
  else if (request?.type === "check") void run(request);
});
process.on("unhandledRejection", () => {
  // A tool's stray rejection after its factory settled is not this module's verdict.
});
void send({ type: "ready" });
