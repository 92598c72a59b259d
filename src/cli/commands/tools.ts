/**
 * `xcsh-tools tools`: what a host would load at boot from `--cwd` — each tool's name,
 * description, source, level, plugin and file, and every error — in load order.
 *
 * It asks `listInstalledTools` (src/boot): with a fresh boot index the answer comes from the
 * index alone, without scanning and without importing plugin code; with a stale one the view is
 * rebuilt and tool entries never validated are imported in the validation child process, never
 * in this one. Only the boot module is imported here: no jiti, arborist, pacote or listr2.
 */
import type { Command } from "commander";
import type { CommandModule } from "./index.js";
import { style } from "../output.js";

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

export const register: CommandModule["register"] = (program, getContext) => {
  program
    .command("tools")
    .description("list the custom tools a host would load at boot, and every load error")
    .option("--builtins <names>", "built-in tool names to check conflicts against (comma-separated)", splitList)
    .option("--path <path...>", "extra configured tool paths, as a host would pass them")
    .action(async (options: { builtins?: string[]; path?: string[] }, command: Command) => {
      const context = getContext(command);
      const { listInstalledTools } = await import("../../boot/index.js");
      const result = await listInstalledTools({
        cwd: context.cwd,
        configuredPaths: options.path ?? [],
        home: context.roots.home,
        xcshHome: context.roots.xcshHome,
        env: context.env,
        ...(options.builtins ? { builtInToolNames: options.builtins } : {}),
      });
      const tools = result.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        file: tool.file,
        provider: tool.source?.provider,
        source: tool.source?.providerName,
        level: tool.source?.level,
        ...(tool.source?.plugin ? { plugin: tool.source.plugin } : {}),
      }));
      const errors = result.errors.map((error) => ({
        code: error.code,
        path: error.path,
        message: error.error,
        provider: error.source?.provider,
        level: error.source?.level,
        ...(error.source?.plugin ? { plugin: error.source.plugin } : {}),
      }));
      const { output } = context;
      if (output.json) {
        output.result({ cwd: context.cwd, tools, errors, index: { fresh: result.index.fresh, reason: result.index.reason } });
        return;
      }
      if (tools.length === 0) output.line("No custom tools found.");
      for (const tool of tools) {
        const origin = [tool.provider, tool.level, tool.plugin].filter(Boolean).join(" · ");
        output.line(`${style(output, "bold", tool.name)}  ${style(output, "dim", origin)}`);
        if (tool.description) output.line(`  ${tool.description}`);
        output.line(`  ${style(output, "dim", tool.file)}`);
      }
      if (errors.length > 0) {
        output.line();
        output.line(style(output, "red", `${errors.length} error${errors.length === 1 ? "" : "s"}:`));
        for (const error of errors) output.line(`  ${error.code}  ${error.path}\n    ${error.message}`);
      }
    });
};
