/**
 * Spawn the built CLI (`bin/xcsh-tools.js`) the way a user would, in a temporary world:
 * HOME, XCSH_HOME, npm's user config and caches all point inside the test's temp folder, so
 * nothing reaches the real HOME, the real `~/.npmrc` or the npm cache. The environment is the
 * test process's minus everything npm/xcsh/color related, plus those overrides, plus `env`.
 *
 *   const world = await makeTmpWorld();
 *   const r = await runCli(["tools", "--json"], { cwd: world.cwd, home: world.home });
 *   expect(r.code).toBe(0); expect(r.json()).toEqual(...);
 *
 * `runtime` runs it under another runtime (an executable path or a `Runtime` from runtimes.ts).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT, type Runtime } from "./runtimes.js";

/** Absolute path of the CLI shim. */
export const CLI_BIN = path.join(REPO_ROOT, "bin", "xcsh-tools.js");

export interface ProcessResult {
  /** Exit code, or null when killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the process was killed for running past `timeoutMs`. */
  timedOut: boolean;
  /** stdout parsed as JSON; throws with both streams in the message when it is not. */
  json<T = any>(): T;
}

export interface RunProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Written to stdin, then stdin is closed (stdin is always closed: no prompts). */
  input?: string;
  /** Default 30 s; the process is killed (SIGKILL) after it. */
  timeoutMs?: number;
}

/** Spawn `command args` without a shell and collect its output. Never rejects for an exit code. */
export function runProcess(command: string, args: string[], options: RunProcessOptions): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs ?? 30_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`could not spawn ${command}: ${error.message}`, { cause: error }));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const describe = () => `${command} ${args.join(" ")}\n--- exit ${code ?? signal}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
      resolve({
        code,
        signal,
        stdout,
        stderr,
        timedOut,
        json() {
          try {
            return JSON.parse(stdout);
          } catch (error) {
            throw new Error(`stdout is not JSON (${(error as Error).message}):\n${describe()}`);
          }
        },
      });
    });
    child.stdin.on("error", () => {
      // the child may exit before reading stdin; that is not our failure
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Variables of the parent that must not leak into a hermetic child. */
function isLeakyVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    upper.startsWith("NPM_") ||
    upper.startsWith("XCSH_") ||
    upper === "FORCE_COLOR" ||
    upper === "NODE_OPTIONS" ||
    upper === "USERPROFILE" ||
    upper.startsWith("XDG_") ||
    // The host's folder variables (core/paths.ts resolveRoots): a test sets them itself.
    upper === "PI_CONFIG_DIR" ||
    upper === "PI_CODING_AGENT_DIR" ||
    upper.startsWith("VITEST") ||
    upper === "NODE_ENV"
  );
}

/**
 * The environment of a hermetic child whose user home is `home`: HOME, XCSH_HOME (default
 * `<home>/.xcsh`), npm's user and global config, cache and XDG folders inside `home`, NO_COLOR=1.
 * `extra` is applied last; an `undefined` value removes the variable.
 */
export function hermeticEnv(home: string, extra: NodeJS.ProcessEnv = {}, xcshHome = path.join(home, ".xcsh")): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!isLeakyVariable(name) && value !== undefined) env[name] = value;
  Object.assign(env, {
    HOME: home,
    USERPROFILE: home,
    XCSH_HOME: xcshHome,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    npm_config_userconfig: path.join(home, ".npmrc"),
    npm_config_globalconfig: path.join(home, ".npmrc-global"),
    npm_config_cache: path.join(home, ".npm"),
    npm_config_update_notifier: "false",
    npm_config_fund: "false",
    npm_config_audit: "false",
    NO_COLOR: "1",
  });
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface RunCliOptions {
  /** Working directory of the CLI (the project). */
  cwd: string;
  /** The user's home for this run. Omitted: a fresh temp home, removed after the run. */
  home?: string;
  /** `XCSH_HOME`; default `<home>/.xcsh`. */
  xcshHome?: string;
  /** Extra environment, applied last; `undefined` removes a variable. */
  env?: NodeJS.ProcessEnv;
  /** Executable to run the shim with (default: the Node running the tests). */
  runtime?: string | Runtime;
  input?: string;
  timeoutMs?: number;
  /**
   * The organization policy file this run reads instead of the platform's (core/policy.ts), set
   * by the test-only preload managed-policy-preload.mjs (Node only). Without it, a file that does
   * not exist (no policy), so that a machine's own /etc/xcsh/managed-settings.json never changes a
   * test's result; `false`: the machine's own file (only a test of that place itself wants it).
   */
  managedPolicy?: string | false;
}

/** `node --import` of the test-only preload that points the CLI's policy at `file`. */
export function managedPolicyArgs(file: string): string[] {
  const preload = pathToFileURL(path.join(REPO_ROOT, "test", "helpers", "managed-policy-preload.mjs"));
  preload.searchParams.set("file", file);
  return ["--import", preload.href];
}

/**
 * The policy file of a run that sets none: inside the run's temp home, never created, so the CLI
 * reads "no policy" (one failed read, as on a machine without the file). The `--import` of the
 * preload costs nothing measurable next to the CLI's own start (paired runs, loaded machine).
 */
export function noManagedPolicy(home: string): string {
  return path.join(home, ".no-managed-policy", "managed-settings.json");
}

/** Whether `--import` (a Node flag) can be given to the runtime: Node itself, not Bun. */
function isNodeRuntime(runtime: RunCliOptions["runtime"]): boolean {
  if (runtime === undefined) return true;
  if (typeof runtime === "string") return /^node(?:\d+)?(?:\.exe)?$/i.test(path.basename(runtime));
  return runtime.id !== "bun";
}

/**
 * The arguments after the runtime of every CLI process a test starts: the policy preload (under
 * Node: `managedPolicy`, default the never-created file of `home`, so a machine's own policy
 * never changes a result), the shim (`bin`, default the work tree's), then `args`. `runCli` and
 * each direct spawn (a process a test signals, reads while it runs, or wraps in `time`/`script`)
 * go through it; test/unit/cli-spawns.test.ts checks that none starts the CLI another way.
 */
export function cliArgv(home: string, args: readonly string[], options: { managedPolicy?: string | false; runtime?: RunCliOptions["runtime"]; bin?: string } = {}): string[] {
  const policy = options.managedPolicy ?? (isNodeRuntime(options.runtime) ? noManagedPolicy(home) : false);
  return [...(policy !== false ? managedPolicyArgs(policy) : []), options.bin ?? CLI_BIN, ...args];
}

/** Run `xcsh-tools <args>` in a hermetic environment. */
export async function runCli(args: string[], options: RunCliOptions): Promise<ProcessResult> {
  const ownHome = options.home ? undefined : await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-cli-home-"));
  const home = options.home ?? (ownHome as string);
  const runtime = options.runtime;
  const command = runtime === undefined ? process.execPath : typeof runtime === "string" ? runtime : runtime.command;
  if (!command) throw new Error(`runtime ${(runtime as Runtime).id} is not available: ${(runtime as Runtime).problem}`);
  try {
    return await runProcess(command, cliArgv(home, args, { ...(options.managedPolicy !== undefined ? { managedPolicy: options.managedPolicy } : {}), ...(runtime !== undefined ? { runtime } : {}) }), {
      cwd: options.cwd,
      env: hermeticEnv(home, options.env, options.xcshHome),
      ...(options.input !== undefined ? { input: options.input } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    });
  } finally {
    if (ownHome) await rm(ownHome, { recursive: true, force: true });
  }
}
