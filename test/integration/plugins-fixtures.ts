/**
 * Fixtures of the npm plugin tests: plugin packages published to the shared Verdaccio under a
 * per-file prefix, and a temp world whose npm config points at that registry only (an explicit
 * `registry=` in the temp userconfig, so nothing can fall back to registry.npmjs.org).
 */
import { spawn } from "node:child_process";
import { cp, lstat, readdir, readFile, readlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach } from "vitest";
import type { RegistryHandle } from "../helpers/registry.js";
import { cliArgv, hermeticEnv, runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld, type WorldOptions } from "../helpers/tmp-home.js";
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
  /** The xcsh root as set up, before any command (the trust record of the project, when the world was made trusted). */
  fresh: TreeSnapshot;
  readJson(rel: string): Promise<any>;
}

/** A fresh plugin world for each test (`reg()`: the registry a `beforeAll` connected), cleaned up after it. */
export function pluginWorldPerTest(reg: () => RegistryHandle, assign: (world: PluginWorld) => void): void {
  let current: PluginWorld | undefined;
  beforeEach(async () => {
    current = await makePluginWorld(reg());
    assign(current);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
}

/** A world whose npm uses `reg`; its project is untrusted unless `options` say otherwise. */
export async function makePluginWorld(reg: RegistryHandle, npmrcExtra = "", options: WorldOptions = {}): Promise<PluginWorld> {
  const world = await makeTmpWorld("xcsh-tools-plugins-", options);
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
      spawn(process.execPath, cliArgv(world.home, args), { cwd: world.cwd, env: hermeticEnv(world.home, { ...baseEnv, ...env }), stdio: ["ignore", "pipe", "pipe"] }),
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

/**
 * The state fixtures published under `prefix`, and a trusted world with `<state>@1.0.0` and
 * `<plain>` installed once (the start of the state commands' tests), to restore into each test's world.
 */
export async function prepareStateWorld(reg: RegistryHandle, prefix: string): Promise<{ n: StateFixtureNames; both: PluginWorldTemplate }> {
  const n = await publishStateFixtures(reg, prefix);
  const both = await preparePluginWorld(reg, async (x) => {
    const r = await x.cli(["install", `${n.state}@1.0.0`, n.plain]);
    if (r.code !== 0) throw new Error(`install of the state fixtures failed:\n${r.stdout}\n${r.stderr}`);
  }, "", { trustProject: true });
  return { n, both };
}

/**
 * A state of a plugin world made ONCE by real CLI commands (e.g. an npm install), to be copied
 * into the fresh world of each test that starts from it, instead of running the same install
 * again in every test: `prepare` runs in a world of its own, then `restore(w)` gives `w` exactly
 * that state.
 *
 * What is copied: the xcsh root and npm's cache of the prepared world, except the project's trust
 * record (`w` has its own, naming its own project). The boot index's files record the world's
 * absolute paths and each file's inode: they are copied with the prepared world's root replaced
 * by `w`'s, then re-recorded by the same `refreshBootIndex` every mutation ends with (the copies
 * have new inodes; their bytes are the same, so no module is validated again), so `w` starts with
 * a fresh index as the prepared world did. `prepare` must leave no other file naming the prepared
 * world's paths (a marketplace registry does: build such states in each world): it is refused, so
 * a copied state can never point into another world. The restored world must hold exactly the
 * files the prepared one does (checked too).
 */
export interface PluginWorldTemplate {
  restore(w: PluginWorld): Promise<void>;
  cleanup(): Promise<void>;
}

/** Files of `<plugins>/.xcsh-tools` that name the world's own paths. */
const PATH_BOUND = new Set(["trusted-projects.json", "boot-index.json", "boot-modules.json", "boot-components.json"]);
const BOOT_INDEX_FILES = ["boot-index.json", "boot-modules.json", "boot-components.json"];

/** `options`: those of the worlds it is restored into (a trust record is theirs, so both must have one or neither). */
export async function preparePluginWorld(reg: RegistryHandle, prepare: (w: PluginWorld) => Promise<void>, npmrcExtra = "", options: WorldOptions = {}): Promise<PluginWorldTemplate> {
  const source = await makePluginWorld(reg, npmrcExtra, options);
  await prepare(source);
  const ours = (w: TmpWorld) => path.join(w.xcshHome, "plugins", ".xcsh-tools");
  /** Every path under `dir` (relative), the path-bound files of ours left out. */
  async function listing(dir: string, oursDir: string): Promise<string[]> {
    const out: string[] = [];
    async function walk(abs: string, rel: string): Promise<void> {
      for (const name of (await readdir(abs)).sort()) {
        const childAbs = path.join(abs, name);
        if (abs === oursDir && PATH_BOUND.has(name)) continue;
        out.push(rel ? `${rel}/${name}` : name);
        if ((await lstat(childAbs)).isDirectory()) await walk(childAbs, rel ? `${rel}/${name}` : name);
      }
    }
    await walk(dir, "");
    return out;
  }
  const files = await listing(source.xcshHome, ours(source));
  for (const rel of files) {
    const abs = path.join(source.xcshHome, rel);
    const info = await lstat(abs);
    const text = info.isSymbolicLink() ? await readlink(abs) : info.isFile() ? await readFile(abs, "utf8") : "";
    if (text.includes(source.root)) throw new Error(`preparePluginWorld: ${rel} names the prepared world's paths (${source.root}); build this state in each world instead`);
  }
  const withIndex = await listing(source.xcshHome, "");
  return {
    async restore(w) {
      const { refreshBootIndex } = await import("../../src/boot/index.js");
      await cp(source.xcshHome, w.xcshHome, {
        recursive: true,
        force: true,
        verbatimSymlinks: true,
        preserveTimestamps: true,
        filter: (from) => !(path.dirname(from) === ours(source) && PATH_BOUND.has(path.basename(from))),
      });
      for (const name of BOOT_INDEX_FILES) {
        const text = await readFile(path.join(ours(source), name), "utf8").catch((error: NodeJS.ErrnoException) => {
          if (error.code === "ENOENT") return undefined;
          throw error;
        });
        if (text !== undefined) await writeFile(path.join(ours(w), name), text.split(source.root).join(w.root));
      }
      await cp(path.join(source.home, ".npm"), path.join(w.home, ".npm"), { recursive: true, force: true, verbatimSymlinks: true, preserveTimestamps: true }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
      await refreshBootIndex({ home: w.home, xcshHome: w.xcshHome, env: hermeticEnv(w.home, w.env), cwd: w.cwd });
      const got = await listing(w.xcshHome, "");
      if (JSON.stringify(got) !== JSON.stringify(withIndex)) throw new Error(`preparePluginWorld: the restored world holds ${JSON.stringify(got)}, the prepared one ${JSON.stringify(withIndex)}`);
    },
    cleanup: () => source.cleanup(),
  };
}
