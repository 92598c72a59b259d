/**
 * {{title}}: a custom tool for the xcsh coding agent.
 *
 * The host imports this file at boot and calls the default export (the factory) once with the
 * shared API. Check it with `xcsh-tools validate {{toolName}}.ts`; `xcsh-tools tools` shows it
 * once it sits in .xcsh/tools (this project) or ~/.xcsh/agent/tools (every project).
 */
import type { CustomToolFactory } from "xcsh-tools";

const factory: CustomToolFactory = (api) => {
  // The host's own TypeBox: parameter schemas it can read.
  const { Type } = api.typebox;
  return {
    name: "{{toolName}}",
    label: "{{title}}",
    description: "{{description}}",
    parameters: Type.Object({
      path: Type.Optional(Type.String({ description: "Folder to list, relative to the project (default: the project)" })),
    }),
    // Custom tools take (toolCallId, params, onUpdate, ctx, signal).
    async execute(_toolCallId, params, onUpdate, _ctx, signal) {
      onUpdate?.({ content: [{ type: "text", text: "listing files..." }] });
      // exec runs without a shell; the signal stops the process when the user cancels.
      const { stdout, stderr, code } = await api.exec("ls", ["-1", params.path ?? "."], { signal });
      // A throw is a tool failure: the model sees the message.
      if (code !== 0) throw new Error(`ls exited with ${code}: ${stderr.trim()}`);
      const files = stdout.split("\n").filter(Boolean);
      return { content: [{ type: "text", text: files.join("\n") || "(empty)" }], details: { count: files.length } };
    },
  };
};

export default factory;
