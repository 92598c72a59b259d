/** The `cache` feature's tool: what the searches of this session found, kept in memory. */
export default function searchHistory(api) {
  const { Type } = api.typebox;
  const seen = [];
  return {
    name: "search_history",
    label: "Search history",
    description: "Show the queries searched in this session.",
    parameters: Type.Object({}),
    async execute() {
      return { content: [{ type: "text", text: seen.join("\n") || "empty" }] };
    },
    onSession(event) {
      if (event.reason === "start") seen.length = 0;
    },
  };
}
