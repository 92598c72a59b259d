/** The plugin's base tool: `greet`, in the language the `language` setting picks. */
import type { CustomToolAPI } from "xcsh-tools";

const GREETINGS = { en: "Hello", fr: "Bonjour", de: "Hallo" } as const;

export default function greet(api: CustomToolAPI) {
  const { Type } = api.typebox;
  return {
    name: "greet",
    label: "Greet",
    description: "Greet a person in English, French or German.",
    parameters: Type.Object({
      name: Type.String({ description: "Who to greet" }),
      language: Type.Optional(Type.Union([Type.Literal("en"), Type.Literal("fr"), Type.Literal("de")])),
    }),
    async execute(_toolCallId: string, params: { name: string; language?: keyof typeof GREETINGS }) {
      const word = GREETINGS[params.language ?? "en"];
      return { content: [{ type: "text" as const, text: `${word}, ${params.name}!` }] };
    },
  };
}
