/**
 * The bridge from a command's context to the plugin engine's injected world: roots, env, the
 * interrupt signal, our settings (lock wait), progress lines for lock waits and recoveries, and
 * the test-only fault injection.
 *
 * Test-only environment (never documented for users; used by the integration tests to prove
 * rollback and crash recovery at every named step of a mutation):
 *
 * - `XCSH_TOOLS_TEST_FAULT=<step>`  throw `EFAULT_INJECTED` when the engine reaches `<step>`.
 * - `XCSH_TOOLS_TEST_PAUSE=<step>`  at `<step>`, write the file named by
 *   `XCSH_TOOLS_TEST_PAUSE_FILE` and sleep until killed (the test `kill -9`s the process there).
 *
 * - `XCSH_TOOLS_TEST_STEP_LOG=<file>`  append `<pid> <step>` for each step reached, one a line
 *   (the crash tests list an operation's steps this way, then kill it at each one in turn; the
 *   concurrency tests share one file between processes to see the order of their commits).
 *
 * A step name ending in `*` matches every step with that prefix (first match wins).
 */
import { appendFile, writeFile } from "node:fs/promises";
import { XcshToolsError } from "../core/errors.js";
import type { MutationWorld } from "../plugins/mutation.js";
import type { CommandContext } from "./context.js";

function matches(pattern: string | undefined, step: string): boolean {
  if (!pattern) return false;
  return pattern.endsWith("*") ? step.startsWith(pattern.slice(0, -1)) : pattern === step;
}

/** The `onStep` hook the test-only variables ask for, or undefined when none is set. */
export function testFaultHook(env: NodeJS.ProcessEnv): ((step: string) => Promise<void>) | undefined {
  const fault = env.XCSH_TOOLS_TEST_FAULT;
  const pause = env.XCSH_TOOLS_TEST_PAUSE;
  const log = env.XCSH_TOOLS_TEST_STEP_LOG;
  if (!fault && !pause && !log) return undefined;
  let paused = false;
  return async (step: string) => {
    if (log) await appendFile(log, `${process.pid} ${step}\n`);
    if (matches(fault, step)) {
      throw new XcshToolsError("EFAULT_INJECTED", `Injected failure at step ${step} (XCSH_TOOLS_TEST_FAULT)`, { hint: "Test-only: unset XCSH_TOOLS_TEST_FAULT." });
    }
    if (!paused && matches(pause, step)) {
      paused = true;
      if (env.XCSH_TOOLS_TEST_PAUSE_FILE) await writeFile(env.XCSH_TOOLS_TEST_PAUSE_FILE, `${process.pid} ${step}\n`);
      // Sleep until killed; a long timer keeps the event loop alive without spinning.
      await new Promise<never>(() => setInterval(() => undefined, 60_000));
    }
  };
}

/** The engine's world for this command. */
export async function mutationWorld(ctx: CommandContext): Promise<MutationWorld> {
  const loaded = await ctx.settings();
  const onStep = testFaultHook(ctx.env);
  return {
    roots: ctx.roots,
    env: ctx.env,
    cwd: ctx.cwd,
    signal: ctx.signal,
    lockWaitMs: loaded.settings.lockWaitMs,
    onWait: (message) => ctx.output.note(message),
    onRecovered: (reports) => {
      for (const report of reports) {
        const what = report.label ? `"${report.label}"` : `transaction ${report.id}`;
        const done = report.action === "completed" ? "completed" : report.action === "rolled-back" ? "rolled back" : "discarded";
        ctx.output.note(`Recovered an interrupted command: ${what} was ${done}.`);
      }
    },
    onWarning: (message) => ctx.output.note(`warning: ${message}`),
    ...(onStep ? { onStep } : {}),
  };
}
