/**
 * `xcsh-tools run <tool> [params]`: call one tool once, the way the host would. The params are
 * parsed as JSON before any tool code loads; the tool is loaded by the host's own discovery and
 * loader (`discoverAndLoadCustomTools`, with the project's trust decided as for `tools`: an
 * untrusted project's tools are not loaded, so not run); the params are checked against its
 * TypeBox schema before `execute` (as the agent loop does); updates stream to stderr as they
 * come; the result's text goes to stdout (`--json`: one document with the result and updates).
 *
 * Exit 0 on a result; 1 when the tool throws (its failure, as the agent sees it: the contract has
 * no error result, a throw is the tool's error); 2 for bad JSON, params the schema refuses or a
 * name no loaded tool has; 130 on Ctrl-C, which aborts the tool's `signal` (143 on SIGTERM).
 */
import type { Command } from "commander";
import { XcshToolsError, errorMessage, isXcshToolsError } from "../../core/errors.js";
import type { AgentToolResult, CustomToolContext, LoadedCustomTool } from "../../core/contract.js";
import { ReportedFailure, usageError } from "../command-errors.js";
import type { CommandContext, CommandModule } from "../context.js";
import { style } from "../output.js";

export interface RunFlags {
  pi?: string;
}

/** How long an interrupted tool may take to settle (kill its processes, clean up) before we exit anyway. */
const INTERRUPT_GRACE_MS = 3000;

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("run <tool> [params]")
    .description("run one tool once, as the host would call it: params as JSON (default {}), checked against its schema")
    .option("--pi <module>", "the module whose exports the tool gets as api.pi (default: none, api.pi is empty)")
    .action((tool: string, params: string | undefined, flags: RunFlags, invoked: Command) => runTool(tool, params, flags, getContext(invoked)));
};

/** `params` as the user typed them: `EUSAGE` (exit 2) naming where the JSON breaks. */
export async function parseParams(text: string): Promise<unknown> {
  try {
    return JSON.parse(text);
  } catch (error) {
    const { jsonErrorDetail } = await import("../../core/json-position.js");
    throw usageError(`params are not valid JSON ${jsonErrorDetail(text, error)}`, `Quote the JSON for your shell: xcsh-tools run <tool> '{"name": "value"}'.`);
  }
}

async function runTool(name: string, paramsText: string | undefined, flags: RunFlags, context: CommandContext): Promise<void> {
  const params = await parseParams(paramsText ?? "{}");
  const tool = await loadNamedTool(name, flags, context);
  const { checkToolParams, executeTool } = await import("../../host/run-tool.js");
  checkToolParams(tool.tool, params, `Fix the params: xcsh-tools run ${name} '<json>' (\`xcsh-tools tools\` shows where ${name} comes from; its parameters schema is in ${tool.resolvedPath}).`);
  const { resultText } = await import("../../host/render.js");

  const updates: AgentToolResult[] = [];
  const onUpdate = (update: AgentToolResult) => {
    updates.push(update);
    // The tool's text is its own lines: printed as lines (each neutralised), not one escaped line.
    const [first, ...rest] = (resultText(update) || JSON.stringify(update.details ?? null)).split("\n");
    context.output.note(`${style(context.output, "dim", "…")} ${first}`);
    for (const line of rest) context.output.note(`  ${line}`);
  };
  const stop = new AbortController();
  const abortRun = () => stop.abort(context.signal.reason);
  if (context.signal.aborted) abortRun();
  else context.signal.addEventListener("abort", abortRun, { once: true });
  const ctx = oneRunContext(() => stop.abort("the tool called ctx.abort()"));
  // A host stays up while a tool runs; so does this run, even when the tool only waits for its
  // signal (a promise holds no handle: Node would exit 13 under it before any Ctrl-C arrives).
  const keepAlive = setInterval(() => {}, 60_000);
  const running = executeTool(tool.tool, { toolCallId: `xcsh-tools-run-${Date.now()}`, params, onUpdate, ctx, signal: stop.signal });
  running.catch(() => {}); // settled below, or left behind after an interrupt
  const interrupted = new Promise<"interrupted">((resolve) => {
    if (context.signal.aborted) resolve("interrupted");
    else context.signal.addEventListener("abort", () => resolve("interrupted"), { once: true });
  });

  let result: AgentToolResult;
  try {
    const first = await Promise.race([running, interrupted]);
    if (first === "interrupted") throw await interruptedRun(name, running, context);
    result = first;
  } catch (error) {
    if (error instanceof ReportedFailure || isXcshToolsError(error, "ERESULT_SHAPE")) throw error;
    if (context.signal.aborted) throw await interruptedRun(name, running, context);
    throw toolFailure(name, tool.resolvedPath, error);
  } finally {
    clearInterval(keepAlive);
    context.signal.removeEventListener("abort", abortRun);
  }
  if (context.output.json) {
    context.output.result({ tool: name, file: tool.resolvedPath, ...(tool.source ? { provider: tool.source.provider, level: tool.source.level } : {}), result, updates });
    return;
  }
  const text = resultText(result);
  if (text !== "") for (const line of text.split("\n")) context.output.line(line);
  if (result.isWarning) context.output.note(style(context.output, "yellow", `warning: ${name} marked its result as a warning`));
}

