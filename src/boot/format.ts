/**
 * The boot index: ours alone, versioned, written atomically, and disposable, in three files under
 * `<xcshHome>/plugins/.xcsh-tools/`. Reading never fails a caller: a missing, unreadable, corrupt
 * or unknown-version file reads as "no index" with a reason (`readBootIndex`), and the caller
 * scans instead and writes a new one.
 *
 *     boot-index.json       {version: 6, generator: "xcsh-tools@x.y.z", writtenAt,
 *                            views: [{key: {home, cwd, configuredPaths, providers, trusted}, builtAt, inputs, paths, errors, untrusted?}]}
 *     boot-modules.json     {version: 6, generator, writtenAt,
 *                            modules: {<real path of a tool entry>: {<runtime>: {file, sig, sha, runtime, failure? | tools}}}}
 *     boot-components.json  {version: 6, generator, writtenAt,
 *                            views: [{key: {home, cwd, trusted}, builtAt, inputs, plugins}]}   (components-format.ts)
 *
 * A view is one discovery result (the paths handed to the loader and the discovery errors) with
 * every input it was computed from (fingerprint.ts). Whether the project was trusted is part of
 * the question (`key.trusted`): a trusted answer is never served to an untrusted question, nor
 * the other way round; an untrusted view also carries what the project had that was left out. A module record is what importing one tool
 * entry and calling its factory produced, captured in the validation child: its tools' names,
 * labels, descriptions and parameter schemas, or the failure. Records are kept per runtime ("node",
 * "bun"), so a query under one never overwrites what the other found (module-records.ts says
 * when one runtime's record answers the other).
 *
 * Two files because a boot needs only the views: the records (parameter schemas, half the bytes)
 * are for `xcsh-tools tools` and `doctor`, and reading, parsing and checking them cost a boot
 * about 2 ms of 10 under Bun. Records are a cache checked against their file's signature before
 * use, so the two files need not be from the same write: the records are written first, and a
 * missing or unreadable records file only means entries are validated again. The component
 * inventory is a third file for the same reason: no boot and no `tools` query reads it.
 *
 * One version for the three files: an index written by an older layout (version 3 had no
 * component file; version 4 held one record per file, of whichever runtime validated it last;
 * version 5 had no lazy parts in module records, no seeds in views, and named and priced
 * components the old way)
 * reads as "unknown-version" and is rebuilt, never read with today's meaning.
 */
import { readTextBounded } from "../core/bounded-read.js";
import type { ToolLoadError, ToolSource, UntrustedProjectReport } from "../core/contract.js";
import type { InputFingerprint } from "./fingerprint.js";
import type { LazyPart } from "../host/lazy-definition.js";

export const BOOT_INDEX_VERSION = 6;

/** What makes two discovery runs the same question. */
export interface ViewKey {
  home: string;
  cwd: string;
  configuredPaths: string[];
  providers: string[];
  /** Whether the project's own sources were used (workspace trust). */
  trusted: boolean;
  /** The plugin seeds (`XCSH_PLUGIN_SEED_DIR`), in order; absent when none. */
  seeds?: string[];
}

/** One tool of a module record. */
export interface ToolRecord {
  index?: number;
  name?: string;
  label?: unknown;
  description?: unknown;
  parameters?: unknown;
  /** Only for a plugin that declares `staticTools`, when the tool proved static: what a lazy tool needs besides the fields above. */
  lazy?: LazyPart;
  problems: { code: string; field: string; message: string }[];
}

/** What one tool entry produced when it was validated (under `runtime`). */
export interface ModuleRecord {
  file: string;
  sig: string;
  sha?: string;
  runtime: string;
  failure?: { code: string; message: string };
  tools: ToolRecord[];
  /** Validated as a module of a plugin that declares `staticTools` (docs/lazy-tools.md). */
  static?: true;
  /**
   * A linked folder's module that `link` validated (bare imports fenced to the folder) while the
   * folder had this signature (prevalidated.ts `linkedFolderSignature`): a later `link` of the
   * same folder, still with this signature, reuses the record instead of importing it again.
   */
  linked?: string;
}

