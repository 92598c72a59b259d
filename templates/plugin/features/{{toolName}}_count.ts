/**
 * {{toolName}}_count: count lines, words and characters of a text.
 *
 * Part of the optional `count` feature: loaded only when the user enables it
 * (`xcsh-tools features {{packageName}} --enable count`, or `{{packageName}}[count]` at install).
 */
import type { CustomToolFactory } from "xcsh-tools";

const factory: CustomToolFactory = (api) => {
  const { Type } = api.typebox;
  return {
    name: "{{toolName}}_count",
    label: "{{title}} count",
    description: "Count the lines, words and characters of a text.",
    parameters: Type.Object({ text: Type.String({ description: "The text to count" }) }),
    async execute(_toolCallId, params) {
      const lines = params.text === "" ? 0 : params.text.split("\n").length;
      const words = params.text.split(/\s+/).filter(Boolean).length;
      const characters = [...params.text].length;
      return {
        content: [{ type: "text", text: `${lines} lines, ${words} words, ${characters} characters` }],
        details: { lines, words, characters },
      };
    },
  };
};

export default factory;
