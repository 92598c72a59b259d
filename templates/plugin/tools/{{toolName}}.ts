/**
 * {{toolName}}: find TODO and FIXME comments in the project with grep.
 *
 * The base tool of {{packageName}}: always loaded when the plugin is enabled. It shows the
 * contract's habits: the host's TypeBox for parameters, `api.exec` (no shell, so paths are never
 * interpreted) with the cancellation signal, a thrown error for a real failure, and `details`
 * for whatever the UI or later turns may need.
 */
import type { CustomToolFactory } from "xcsh-tools";

const factory: CustomToolFactory = (api) => {
  const { Type } = api.typebox;
  return {
    name: "{{toolName}}",
    label: "{{title}}",
    description: "Find TODO and FIXME comments in the project's files. Returns file:line:text matches.",
    parameters: Type.Object({
      path: Type.Optional(Type.String({ description: "Folder or file to search, relative to the project (default: the project)" })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: "Most matches to return (default 50)" })),
    }),
    async execute(_toolCallId, params, onUpdate, _ctx, signal) {
      const target = params.path ?? ".";
      onUpdate?.({ content: [{ type: "text", text: `searching ${target}...` }] });
      const result = await api.exec(
        "grep",
        ["-rnE", "TODO|FIXME", "--exclude-dir=node_modules", "--exclude-dir=.git", "--", target],
        { signal },
      );
      if (result.killed) throw new Error("cancelled");
      // grep exits 1 when nothing matches: an answer, not a failure.
      if (result.code === 1) return { content: [{ type: "text", text: "No TODO or FIXME found." }], details: { matches: 0 } };
      if (result.code !== 0) throw new Error(`grep exited with ${result.code}: ${result.stderr.trim()}`);
      const lines = result.stdout.split("\n").filter(Boolean);
      const limit = params.limit ?? 50;
      const shown = lines.slice(0, limit);
      const more = lines.length > limit ? `\n(${lines.length - limit} more)` : "";
      return { content: [{ type: "text", text: shown.join("\n") + more }], details: { matches: lines.length } };
    },
  };
};

export default factory;
