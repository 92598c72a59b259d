/**
 * `xcsh-tools/testing`: run a custom tool in a unit test without the host.
 *
 * The harness is the host's own machinery with the world replaced, not a second implementation:
 * `createToolHarness` builds a real `CustomToolLoader`, so factories receive exactly the shared
 * `CustomToolAPI` a host gives them (same `exec` wrapping, same TypeBox, same pending-action
 * rules), and `loadTools` goes through the loader's import, factory timeout, shape, name and
 * conflict checks. What changes is what the API talks to:
 *
 * - `exec` is recording: every call is kept with its options and result. By default it answers
 *   from a handler (an exit 0 with no output unless you script one); `exec: "real"` runs the
 *   program for real (no shell, the signal kills it), still recording.
 * - `ui` is scripted: prompts take queued answers, and a prompt nobody scripted fails loudly
 *   instead of hanging or answering `undefined` behind the test's back. Without `ui` the tool sees
 *   the host's non-interactive no-op UI and `hasUI === false`.
 * - `logger` captures entries; pending actions are recorded.
 *
 * `runTool` calls `execute` in the contract's order (onUpdate, ctx, signal) and returns the
 * result and every `onUpdate` payload; `sendSessionEvent` uses the host's dispatcher, so a
 * throwing `onSession` is reported the way the host reports it.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { XcshToolsError } from "./core/errors.js";
import { DEFAULT_BUILTIN_TOOL_NAMES } from "./host/builtins.js";
import { SIGTERM_CODE, execCommand } from "./host/exec.js";
import { CustomToolLoader, createNoOpUIContext } from "./host/loader.js";
import { provideOwnApi } from "./host/import/module-map.js";
import { resultText } from "./host/render.js";
import { checkToolParams, describeValue, executeTool } from "./host/run-tool.js";
import { dispatchSessionEvent, type SessionDispatchSummary } from "./host/session.js";
import type {
  AgentToolResult,
  CustomTool,
  CustomToolAPI,
  CustomToolContext,
  CustomToolFactory,
  CustomToolLogger,
  CustomToolSessionEvent,
  CustomToolUIContext,
  ExecOptions,
  ExecResult,
  HostPendingAction,
  Theme,
  ToolLoadError,
} from "./core/contract.js";
import { privateTempDir } from "./core/atomic-fs.js";

export type { SessionDispatchSummary } from "./host/session.js";

// Tools under test that import `xcsh-tools` get the package's API, as in a host (host/import/module-map.ts).
provideOwnApi(() => import("./index.js"));

// ---------------------------------------------------------------------------------------------
// exec

/** One call a tool made through `api.exec`. */
export interface ExecCall {
  command: string;
  args: string[];
  /** The options as the API passed them on (`cwd` defaulted to the API's cwd, as the host does). */
  options: ExecOptions;
  /** The result, once the call settled. */
  result?: ExecResult;
}

/** What a scripted exec answers: a full or partial result, or just the stdout. */
export type ExecAnswer = Partial<ExecResult> | string;

/** Answers exec calls in a test; receives the call (with its signal in `options`). */
export type ExecHandler = (call: ExecCall) => ExecAnswer | Promise<ExecAnswer>;

