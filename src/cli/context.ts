/**
 * What every command receives: the resolved world (cwd, roots, env) and the output sink.
 * Built once from the global flags, so no command reads `process.*` itself.
 */
import { statSync } from "node:fs";
import path from "node:path";
import { XcshToolsError } from "../core/errors.js";
import type { LoadedSettings } from "../core/config.js";
import { resolveRoots, type XcshRoots } from "../core/paths.js";
import type { Command } from "commander";
import type { Output } from "./output.js";

/** Global flags shared by every command (docs/cli.md). */
export interface GlobalFlags {
  json?: boolean;
  cwd?: string;
  home?: string;
  registry?: string;
  debug?: boolean;
  color?: boolean;
}

export interface CommandContext {
  cwd: string;
  roots: XcshRoots;
  env: NodeJS.ProcessEnv;
  flags: GlobalFlags;
  output: Output;
  /** Aborted when the user interrupts the command (SIGINT/SIGTERM). */
  signal: AbortSignal;
  /**
   * Our own settings, layered (flags > env > project > user > defaults); loaded once, on first use.
   * A project file applies only in a trusted project and never sets a secret key (core/config.ts).
   */
  settings(): Promise<LoadedSettings>;
  /**
   * Whether the project's code and settings may be used (cli/project-trust.ts): asked once, on
   * first use, before any project state is read.
   */
  projectTrusted(): Promise<boolean>;
}

/** Resolve the context from the global flags. `--home` is the xcsh root (docs/cli.md). */
export function createContext(
  flags: GlobalFlags,
  world: { cwd: string; env: NodeJS.ProcessEnv; home?: string; signal?: AbortSignal },
  output: Output,
): CommandContext {
  const cwd = flags.cwd ? path.resolve(world.cwd, flags.cwd) : world.cwd;
  if (flags.cwd) checkFolderFlag("--cwd", cwd, false);
  if (flags.home) checkFolderFlag("--home", path.resolve(world.cwd, flags.home), true);
  const roots = resolveRoots({
    env: world.env,
    ...(world.home ? { home: world.home } : world.env.HOME ? { home: world.env.HOME } : {}),
    ...(flags.home ? { xcshHome: path.resolve(world.cwd, flags.home) } : {}),
  });
  let settings: Promise<LoadedSettings> | undefined;
  let trusted: Promise<boolean> | undefined;
  const context: CommandContext = {
    cwd,
    roots,
    env: world.env,
    flags,
    output,
    signal: world.signal ?? new AbortController().signal,
    settings() {
      // Loaded on first use: `tools`, a host's boot-time query, never reads our settings.
      settings ??= import("../core/config.js").then(({ loadSettings }) => loadSettings({
        cwd,
        xcshHome: roots.xcshHome,
        home: roots.home,
        env: world.env,
        // Asked only when the project folder holds a settings file.
        projectTrusted: () => context.projectTrusted(),
        ...(flags.registry ? { flags: { registry: flags.registry } } : {}),
      })).then((loaded) => {
        // A project file we left out (untrusted folder, or a secret key) must not be silent.
        for (const w of loaded.warnings) if (w.code === "ECONFIG_UNTRUSTED_PROJECT" || w.code === "ECONFIG_PROJECT_SECRET") output.note(`warning: ${w.message}`);
        return loaded;
      });
      return settings;
    },
    projectTrusted() {
      trusted ??= import("./project-trust.js").then(({ decideCommandTrust }) => decideCommandTrust(context));
      return trusted;
    },
  };
  return context;
}

/**
 * A path flag must name a folder: a typo in `--cwd` would otherwise answer for an empty project,
 * and `--home /dev/null` would fail later at the first write, far from the flag. `--home` may
 * name a folder that does not exist yet (the first change creates it, as it creates ~/.xcsh) when
 * the folder it would be created in exists.
 */
function checkFolderFlag(flag: string, folder: string, mayBeCreated: boolean): void {
  const info = statSync(folder, { throwIfNoEntry: false });
  if (info?.isDirectory()) return;
  if (!info && mayBeCreated && statSync(path.dirname(folder), { throwIfNoEntry: false })?.isDirectory()) return;
  const problem = info ? "is not a folder" : mayBeCreated ? "does not exist, nor does the folder it would be created in" : "does not exist";
  throw new XcshToolsError("EUSAGE", `${flag} ${folder} ${problem}`, { hint: `Give ${flag} an existing folder${flag === "--cwd" ? " (the project)" : " (the xcsh root, default ~/.xcsh)"}.` });
}

/**
 * A command module (cli/commands/): attaches itself to the program; `run` gets the context when
 * invoked. Here, not in the registry that loads the commands, so that no command imports it.
 */
export interface CommandModule {
  register(program: Command, getContext: (command: Command) => CommandContext): void;
  /** The forms of the command program.ts runs without commander for a plain argv (`plainArgs`). */
  plain?: readonly PlainCommand[];
}

/** An option as commander declares it (`-y, --yes`, `--scope <scope>`), with commander's parser of its value. */
export interface PlainOption {
  flags: string;
  parse?: (value: string) => unknown;
}

/**
 * The shape of a command program.ts runs without commander for a plain argv (`PlainCommand`):
 * its path (`["config", "set"]`), options, and operands (`count` of them, the last one taking
 * every further operand when `variadic`, as commander's `<name...>`).
 */
export interface PlainShape {
  path: readonly string[];
  options: readonly PlainOption[];
  operands: number | { count: number; variadic: true };
}

/** A plain form of a command and its action: `flags` are the command's own options (commander's `opts()`). */
export interface PlainCommand extends PlainShape {
  run(ctx: CommandContext, operands: string[], flags: Record<string, unknown>): Promise<void>;
}
