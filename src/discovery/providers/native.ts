/**
 * Native xcsh tools: `<cwd>/.xcsh/tools` (project) and `<xcshHome>/agent/tools` (user). Unlike
 * the host, an empty `.xcsh` folder is not special and `index.js` folders count.
 */
import { projectPaths } from "../../core/paths.js";
import { directoryProvider } from "./directory-provider.js";

export const nativeProvider = directoryProvider("native", "xcsh", {
  project: (ctx) => projectPaths(ctx.cwd).tools,
  user: (ctx) => ctx.paths.userTools,
});
