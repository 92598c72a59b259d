/**
 * Child process of the hostile-plugins suite: a stand-in host that boots with
 * `discoverAndLoadCustomTools` and reports on stdout (JSON lines) what it loaded, then stays up a
 * little so that timers a hostile factory left behind can fire, then says it is still alive.
 *
 *   node --import jiti-register helpers-hostile-child.ts <cwd> <home> <hostHandlers: 0|1>
 *
 * With hostHandlers=1 the child installs `uncaughtException`/`unhandledRejection` handlers, as a
 * long-running host does; with 0 it has Node's defaults (a stray throw ends the process).
 */
import path from "node:path";
import { discoverAndLoadCustomTools } from "../../src/index.js";

const [cwd, home, hostHandlers] = process.argv.slice(2) as [string, string, string];
const stray: string[] = [];
if (hostHandlers === "1") {
  process.on("uncaughtException", (error) => void stray.push(`uncaught: ${(error as Error).message}`));
  process.on("unhandledRejection", (reason) => void stray.push(`unhandled: ${(reason as Error)?.message ?? String(reason)}`));
}
const print = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

const result = await discoverAndLoadCustomTools([], cwd, ["read"], undefined, {
  home,
  xcshHome: path.join(home, ".xcsh"),
  env: {},
  cacheDir: path.join(home, "cache"),
  bootIndex: false,
  factoryTimeoutMs: 1000,
  importTimeoutMs: 2000,
});
const tools = result.tools.map((t) => t.tool.name).sort();
// The good tool must still work after its hostile neighbours ran.
const good = result.tools.find((t) => t.tool.name === "good_tool");
const executed = good ? await good.tool.execute("call-1", {}, undefined, undefined as never, undefined) : undefined;
print({ type: "loaded", tools, errors: result.errors.map((e) => ({ code: e.code, file: path.basename(e.path), error: e.error })), executed });
await new Promise((resolve) => setTimeout(resolve, 600));
print({ type: "alive", stray });
process.exit(0);
