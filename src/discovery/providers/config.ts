/**
 * Configured paths: the `configuredPaths` argument, in the given order, resolved like the host
 * (`~` expanded, relative to `cwd`: core/paths `resolveUserPath`). The host labels them
 * `{provider: "config", providerName: "Config", level: "project"}`; so do we. Each path may be a
 * module, a tool folder with an index, or a tools directory (scanned); a missing one is an error
 * because somebody asked for it by name.
 */
import { resolveUserPath } from "../../core/paths.js";
import type { ToolSource } from "../../core/contract.js";
import { resolveToolEntry } from "../tools-dir.js";
import type { ToolProvider } from "../types.js";

export const configProvider: ToolProvider = {
  id: "config",
  name: "Config",
  async discover(ctx, sink) {
    const source: ToolSource = { provider: "config", providerName: "Config", level: "project" };
    for (const configured of ctx.configuredPaths) {
      const target = resolveUserPath(configured, ctx.cwd, ctx.home);
      await resolveToolEntry(target, source, sink, { what: `configured tool path ${target}` });
    }
  },
};
