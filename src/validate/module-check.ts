/**
 * Checking tool modules out of process. All modules of a run go to ONE child (spawning a Node per
 * module would make `validate` too slow for a plugin's CI on every commit); the parent watches it:
 *
 * - the child reports `start i` before each module and `result i` after it;
 * - a per-module timer starts at `start`; when it fires (a synchronous infinite loop, which no
 *   in-process timeout can interrupt) the child is killed, module i is `EMODULE_TIMEOUT`, and the
 *   modules after it are checked in a fresh child;
 * - when the child exits before `done` (a tool called `process.exit`, or crashed the runtime),
 *   module i is `EMODULE_EXIT` and the rest go to a fresh child;
 * - an overall deadline bounds the whole run (`EVALIDATE_TIMEOUT` for what was never checked).
 *
 * Hanging promises (a top-level await or a factory that never settles) are caught inside the
 * child by the loader's own timeouts and come back as `EIMPORT_TIMEOUT` / `EFACTORY_TIMEOUT`.
 */
import { fork, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { XcshToolsError } from "../core/errors.js";
import { importRootsOf, type CheckRequest, type ChildMessage, type ImportRoots, type ModuleFailure, type PrepareRequest, type ToolDescriptor } from "./protocol.js";

export interface ModuleOutcome {
  file: string;
  tools: ToolDescriptor[];
  failure?: ModuleFailure;
  ms?: number;
}

export interface CheckModulesOptions {
  cwd: string;
  /** Budget of one module (import + factory), enforced by killing the child. Default 15000. */
  moduleTimeoutMs?: number;
  home?: string;
  xcshHome?: string;
  cacheDir?: string;
  /** `api.pi` for the factories: this module's exports (host/host-exports.ts; default the host package where it resolves). */
  piModule?: string;
  /** The folders the modules' bare imports may resolve in (protocol.ts `CheckRequest.confineTo`). */
  confineTo?: readonly string[];
  /** Modules whose plugin declares `staticTools`: record their definitions and prove them static. */
  staticModules?: readonly string[];
}

export const DEFAULT_MODULE_TIMEOUT_MS = 15_000;
/** Heap cap of the checker process, in MB. */
export const CHILD_MAX_OLD_SPACE_MB = 512;
/**
 * The same cap as resident memory, where the parent watches it (`memoryCap`): the heap's cap and
 * room for what a process holds beside its heap (Node itself, the young generation, native and
 * external memory; ~60 MB for a checker at rest), so that a module the flag let pass is not
 * stopped for memory the flag never counted.
 */
export const CHILD_MAX_RSS_MB = CHILD_MAX_OLD_SPACE_MB + 256;
/** How often the parent reads a watched checker's resident memory. */
const MEMORY_POLL_MS = 20;

/**
 * How the checker's memory is capped, so that a tool that allocates without end fails its check
 * quickly (`EMODULE_EXIT`) instead of eating the machine's memory:
 * - "flag": V8's `--max-old-space-size` (the heap; the checker dies when it is full);
 * - "watch": the parent reads the checker's resident memory from the kernel (Linux `/proc`) while a
 *   batch runs and stops it above `CHILD_MAX_RSS_MB` (the heap, and memory off the heap as well).
 *   Node before 24 compiles its built-in modules without their embedded code cache as soon as any
 *   V8 flag is not the default, which made every checker start cost ~15-20 ms more CPU (the
 *   restore's bench, docs/benchmarks.md); a process's memory read from outside needs no flag;
 * - "none": Bun, which has no such flag (and no `/proc` reading is needed to keep its behaviour).
 * Node 24 keeps the flag where the watch is not possible or not worth it (the flag costs nothing there).
 */
export function memoryCap(): "flag" | "watch" | "none" {
  if (typeof process.versions.bun === "string") return "none";
  return Number(process.versions.node.split(".")[0]) < 24 && procStatusReadable() ? "watch" : "flag";
}

let procReadable: boolean | undefined;
/** Whether this system shows a process's memory in `/proc/<pid>/status` (tried on our own). */
function procStatusReadable(): boolean {
  return (procReadable ??= residentMb(process.pid) !== undefined);
}

/** A process's resident memory in MB from `/proc/<pid>/status` (`VmRSS`), or undefined. */
function residentMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const kb = /^VmRSS:\s*(\d+)\s*kB/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** Budget of a whole run. */
export const DEFAULT_TOTAL_TIMEOUT_MS = 120_000;

/**
 * Where the built child script is: `<dist>/validate/child.js` from any module one folder deep in
 * `dist/`; from the sources, in `dist/`.
 */
export function resolveChildScript(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const beside = path.resolve(here, "..", "validate", "child.js");
  if (existsSync(beside)) return beside;
  const built = path.resolve(here, "..", "..", "dist", "validate", "child.js");
  if (existsSync(built)) return built;
  throw new XcshToolsError("ECHILD_MISSING", `The module checker ${built} is missing`, {
    hint: "Build the package first: npm run build",
  });
}

/*
 * A checker started ahead. The child spends most of its start loading Node, the loader and the
 * TypeBox it hands to tools; an install
 * that starts one before resolving its specs has it ready by the time there is something to
 * check. It is unreferenced until used, so an install that fails or has nothing to check never
 * waits for it, and it is killed when this process exits.
 */
interface WarmChecker {
  /** The script and the cwd it runs with. */
  key: string;
  /** The roots it prepared its imports for; `undefined` while it has prepared none (any will do). */
  roots: string | undefined;
  child: ChildProcess;
  ready: boolean;
  stderrTail: string;
  /** Remove the warm-up's own listeners (never Node's internal ones) before a batch takes over. */
  detach(): void;
}
let warm: WarmChecker | undefined;

/** The checker runs on the runtime that runs us (Node or Bun). */
function forkChecker(script: string, cwd: string, ahead?: Omit<PrepareRequest, "type">): ChildProcess {
  return fork(script, ahead ? [JSON.stringify(ahead)] : [], {
    execPath: process.execPath,
    // Node's own flags of the parent (e.g. vitest's loaders) must not leak into the child.
    // The memory cap: a V8 flag, or the parent's watch of a batch (`memoryCap`, `watchMemory`).
    execArgv: memoryCap() === "flag" ? [`--max-old-space-size=${CHILD_MAX_OLD_SPACE_MB}`] : [],
    stdio: ["ignore", "ignore", "pipe", "ipc"],
    serialization: "json",
    cwd,
  });
}

/** What a warm checker must share with a check: the script and the cwd (the runtime is ours). */
const checkerKey = (script: string, cwd: string) => [script, cwd].join("\0");
/**
 * The roots a checker prepared its imports for must be the check's too: its resolve hooks keep
 * their shim folder for life, so a check with other roots (the boot index refresh after a
 * commit) gets a fresh child. A checker that prepared none serves any roots.
 */
const rootsKey = (roots: ImportRoots): string | undefined =>
  Object.keys(roots).length === 0 ? undefined : [roots.home ?? "", roots.xcshHome ?? "", roots.cacheDir ?? ""].join("\0");

const alive = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/**
 * Start a checker for a later `checkModules` with the same `cwd` (and runtime). Best effort.
 * Given the roots that call will pass (`home`, `xcshHome`, `cacheDir`), the checker also sets up
 * its imports for them while it waits (module map, Node's resolve hooks). Called
 * without roots first and with them later, the same checker gets them then (a `prepare` message).
 */
export function warmUpChecker(options: Pick<CheckModulesOptions, "cwd" | "home" | "xcshHome" | "cacheDir">): void {
  const script = resolveChildScript();
  const roots = importRootsOf(options);
  const key = checkerKey(script, options.cwd);
  const wanted = rootsKey(roots);
  if (warm && warm.key === key && alive(warm.child) && warm.child.connected) {
    if (warm.roots === wanted || wanted === undefined) return;
    if (warm.roots === undefined) {
      const prepare: PrepareRequest = { type: "prepare", roots };
      try {
        warm.child.send(prepare);
        warm.roots = wanted;
        return;
      } catch {
        // The channel closed under us: start afresh below.
      }
    }
  }
  discardWarmChecker();
  let child: ChildProcess;
  try {
    child = forkChecker(script, options.cwd, wanted === undefined ? undefined : { roots });
  } catch {
    return;
  }
  const onMessage = (message: ChildMessage) => {
    if (message.type === "ready") entry.ready = true;
  };
  const onStderr = (chunk: Buffer) => {
    entry.stderrTail = (entry.stderrTail + chunk.toString("utf8")).slice(-2000);
  };
  const onGone = () => {
    if (warm === entry) warm = undefined;
  };
  const entry: WarmChecker = {
    key,
    roots: wanted,
    child,
    ready: false,
    stderrTail: "",
    detach() {
      child.off("message", onMessage);
      child.stderr?.off("data", onStderr);
      child.off("error", onGone);
      child.off("exit", onGone);
    },
  };
  child.on("message", onMessage);
  child.stderr?.on("data", onStderr);
  child.on("error", onGone);
  child.on("exit", onGone);
  setReferenced(child, false);
  warm = entry;
}

function discardWarmChecker(): void {
  if (!warm) return;
  const { child } = warm;
  warm.detach();
  warm = undefined;
  if (alive(child)) child.kill("SIGKILL");
}
process.once("exit", discardWarmChecker);

/** The warm checker that can serve a check (at most one batch uses it), taken. */
function takeWarmChecker(key: string, roots: ImportRoots): WarmChecker | undefined {
  const entry = warm;
  if (!entry || entry.key !== key || !alive(entry.child) || !entry.child.connected) return undefined;
  if (entry.roots !== undefined && entry.roots !== rootsKey(roots)) return undefined;
  warm = undefined;
  entry.detach();
  setReferenced(entry.child, true);
  return entry;
}

/** A child, its IPC channel and its stderr pipe keep this process alive only while in use. */
function setReferenced(child: ChildProcess, on: boolean): void {
  type Refable = { ref?(): void; unref?(): void } | null | undefined;
  const handles: Refable[] = [(child as { channel?: Refable }).channel, child.stderr as Refable];
  if (on) child.ref();
  else child.unref();
  for (const handle of handles) {
    if (on) handle?.ref?.();
    else handle?.unref?.();
  }
}

/** Run `modules` through child processes; one outcome per module, in input order. */
export async function checkModules(modules: readonly string[], options: CheckModulesOptions): Promise<ModuleOutcome[]> {
  const outcomes: (ModuleOutcome | undefined)[] = modules.map(() => undefined);
  if (modules.length === 0) return [];
  const script = resolveChildScript();
  const moduleTimeout = options.moduleTimeoutMs ?? DEFAULT_MODULE_TIMEOUT_MS;
  const deadline = Date.now() + DEFAULT_TOTAL_TIMEOUT_MS;
  // In-child timeouts are a little shorter than the kill timer so a hanging promise gets its
  // precise code and only a blocked event loop needs the kill.
  const importTimeoutMs = Math.max(100, Math.floor(moduleTimeout * 0.6));
  const factoryTimeoutMs = Math.max(100, Math.floor(moduleTimeout * 0.3));

  let next = 0;
  while (next < modules.length) {
    if (Date.now() >= deadline) break;
    const batch = modules.slice(next);
    const offset = next;
    const stop = await runChild(script, {
      type: "check",
      modules: batch,
      cwd: options.cwd,
      importTimeoutMs,
      factoryTimeoutMs,
      ...importRootsOf(options),
      ...(options.piModule !== undefined ? { piModule: options.piModule } : {}),
      ...(options.confineTo ? { confineTo: [...options.confineTo] } : {}),
      ...(options.staticModules?.length ? { staticModules: [...options.staticModules] } : {}),
    }, {
      moduleTimeout,
      deadline,
      onResult: (i, outcome) => {
        outcomes[offset + i] = { file: modules[offset + i]!, ...outcome };
      },
    });
    if (stop.kind === "done") break;
    if (stop.kind === "failed-at") {
      outcomes[offset + stop.index] = { file: modules[offset + stop.index]!, tools: [], failure: stop.failure };
      next = offset + stop.index + 1;
      continue;
    }
    // Died between modules: restart after the last checked one; before any: a restart won't help.
    const firstUnchecked = outcomes.findIndex((o, i) => i >= offset && o === undefined);
    if (firstUnchecked > offset) {
      next = firstUnchecked;
      continue;
    }
    for (let i = 0; i < batch.length; i++) {
      outcomes[offset + i] ??= { file: modules[offset + i]!, tools: [], failure: stop.failure };
    }
    break;
  }
  return outcomes.map(
    (outcome, i) =>
      outcome ?? {
        file: modules[i]!,
        tools: [],
        failure: { code: "EVALIDATE_TIMEOUT", message: "not checked: the whole validation ran out of time" },
      },
  );
}

type Stop = { kind: "done" } | { kind: "failed-at"; index: number; failure: ModuleFailure } | { kind: "broken"; failure: ModuleFailure };

/** How `runChild` drives one batch's child. */
interface ChildControl {
  moduleTimeout: number;
  deadline: number;
  onResult(index: number, outcome: { tools: ToolDescriptor[]; failure?: ModuleFailure; ms: number }): void;
}

/** One batch's child as `runChild` watches it. */
interface ChildWatch {
  child: ChildProcess;
  /** The index of the module being checked, or -1 between modules. */
  current: number;
  settled: boolean;
  /** The module timeout's timer. */
  timer?: NodeJS.Timeout;
  /** The memory watch's timer (`memoryCap` "watch"). */
  memory?: NodeJS.Timeout;
  stderrTail: string;
  /** Settle the batch once: stop the timers and the child. */
  finish(stop: Stop): void;
}

function runChild(script: string, request: CheckRequest, control: ChildControl): Promise<Stop> {
  return new Promise<Stop>((resolve) => {
    const warmed = takeWarmChecker(checkerKey(script, request.cwd), importRootsOf(request));
    let child: ChildProcess;
    try {
      child = warmed ? warmed.child : forkChecker(script, request.cwd);
    } catch (error) {
      resolve({ kind: "broken", failure: { code: "ECHILD", message: `cannot start the module checker: ${(error as Error).message}` } });
      return;
    }
    const watch: ChildWatch = {
      child,
      current: -1,
      settled: false,
      stderrTail: warmed?.stderrTail ?? "",
      finish(stop) {
        if (watch.settled) return;
        watch.settled = true;
        if (watch.timer) clearTimeout(watch.timer);
        if (watch.memory) clearInterval(watch.memory);
        clearTimeout(overall);
        child.removeAllListeners();
        if (alive(child)) child.kill("SIGKILL");
        resolve(stop);
      },
    };
    child.stderr?.on("data", (chunk: Buffer) => {
      watch.stderrTail = (watch.stderrTail + chunk.toString("utf8")).slice(-2000);
    });
    const overall = setTimeout(() => {
      if (watch.current >= 0) watch.finish({ kind: "failed-at", index: watch.current, failure: { code: "EVALIDATE_TIMEOUT", message: "the whole validation ran out of time while this module was being checked" } });
      else watch.finish({ kind: "broken", failure: { code: "EVALIDATE_TIMEOUT", message: "the module checker did not start in time" } });
    }, Math.max(0, control.deadline - Date.now()));
    child.on("message", (raw: unknown) => onCheckerMessage(watch, raw as ChildMessage, request, control));
    child.on("error", (error) => {
      watch.finish({ kind: "broken", failure: { code: "ECHILD", message: `the module checker failed: ${error.message}` } });
    });
    // A warm child may have said `ready` before this batch listened.
    if (warmed?.ready) child.send(request);
    child.on("exit", (code, signal) => onCheckerExit(watch, code, signal));
    if (memoryCap() === "watch") watchMemory(watch);
  });
}

/**
 * Stop the batch's checker when its resident memory passes `CHILD_MAX_RSS_MB` (the cap without a
 * V8 flag, `memoryCap`): the module being checked fails with `EMODULE_EXIT`, as it does when the
 * flag's heap cap ends the process, and the modules after it go to a fresh child.
 */
function watchMemory(watch: ChildWatch): void {
  watch.memory = setInterval(() => {
    // Only while the process runs: after its exit the pid may name another process.
    if (watch.settled || !alive(watch.child)) return;
    const mb = residentMb(watch.child.pid);
    if (mb === undefined || mb <= CHILD_MAX_RSS_MB) return;
    const message = `the process used more than ${CHILD_MAX_RSS_MB} MB of memory (${Math.round(mb)} MB)`;
    if (watch.current >= 0) watch.finish({ kind: "failed-at", index: watch.current, failure: { code: "EMODULE_EXIT", message: `${message} while this module was imported or its factory ran; the checker was stopped` } });
    else watch.finish({ kind: "broken", failure: { code: "ECHILD", message: `the module checker ${message} between modules; it was stopped` } });
  }, MEMORY_POLL_MS);
  watch.memory.unref();
}

/** The child's protocol: `ready` → the request; `start` → the module timeout; `result`; `done`. */
function onCheckerMessage(watch: ChildWatch, message: ChildMessage, request: CheckRequest, control: ChildControl): void {
  if (message.type === "ready") watch.child.send(request);
  else if (message.type === "start") {
    watch.current = message.index;
    if (watch.timer) clearTimeout(watch.timer);
    watch.timer = setTimeout(() => {
      watch.finish({
        kind: "failed-at",
        index: message.index,
        failure: { code: "EMODULE_TIMEOUT", message: `importing the module and calling its factory did not finish within ${control.moduleTimeout} ms (the event loop was blocked, e.g. an infinite loop); the checker was stopped` },
      });
    }, control.moduleTimeout);
  } else if (message.type === "result") {
    if (watch.timer) clearTimeout(watch.timer);
    control.onResult(message.index, { tools: message.tools, ...(message.failure ? { failure: message.failure } : {}), ms: message.ms });
    watch.current = -1;
  } else if (message.type === "done") watch.finish({ kind: "done" });
}

/** The child exited: blame the module being checked, or, between modules, the batch. */
function onCheckerExit(watch: ChildWatch, code: number | null, signal: NodeJS.Signals | null): void {
  const judge = () => {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const tail = watch.stderrTail.trim() ? `; its last output: ${watch.stderrTail.trim().split("\n").slice(-3).join(" | ")}` : "";
    if (watch.current >= 0) {
      watch.finish({ kind: "failed-at", index: watch.current, failure: { code: "EMODULE_EXIT", message: `the process ${how} while this module was imported or its factory ran (a tool must never call process.exit)${tail}` } });
    } else if (!watch.settled) {
      // Exited between modules: the previous module left something behind (a timer calling exit).
      watch.finish({ kind: "broken", failure: { code: "ECHILD", message: `the module checker ${how} between modules${tail}` } });
    }
  };
  // 'exit' can come before the last messages the child sent (its result, `done`) are read from
  // the IPC channel; they are all delivered by 'disconnect'. Judge only then (or after a
  // moment, should the channel outlive the process), else a child that finished and exited
  // politely reads as a module that exited the process.
  if (!watch.child.connected) return judge();
  const late = setTimeout(judge, 1000);
  late.unref();
  watch.child.once("disconnect", () => {
    clearTimeout(late);
    judge();
  });
}
