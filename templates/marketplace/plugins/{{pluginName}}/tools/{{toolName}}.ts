/**
 * {{toolName}}: the last commits of the project, one line each.
 *
 * A marketplace plugin's tools are found by convention: every module in its `tools/` folder.
 * xcsh loads them from the plugin's install folder; Claude Code ignores `tools/`, so the same
 * plugin folder serves both.
 */
import type { CustomToolFactory } from "xcsh-tools";

const factory: CustomToolFactory = (api) => {
  const { Type } = api.typebox;
  return {
    name: "{{toolName}}",
    label: "{{title}}",
    description: "Show the most recent git commits of the project (hash, date, subject).",
    parameters: Type.Object({
      count: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "How many commits (default 10)" })),
    }),
    async execute(_toolCallId, params, _onUpdate, _ctx, signal) {
      const result = await api.exec("git", ["log", `-${params.count ?? 10}`, "--date=short", "--format=%h %ad %s"], { signal });
      if (result.killed) throw new Error("cancelled");
      if (result.code !== 0) throw new Error(`git log exited with ${result.code}: ${result.stderr.trim()}`);
      const commits = result.stdout.split("\n").filter(Boolean);
      return { content: [{ type: "text", text: commits.join("\n") || "No commits yet." }], details: { commits: commits.length } };
    },
  };
};

export default factory;
