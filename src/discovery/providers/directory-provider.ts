/**
 * The shape shared by the plain-folder sources (native, Claude, Codex): one tools directory at
 * project level and one at user level. Project is scanned first so that, when both levels hold
 * a tool of the same name, the project's wins (the loader keeps the first of a name) — the
 * host's precedence for native tools, applied to every source. When both
 * levels are the same folder (cwd is the home folder: `~/.claude/tools`), it is scanned once, as
 * the user level. In an untrusted project the project folder is not scanned, only reported.
 */
import path from "node:path";
import type { ProviderId } from "../../core/host-options.js";
import type { ToolSource } from "../../core/contract.js";
import { scanToolsDir } from "../tools-dir.js";
import { reportSkipped } from "../untrusted.js";
import type { DiscoveryContext, ToolProvider } from "../types.js";

/** Build a provider that scans `projectDir(ctx)` then `userDir(ctx)`. */
export function directoryProvider(
  id: ProviderId,
  name: string,
  dirs: { project(ctx: DiscoveryContext): string; user(ctx: DiscoveryContext): string },
): ToolProvider {
  return {
    id,
    name,
    async discover(ctx, sink) {
      const project: ToolSource = { provider: id, providerName: name, level: "project" };
      const user: ToolSource = { provider: id, providerName: name, level: "user" };
      const projectDir = dirs.project(ctx);
      const userDir = dirs.user(ctx);
      if (path.resolve(projectDir) !== path.resolve(userDir)) {
        if (ctx.projectTrusted) await scanToolsDir(projectDir, project, sink);
        else reportSkipped(projectDir, project, "tools-dir", sink);
      }
      await scanToolsDir(userDir, user, sink);
    },
  };
}
