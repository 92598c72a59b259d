/**
 * The formats of the components a Claude Code / xcsh marketplace plugin brings, besides tools:
 * the YAML frontmatter of `SKILL.md`, command and agent files, `hooks.json`, `.mcp.json` (or a
 * manifest's `mcpServers`), `.lsp.json` (or `lspServers`) and monitors. One TypeBox schema per
 * format (the types come from them) and one pure validator each, returning the house's
 * `ValidationResult`; the scanner (scan.ts) and `validate` use them.
 *
 * Tolerance follows Claude Code, so that `validate` passes what Claude Code loads: unknown keys
 * in frontmatter are allowed (skills carry `license`, `metadata`, `version`... of their own),
 * an event name we do not know is a warning (Claude Code adds events between releases), while a
 * hook without its command, an MCP server with neither `command` nor `url`, or an LSP server
 * without `command`/`extensionToLanguage` is an error: Claude Code cannot run those.
 */
import { Type, type Static, type TSchema } from "../manifest/typebox.js";
import { IssueCollector, describeValue, isRecord, pointer, type ValidationResult } from "../manifest/result.js";
import { checkSchema } from "../manifest/schema-check.js";

const StringOrList = Type.Union([Type.String(), Type.Array(Type.String())]);

/** `skills/<name>/SKILL.md` frontmatter. `name` defaults to the folder name. */
export const SkillFrontmatterSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  description: Type.Optional(Type.String({ maxLength: 1024 })),
  "allowed-tools": Type.Optional(StringOrList),
  "argument-hint": Type.Optional(StringOrList),
  model: Type.Optional(Type.String()),
  "disable-model-invocation": Type.Optional(Type.Boolean()),
  "user-invocable": Type.Optional(Type.Boolean()),
});

/** `commands/*.md` frontmatter: every field optional; the name is the file name. */
export const CommandFrontmatterSchema = Type.Object({
  description: Type.Optional(Type.String()),
  // `argument-hint: [file]` unquoted is a YAML list; Claude Code shows it as written.
  "argument-hint": Type.Optional(StringOrList),
  "allowed-tools": Type.Optional(StringOrList),
  model: Type.Optional(Type.String()),
  "disable-model-invocation": Type.Optional(Type.Boolean()),
});

/** `agents/*.md` frontmatter: a subagent needs a name and a description to be chosen. */
export const AgentFrontmatterSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.String({ minLength: 1 }),
  tools: Type.Optional(StringOrList),
  model: Type.Optional(Type.String()),
  color: Type.Optional(Type.String()),
});

/** `output-styles/*.md` frontmatter. */
export const OutputStyleFrontmatterSchema = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1 })),
  description: Type.Optional(Type.String()),
});

/** Hook events Claude Code documents; another name is a warning (`EHOOK_EVENT`). */
export const HOOK_EVENTS = [
  "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied", "UserPromptSubmit", "UserPromptExpansion",
  "Notification", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "SessionStart", "SessionEnd", "Setup", "PreCompact",
  "PostCompact", "TeammateIdle", "TaskCreated", "TaskCompleted", "InstructionsLoaded", "ConfigChange", "CwdChanged",
  "FileChanged", "WorktreeCreate", "WorktreeRemove", "Elicitation", "ElicitationResult",
] as const;

/** Hook types and the field each needs: `command` runs a program; the others ask a model or call a URL. */
const HOOK_NEEDS: Record<string, { field: "command" | "prompt" | "url"; expected: string; hint: string }> = {
  command: { field: "command", expected: "a command line", hint: 'Add "command": "${CLAUDE_PLUGIN_ROOT}/hooks/<script>".' },
  prompt: { field: "prompt", expected: "a prompt", hint: 'Add "prompt".' },
  agent: { field: "prompt", expected: "a prompt", hint: 'Add "prompt".' },
  http: { field: "url", expected: "a URL", hint: 'Add "url".' },
};
const HOOK_TYPES = Object.keys(HOOK_NEEDS);

export const HookSchema = Type.Object({
  type: Type.String({ minLength: 1 }),
  command: Type.Optional(Type.String({ minLength: 1 })),
  prompt: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  timeout: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
  async: Type.Optional(Type.Boolean()),
});
export type Hook = Static<typeof HookSchema>;

export const HookMatcherSchema = Type.Object({
  matcher: Type.Optional(Type.String()),
  hooks: Type.Array(HookSchema),
});

/** The `hooks` object of hooks.json (or inline in plugin.json): event → matcher groups. */
export const HookEventsSchema = Type.Record(Type.String(), Type.Array(HookMatcherSchema));

export const McpServerSchema = Type.Object({
  type: Type.Optional(Type.Union([Type.Literal("stdio"), Type.Literal("http"), Type.Literal("sse"), Type.Literal("ws")])),
  command: Type.Optional(Type.String({ minLength: 1 })),
  args: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  cwd: Type.Optional(Type.String()),
  url: Type.Optional(Type.String({ minLength: 1 })),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
});
export type McpServer = Static<typeof McpServerSchema>;

export const LspServerSchema = Type.Object({
  command: Type.String({ minLength: 1 }),
  args: Type.Optional(Type.Array(Type.String())),
  extensionToLanguage: Type.Record(Type.String(), Type.String()),
  transport: Type.Optional(Type.Union([Type.Literal("stdio"), Type.Literal("socket")])),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
  initializationOptions: Type.Optional(Type.Unknown()),
  settings: Type.Optional(Type.Unknown()),
  workspaceFolder: Type.Optional(Type.String()),
  startupTimeout: Type.Optional(Type.Number()),
  shutdownTimeout: Type.Optional(Type.Number()),
  restartOnCrash: Type.Optional(Type.Boolean()),
  maxRestarts: Type.Optional(Type.Number()),
});
export type LspServer = Static<typeof LspServerSchema>;

