/**
 * The module-checking child of `xcsh-tools validate`. It imports each module with the loader's
 * own import (same strategies, same module map), calls its factory with a real `CustomToolAPI`
 * (the loader's), checks every returned tool with the loader's `checkTool`, and sends back a JSON
 * description. It runs in its own process so that a module that loops forever or calls
 * `process.exit` costs the parent one restart, not the run. Run only as a forked child.
 */
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
  if (Array.isArray(result)) return { tools: result.map((candidate, i) => describeTool(candidate, i)) };
  return { tools: [describeTool(result, undefined)] };
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
