/**
 * The JavaScript runtimes the e2e tests run the built package under: the Node running the
 * tests (the minimum we support, Node 20, in CI: TypeScript tools go through jiti), Node 22 and
 * Node 24 LTS (native type stripping) and Bun (what the xcsh host runs on).
 *
 * Node 22, Node 24 and Bun are found, in order, from `$XCSH_TOOLS_TEST_NODE22` /
 * `$XCSH_TOOLS_TEST_NODE24` / `$XCSH_TOOLS_TEST_BUN`, then from where `.ci/run` installs them:
 * `.ci/runtimes/node_modules/.bin/{node,bun}` (Node 22 and Bun) and
 * `.ci/runtimes/node24/node_modules/.bin/node` (two `node` packages cannot share one prefix). A runtime that is missing is
 * a failure under `CI=true` and a visible skip otherwise: use `runtimeIt(runtime)` instead of
 * `it`, and `requireRuntime(runtime)` inside the test to get the executable.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { it } from "vitest";

/** The repository root. */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");

export type RuntimeId = "node" | "node22" | "node24" | "bun";

export interface Runtime {
  id: RuntimeId;
  /** Human name with the version when found, e.g. `bun 1.4.5`. */
  label: string;
  /** Absolute path of the executable, or undefined when not found. */
  command: string | undefined;
  /** `--version` output, trimmed. */
  version: string | undefined;
  /** Why it is missing or unusable (undefined when usable). */
  problem: string | undefined;
  /** True when an environment variable named it explicitly: then it must work, CI or not. */
  explicit: boolean;
}

const ENV_VARS: Record<Exclude<RuntimeId, "node">, string> = {
  node22: "XCSH_TOOLS_TEST_NODE22",
  node24: "XCSH_TOOLS_TEST_NODE24",
  bun: "XCSH_TOOLS_TEST_BUN",
};

/** Where `.ci/run` installs each runtime, below the repository root. */
const LOCAL_BINS: Record<Exclude<RuntimeId, "node">, string> = {
  node22: ".ci/runtimes/node_modules/.bin/node",
  node24: ".ci/runtimes/node24/node_modules/.bin/node",
  bun: ".ci/runtimes/node_modules/.bin/bun",
};

const INSTALL_HINTS: Record<Exclude<RuntimeId, "node">, string> = {
  node22: "npm install --prefix .ci/runtimes --no-save bun@1 node@22",
  node24: "npm install --prefix .ci/runtimes/node24 --no-save node@24",
  bun: "npm install --prefix .ci/runtimes --no-save bun@1 node@22",
};

/** True when running in CI (`CI` set to anything but "", "0" or "false"). */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI;
  return value !== undefined && value !== "" && value !== "0" && value.toLowerCase() !== "false";
}

function probeVersion(command: string): { version?: string; problem?: string } {
  const result = spawnSync(command, ["--version"], { encoding: "utf8", timeout: 20_000, stdio: ["ignore", "pipe", "pipe"] });
  if (result.error) return { problem: `${command} --version failed: ${result.error.message}` };
  if (result.status !== 0) return { problem: `${command} --version exited with ${result.status}: ${result.stderr.trim()}` };
  return { version: result.stdout.trim() };
}

function expectedVersion(id: RuntimeId, version: string): string | undefined {
  if (id === "node22" && !/^v22\./.test(version)) return `expected Node v22.x, got ${version}`;
  if (id === "node24" && !/^v24\./.test(version)) return `expected Node v24.x, got ${version}`;
  if (id === "bun" && !/^1\./.test(version)) return `expected Bun 1.x, got ${version}`;
  return undefined;
}

function findOptional(id: Exclude<RuntimeId, "node">, env: NodeJS.ProcessEnv): Runtime {
  const variable = ENV_VARS[id];
  const fromEnv = env[variable];
  const local = path.join(REPO_ROOT, LOCAL_BINS[id]);
  const command = fromEnv ? path.resolve(fromEnv) : existsSync(local) ? local : undefined;
  const name = id;
  if (!command) {
    return {
      id,
      label: name,
      command: undefined,
      version: undefined,
      explicit: false,
      problem: `${name} not found: set $${variable} or run \`${INSTALL_HINTS[id]}\``,
    };
  }
  const probed = probeVersion(command);
  const problem = probed.problem ?? expectedVersion(id, probed.version ?? "");
  return {
    id,
    label: probed.version ? `${name} ${probed.version.replace(/^v/, "")}` : name,
    command: problem ? undefined : command,
    version: probed.version,
    explicit: Boolean(fromEnv),
    problem: problem ? `${name} at ${command} is unusable (${fromEnv ? `from $${variable}` : ".ci/runtimes"}): ${problem}` : undefined,
  };
}

/** Every runtime, found once per test file; the current Node is always there. */
export function findRuntimes(env: NodeJS.ProcessEnv = process.env): Runtime[] {
  const current: Runtime = {
    id: "node",
    label: `node ${process.versions.node}`,
    command: process.execPath,
    version: process.version,
    problem: undefined,
    explicit: true,
  };
  return [current, findOptional("node22", env), findOptional("node24", env), findOptional("bun", env)];
}

/** Memoized `findRuntimes()` for the real environment. */
let cached: Runtime[] | undefined;
export function runtimes(): Runtime[] {
  cached ??= findRuntimes();
  return cached;
}

/**
 * A missing runtime is skipped only locally and only when nobody asked for it by name; under
 * CI (or with the env var set) the test runs and `requireRuntime` fails it.
 */
export function shouldSkipRuntime(runtime: Runtime, env: NodeJS.ProcessEnv = process.env): boolean {
  return runtime.command === undefined && !runtime.explicit && !isCI(env);
}

/** `it`, skipped with the reason in its title when the runtime is missing locally. */
export function runtimeIt(runtime: Runtime): ReturnType<typeof it.skipIf> {
  return it.skipIf(shouldSkipRuntime(runtime));
}

/** Title suffix that shows why a case is skipped (empty when the runtime is usable). */
export function skipNote(runtime: Runtime): string {
  return shouldSkipRuntime(runtime) ? ` [skipped: ${runtime.problem}]` : "";
}

/** The runtime's executable, or a failure that says how to get it. */
export function requireRuntime(runtime: Runtime): string {
  if (runtime.command) return runtime.command;
  const why = isCI() ? "CI=true: runtime tests are required" : `$${ENV_VARS[runtime.id as "bun"]} is set`;
  throw new Error(`${runtime.problem} (${why}; .ci/run installs the runtimes)`);
}
