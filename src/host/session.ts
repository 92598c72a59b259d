/**
 * Session events reach every loaded tool's `onSession`, one after the other in load order (a tool
 * may rely on seeing `shutdown` after the tools before it). A failing hook is a warning in the log
 * and an entry in the returned summary, never an exception: one broken plugin must not take the
 * session down or keep the other tools from hearing the event.
 */
import { errorMessage } from "../core/errors.js";
import type { CustomTool, CustomToolContext, CustomToolLogger, CustomToolSessionEvent, LoadedCustomTool } from "../core/contract.js";

/** One `onSession` that threw or rejected. */
export interface SessionHookFailure {
  toolName: string;
  error: string;
}

/** What `dispatchSessionEvent` did. */
export interface SessionDispatchSummary {
  /** Tools whose `onSession` ran (successfully or not). */
  called: number;
  failures: SessionHookFailure[];
}

/** Deliver `event` to every tool's `onSession`; never throws. Accepts loaded records or bare tools. */
export async function dispatchSessionEvent(
  tools: ReadonlyArray<LoadedCustomTool | CustomTool>,
  event: CustomToolSessionEvent,
  ctx: CustomToolContext,
  logger?: CustomToolLogger,
): Promise<SessionDispatchSummary> {
  const summary: SessionDispatchSummary = { called: 0, failures: [] };
  for (const entry of tools) {
    const tool = "tool" in entry && entry.tool && typeof entry.tool === "object" ? entry.tool : (entry as CustomTool);
    let toolName = "(unknown)";
    try {
      toolName = String(tool.name);
      const hook = tool.onSession;
      if (typeof hook !== "function") continue;
      summary.called++;
      await hook.call(tool, event, ctx);
    } catch (error) {
      const message = errorMessage(error);
      summary.failures.push({ toolName, error: message });
      try {
        logger?.warn("Custom tool onSession error", { tool: toolName, event: event.reason, error: message });
      } catch {
        // A broken logger must not break dispatch either.
      }
    }
  }
  return summary;
}
