/**
 * `xcsh-tools tools`: what a host would load at boot from `--cwd` — each tool's name,
 * description, source, level, plugin and file, and every error — in load order; exit 1 when
 * there is any error.
 *
 * It asks `listInstalledTools` (src/boot): with a fresh boot index the answer comes from the
 * index alone, without scanning and without importing plugin code; with a stale one the view is
 * rebuilt and tool entries never validated are imported in the validation child process, never
 * in this one. Only the boot module is imported here: no jiti, arborist, pacote or listr2.
 *
 * In a project the user does not trust (`ctx.projectTrusted()`: the record, else a question on a
 * terminal), its own tools folders, marketplace installs and plugin overrides are not read; they
 * are listed as "not loaded: project not trusted" with the command that trusts the project.
 */
import { statSync } from "node:fs";
import type { Command } from "commander";
import { insideAnyOf } from "../../core/contain.js";
import { XcshToolsError } from "../../core/errors.js";
import { ReportedFailure } from "../command-errors.js";
import { resolveUserPath } from "../../core/paths.js";
import { declaredByFrom, npmVersionNotes, overridesCwdNote, teamDeclaredNpm } from "../../teamset/notes.js";
import type { listInstalledTools } from "../../boot/index.js";
import type { HiddenUserCopy } from "../../manifest/seed.js";
import type { CommandContext, CommandModule } from "../context.js";
import { style } from "../output.js";

const KIND_WORDS = {
  "tools-dir": "tools folder",
  "installed-plugins": "marketplace installs",
  "plugin-overrides": "plugin overrides",
  "claude-project-plugin": "Claude Code plugin installed for this project",
  "claude-settings": "Claude Code settings of this project (enabledPlugins)",
} as const;

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

/** The command's options (also of its plain form, without commander). */
export const TOOLS_OPTIONS: ReadonlyArray<{ flags: string; description: string; parse?: (value: string) => unknown }> = [
  { flags: "--builtins <names>", description: "built-in tool names to check conflicts against (comma-separated)", parse: splitList },
  { flags: "--path <path...>", description: "extra configured tool paths, as a host would pass them" },
  { flags: "--pi <module>", description: "the module whose exports factories get as api.pi (default: @f5-sales-demo/xcsh where the tool's folder resolves it)" },
];

export const register: CommandModule["register"] = (program, getContext) => {
  const command = program.command("tools").description("list the custom tools a host would load at boot, and every load error");
  for (const { flags, description, parse } of TOOLS_OPTIONS) (parse ? command.option(flags, description, parse) : command.option(flags, description));
  command.action((options: ToolsFlags, invoked: Command) => runTools(options, getContext(invoked)));
};

export const plain: CommandModule["plain"] = [{ path: ["tools"], options: TOOLS_OPTIONS, operands: 0, run: (ctx, _operands, flags) => runTools(flags as ToolsFlags, ctx) }];

export async function runTools(options: ToolsFlags, context: CommandContext): Promise<void> {
  await checkFlags(options, context);
  // The boot module loads while the trust decision is made (a terminal question may wait).
  const [projectTrust, { listInstalledTools }] = await Promise.all([context.projectTrusted(), import("../../boot/installed-tools.js")]);
  const result = await listInstalledTools({
    cwd: context.cwd,
    projectTrust,
    configuredPaths: options.path ?? [],
    ...context.roots,
    env: context.env,
    ...(options.builtins ? { builtInToolNames: options.builtins } : {}),
    ...(options.pi !== undefined ? { piModule: options.pi } : {}),
  });
  const report = withTeamNotes(toolsReport(result), context, context.roots.seedDirs?.length ? await (await import("../seeded.js")).hiddenBySeeds(context) : []);
  const otherComponents = await pluginsWithoutTools(context, report.tools);
  if (context.output.json) {
    const { tools, errors, untrusted, warnings } = report;
    context.output.result({ cwd: context.cwd, tools, errors, ...(warnings.length ? { warnings } : {}), ...(untrusted ? { untrusted } : {}), ...(otherComponents.length ? { otherComponents } : {}), index: { fresh: result.index.fresh, reason: result.index.reason } });
  } else printTools(context.output, report, otherComponents);
  // A tool that fails to load (or is skipped for a name conflict) is a failure, as in `doctor`:
  // scripts and CI read the exit code, not the listing.
  if (report.errors.length > 0) throw new ReportedFailure(1);
}

