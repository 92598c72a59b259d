/** Claude config tools: `<cwd>/.claude/tools` (project) and `~/.claude/tools` (user). Read only. */
import path from "node:path";
import { projectPaths } from "../../core/paths.js";
import { directoryProvider } from "./directory-provider.js";

export const claudeProvider = directoryProvider("claude", "Claude", {
  project: (ctx) => projectPaths(ctx.cwd).claudeTools,
  user: (ctx) => path.join(ctx.paths.claudeRoot, "tools"),
});
