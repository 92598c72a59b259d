/**
 * From a custom tool to the agent's tool. The two disagree on `execute`'s argument order: the
 * agent calls `(toolCallId, params, signal, onUpdate, ctx)`, a custom tool expects
 * `(toolCallId, params, onUpdate, ctx, signal)`. Everything else is passed through as live lazy
 * getters (the host's `applyToolProxy`): a tool that changes its own `description` or `hidden`
 * later is seen as it is now, and its methods stay bound to the tool. Unlike the host, the
 * optional 4th `args` of `renderResult` reaches the tool.
 */
import type {
  AgentToolResult,
  AgentToolUpdateCallback,
  Component,
  CustomTool,
  CustomToolContext,
  CustomToolResult,
  RenderResultOptions,
  Theme,
} from "../core/contract.js";

/** Keys the adapter defines itself; the tool's own versions are not proxied over them. */
const OWN_KEYS = new Set<PropertyKey>(["execute", "strict", "renderResult", "constructor"]);

/** The agent-side tool a `CustomTool` becomes (structural: the host's `AgentTool`). */
export class CustomToolAdapter<TDetails = any> {
  readonly strict = true;
  declare readonly name: string;
  declare readonly label: string;
  declare readonly description: string;
  declare readonly parameters: CustomTool["parameters"];
  declare readonly hidden?: boolean;
  declare readonly deferrable?: boolean;
  declare readonly mcpServerName?: string;
  declare readonly mcpToolName?: string;
  declare readonly renderCall?: CustomTool["renderCall"];
  declare readonly onSession?: CustomTool["onSession"];
  readonly #tool: CustomTool<any, TDetails>;
  readonly #getContext: () => CustomToolContext;

  constructor(tool: CustomTool<any, TDetails>, getContext: () => CustomToolContext) {
    this.#tool = tool;
    this.#getContext = getContext;
    proxyToolMembers(tool, this);
    // renderResult is only present when the tool has one, so hosts can test for it.
    Object.defineProperty(this, "renderResult", {
      enumerable: true,
      configurable: true,
      get: () => {
        const render = tool.renderResult;
        if (typeof render !== "function") return undefined;
        return (result: CustomToolResult<TDetails>, options: RenderResultOptions, theme: Theme, args?: unknown) =>
          render.call(tool, result, options, theme, args);
      },
    });
  }

  /** Same as `new CustomToolAdapter(tool, getContext)`. */
  static wrap<TDetails = any>(
    tool: CustomTool<any, TDetails>,
    getContext: () => CustomToolContext,
  ): CustomToolAdapter<TDetails> {
    return new CustomToolAdapter(tool, getContext);
  }

  /** The custom tool this adapter forwards to. */
  get customTool(): CustomTool<any, TDetails> {
    return this.#tool;
  }

  /** The agent's order in, the custom tool's order out; `ctx` defaults to the host's context. */
  execute(
    toolCallId: string,
    params: unknown,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
    ctx?: CustomToolContext,
  ): Promise<AgentToolResult<TDetails>> {
    return this.#tool.execute(toolCallId, params as never, onUpdate, ctx ?? this.#getContext(), signal);
  }

  declare readonly renderResult?: (
    result: CustomToolResult<TDetails>,
    options: RenderResultOptions,
    theme: Theme,
    args?: unknown,
  ) => Component;
}

/** Define a live getter on `target` for every member of `tool` and its prototype chain. */
function proxyToolMembers(tool: object, target: object): void {
  const seen = new Set<PropertyKey>();
  for (let proto: object | null = tool; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Reflect.ownKeys(proto)) {
      if (seen.has(key) || OWN_KEYS.has(key) || key === "customTool") continue;
      seen.add(key);
      Object.defineProperty(target, key, {
        enumerable: true,
        configurable: true,
        get: () => {
          const value = (tool as Record<PropertyKey, unknown>)[key];
          return typeof value === "function" ? value.bind(tool) : value;
        },
      });
    }
  }
}
