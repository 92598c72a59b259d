/** The `farewell` feature's tool: enabled with `xcsh-tools install @example/xcsh-greet[farewell]`. */
import type { CustomToolAPI } from "xcsh-tools";

export default function farewell(api: CustomToolAPI) {
  const { Type } = api.typebox;
  return {
    name: "farewell",
    label: "Farewell",
    description: "Say goodbye to a person.",
    parameters: Type.Object({ name: Type.String({ description: "Who to say goodbye to" }) }),
    async execute(_toolCallId: string, params: { name: string }, _onUpdate: unknown, _ctx: unknown, signal?: AbortSignal) {
      if (signal?.aborted) throw new Error("cancelled");
      return { content: [{ type: "text" as const, text: `Goodbye, ${params.name}.` }] };
    },
  };
}
