/**
 * {{toolName}}: run npm scripts one after another and stream progress while they run.
 *
 * What a long-running tool must do in the xcsh contract:
 * - stream: call `onUpdate` with a partial result after each step, so the UI shows progress;
 * - cancel: pass `signal` to every `api.exec` (that kills the subprocess and its children) and
 *   stop at the next step once it is aborted;
 * - keep state per session: the totals live in memory, so `onSession` rebuilds them from the
 *   tool results already in the session (their `details`) when a session starts, is switched to
 *   or branched, and forgets them on shutdown. A restored session therefore shows the same totals.
 */
import type { CustomToolContext, CustomToolFactory, CustomToolSessionEvent } from "xcsh-tools";

interface RunDetails {
  done: number;
  total: number;
  failed: string[];
  /** Scripts run in this session so far, this call included. */
  sessionRuns: number;
}

/** Tool results of this tool on the session's current branch (the host's session entries). */
function previousDetails(ctx: CustomToolContext, toolName: string): RunDetails[] {
  const manager = ctx.sessionManager as { getBranch?: () => unknown[]; getEntries?: () => unknown[] } | undefined;
  const entries = manager?.getBranch?.() ?? manager?.getEntries?.() ?? [];
  const found: RunDetails[] = [];
  for (const entry of entries) {
    const message = (entry as { message?: { role?: string; toolName?: string; details?: unknown } }).message;
    if (message?.role === "toolResult" && message.toolName === toolName && message.details) found.push(message.details as RunDetails);
  }
  return found;
}

const factory: CustomToolFactory = (api) => {
  const { Type } = api.typebox;
  const name = "{{toolName}}";
  let sessionRuns = 0;

  return {
    name,
    label: "{{title}}",
    description: "Run npm scripts of the project one after another (e.g. lint, build, test) and report which failed.",
    parameters: Type.Object({
      scripts: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: "npm script names, run in order" }),
    }),
    async execute(_toolCallId, params, onUpdate, _ctx, signal) {
      const total = params.scripts.length;
      const failed: string[] = [];
      let done = 0;
      for (const script of params.scripts) {
        if (signal?.aborted) throw new Error(`cancelled after ${done} of ${total} scripts`);
        onUpdate?.({
          content: [{ type: "text", text: `running ${script} (${done + 1}/${total})` }],
          details: { done, total, failed: [...failed], sessionRuns },
        });
        const result = await api.exec("npm", ["run", "--silent", script], { signal });
        if (result.killed) throw new Error(`cancelled while running ${script} (${done} of ${total} done)`);
        if (result.code !== 0) failed.push(script);
        done++;
        sessionRuns++;
      }
      const details: RunDetails = { done, total, failed, sessionRuns };
      const summary = failed.length === 0 ? `all ${total} scripts passed` : `${failed.length} of ${total} failed: ${failed.join(", ")}`;
      return { content: [{ type: "text", text: `${summary} (${sessionRuns} scripts run in this session)` }], details };
    },
    onSession(event: CustomToolSessionEvent, ctx: CustomToolContext) {
      if (event.reason === "shutdown") {
        sessionRuns = 0;
        return;
      }
      if (event.reason === "start" || event.reason === "switch" || event.reason === "branch" || event.reason === "tree") {
        const last = previousDetails(ctx, name).at(-1);
        sessionRuns = last?.sessionRuns ?? 0;
        api.logger.debug(`${name}: restored ${sessionRuns} runs`, { reason: event.reason });
      }
    },
  };
};

export default factory;