export interface ToolsFlags {
  builtins?: string[];
  path?: string[];
  pi?: string;
}

async function checkFlags(options: ToolsFlags, context: CommandContext): Promise<void> {
  // A path typed on the command line that names nothing is a typo, not a host's stale setting.
  for (const configured of options.path ?? []) {
    const resolved = resolveUserPath(configured, context.cwd, context.roots.home);
    if (!statSync(resolved, { throwIfNoEntry: false })) {
      throw new XcshToolsError("EUSAGE", `--path ${configured} does not exist (${resolved})`, { hint: "Give --path an existing tool file or tools folder (relative paths are read from --cwd)." });
    }
  }
  if (options.pi !== undefined) (await import("../../host/host-exports.js")).assertHostExportsModule(options.pi, context.cwd);
}

/** Where a tool, an error or a skipped entry comes from, as `--json` reports it. */
function origin(source: { provider?: string; level?: string; plugin?: string; seed?: string } | undefined) {
  return { provider: source?.provider, level: source?.level, ...(source?.plugin ? { plugin: source.plugin } : {}), ...(source?.seed ? { seed: source.seed } : {}) };
}

/** The tools, errors and untrusted project's entries, as `--json` reports them. */
function toolsReport(result: Awaited<ReturnType<typeof listInstalledTools>>) {
  const tools = result.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    file: tool.file,
    ...origin(tool.source),
    source: tool.source?.providerName,
  }));
  const errors = result.errors.map((error) => ({
    code: error.code,
    path: error.path,
    message: error.error,
    ...origin(error.source),
  }));
  const untrusted = result.untrusted && {
    project: result.untrusted.project,
    reason: "project not trusted",
    trustCommand: result.untrusted.trustCommand,
    notLoaded: result.untrusted.skipped.map((skipped) => ({
      path: skipped.path,
      kind: skipped.kind,
      ...origin(skipped.source),
    })),
  };
  return { tools, errors, untrusted };
}

/**
 * What the host cannot express about team sets (teamset/notes.ts): an npm tool of a plugin a
 * project's set declares gets `declaredBy` (that project's root; in another project it loads too,
 * at level user: npm plugins are per user), and starting below a set's root is
 * `WTEAM_OVERRIDES_CWD`; an npm plugin this project's set declares that another project's restore
 * moved to another version is `WTEAM_NPM_VERSION`. Stat only, and our install record (and the
 * runtime lock, for plugins declared here) read only when npm tools are listed.
 */
function withTeamNotes(report: ReturnType<typeof toolsReport>, context: CommandContext, hidden: readonly HiddenUserCopy[] = []) {
  const declared = report.tools.some((t) => t.provider === "npm") ? teamDeclaredNpm(context.roots) : new Map<string, string[]>();
  const tools = report.tools.map((tool) => {
    const by = tool.provider === "npm" && tool.plugin ? declaredByFrom(declared.get(tool.plugin) ?? [], context.cwd, context.roots) : undefined;
    return by ? { ...tool, declaredBy: by.root, declaredHere: by.here } : tool;
  });
  const here = new Map<string, Set<string>>();
  for (const tool of tools) if ("declaredHere" in tool && tool.declaredHere && tool.plugin) (here.get(tool.declaredBy) ?? here.set(tool.declaredBy, new Set()).get(tool.declaredBy)!).add(tool.plugin);
  const note = overridesCwdNote(context.cwd, context.roots);
  const moved = [...here].flatMap(([root, plugins]) => npmVersionNotes(context.roots, root, [...plugins]));
  // The user's own plugins a seed hides (manifest/seed.ts): their tools are not in the list, and why.
  const warnings: { code: string; file: string; message: string; hint: string }[] = [...moved, ...(note ? [note] : []), ...hidden.map(({ code, file, message, hint }) => ({ code, file, message, hint }))];
  return { ...report, tools, warnings };
}
type ToolsReport = ReturnType<typeof withTeamNotes>;

