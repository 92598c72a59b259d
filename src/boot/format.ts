/**
 * The boot index file (`<xcshHome>/plugins/.xcsh-tools/boot-index.json`): ours alone, versioned,
 * written atomically, and disposable. Reading it never fails a caller: a missing, unreadable,
 * corrupt or unknown-version file reads as "no index" with a reason (`readBootIndex`), and the
 * caller scans instead and writes a new one.
 *
 *     {version: 1, generator: "xcsh-tools@x.y.z", writtenAt,
 *      views:   [{key: {home, cwd, configuredPaths, providers}, builtAt, inputs, paths, errors}],
 *      modules: {<real path of a tool entry>: {file, sig, sha, runtime, failure? | tools}}}
 *
 * A view is one discovery result (the paths handed to the loader and the discovery errors) with
 * every input it was computed from (fingerprint.ts). A module record is what importing one tool
 * entry and calling its factory produced, captured in the validation child: its tools' names,
 * labels, descriptions and parameter schemas, or the failure.
 */
import { readFileSync } from "node:fs";
import type { ToolLoadError, ToolSource } from "../host/types.js";
import type { InputFingerprint } from "./fingerprint.js";

export const BOOT_INDEX_VERSION = 1;

/** What makes two discovery runs the same question. */
export interface ViewKey {
  home: string;
  cwd: string;
  configuredPaths: string[];
  providers: string[];
}

/** One tool of a module record. */
export interface ToolRecord {
  index?: number;
  name?: string;
  label?: unknown;
  description?: unknown;
  parameters?: unknown;
  problems: { code: string; field: string; message: string }[];
}

/** What one tool entry produced when it was validated. */
export interface ModuleRecord {
  file: string;
  sig: string;
  sha?: string;
  runtime: string;
  failure?: { code: string; message: string };
  tools: ToolRecord[];
}

/*
 * The shape check is written by hand, not with TypeBox like the shared formats: this file is read
 * at every host start and by every `xcsh-tools tools`, and importing TypeBox (about 250 modules)
 * cost more than the whole rest of the query. The file is ours and flat; a check is a few lines
 * per record, and it reports the first wrong path as the schema checks do.
 */
type Shape = "string" | "number" | "unknown" | ((value: unknown) => Problem | undefined);

/**
 * A wrong value: the keys leading to it (innermost last) and what was expected. The path is
 * built only on the way out of a failure, so a good file (every boot) allocates no path strings.
 */
