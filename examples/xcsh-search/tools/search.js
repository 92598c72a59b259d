/** The plugin's base tool: `search` finds lines of the project's files that contain a text. */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";

export default function search(api) {
  const { Type } = api.typebox;
  return {
    name: "project_search",
    label: "Project search",
    description: "Find lines that contain a text in the project's files (at most 10 results).",
    parameters: Type.Object({ text: Type.String({ description: "The text to find" }) }),
    async execute(_toolCallId, params) {
      const hits = [];
      for (const entry of await readdir(api.cwd, { withFileTypes: true })) {
        if (!entry.isFile() || hits.length >= 10) continue;
        const lines = (await readFile(path.join(api.cwd, entry.name), "utf8").catch(() => "")).split("\n");
        lines.forEach((line, i) => {
          if (line.includes(params.text) && hits.length < 10) hits.push(`${entry.name}:${i + 1}: ${line.trim()}`);
        });
      }
      return { content: [{ type: "text", text: hits.join("\n") || "no match" }], details: { hits: hits.length } };
    },
  };
}