/** One tool entry's records, by the runtime each was made under. */
export type ModuleRecords = Record<string, ModuleRecord>;

/*
 * The shape check is written by hand, not with TypeBox like the shared formats: this file is read
 * at every host start and by every `xcsh-tools tools`, and importing TypeBox (about 250 modules)
 * cost more than the whole rest of the query. The file is ours and flat; a check is a few lines
 * per record, and it reports the first wrong path as the schema checks do.
 */
export type Shape = "string" | "number" | "boolean" | "unknown" | ((value: unknown) => Problem | undefined);

/**
 * A wrong value: the keys leading to it (innermost last) and what was expected. The path is
 * built only on the way out of a failure, so a good file (every boot) allocates no path strings.
 */
export interface Problem {
  keys: (string | number)[];
  expected: string;
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function checkValue(shape: Shape, value: unknown): Problem | undefined {
  if (shape === "unknown") return undefined;
  if (typeof shape === "function") return shape(value);
  return typeof value === shape ? undefined : { keys: [], expected: `expected ${shape}` };
}

/** `problem` one level further out, under `key`. */
function under(key: string | number, problem: Problem | undefined): Problem | undefined {
  if (problem) problem.keys.unshift(key);
  return problem;
}

export function object(required: Record<string, Shape>, optional: Record<string, Shape> = {}): Shape {
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

/**
 * A shape that also has `accepts`, one plain test of a whole value (`tested`). `arrayOf` and
 * `recordOf` of one run it over their items in one tight loop, and walk the items one by one
 * (naming the wrong place) only when it refuses one: three calls fewer per item, for the lists
 * that come by the thousand (a 1,000-tool index holds ~1,600 inputs, 1,000 paths, 1,000 records).
 */
type TestedShape = ((value: unknown) => Problem | undefined) & { accepts?: (value: Record<string, unknown>) => boolean };
const acceptsOf = (shape: Shape) => (typeof shape === "function" ? (shape as TestedShape).accepts : undefined);

export function arrayOf(item: Shape): Shape {
  const accepts = acceptsOf(item);
  return (value) => {
    if (!Array.isArray(value)) return { keys: [], expected: "expected array" };
    if (accepts !== undefined && everyAccepted(value, accepts)) return undefined;
    for (let i = 0; i < value.length; i++) {
      const problem = under(i, checkValue(item, value[i]));
      if (problem) return problem;
    }
    return undefined;
  };
}

export function recordOf(item: Shape): Shape {
  const accepts = acceptsOf(item);
  const shape: TestedShape = (value) => {
    if (!isObject(value)) return { keys: [], expected: "expected object" };
    if (accepts !== undefined && everyAccepted(value, accepts)) return undefined;
    for (const key in value) {
      const problem = under(key, checkValue(item, value[key]));
      if (problem) return problem;
    }
    return undefined;
  };
  // A record of tested items is tested too (the records file is a record of records).
  if (accepts !== undefined) shape.accepts = (value) => everyAccepted(value, accepts);
  return shape;
}

/** Whether every item of `list` (an array's items, an object's values) is an object `accepts` takes, as `tested` decides one. */
function everyAccepted(list: unknown[] | Record<string, unknown>, accepts: (value: Record<string, unknown>) => boolean): boolean {
  if (Array.isArray(list)) {
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      if (!isObject(item) || !accepts(item)) return false;
    }
    return true;
  }
  for (const key in list) {
    const item = list[key];
    if (!isObject(item) || !accepts(item)) return false;
  }
  return true;
}

export const oneOf = (...allowed: string[]): Shape => (value) => (typeof value === "string" && allowed.includes(value) ? undefined : { keys: [], expected: `expected one of ${allowed.join(", ")}` });

/** `/views/0/key: expected object`, as the schema checks word it. */
export function describeProblem(problem: Problem): string {
  return `${problem.keys.length ? problem.keys.map((key) => `/${key}`).join("") : "/"}: ${problem.expected}`;
}

/**
 * `shape`, decided first by `accepts`, one plain test of a whole value: for the values that come
 * by the hundred (inputs, paths, records), where walking the combinators for each field is most
 * of the check, and runs cold, once per process. The combinators run only for a value `accepts`
 * refuses, to name its wrong place.
 */
function tested(accepts: (value: Record<string, unknown>) => boolean, shape: Shape): Shape {
  const check: TestedShape = (value) => (isObject(value) && accepts(value) ? undefined : checkValue(shape, value));
  check.accepts = accepts;
  return check;
}
const isString = (value: unknown) => typeof value === "string";
const isOptionalString = (value: unknown) => value === undefined || typeof value === "string";

const source = object({ provider: "string", providerName: "string", level: oneOf("user", "project") }, { plugin: "string", seed: "string" });
const isSource = (v: unknown) => isObject(v) && isString(v.provider) && isString(v.providerName) && (v.level === "user" || v.level === "project") && isOptionalString(v.plugin) && isOptionalString(v.seed);
const view = object({
  key: object({ home: "string", cwd: "string", configuredPaths: arrayOf("string"), providers: arrayOf("string"), trusted: "boolean" }, { seeds: arrayOf("string") }),
  builtAt: "string",
  inputs: arrayOf(tested((v) => isString(v.path) && (v.kind === "stat" || v.kind === "lstat") && isString(v.sig) && isOptionalString(v.sha), object({ path: "string", kind: oneOf("stat", "lstat"), sig: "string" }, { sha: "string" }))),
  paths: arrayOf(tested((v) => isString(v.path) && isSource(v.source), object({ path: "string", source }))),
  errors: arrayOf(object({ path: "string", error: "string", code: "string" })),
}, {
  untrusted: object({
    project: "string",
    trustCommand: "string",
    skipped: arrayOf(object({ path: "string", source, kind: oneOf("tools-dir", "installed-plugins", "plugin-overrides", "claude-project-plugin", "claude-settings") })),
  }),
});
const problemRecord = object({ code: "string", field: "string", message: "string" });
const toolRecord = object(
  { problems: arrayOf(problemRecord) },
  { index: "number", name: "string", label: "unknown", description: "unknown", parameters: "unknown" },
);
const isToolRecord = (v: unknown) =>
  isObject(v) &&
  Array.isArray(v.problems) &&
  v.problems.every((p: unknown) => isObject(p) && isString(p.code) && isString(p.field) && isString(p.message)) &&
  (v.index === undefined || typeof v.index === "number") &&
  isOptionalString(v.name);
const moduleRecord = tested(
  (v) =>
    isString(v.file) &&
    isString(v.sig) &&
    isString(v.runtime) &&
    Array.isArray(v.tools) &&
    v.tools.every(isToolRecord) &&
    isOptionalString(v.sha) &&
    isOptionalString(v.linked) &&
    (v.failure === undefined || (isObject(v.failure) && isString(v.failure.code) && isString(v.failure.message))),
  object({ file: "string", sig: "string", runtime: "string", tools: arrayOf(toolRecord) }, { sha: "string", linked: "string", failure: object({ code: "string", message: "string" }) }),
);
const viewsFileShape = object({ version: "number", generator: "string", writtenAt: "string", views: arrayOf(view) });
const modulesFileShape = object({ version: "number", generator: "string", writtenAt: "string", modules: recordOf(recordOf(moduleRecord)) });

/** One discovery result with its inputs. */
export interface BootView {
  key: ViewKey;
  builtAt: string;
  inputs: InputFingerprint[];
  paths: { path: string; source: ToolSource }[];
  errors: ToolLoadError[];
  /** For an untrusted project: what it had that was left out. */
  untrusted?: UntrustedProjectReport;
}

/** The whole file. */
export interface BootIndex {
  version: typeof BOOT_INDEX_VERSION;
  generator: string;
  writtenAt: string;
  views: BootView[];
  /** By the real path of a tool entry. */
  modules: Record<string, ModuleRecords>;
}

/** Result of reading the file: an index, or why there is none. */
export type BootIndexRead =
  /** `modulesProblem`: why the records file was read as no records (only when it was asked for and exists). */
  | { status: "ok"; index: BootIndex; modulesProblem?: string }
  | { status: "missing" | "corrupt" | "unknown-version" | "other-generator"; reason: string };

/** Where the two files of one index are. */
export interface BootIndexFiles {
  views: string;
  modules: string;
}

export type FileRead = { status: "ok"; raw: Record<string, unknown> } | { status: "missing" | "corrupt" | "unknown-version" | "other-generator"; reason: string };

export function readChecked(file: string, shape: Shape, generator: string): FileRead {
  let text: string;
  try {
    // Synchronous: the boot waits for this answer and does nothing meanwhile, and it spares the
    // boot path node:fs/promises (about 2 ms to load under Bun).
    const read = readTextBounded(file);
    if (read === undefined) return { status: "missing", reason: `${file} does not exist` };
    text = read;
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
  const problem = checkValue(shape, raw);
  if (problem) return { status: "corrupt", reason: `${file} has the wrong shape at ${describeProblem(problem)}` };
  const checked = raw as Record<string, unknown>;
  if (checked.generator !== generator) {
    return { status: "other-generator", reason: `${file} was written by ${String(checked.generator)}, not ${generator}` };
  }
  return { status: "ok", raw: checked };
}

/** A file in the views file's shape (the index's views, or the refresh's shelf: view-shelf.ts), checked as the index is. */
export function readViewsFile(file: string, generator: string): FileRead {
  return readChecked(file, viewsFileShape, generator);
}

/**
 * Read and check the index; never throws. The records file is read only when `withModules`
 * (else `modules` is empty); a records file that is missing or wrong reads as no records.
 */
export async function readBootIndex(files: BootIndexFiles, generator: string, withModules = false): Promise<BootIndexRead> {
  const views = readChecked(files.views, viewsFileShape, generator);
  if (views.status !== "ok") return views;
  const index = { ...views.raw, modules: {} } as unknown as BootIndex;
  if (!withModules) return { status: "ok", index };
  const { modules, problem } = readModuleRecords(files.modules, generator);
  index.modules = modules;
  return { status: "ok", index, ...(problem ? { modulesProblem: problem } : {}) };
}

/**
 * The records file alone, checked as `readBootIndex` checks it (a missing or wrong file reads as
 * no records; `problem` says why when it exists): for a lazy boot, whose discovery has just read
 * the views, so that half the index is not read, parsed and checked a second time.
 */
export function readModuleRecords(file: string, generator: string): { modules: BootIndex["modules"]; problem?: string } {
  const read = readChecked(file, modulesFileShape, generator);
  if (read.status === "ok") return { modules: read.raw.modules as BootIndex["modules"] };
  return { modules: {}, ...(read.status !== "missing" ? { problem: read.reason } : {}) };
}

/** The two files' texts for `index`. */
export function serializeBootIndex(index: BootIndex): { views: string; modules: string } {
  const { modules, ...views } = index;
  const header = { version: index.version, generator: index.generator, writtenAt: index.writtenAt };
  return { views: `${JSON.stringify(views)}\n`, modules: `${JSON.stringify({ ...header, modules })}\n` };
}

/** Two view keys ask the same question. */
export function sameKey(a: ViewKey, b: ViewKey): boolean {
  return (
    a.home === b.home &&
    a.cwd === b.cwd &&
    a.trusted === b.trusted &&
    a.configuredPaths.length === b.configuredPaths.length &&
    a.configuredPaths.every((p, i) => p === b.configuredPaths[i]) &&
    a.providers.length === b.providers.length &&
    a.providers.every((p, i) => p === b.providers[i]) &&
    (a.seeds ?? []).join("\0") === (b.seeds ?? []).join("\0")
  );
}