/** An `exec` that keeps every call. */
export interface RecordingExec {
  (command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
  /** Every call, in order, with its result once settled. */
  readonly calls: ExecCall[];
}

/**
 * A recording `exec`. `"real"` runs programs (no shell; the signal and timeout kill them); a
 * handler answers each call; nothing answers every call with exit 0 and no output. A fake exec
 * still honours an already aborted signal the way the real one does (`killed`, code 143).
 */
export function createRecordingExec(handler: ExecHandler | "real" = () => ({})): RecordingExec {
  const calls: ExecCall[] = [];
  const exec = async (command: string, args: string[], options: ExecOptions = {}): Promise<ExecResult> => {
    const call: ExecCall = { command, args: [...args], options };
    calls.push(call);
    let result: ExecResult;
    if (handler === "real") result = await execCommand(command, args, options);
    else if (options.signal?.aborted) result = { stdout: "", stderr: "", code: SIGTERM_CODE, killed: true };
    else result = toExecResult(await handler(call));
    call.result = result;
    return result;
  };
  return Object.assign(exec, { calls });
}

function toExecResult(answer: ExecAnswer): ExecResult {
  if (typeof answer === "string") return { stdout: answer, stderr: "", code: 0, killed: false };
  return { stdout: "", stderr: "", code: 0, killed: false, ...answer };
}

// ---------------------------------------------------------------------------------------------
// ui

/** Queued answers for each prompt, or a function that answers it. */
export interface UIScript {
  select?: (string | undefined)[] | ((title: string, options: string[]) => string | undefined | Promise<string | undefined>);
  confirm?: boolean[] | ((title: string, message: string) => boolean | Promise<boolean>);
  input?: (string | undefined)[] | ((title: string, placeholder?: string) => string | undefined | Promise<string | undefined>);
  editor?: (string | undefined)[] | ((title: string, prefill?: string) => string | undefined | Promise<string | undefined>);
  custom?: unknown[] | ((factory: unknown) => unknown);
  /** What `ui.theme` returns (the host's theme object; opaque to xcsh-tools). */
  theme?: Theme;
}

/** One call a tool made on `api.ui`. */
export interface UICall {
  method: "select" | "confirm" | "input" | "editor" | "custom" | "notify" | "setStatus" | "setEditorText" | "getEditorText";
  args: unknown[];
  /** What the scripted UI answered (prompts only). */
  answer?: unknown;
}

/** A scripted `CustomToolUIContext` that keeps every call. */
export interface ScriptedUI extends CustomToolUIContext {
  readonly calls: UICall[];
  /** `notify` calls as `{message, type}`. */
  readonly notifications: { message: string; type: "info" | "warning" | "error" | undefined }[];
  /** The current `setStatus` texts by key (a key set to `undefined` is removed). */
  readonly status: Map<string, string>;
}

/** A UI that answers prompts from `script`; an unscripted prompt throws `EUI_UNSCRIPTED`. */
export function createScriptedUI(script: UIScript = {}): ScriptedUI {
  const calls: UICall[] = [];
  const notifications: ScriptedUI["notifications"] = [];
  const status = new Map<string, string>();
  const queues = new Map<string, unknown[]>();
  for (const method of ["select", "confirm", "input", "editor", "custom"] as const) {
    const entry = script[method];
    if (Array.isArray(entry)) queues.set(method, [...entry]);
  }
  let editorText = "";

  async function prompt(method: "select" | "confirm" | "input" | "editor" | "custom", args: unknown[]): Promise<any> {
    const call: UICall = { method, args };
    calls.push(call);
    const entry = script[method];
    let answer: unknown;
    if (typeof entry === "function") {
      answer = await (entry as (...a: unknown[]) => unknown)(...args);
    } else {
      const queue = queues.get(method);
      if (!queue || queue.length === 0) {
        const what = typeof args[0] === "string" ? `(${JSON.stringify(args[0])})` : "";
        throw new XcshToolsError(
          "EUI_UNSCRIPTED",
          `ui.${method}${what} was called, but the test scripted ${queue ? "no more answers" : "no answer"} for ${method}`,
          { hint: `Pass ui: { ${method}: [answer, ...] } to createToolHarness.` },
        );
      }
      answer = queue.shift();
    }
    call.answer = answer;
    return answer;
  }

  return {
    calls,
    notifications,
    status,
    select: (title, options) => prompt("select", [title, options]),
    confirm: (title, message) => prompt("confirm", [title, message]),
    input: (title, placeholder) => prompt("input", [title, placeholder]),
    editor: (title, prefill) => prompt("editor", [title, prefill]),
    custom: (factory) => prompt("custom", [factory]),
    notify(message, type) {
      calls.push({ method: "notify", args: [message, type] });
      notifications.push({ message, type });
    },
    setStatus(key, text) {
      calls.push({ method: "setStatus", args: [key, text] });
      if (text === undefined) status.delete(key);
      else status.set(key, text);
    },
    setEditorText(text) {
      calls.push({ method: "setEditorText", args: [text] });
      editorText = text;
    },
    getEditorText() {
      calls.push({ method: "getEditorText", args: [] });
      return editorText;
    },
    get theme() {
      return script.theme;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// logger

/** One captured log entry. */
export interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  context?: Record<string, unknown>;
}

/** A logger that keeps every entry. */
export interface CapturedLogger extends CustomToolLogger {
  readonly entries: LogEntry[];
  /** Messages of one level (or all), in order. */
  messages(level?: LogEntry["level"]): string[];
}

/** A logger that captures instead of printing. */
export function createCapturedLogger(): CapturedLogger {
  const entries: LogEntry[] = [];
  const log = (level: LogEntry["level"]) => (message: string, context?: Record<string, unknown>) => {
    entries.push(context === undefined ? { level, message } : { level, message, context });
  };
  return {
    entries,
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    messages: (level) => entries.filter((e) => level === undefined || e.level === level).map((e) => e.message),
  };
}

// ---------------------------------------------------------------------------------------------
// context

/** A `CustomToolContext` for tests; `abortCalls` counts `ctx.abort()`. */
export interface TestContext extends CustomToolContext {
  readonly abortCalls: number;
}

/** A context with inert session objects; pass `overrides` for what your tool reads. */
export function createTestContext(overrides: Partial<CustomToolContext> = {}): TestContext {
  let abortCalls = 0;
  const base: CustomToolContext = {
    sessionManager: {},
    modelRegistry: {},
    model: undefined,
    isIdle: () => true,
    hasQueuedMessages: () => false,
    abort: () => {
      abortCalls++;
    },
  };
  const ctx = { ...base, ...overrides } as CustomToolContext;
  return Object.defineProperty(ctx, "abortCalls", { get: () => abortCalls, enumerable: false }) as TestContext;
}

// ---------------------------------------------------------------------------------------------
// running a tool

/** Options of `runTool`. */
export interface RunToolOptions {
  /** Cancellation, passed to `execute` as its fifth argument. */
  signal?: AbortSignal;
  /** Default: `createTestContext()`. */
  ctx?: CustomToolContext;
  /** Default: `"test-call-<n>"`. */
  toolCallId?: string;
  /** Also called with each update as it arrives (e.g. to abort after the first one). */
  onUpdate?: (update: AgentToolResult<any>, index: number) => void;
  /** Check `params` against `parameters` (TypeBox schemas) first, like the agent. Default true. */
  validateParams?: boolean;
}

/** What one `execute` produced. */
export interface ToolRun<TDetails = any> {
  result: AgentToolResult<TDetails>;
  /** Every `onUpdate` payload, in order. */
  updates: AgentToolResult<TDetails>[];
  /** The text of `result.content`, parts joined with newlines (images as `[image <mime>]`). */
  text: string;
}

let callCounter = 0;

/**
 * Call `tool.execute(toolCallId, params, onUpdate, ctx, signal)` and collect its updates.
 * Rejects with the tool's own error when `execute` throws (the host's tool failure), and with
 * `EPARAMS_INVALID` when `params` do not match the tool's TypeBox schema.
 */
export async function runTool<TDetails = any>(
  tool: CustomTool<any, TDetails>,
  params: unknown,
  options: RunToolOptions = {},
): Promise<ToolRun<TDetails>> {
  if (options.validateParams !== false) checkToolParams(tool, params, "Fix the params of the test, or pass validateParams: false to call execute anyway.");
  const updates: AgentToolResult<TDetails>[] = [];
  const onUpdate = (update: AgentToolResult<TDetails>) => {
    updates.push(update);
    options.onUpdate?.(update, updates.length - 1);
  };
  const result = await executeTool(tool, {
    toolCallId: options.toolCallId ?? `test-call-${++callCounter}`,
    params,
    onUpdate,
    ctx: options.ctx ?? createTestContext(),
    signal: options.signal,
  });
  return { result, updates, text: resultText(result) };
}

// ---------------------------------------------------------------------------------------------
// the harness

/** The lines a component draws at `width` (`render(width)`), for asserting on render hooks. */
export function renderToLines(component: unknown, width = 80): string[] {
  const render = (component as { render?: unknown } | null | undefined)?.render;
  if (typeof render !== "function") {
    throw new XcshToolsError("ECOMPONENT_SHAPE", `expected a component with render(width), got ${describeValue(component)}`, {
      hint: "Return an object with render(width): string[] (the shape of the host's Text component).",
    });
  }
  const lines: unknown = render.call(component, width);
  if (!Array.isArray(lines) || lines.some((l) => typeof l !== "string")) {
    throw new XcshToolsError("ECOMPONENT_SHAPE", "render(width) must return an array of strings");
  }
  return lines as string[];
}

/** Options of `createToolHarness`. */
export interface ToolHarnessOptions {
  /** `api.cwd` and the default `cwd` of exec calls. Default `process.cwd()`. */
  cwd?: string;
  /** `"real"` to run programs, a handler to answer calls; default: exit 0, no output. */
  exec?: ExecHandler | "real";
  /** Scripted answers; when given, `api.hasUI` is true (override with `hasUI`). */
  ui?: UIScript;
  hasUI?: boolean;
  /** `api.pi`: the host's exports your tool uses. */
  pi?: Record<string, unknown>;
  /** Modules tools import by bare name that must be given instances (see the loader's `modules`). */
  modules?: Record<string, object>;
  /** Names the loader rejects as built-ins. Default: the host's built-in tool names. */
  builtins?: readonly string[];
  /** Default `createTestContext()`: the `ctx` of `runTool` and `sendSessionEvent`. */
  ctx?: CustomToolContext;
  /** Transpile cache folder for TypeScript modules on Node 20. Default: a folder in the OS temp dir. */
  cacheDir?: string;
  factoryTimeoutMs?: number;
  importTimeoutMs?: number;
}

/** A tool test bench: the API factories receive, what the tools did, and how to drive them. */
export interface ToolHarness {
  /** The shared API every factory of this harness receives (the loader's own). */
  readonly api: CustomToolAPI;
  readonly exec: RecordingExec;
  /** The scripted UI (also when `ui` was not given: then `api.ui` is the no-op UI and this stays unused). */
  readonly ui: ScriptedUI;
  readonly logger: CapturedLogger;
  /** Pending actions as the host received them (`sourceToolName` defaulted). */
  readonly pendingActions: HostPendingAction[];
  readonly ctx: CustomToolContext;
  /** Every tool loaded so far, in load order. */
  readonly tools: CustomTool[];
  /**
   * Load a module path (relative to `cwd`) or a factory exactly as the host does. Resolves to
   * the tools it returned; rejects with the loader's error code (`EIMPORT`, `ETOOL_SHAPE`, ...).
   */
  loadTools(source: string | URL | CustomToolFactory): Promise<CustomTool[]>;
  /** `loadTools`, expecting one tool (or picking the one called `name`). */
  loadTool(source: string | URL | CustomToolFactory, name?: string): Promise<CustomTool>;
  /** `runTool` with the harness's ctx; `tool` may be a loaded tool's name. */
  runTool<TDetails = any>(tool: CustomTool<any, TDetails> | string, params: unknown, options?: RunToolOptions): Promise<ToolRun<TDetails>>;
  /** Deliver a session event to every loaded tool, through the host's dispatcher. */
  sendSessionEvent(event: CustomToolSessionEvent, options?: { ctx?: CustomToolContext }): Promise<SessionDispatchSummary>;
}

let factoryCounter = 0;

/** A harness around a real loader whose world (exec, ui, logger, pending actions) is recorded. */
export function createToolHarness(options: ToolHarnessOptions = {}): ToolHarness {
  const cwd = path.resolve(options.cwd ?? process.cwd());
  const exec = createRecordingExec(options.exec);
  const ui = createScriptedUI(options.ui);
  const logger = createCapturedLogger();
  const pendingActions: HostPendingAction[] = [];
  const ctx = options.ctx ?? createTestContext();
  const loader = new CustomToolLoader(
    options.pi,
    cwd,
    [...(options.builtins ?? DEFAULT_BUILTIN_TOOL_NAMES)],
    (action) => pendingActions.push(action),
    {
      exec,
      logger,
      ...(options.pi ? { pi: options.pi } : {}),
      ...(options.modules ? { modules: options.modules } : {}),
      cacheDir: options.cacheDir ?? privateTempDir(`xcsh-tools-testing-${process.getuid?.() ?? "user"}`),
      ...(options.factoryTimeoutMs !== undefined ? { factoryTimeoutMs: options.factoryTimeoutMs } : {}),
      ...(options.importTimeoutMs !== undefined ? { importTimeoutMs: options.importTimeoutMs } : {}),
    },
  );
  if (options.ui) loader.setUIContext(ui, options.hasUI ?? true);
  else loader.setUIContext(createNoOpUIContext(), options.hasUI ?? false);

  const tools: CustomTool[] = [];

  async function loadTools(input: string | URL | CustomToolFactory): Promise<CustomTool[]> {
    const source = input instanceof URL ? fileURLToPath(input) : input;
    const toolsBefore = loader.tools.length;
    const errorsBefore = loader.errors.length;
    if (typeof source === "string") await loader.load([{ path: source }]);
    else await loader.loadFactory(source, { path: `<factory ${source.name || "anonymous"} #${++factoryCounter}>` });
    const errors = loader.errors.slice(errorsBefore);
    if (errors.length > 0) throw loadError(source, errors);
    // A file this harness loaded before yields nothing, as in the host (one load per real path).
    const loaded = loader.tools.slice(toolsBefore).map((t) => t.tool);
    tools.push(...loaded);
    return loaded;
  }

  function findTool(tool: CustomTool | string): CustomTool {
    if (typeof tool !== "string") return tool;
    const found = tools.find((t) => t.name === tool);
    if (!found) {
      throw new XcshToolsError("ETOOL_NOT_LOADED", `no tool "${tool}" was loaded (loaded: ${tools.map((t) => t.name).join(", ") || "none"})`, {
        hint: "Call loadTools first.",
      });
    }
    return found;
  }

  return {
    api: loader.api,
    exec,
    ui,
    logger,
    pendingActions,
    ctx,
    tools,
    loadTools,
    async loadTool(source, name) {
      const loaded = await loadTools(source);
      if (name !== undefined) {
        const found = loaded.find((t) => t.name === name);
        if (!found) throw new XcshToolsError("ETOOL_NOT_LOADED", `the module returned no tool "${name}" (it returned: ${loaded.map((t) => t.name).join(", ")})`);
        return found;
      }
      if (loaded.length !== 1) {
        throw new XcshToolsError("ETOOL_NOT_LOADED", `expected one tool, the module returned ${loaded.length}: ${loaded.map((t) => t.name).join(", ")}`, {
          hint: "Pass the tool's name: loadTool(source, name).",
        });
      }
      return loaded[0]!;
    },
    runTool: (tool, params, runOptions = {}) => runTool(findTool(tool), params, { ctx, ...runOptions }),
    sendSessionEvent: (event, eventOptions = {}) => dispatchSessionEvent(tools, event, eventOptions.ctx ?? ctx, logger),
  };
}

function loadError(source: string | CustomToolFactory, errors: ToolLoadError[]): XcshToolsError {
  const what = typeof source === "string" ? source : "the factory";
  const first = errors[0]!;
  const message = `loading ${what} failed the way the host would fail it: ${errors.map((e) => `${e.code}: ${e.error}`).join("; ")}`;
  return new XcshToolsError(first.code, message, { hint: "The message is what the host would log; fix the module and run again." });
}
