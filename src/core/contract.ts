/**
 * The custom-tool contract (docs/library-api.md). These are the types a tool module
 * and an agent host share. They are structural: a host passes its own richer objects (session
 * manager, model registry, theme, components) and we never look inside them.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type * as TypeBox from "@sinclair/typebox";

/** Text or image content of a tool result. */
export type TextContent = { type: "text"; text: string };
export type ImageContent = { type: "image"; data: string; mimeType: string };

/** What `execute` returns, and what `onUpdate` streams. */
export interface AgentToolResult<TDetails = unknown, _TParams = unknown> {
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isWarning?: boolean;
}
export type CustomToolResult<TDetails = unknown> = AgentToolResult<TDetails>;

/** Streams a partial result to the UI while `execute` runs. */
export type AgentToolUpdateCallback<TDetails = unknown, TParams = unknown> = (
  partialResult: AgentToolResult<TDetails, TParams>,
) => void;

/** Options of a render hook. */
export interface RenderResultOptions {
  expanded: boolean;
  isPartial: boolean;
  /** 0-9, only while partial. */
  spinnerFrame?: number;
}

/** A rendered TUI component: opaque to us, the host's own type. */
export type Component = unknown;
/** The host's TUI theme: opaque to us. */
export type Theme = unknown;

/** Options of `CustomToolAPI.exec`. */
export interface ExecOptions {
  signal?: AbortSignal;
  /** Milliseconds before the process is killed. */
  timeout?: number;
  cwd?: string;
}

/** Result of `CustomToolAPI.exec`: never throws for a non-zero exit or an abort. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
  killed: boolean;
}

/** The UI a tool may drive; a no-op until the host calls `setUIContext`. */
export interface CustomToolUIContext {
  select(title: string, options: string[]): Promise<string | undefined>;
  confirm(title: string, message: string): Promise<boolean>;
  input(title: string, placeholder?: string): Promise<string | undefined>;
  notify(message: string, type?: "info" | "warning" | "error"): void;
  setStatus(key: string, text: string | undefined): void;
  custom<T>(factory: (tui: unknown, theme: Theme, done: (result: T) => void) => Component): Promise<T>;
  setEditorText(text: string): void;
  getEditorText(): string;
  editor(title: string, prefill?: string, options?: { signal?: AbortSignal }): Promise<string | undefined>;
  readonly theme: Theme;
}

/** A logger as the host's: structured context after the message. */
export interface CustomToolLogger {
  debug(message: string, context?: Record<string, unknown>): void;
  info(message: string, context?: Record<string, unknown>): void;
  warn(message: string, context?: Record<string, unknown>): void;
  error(message: string, context?: Record<string, unknown>): void;
}

/** A preview a tool stages for the hidden `resolve` tool. */
export interface CustomToolPendingAction {
  label: string;
  apply(reason: string): Promise<AgentToolResult<unknown>>;
  reject?(reason: string): Promise<AgentToolResult<unknown> | undefined>;
  details?: unknown;
  /** Defaults to "custom_tool". */
  sourceToolName?: string;
}

/** What the host receives for each pending action (`details` dropped, name defaulted). */
export interface HostPendingAction {
  label: string;
  sourceToolName: string;
  apply(reason: string): Promise<AgentToolResult<unknown>>;
  reject?(reason: string): Promise<AgentToolResult<unknown> | undefined>;
}

/** The host callback that stores pending actions. */
export type PushPendingAction = (action: HostPendingAction) => void;

