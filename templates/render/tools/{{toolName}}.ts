/**
 * {{toolName}}: show a checklist, with its own TUI rendering.
 *
 * `renderCall` draws the call while it runs and `renderResult` draws the result. Both return a
 * component: anything with `render(width): string[]` (the shape of the host's `Text`), so the
 * tool needs no UI library of its own. `theme` is the host's theme object: use it when it has
 * what you need and fall back to plain text, because other hosts (and tests) may pass another
 * theme or none. A render hook that throws falls back to plain text in the host; do not rely on it.
 */
import type { CustomToolFactory, RenderResultOptions, Theme } from "xcsh-tools";

interface Item {
  text: string;
  done: boolean;
}

/** The parameters, as the schema below describes them. */
interface Checklist {
  title: string;
  items: Item[];
}

/** A text component: one string per line, cut to the width the host gives. */
function lines(text: string[]) {
  return {
    render: (width: number) => text.map((line) => (line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line)),
    invalidate() {},
  };
}

/** `theme.fg(color, text)` when the host's theme has it, else the text unchanged. */
function paint(theme: Theme, color: string, text: string): string {
  const fg = (theme as { fg?: (color: string, text: string) => string } | undefined)?.fg;
  return typeof fg === "function" ? fg.call(theme, color, text) : text;
}

const COLLAPSED_ITEMS = 3;

const factory: CustomToolFactory = (api) => {
  const { Type } = api.typebox;
  return {
    name: "{{toolName}}",
    label: "{{title}}",
    description: "Show the user a checklist (a title and items that are done or not) and return it as text.",
    parameters: Type.Object({
      title: Type.String({ description: "What the checklist is about" }),
      items: Type.Array(Type.Object({ text: Type.String(), done: Type.Boolean() }), { description: "The items, in order" }),
    }),
    async execute(_toolCallId, params: Checklist) {
      const done = params.items.filter((item) => item.done).length;
      const text = [`${params.title}: ${done}/${params.items.length} done`, ...params.items.map((i) => `${i.done ? "[x]" : "[ ]"} ${i.text}`)];
      return { content: [{ type: "text", text: text.join("\n") }], details: { title: params.title, items: params.items, done } };
    },
    renderCall(args: Checklist, _options: RenderResultOptions, theme: Theme) {
      return lines([`${paint(theme, "accent", "{{title}}")} ${args.title} (${args.items.length} items)`]);
    },
    renderResult(result, options: RenderResultOptions, theme: Theme) {
      const details = result.details as { title: string; items: Item[]; done: number } | undefined;
      if (!details) return lines([options.isPartial ? "…" : "(no checklist)"]);
      const shown = options.expanded ? details.items : details.items.slice(0, COLLAPSED_ITEMS);
      const out = [`${details.title}: ${details.done}/${details.items.length} done`];
      for (const item of shown) out.push(item.done ? paint(theme, "success", `✔ ${item.text}`) : `○ ${item.text}`);
      const hidden = details.items.length - shown.length;
      if (hidden > 0) out.push(paint(theme, "dim", `… ${hidden} more (expand to see all)`));
      return lines(out);
    },
  };
};

export default factory;
