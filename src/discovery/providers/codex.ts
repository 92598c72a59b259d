/** Codex config tools: `<cwd>/.codex/tools` (project) and `~/.codex/tools` (user). Read only. */
import path from "node:path";
import { projectPaths } from "../../core/paths.js";
import { directoryProvider } from "./directory-provider.js";

export const codexProvider = directoryProvider("codex", "Codex", {
  project: (ctx) => projectPaths(ctx.cwd).codexTools,
  user: (ctx) => path.join(ctx.paths.codexRoot, "tools"),
});