/** The API every factory receives: one shared instance per loader. */
export interface CustomToolAPI {
  cwd: string;
  exec(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
  ui: CustomToolUIContext;
  hasUI: boolean;
  logger: CustomToolLogger;
  typebox: typeof TypeBox;
  /** The host's own exports, as the host injected them (`{}` when it passed none). */
  pi: Record<string, unknown>;
  pushPendingAction(action: CustomToolPendingAction): void;
}

/** Session and model state a tool sees in `execute` and `onSession`: the host's objects. */
export interface CustomToolContext {
  sessionManager: unknown;
  modelRegistry: unknown;
  model: unknown | undefined;
  isIdle(): boolean;
  hasQueuedMessages(): boolean;
  abort(): void;
  settings?: unknown;
}

type SessionFileEvent = {
  reason: "start" | "switch" | "branch" | "tree" | "shutdown";
  previousSessionFile: string | undefined;
};

/** Lifecycle events delivered to `onSession`, discriminated on `reason`. */
export type CustomToolSessionEvent =
  | SessionFileEvent
  | {
      reason: "auto_compaction_start";
      trigger: "threshold" | "overflow" | "idle";
      action: "context-full" | "handoff";
    }
  | {
      reason: "auto_compaction_end";
      action: "context-full" | "handoff";
      result: unknown | undefined;
      aborted: boolean;
      willRetry: boolean;
      errorMessage?: string;
    }
  | { reason: "auto_retry_start"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { reason: "auto_retry_end"; success: boolean; attempt: number; finalError?: string }
  | { reason: "ttsr_triggered"; rules: unknown[] }
  | { reason: "todo_reminder"; todos: unknown[]; attempt: number; maxAttempts: number };

/** Every `reason` a session event can have. */
export type CustomToolSessionEventReason = CustomToolSessionEvent["reason"];

/** A tool as a module's factory returns it. Note `execute`'s order: onUpdate, ctx, signal. */
export interface CustomTool<TParams extends TSchema = TSchema, TDetails = any> {
  name: string;
  label: string;
  description: string;
  parameters: TParams;
  hidden?: boolean;
  deferrable?: boolean;
  mcpServerName?: string;
  mcpToolName?: string;
  execute(
    toolCallId: string,
    params: Static<TParams>,
    onUpdate: AgentToolUpdateCallback<TDetails, TParams> | undefined,
    ctx: CustomToolContext,
    signal?: AbortSignal,
  ): Promise<AgentToolResult<TDetails, TParams>>;
  onSession?(event: CustomToolSessionEvent, ctx: CustomToolContext): void | Promise<void>;
  renderCall?(args: Static<TParams>, options: RenderResultOptions, theme: Theme): Component;
  renderResult?(
    result: CustomToolResult<TDetails>,
    options: RenderResultOptions,
    theme: Theme,
    args?: Static<TParams>,
  ): Component;
}

/** A tool module's default export. */
export type CustomToolFactory = (
  pi: CustomToolAPI,
) => CustomTool<any, any> | CustomTool<any, any>[] | Promise<CustomTool<any, any> | CustomTool<any, any>[]>;

/** Where a tool or an error came from. */
export interface ToolSource {
  /** Stable provider id: native, claude, codex, claude-plugins, xcsh-plugins, npm, config. */
  provider: string;
  /** Human name of the provider. */
  providerName: string;
  level: "user" | "project";
  /** The plugin the tool belongs to, for plugin providers (`name` or `name@marketplace`). */
  plugin?: string;
  /** The plugin declares `staticTools` (docs/lazy-tools.md): its tools may be loaded lazily. */
  staticTools?: true;
  /** The read-only plugin seed (`XCSH_PLUGIN_SEED_DIR`) the plugin comes from, for seeded npm plugins. */
  seed?: string;
}

/** A path handed to the loader, with where it came from. */
export interface ToolPathWithSource {
  path: string;
  source?: ToolSource;
}

/** A tool the loader accepted. */
export interface LoadedCustomTool<TParams extends TSchema = TSchema, TDetails = any> {
  /** The path exactly as handed to the loader. */
  path: string;
  /** The absolute path that was imported. */
  resolvedPath: string;
  tool: CustomTool<TParams, TDetails>;
  source?: ToolSource;
}

/** A failure to discover or load a tool: the host logs it and goes on. */
export interface ToolLoadError {
  path: string;
  /** Human-readable message. */
  error: string;
  /** Stable code (`E…`); see the table of loader errors in docs/library-api.md. */
  code: string;
  source?: ToolSource;
  /** Names of the tools involved, for conflicts. */
  toolName?: string;
  /** For conflicts: the source of the tool that won. */
  conflictsWith?: { path: string; source?: ToolSource } | { builtIn: true };
}

/** A project-level source left out, unread, because the project is not trusted. */
export interface SkippedProjectSource {
  /** The file or folder that was not read (for a Claude Code plugin: its install path). */
  path: string;
  /** The source it would have fed, at project level. */
  source: ToolSource;
  /** What it is: a tools folder, the project's marketplace installs, its plugin overrides, a Claude Code plugin installed for this project, or the project's Claude Code settings (their `enabledPlugins`). */
  kind: "tools-dir" | "installed-plugins" | "plugin-overrides" | "claude-project-plugin" | "claude-settings";
}

/**
 * What an untrusted project brought that discovery left out. Not an error: the project simply
 * was not trusted; a host may say "not loaded: project not trusted" and show `trustCommand`.
 */
export interface UntrustedProjectReport {
  /** The project's real path, as the trust record keys it. */
  project: string;
  /** The project-level sources present and left out, in discovery order (empty when it has none). */
  skipped: SkippedProjectSource[];
  /** The command line that trusts the project. */
  trustCommand: string;
}

/** What `loadCustomTools` and `discoverAndLoadCustomTools` return. */
export interface CustomToolsLoadResult {
  tools: LoadedCustomTool[];
  errors: ToolLoadError[];
  /** Set by `discoverAndLoadCustomTools` when the project was not trusted: what was left out. */
  untrusted?: UntrustedProjectReport;
  setUIContext(uiContext: CustomToolUIContext, hasUI: boolean): void;
}