interface Problem {
  keys: (string | number)[];
  expected: string;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function checkValue(shape: Shape, value: unknown): Problem | undefined {
  if (shape === "unknown") return undefined;
  if (typeof shape === "function") return shape(value);
  return typeof value === shape ? undefined : { keys: [], expected: `expected ${shape}` };
}

/** `problem` one level further out, under `key`. */
function under(key: string | number, problem: Problem | undefined): Problem | undefined {
  if (problem) problem.keys.unshift(key);
  return problem;
}

function object(required: Record<string, Shape>, optional: Record<string, Shape> = {}): Shape {
  const requiredEntries = Object.entries(required);
  const optionalEntries = Object.entries(optional);
  return (value) => {
    if (!isObject(value)) return { keys: [], expected: "expected object" };
    for (const [key, shape] of requiredEntries) {
      if (!(key in value)) return { keys: [key], expected: "required" };
      const problem = under(key, checkValue(shape, value[key]));
      if (problem) return problem;
    }
    for (const [key, shape] of optionalEntries) {
      if (value[key] === undefined) continue;
      const problem = under(key, checkValue(shape, value[key]));
      if (problem) return problem;
    }
    return undefined;
  };
}

function arrayOf(item: Shape): Shape {
  return (value) => {
    if (!Array.isArray(value)) return { keys: [], expected: "expected array" };
    for (let i = 0; i < value.length; i++) {
      const problem = under(i, checkValue(item, value[i]));
      if (problem) return problem;
    }
    return undefined;
  };
}

function recordOf(item: Shape): Shape {
  return (value) => {
    if (!isObject(value)) return { keys: [], expected: "expected object" };
    for (const key in value) {
      const problem = under(key, checkValue(item, value[key]));
      if (problem) return problem;
    }
    return undefined;
  };
}

const oneOf = (...allowed: string[]): Shape => (value) => (typeof value === "string" && allowed.includes(value) ? undefined : { keys: [], expected: `expected one of ${allowed.join(", ")}` });

/** `/views/0/key: expected object`, as the schema checks word it. */
function describeProblem(problem: Problem): string {
  return `${problem.keys.length ? problem.keys.map((key) => `/${key}`).join("") : "/"}: ${problem.expected}`;
}

const source = object({ provider: "string", providerName: "string", level: oneOf("user", "project") }, { plugin: "string" });
const view = object({
  key: object({ home: "string", cwd: "string", configuredPaths: arrayOf("string"), providers: arrayOf("string") }),
  builtAt: "string",
  inputs: arrayOf(object({ path: "string", kind: oneOf("stat", "lstat"), sig: "string" }, { sha: "string" })),
  paths: arrayOf(object({ path: "string", source })),
  errors: arrayOf(object({ path: "string", error: "string", code: "string" })),
});
const toolRecord = object(
  { problems: arrayOf(object({ code: "string", field: "string", message: "string" })) },
  { index: "number", name: "string", label: "unknown", description: "unknown", parameters: "unknown" },
);
const moduleRecord = object({ file: "string", sig: "string", runtime: "string", tools: arrayOf(toolRecord) }, { sha: "string", failure: object({ code: "string", message: "string" }) });
const bootIndexShape = object({ version: "number", generator: "string", writtenAt: "string", views: arrayOf(view), modules: recordOf(moduleRecord) });

/** One discovery result with its inputs. */
export interface BootView {
  key: ViewKey;
  builtAt: string;
  inputs: InputFingerprint[];
  paths: { path: string; source: ToolSource }[];
  errors: ToolLoadError[];
}

/** The whole file. */
export interface BootIndex {
  version: typeof BOOT_INDEX_VERSION;
  generator: string;
  writtenAt: string;
  views: BootView[];
  modules: Record<string, ModuleRecord>;
}

/** Result of reading the file: an index, or why there is none. */
export type BootIndexRead =
  | { status: "ok"; index: BootIndex }
  | { status: "missing" | "corrupt" | "unknown-version" | "other-generator"; reason: string };

/** Read and check the index at `file`; never throws. */
export async function readBootIndex(file: string, generator: string): Promise<BootIndexRead> {
  let text: string;
  try {
    // Synchronous: the boot waits for this answer and does nothing meanwhile, and it spares the
    // boot path node:fs/promises (about 2 ms to load under Bun).
    text = readFileSync(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing", reason: `${file} does not exist` };
    return { status: "corrupt", reason: `${file} cannot be read: ${(error as Error)?.message ?? String(error)}` };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { status: "corrupt", reason: `${file} is not JSON: ${(error as Error).message}` };
  }
  const version = (raw as { version?: unknown } | null)?.version;
  if (version !== BOOT_INDEX_VERSION) {
    return { status: "unknown-version", reason: `${file} has version ${JSON.stringify(version)}; this xcsh-tools reads version ${BOOT_INDEX_VERSION}` };
  }
  const problem = checkValue(bootIndexShape, raw);
  if (problem) return { status: "corrupt", reason: `${file} has the wrong shape at ${describeProblem(problem)}` };
  const index = raw as BootIndex;
  if (index.generator !== generator) {
    return { status: "other-generator", reason: `${file} was written by ${index.generator}, not ${generator}` };
  }
  return { status: "ok", index };
}

/** Two view keys ask the same question. */
export function sameKey(a: ViewKey, b: ViewKey): boolean {
  return (
    a.home === b.home &&
    a.cwd === b.cwd &&
    a.configuredPaths.length === b.configuredPaths.length &&
    a.configuredPaths.every((p, i) => p === b.configuredPaths[i]) &&
    a.providers.length === b.providers.length &&
    a.providers.every((p, i) => p === b.providers[i])
  );
}
