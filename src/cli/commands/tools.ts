/**
 * `xcsh-tools tools`: what a host would load at boot from `--cwd` — each tool's name, source and
 * level, and every error — in discovery order.
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
      const { discoverAndLoadCustomTools } = await import("../../host/discover.js");
      const { DEFAULT_BUILTIN_TOOL_NAMES } = await import("../../host/builtins.js");
      const result = await discoverAndLoadCustomTools(
        options.path ?? [],
        context.cwd,
        options.builtins ?? [...DEFAULT_BUILTIN_TOOL_NAMES],
        undefined,
        { home: context.roots.home, xcshHome: context.roots.xcshHome, env: context.env },
      );
      const tools = result.tools.map((loaded) => ({
        name: loaded.tool.name,
        description: loaded.tool.description,
        file: loaded.resolvedPath,
        provider: loaded.source?.provider,
        level: loaded.source?.level,
        ...(loaded.source?.plugin ? { plugin: loaded.source.plugin } : {}),
      }));
      const errors = result.errors.map((error) => ({
        code: error.code,
        path: error.path,
        message: error.error,
        provider: error.source?.provider,
        level: error.source?.level,
      }));
      const { output } = context;
      if (output.json) {
        output.result({ cwd: context.cwd, tools, errors });
        return;
      }
      if (tools.length === 0) output.line("No custom tools found.");
      for (const tool of tools) {
        const origin = [tool.provider, tool.level, tool.plugin].filter(Boolean).join(" · ");
        output.line(`${style(output, "bold", tool.name)}  ${style(output, "dim", origin)}`);
        output.line(`  ${tool.file}`);
      }
      if (errors.length > 0) {
        output.line();
        output.line(style(output, "red", `${errors.length} error${errors.length === 1 ? "" : "s"}:`));
        for (const error of errors) output.line(`  ${error.code}  ${error.path}\n    ${error.message}`);
      }
    });
};
