/**
 * The component model: everything a plugin brings, one record per component, whatever the kind
 * of plugin root it came from. `list`, `show`, `validate`, `doctor`, install consent and the boot
 * index all read these records, so they agree on what a plugin is.
 */

/** Every kind of component, with words for it, singular and plural, for summaries ("2 skills, 1 MCP server"). */
export const KIND_WORDS = {
  tool: ["tool", "tools"],
  skill: ["skill", "skills"],
  command: ["command", "commands"],
  agent: ["agent", "agents"],
  hook: ["hook", "hooks"],
  "mcp-server": ["MCP server", "MCP servers"],
  "lsp-server": ["LSP server", "LSP servers"],
  "output-style": ["output style", "output styles"],
  bin: ["bin executable", "bin executables"],
  monitor: ["monitor", "monitors"],
  extension: ["extension", "extensions"],
  prompt: ["prompt template", "prompt templates"],
  theme: ["theme", "themes"],
} as const satisfies Record<string, readonly [string, string]>;

/** What a component is. */
export type ComponentKind = keyof typeof KIND_WORDS;

/** Every kind, in the order summaries list them. */
export const COMPONENT_KINDS = Object.keys(KIND_WORDS) as readonly ComponentKind[];

/**
 * Where a plugin lives, which decides what xcsh does with it:
 * - `xcsh-marketplace`: a marketplace plugin installed in xcsh's registry (`~/.xcsh/plugins` or a project's);
 * - `claude-cache`: a Claude Code plugin installed in `~/.claude/plugins/cache`;
 * - `npm`: an npm plugin whose package.json carries an `xcsh` (or `pi`) manifest;
 * - `folder`: a plugin folder being validated (judged as it would load once installed by xcsh).
 */
export type PluginRootKind = "xcsh-marketplace" | "claude-cache" | "npm" | "folder";

/** The exact program a component runs, `${CLAUDE_PLUGIN_ROOT}`/`${XCSH_PLUGIN_ROOT}` resolved. */
export interface ComponentExec {
  /** The program, or for hooks the whole command line (run by a shell). */
  command: string;
  args: string[];
  /** Names of the environment variables it is given (values are not shown: they may be secrets). */
  env: string[];
  cwd?: string;
  /** Whether `command` is a shell command line rather than a program path. */
  shell?: boolean;
}

/** Token estimates (see cost.ts for the method). `null`: not knowable without running it. */
export interface ComponentCost {
  /** Added to every session's model context. */
  alwaysOn: number | null;
  /** Added each time the component is invoked (a skill's or agent's body). */
  onInvoke: number;
}

/** One component of a plugin. */
export interface Component {
  kind: ComponentKind;
  /**
   * Its name as Claude Code gives it: a skill's folder, a command's or agent's file without
   * `.md`, a server's key, a hook's event (with its matcher).
   */
  name: string;
  /** The frontmatter `name:` of a skill or agent when it differs from `name` (the xcsh host goes by it). */
  declaredName?: string;
  /**
   * The kind Claude Code files it under when that is not `kind`: a commands/ Markdown file is
   * one of its skills (`claude plugin details` lists and prices it with them).
   */
  filedAs?: ComponentKind;
  description?: string;
  /** The file that defines it (absolute). */
  file: string;
  /** Where in `file` (a JSON pointer), for components defined inside a JSON document. */
  pointer?: string;
  /** Whether the xcsh host loads this component from this kind of root. */
  loadedByXcsh: boolean;
  /** Why not, or how (in words), for `show`. */
  note?: string;
  /** A pi package's own component (skills, prompts, themes of a `pi` manifest): pi loads it, the xcsh host never does. */
  piOnly?: true;
  /** What it runs, for hooks, MCP/LSP servers, monitors and bin/ executables. */
  exec?: ComponentExec;
  /** For remote MCP servers and http hooks. */
  url?: string;
  /** Header names of a remote server (values are not shown). */
  headers?: string[];
  /** MCP transport: stdio, http, sse, ws. */
  transport?: string;
  /** Hooks: the event, matcher, hook type and timeout (seconds). */
  event?: string;
  matcher?: string;
  hookType?: string;
  timeout?: number;
  cost: ComponentCost;
}

/** A finding while reading a plugin's components; `validate` reports the same shape (ValidateIssue). */
export interface ComponentIssue {
  /** Absolute path of the file the finding is about. */
  file: string;
  /** JSON path inside it ("" for the whole file). */
  path: string;
  code: string;
  message: string;
  hint?: string;
  /** What it means for someone who installed the package and cannot change it (ValidationIssue.forUser). */
  forUser?: string;
  expected?: string;
  found?: string;
}

/** Everything one plugin root brings. */
export interface PluginComponents {
  root: string;
  rootKind: PluginRootKind;
  components: Component[];
  errors: ComponentIssue[];
  warnings: ComponentIssue[];
}
