/**
 * Fixtures of the npm plugin tests: plugin packages published to the shared Verdaccio under a
 * per-file prefix, and a temp world whose npm config points at that registry only (an explicit
 * `registry=` in the temp userconfig, so nothing can fall back to registry.npmjs.org).
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { RegistryHandle } from "../helpers/registry.js";
import { CLI_BIN, hermeticEnv, runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree, type TreeSnapshot } from "../helpers/tree-snapshot.js";

/** An ESM tool module whose factory returns one tool named `name`. */
export function toolSource(name: string, body = ""): string {
  return `${body}\nexport default (api) => ({ name: ${JSON.stringify(name)}, label: ${JSON.stringify(name)}, description: "fixture tool", parameters: api.typebox.Type.Object({}), async execute() { return { content: [{ type: "text", text: "ok" }] }; } });\n`;
}

/** Tool names may not hold dots or slashes. */
export function toolName(pkg: string): string {
  return pkg.replace(/[^a-zA-Z0-9_-]/g, "_").replace(/^_+/, "");
}

/** Names of the published fixture packages. */
export interface FixtureNames {
  dep: string;
  basic: string;
  features: string;
  scripts: string;
  broken: string;
  /** More plain plugins (concurrency). */
  extra: string[];
}

/** Publish the standard fixture plugins under `prefix`. */
export async function publishFixtures(reg: RegistryHandle, prefix: string): Promise<FixtureNames> {
  const n: FixtureNames = {
    dep: `${prefix}-dep`,
    basic: `${prefix}-basic`,
    features: `${prefix}-features`,
    scripts: `${prefix}-scripts`,
    broken: `${prefix}-broken`,
    extra: [1, 2, 3, 4].map((i) => `${prefix}-extra${i}`),
  };
  await reg.publish({ name: n.dep, version: "1.0.0", files: { "index.js": "module.exports = 42;\n" } });
  for (const [version, tag] of [["1.0.0", undefined], ["1.1.0", undefined], ["2.0.0", undefined], ["3.0.0-beta.1", "next"]] as const) {
    await reg.publish(
      {
        name: n.basic,
        version,
        packageJson: { type: "module", dependencies: { [n.dep]: "^1.0.0" }, xcsh: { tools: "./tools/basic.js" } },
        files: { "tools/basic.js": toolSource(toolName(n.basic), `import dep from ${JSON.stringify(n.dep)};\nif (dep !== 42) throw new Error("dep");`) },
      },
      tag ? { tag } : {},
    );
  }
  await reg.publish({
    name: n.features,
    version: "1.0.0",
    packageJson: {
      type: "module",
      xcsh: {
        tools: "./tools/base.js",
        features: {
          web: { description: "web", default: true, tools: ["./tools/web.js"] },
          cache: { description: "cache", default: false, tools: ["./tools/cache.js"] },
        },
        settings: { limit: { type: "number", default: 10 }, apiKey: { type: "string", secret: true } },
      },
    },
    files: { "tools/base.js": toolSource(`${toolName(n.features)}_base`), "tools/web.js": toolSource(`${toolName(n.features)}_web`), "tools/cache.js": toolSource(`${toolName(n.features)}_cache`) },
  });
  await reg.publish({
    name: n.scripts,
    version: "1.0.0",
    packageJson: { type: "module", xcsh: { tools: "./t.js" }, scripts: { postinstall: `node -e "require('fs').writeFileSync(process.env.XCSH_TEST_MARKER,'ran')"` } },
    files: { "t.js": toolSource(toolName(n.scripts)) },
  });
  await reg.publish({
    name: n.broken,
    version: "1.0.0",
    packageJson: { type: "module", xcsh: { tools: "./t.js" } },
    files: { "t.js": `export default () => { throw new Error("this factory always fails"); };\n` },
  });
  for (const name of n.extra) {
    await reg.publish({ name, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(name)) } });
  }
  return n;
}

