/**
 * A temp world for the reliability suites: a HOME whose `.npmrc` points at a dead loopback port
 * (nothing can reach a public registry), a valid plugin folder, a folder marketplace with one
 * plugin, a preload that reports prototype pollution, and hanging loopback servers.
 */
import net from "node:net";
import { pathToFileURL } from "node:url";
import path from "node:path";
import { isolatedGitEnv } from "../helpers/git-remote.js";
import { writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld, type WorldOptions } from "../helpers/tmp-home.js";
import { snapshotTree, type TreeSnapshot } from "../helpers/tree-snapshot.js";

/** Printed on stderr by the preload when `Object.prototype` gained a key during the run. */
export const POLLUTED_MARK = "PROTOTYPE-POLLUTED";

/**
 * Imported first in the CLI process (NODE_OPTIONS=--import): at exit, any own key of
 * `Object.prototype` or `Array.prototype` that was not there at start is reported on stderr.
 */
const PRELOAD = `const before = new Set(Object.getOwnPropertyNames(Object.prototype));
const beforeArray = new Set(Object.getOwnPropertyNames(Array.prototype));
process.on("exit", () => {
  const added = Object.getOwnPropertyNames(Object.prototype).filter((k) => !before.has(k))
    .concat(Object.getOwnPropertyNames(Array.prototype).filter((k) => !beforeArray.has(k)));
  if (added.length || ({}).polluted !== undefined) process.stderr.write("${POLLUTED_MARK}: " + added.join(",") + "\\n");
});
`;

export interface RelWorld extends TmpWorld {
  /** `<root>/dev/good-plugin`: a valid npm-style plugin folder. */
  plugin: string;
  /** `<root>/market`: a folder marketplace "acme" offering "hello". */
  market: string;
  preload: string;
  env: NodeJS.ProcessEnv;
  cli(args: string[], env?: NodeJS.ProcessEnv, timeoutMs?: number): Promise<ProcessResult>;
  /** The whole temp tree (npm's cache excluded: it is a cache). */
  snapshot(): Promise<TreeSnapshot>;
}

/** Make the world; `registry` defaults to a dead loopback port; its project is untrusted unless `options` say otherwise. */
export async function makeRelWorld(registry = "http://127.0.0.1:9/", options: WorldOptions = {}): Promise<RelWorld> {
  const w = await makeTmpWorld("xcsh-tools-rel-", options);
  await writeUserNpmrc(w.home, registry);
  const plugin = path.join(w.root, "dev", "good-plugin");
  await w.write(path.join(plugin, "package.json"), { name: "good-plugin", version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } });
  await w.write(
    path.join(plugin, "t.js"),
    `export default () => ({ name: "good_tool", label: "good", description: "fixture", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } });\n`,
  );
  const market = path.join(w.root, "market");
  await writeFolderMarketplace(market, { name: "acme", tools: ["hello_tool"], entry: { version: "1.0.0", description: "Says hello" } });
  // An ES module in a folder of its own: `--require` would make Node read the package.json of
  // the working folder, which some cases break on purpose.
  await w.write("preload/package.json", { type: "module" });
  const preload = await w.write("preload/preload.mjs", PRELOAD);
  const git = isolatedGitEnv(w.home);
  const env: NodeJS.ProcessEnv = {
    GIT_CONFIG_GLOBAL: git.GIT_CONFIG_GLOBAL,
    GIT_CONFIG_NOSYSTEM: git.GIT_CONFIG_NOSYSTEM,
    NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`,
  };
  return {
    ...w,
    plugin,
    market,
    preload,
    env,
    cli: (args, extra = {}, timeoutMs = 60_000) => runCli(args, { cwd: w.cwd, home: w.home, env: { ...env, ...extra }, timeoutMs }),
    snapshot: () => snapshotTree(w.root, { exclude: [".npm"] }),
  };
}

/** A loopback TCP server that accepts connections and never answers. */
export async function startSilentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