/**
 * Installed plugins that bring no tool but skills, hooks, servers...: said, or "No custom tools
 * found" reads as "the plugin brought nothing". Only plugins that brought no tool are read (a
 * plugin root holding a loaded tool's file brought a tool).
 */
async function pluginsWithoutTools(context: CommandContext, tools: ToolsReport["tools"]) {
  const toolFiles = tools.map((t) => t.file);
  // One prefix check per tool file and root (every root against every file: keep it cheap).
  const broughtTools = (root: string) => {
    const inRoot = insideAnyOf([root]);
    return toolFiles.some((file) => inRoot(file) && file !== root);
  };
  // The state files say whether such a plugin exists; the component readers load only if one does.
  const { installedPluginRoots } = await import("../../components/installed-roots.js");
  const installed = installedPluginRoots({ roots: context.roots, cwd: context.cwd, projectTrusted: await context.projectTrusted() });
  if (installed.every(broughtTools)) return [];
  const [{ installedComponents }, { summarizeComponents }] = await Promise.all([import("../components-view.js"), import("../../components/summary.js")]);
  return (await installedComponents(context, { namedTools: false, skipRoot: broughtTools }))
    .filter((p) => !p.problem && p.components.length > 0 && !p.components.some((c) => c.kind === "tool"))
    .map((p) => ({ plugin: p.id, rootKind: p.rootKind, summary: summarizeComponents(p.components) }));
}

function printTools(output: CommandContext["output"], { tools, errors, untrusted, warnings }: ToolsReport, otherComponents: Awaited<ReturnType<typeof pluginsWithoutTools>>): void {
  if (tools.length === 0) output.line("No custom tools found.");
  for (const tool of tools) {
    const origin = [tool.provider, tool.level, tool.plugin].filter(Boolean).join(" · ");
    output.line(`${style(output, "bold", tool.name)}  ${style(output, "dim", origin)}`);
    if (tool.description) output.line(`  ${tool.description}`);
    output.line(`  ${style(output, "dim", tool.file)}`);
    if ("declaredBy" in tool) {
      output.line(
        `  ${style(output, "dim", tool.declaredHere ? `declared by this project's set (${tool.declaredBy}); npm plugins are per user: it loads in your other projects too` : `declared by the set of ${tool.declaredBy}; npm plugins are per user, so it loads here too (level user)`)}`,
      );
    }
  }
  for (const warning of warnings) {
    output.line();
    output.line(`${style(output, "yellow", `warning ${warning.code}`)}: ${warning.message}`);
    output.line(`  ${style(output, "dim", warning.hint)}`);
  }
  if (errors.length > 0) {
    output.line();
    output.line(style(output, "red", `${errors.length} error${errors.length === 1 ? "" : "s"}:`));
    for (const error of errors) {
      output.line(`  ${error.code}  ${error.path}`);
      output.line(`    ${error.message}`);
    }
  }
  if (otherComponents.length > 0) {
    output.line();
    output.line(`${otherComponents.length} installed plugin${otherComponents.length === 1 ? " brings" : "s bring"} no tools but other components:`);
    for (const p of otherComponents) output.line(`  ${style(output, "bold", p.plugin)}  ${p.summary}  ${style(output, "dim", `(xcsh-tools show ${p.plugin})`)}`);
  }
  if (untrusted && untrusted.notLoaded.length > 0) {
    output.line();
    output.line(style(output, "yellow", `Not loaded: project not trusted (${untrusted.project}):`));
    for (const entry of untrusted.notLoaded) output.line(`  ${entry.path}  ${style(output, "dim", [entry.provider, entry.plugin, KIND_WORDS[entry.kind]].filter(Boolean).join(" · "))}`);
    output.line(`  Trust it to load them: ${untrusted.trustCommand}`);
  }
}
