/**
 * One call of a tool, as the agent makes it: params checked against the tool's TypeBox schema
 * first (the agent loop validates before `execute`), then `execute` in the contract's order
 * (onUpdate, ctx, signal), and the result checked for the shape the host reads. The testing
 * harness (`runTool`) and `xcsh-tools run` both call a tool through here, so a tool behaves the
 * same under test, from the command line and in the host.
 */
import { Value } from "@sinclair/typebox/value";
import { XcshToolsError } from "../core/errors.js";
import type { AgentToolResult, CustomTool, CustomToolContext } from "../core/contract.js";

const TYPEBOX_KIND = Symbol.for("TypeBox.Kind");

/**
 * `EPARAMS_INVALID` (exit 2: the params are the caller's input) naming each wrong param's path
 * and what its schema expects; `hint` says how the caller fixes them. A tool whose `parameters`
 * is no TypeBox schema is not checked (the loader reports that shape; nothing here can check it).
 */
export function checkToolParams(tool: CustomTool<any, any>, params: unknown, hint: string): void {
  const schema = tool.parameters as unknown;
  if (!schema || typeof schema !== "object" || !(TYPEBOX_KIND in schema)) return;
  if (Value.Check(schema as never, params)) return;
  const problems = [...Value.Errors(schema as never, params)].slice(0, 5).map((e) => `${e.path || "/"}: ${e.message}`);
  throw new XcshToolsError("EPARAMS_INVALID", `params of ${tool.name} do not match its parameters schema: ${problems.join("; ")}`, { hint });
}

/** Call `execute` in the contract's order; `ERESULT_SHAPE` when it resolves to no result with a content array. */
export async function executeTool<TDetails>(
  tool: CustomTool<any, TDetails>,
  call: { toolCallId: string; params: unknown; onUpdate: (update: AgentToolResult<TDetails>) => void; ctx: CustomToolContext; signal?: AbortSignal | undefined },
): Promise<AgentToolResult<TDetails>> {
  const result = await tool.execute(call.toolCallId, call.params as never, call.onUpdate, call.ctx, call.signal);
  if (!result || typeof result !== "object" || !Array.isArray(result.content)) {
    throw new XcshToolsError("ERESULT_SHAPE", `${tool.name}.execute resolved to ${describeValue(result)}, not a result with a content array`, {
      hint: 'Return { content: [{ type: "text", text: "..." }] }.',
    });
  }
  return result;
}

/** What a value is, in a message: "null", "an array", "an object", else its string. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : String(value);
}
