/**
 * A minimal xcsh custom tool: drop this file into ~/.xcsh/agent/tools/ (or <project>/.xcsh/tools/)
 * and the agent can call `hello`. Check it before you ship it:
 *
 *   npx xcsh-tools validate examples/hello-tool.ts
 */
import type { CustomToolAPI, CustomToolFactory } from "xcsh-tools";

const factory: CustomToolFactory = (api: CustomToolAPI) => {
  const { Type } = api.typebox;
  return {
    name: "hello",
    label: "Hello",
    description: "Greet someone by name. Use it when the user asks to be greeted.",
    parameters: Type.Object({
      name: Type.String({ description: "Who to greet" }),
      shout: Type.Optional(Type.Boolean({ description: "Greet in capitals" })),
    }),
    async execute(_toolCallId, params) {
      const text = `Hello, ${params.name}!`;
      return { content: [{ type: "text", text: params.shout ? text.toUpperCase() : text }] };
    },
  };
};

export default factory;
