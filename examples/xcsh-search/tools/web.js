/** The `web` feature's tool: an example that answers from a fixed list instead of the network. */
const PAGES = ["https://github.com/f5-sales-demo/xcsh: the xcsh coding agent"];

export default function webLookup(api) {
  const { Type } = api.typebox;
  return {
    name: "web_lookup",
    label: "Web lookup",
    description: "Search the web (an example: answers from a fixed list of pages).",
    parameters: Type.Object({ query: Type.String({ description: "What to search for" }) }),
    async execute(_toolCallId, params) {
      const found = PAGES.filter((page) => page.toLowerCase().includes(params.query.toLowerCase()));
      return { content: [{ type: "text", text: found.join("\n") || "no result" }] };
    },
  };
}