/** A temp world pointed at the registry, with a CLI runner. */
export interface PluginWorld extends TmpWorld {
  plugins: string;
  env: NodeJS.ProcessEnv;
  cli(args: string[], env?: NodeJS.ProcessEnv, timeoutMs?: number): Promise<ProcessResult>;
  /** Start the CLI without waiting (for kill -9 tests). */
  spawnCli(args: string[], env?: NodeJS.ProcessEnv): ReturnType<typeof spawn>;
  snapshot(): Promise<TreeSnapshot>;
  /** The xcsh root as set up, before any command: only the user's trust record of the project. */
  fresh: TreeSnapshot;
  readJson(rel: string): Promise<any>;
}

export async function makePluginWorld(reg: RegistryHandle, npmrcExtra = ""): Promise<PluginWorld> {
  const world = await makeTmpWorld("xcsh-tools-plugins-");
  // An explicit registry: nothing may fall back to the public one.
  await writeUserNpmrc(world.home, reg.url, npmrcExtra);
  const plugins = path.join(world.xcshHome, "plugins");
  const baseEnv: NodeJS.ProcessEnv = { XCSH_TEST_MARKER: path.join(world.root, "marker") };
  // The lock file comes and goes with each command; the journal folder must be empty.
  const snapshot = () => snapshotTree(world.xcshHome, { exclude: ["lock"] });
  return {
    ...world,
    plugins,
    env: baseEnv,
    cli: (args, env = {}, timeoutMs = 120_000) => runCli(args, { cwd: world.cwd, home: world.home, env: { ...baseEnv, ...env }, timeoutMs }),
    spawnCli: (args, env = {}) =>
      spawn(process.execPath, [CLI_BIN, ...args], { cwd: world.cwd, env: hermeticEnv(world.home, { ...baseEnv, ...env }), stdio: ["ignore", "pipe", "pipe"] }),
    snapshot,
    fresh: await snapshot(),
    readJson: async (rel) => JSON.parse(await readFile(path.join(plugins, rel), "utf8")),
  };
}

/** Names of the fixtures of the state commands (enable, disable, features, config). */
export interface StateFixtureNames {
  /** Versions 1.0.0 and 1.1.0: base tool, features web (default) and cache, four typed settings. */
  state: string;
  /** No features, no settings. */
  plain: string;
  /** Tool names of `state`: base, web, cache. */
  tools: { base: string; web: string; cache: string };
  plainTool: string;
}

/** Publish the state commands' fixtures under `prefix` (names of their own: other files are unaffected). */
export async function publishStateFixtures(reg: RegistryHandle, prefix: string): Promise<StateFixtureNames> {
  const state = `${prefix}-state`;
  const plain = `${prefix}-plain`;
  const t = toolName(state);
  const tools = { base: `${t}_base`, web: `${t}_web`, cache: `${t}_cache` };
  for (const version of ["1.0.0", "1.1.0"]) {
    await reg.publish({
      name: state,
      version,
      packageJson: {
        type: "module",
        xcsh: {
          tools: "./tools/base.js",
          features: {
            web: { description: "Web search", default: true, tools: ["./tools/web.js"] },
            cache: { description: "Disk cache", default: false, tools: ["./tools/cache.js"] },
          },
          settings: {
            apiKey: { type: "string", secret: true, env: "XCSH_STATE_TEST_KEY", description: "API key" },
            limit: { type: "number", default: 10, min: 1, max: 100, step: 1, description: "Result limit" },
            verbose: { type: "boolean", default: false },
            mode: { type: "enum", values: ["fast", "deep"], default: "fast" },
          },
        },
      },
      files: { "tools/base.js": toolSource(tools.base), "tools/web.js": toolSource(tools.web), "tools/cache.js": toolSource(tools.cache) },
    });
  }
  await reg.publish({ name: plain, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(plain)) } });
  return { state, plain, tools, plainTool: toolName(plain) };
}