export const MonitorSchema = Type.Object({
  name: Type.String({ minLength: 1 }),
  command: Type.String({ minLength: 1 }),
  description: Type.Optional(Type.String()),
  when: Type.Optional(Type.String()),
});

/** The envelope of a hooks document; each group and hook is checked on its own below. */
const HookEventsEnvelopeSchema = Type.Record(Type.String(), Type.Array(Type.Object({ matcher: Type.Optional(Type.String()), hooks: Type.Array(Type.Unknown()) })));

/**
 * A hooks document: either a hooks.json (`{description?, hooks: {...}}`) or, with `inline`, the
 * `hooks` object a plugin.json carries itself. Each hook is checked on its own, so one bad hook
 * does not hide the problems of the others.
 */
export function validateHooks(value: unknown, options: { inline?: boolean } = {}): ValidationResult<Static<typeof HookEventsSchema>> {
  const out = new IssueCollector();
  const base = options.inline ? "" : "/hooks";
  if (!options.inline) {
    const top = checkSchema(Type.Object({ description: Type.Optional(Type.String()), hooks: Type.Unknown() }), value);
    out.absorb(top);
    if (!top.ok) return out.result({});
  }
  const events = options.inline ? value : (value as Record<string, unknown>).hooks;
  const shape = checkSchema(HookEventsEnvelopeSchema, events, base);
  out.absorb(shape);
  if (!shape.ok) return out.result({});
  for (const [event, groups] of Object.entries(shape.value)) {
    const at = pointer(base, event);
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      out.warn({ path: at, code: "EHOOK_EVENT", message: `${at}: "${event}" is not a hook event Claude Code documents; it never fires`, expected: HOOK_EVENTS.join(", "), found: JSON.stringify(event), hint: "Check the spelling (events are PascalCase, e.g. PreToolUse)." });
    }
    groups.forEach((group, g) => {
      group.hooks.forEach((raw, h) => {
        const hat = pointer(at, g, "hooks", h);
        const checked = checkSchema(HookSchema, raw, hat);
        out.absorb(checked);
        if (!isRecord(raw) || typeof raw.type !== "string") return;
        const hook = raw as Hook;
        const need = Object.hasOwn(HOOK_NEEDS, hook.type) ? HOOK_NEEDS[hook.type]! : undefined;
        if (!need) {
          out.error({ path: `${hat}/type`, code: "EHOOK_TYPE", message: `${hat}/type: "${hook.type}" is not a hook type`, expected: HOOK_TYPES.join(", "), found: JSON.stringify(hook.type), hint: 'Use "command" to run a program.' });
        } else if (typeof hook[need.field] !== "string") {
          out.error({ path: `${hat}/${need.field}`, code: "EREQUIRED", message: `${hat}: a${hook.type === "http" ? "n" : ""} ${hook.type} hook needs "${need.field}"`, expected: need.expected, found: "nothing", hint: need.hint });
        }
      });
    });
  }
  return out.result(shape.value as Static<typeof HookEventsSchema>);
}

/** A server map (name → server); `extra` reports what the schema cannot say and returns false to leave a server out. */
function validateServers<T>(value: unknown, base: string, what: string, schema: TSchema, extra?: (server: T, at: string, out: IssueCollector) => boolean): ValidationResult<Record<string, T>> {
  const out = new IssueCollector();
  if (!isRecord(value)) {
    out.error({ path: base, code: "ETYPE", message: `${base || "/"}: expected an object of ${what} servers`, expected: "an object (server name → server)", found: describeValue(value) });
    return out.result({});
  }
  const servers: Record<string, T> = {};
  for (const [name, server] of Object.entries(value)) {
    const at = pointer(base, name);
    const shape = checkSchema(schema, server, at);
    out.absorb(shape);
    if (shape.ok && (extra?.(shape.value as T, at, out) ?? true)) servers[name] = shape.value as T;
  }
  return out.result(servers);
}

/** An MCP server map: stdio servers need `command`; http/sse ones `url`. */
export function validateMcpServers(value: unknown, base = ""): ValidationResult<Record<string, McpServer>> {
  return validateServers<McpServer>(value, base, "MCP", McpServerSchema, (s, at, out) => {
    const remote = s.type === "http" || s.type === "sse" || s.type === "ws";
    if (remote && !s.url) out.error({ path: `${at}/url`, code: "EREQUIRED", message: `${at}: a ${s.type} MCP server needs "url"`, expected: "a URL", found: "nothing", hint: 'Add "url".' });
    else if (!remote && !s.command) {
      out.error({ path: `${at}/command`, code: "EREQUIRED", message: `${at}: an MCP server needs "command" (stdio) or "type" and "url" (http, sse)`, expected: "command or url", found: "neither", hint: 'Add "command" and "args", or "type": "http" and "url".' });
    } else return true;
    return false;
  });
}

/** An LSP server map (name → server). */
export function validateLspServers(value: unknown, base = ""): ValidationResult<Record<string, LspServer>> {
  return validateServers<LspServer>(value, base, "LSP", LspServerSchema);
}

/** A monitors list (`monitors/monitors.json` or plugin.json `monitors`). */
export const MonitorListSchema = Type.Array(MonitorSchema);