/**
 * After Ctrl-C: the tool's `signal` is aborted; give it a moment to settle (kill its processes),
 * then exit 130 (143 for SIGTERM) whether it did or not, saying so once.
 */
async function interruptedRun(name: string, running: Promise<unknown>, context: CommandContext): Promise<ReportedFailure> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    running.then(() => true, () => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), INTERRUPT_GRACE_MS))),
  ]);
  clearTimeout(timer);
  const how = settled ? "it stopped" : `it did not stop within ${INTERRUPT_GRACE_MS / 1000} s of its signal being aborted`;
  const message = `Interrupted: ${name} was cancelled (${how})`;
  if (context.output.json) context.output.result({ error: { code: "EABORTED", message } });
  else context.output.note(message);
  return new ReportedFailure(context.signal.reason === "SIGTERM" ? 143 : 130);
}

/**
 * `ETOOL_FAILED` (exit 1) for what the tool threw: its message in ours, so it is printed once, also
 * under `--json`; its stack as ours, so `--debug` shows where the tool raised it.
 */
function toolFailure(name: string, file: string, thrown: unknown): XcshToolsError {
  const failure = new XcshToolsError("ETOOL_FAILED", `${name} failed: ${errorMessage(thrown)}`, {
    hint: `The error is the tool's own (${file}); \`--debug\` prints where it was raised.`,
  });
  if (thrown instanceof Error && thrown.stack) failure.stack = thrown.stack;
  return failure;
}

/** The `ctx` of a one-off run: no session, no model; `abort()` cancels the run. */
function oneRunContext(abort: () => void): CustomToolContext {
  return { sessionManager: {}, modelRegistry: {}, model: undefined, isIdle: () => false, hasQueuedMessages: () => false, abort };
}

/**
 * The tool called `name` among those the host would load from `--cwd`, loaded by the host's own
 * code (this process imports it: `run` is asked to run it). `ETOOL_UNKNOWN` (exit 2) names the
 * closest loaded names, the load error of a tool by that name, or the untrusted project whose
 * tools were left out.
 */
async function loadNamedTool(name: string, flags: RunFlags, context: CommandContext): Promise<LoadedCustomTool> {
  const [projectTrust, { discoverAndLoadCustomTools }, { DEFAULT_BUILTIN_TOOL_NAMES }] = await Promise.all([
    context.projectTrusted(),
    import("../../boot/discover-and-load.js"),
    import("../../host/builtins.js"),
  ]);
  const pi = flags.pi === undefined ? undefined : (await (await import("../../host/host-exports.js")).loadHostExports({ module: flags.pi, cwd: context.cwd }))?.exports;
  const loaded = await discoverAndLoadCustomTools([], context.cwd, [...DEFAULT_BUILTIN_TOOL_NAMES], undefined, {
    ...context.roots,
    env: context.env,
    projectTrust,
    ...(pi ? { pi } : {}),
  });
  const found = loaded.tools.find((t) => t.tool.name === name);
  if (found) return found;
  const names = loaded.tools.map((t) => t.tool.name).sort();
  const { closestKey } = await import("../../manifest/unknown-keys.js");
  const guess = closestKey(name, names);
  const failed = loaded.errors.find((e) => e.toolName === name);
  const untrusted = loaded.untrusted && loaded.untrusted.skipped.length > 0 ? loaded.untrusted : undefined;
  const why = [
    failed ? `a tool by that name failed to load (${failed.code}: ${failed.error})` : undefined,
    untrusted ? `the project ${untrusted.project} is not trusted, so its own tools were not loaded` : undefined,
  ].filter(Boolean);
  throw new XcshToolsError("ETOOL_UNKNOWN", `No loaded tool is named "${name}"${why.length ? `: ${why.join("; ")}` : ""}`, {
    hint: [
      guess ? `Did you mean "${guess}"?` : undefined,
      untrusted ? `Trust the project if you know it: \`${untrusted.trustCommand}\`.` : undefined,
      names.length ? `Loaded: ${names.join(", ")}.` : "No tool is loaded here: `xcsh-tools tools` lists what a host loads, and why not.",
    ]
      .filter(Boolean)
      .join(" "),
  });
}
