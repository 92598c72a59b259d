/**
 * Helpers of the reliability suites (crash.test.ts, concurrency.test.ts): a temp world at a FIXED
 * path that can be saved as a template and restored (state files hold absolute paths, so a copy
 * elsewhere would be another state), the CLI spawned in it (killable), a normalised snapshot of
 * the whole state, and a checker that the state files agree with each other.
 *
 * What the snapshot leaves out or normalises, and why each is legitimate:
 *
 * - `home/.npm` — npm's own content-addressed cache: a killed fetch may leave entries there; it is
 *   a cache of the registry, not installed state, and npm verifies it on read.
 * - `<ours>/lock`, `<ours>/lock.break-*`, `<ours>/.lock.*.tmp` — the cross-process lock file, its
 *   takeover guards and link temp files. A `kill -9`ed holder leaves them; the next locker judges
 *   them stale by the dead pid (never by age) and removes them. The lock carries no state. That a
 *   stale lock never blocks is checked separately: the next mutation succeeds at once with
 *   `lockWaitMs: 0` (`assertLockFree`).
 * - `<ours>/boot-index.json`, `<ours>/boot-modules.json`, `<ours>/boot-components.json` — the boot index is a cache whose every view records signatures
 *   (inode, size, mtime) of the files it was computed from, so two correct indexes of one state
 *   differ in bytes. What matters is that it agrees with the state: `doctorProblems` requires
 *   doctor's boot index check to say "fresh" (every recorded input unchanged) after recovery.
 * - `<ours>/transpile` — the loader's transpile cache (compiled TypeScript, module shims), keyed
 *   by content and filled by whichever process imports a tool entry first: a reference run
 *   reuses its staging validation, a recovered run's boot refresh imports in a child. It holds
 *   no state; a missing or extra entry is rebuilt or ignored.
 * - Wall-clock values in JSON state files (`installedAt`, `lastUpdated`, `updatedAt`, `createdAt`,
 *   `addedAt`, `generatedAt`): the time of the run that made the change; a reference run and a
 *   crashed-then-recovered run happen at different times. Only ISO date strings under those keys
 *   are replaced, so a key of another type still counts.
 *
 * A restored template gets its boot index re-recorded (`refreshBootIndex`, as every mutation
 * does): the copy's new inodes would otherwise make the old state's index stale before any test.
 *
 * Everything else — every file's bytes and mode, folders, symlink targets, empty folders and the
 * journal folder (which must be empty after recovery) — must be exactly the old or the new state.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { cp, lstat, mkdir, readFile, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { mkdtemp, realpath } from "node:fs/promises";
import { refreshBootIndex } from "../../src/boot/index.js";
import { runDoctor } from "../../src/doctor/index.js";
import { isolatedGitEnv } from "../helpers/git-remote.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { cliArgv, hermeticEnv, runCli, type ProcessResult } from "../helpers/run-cli.js";
import { writeUserNpmrc } from "../helpers/tmp-home.js";

/** A deterministic PRNG (mulberry32): the same seed gives the same kill delays and orders. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed of this run: `XCSH_TOOLS_RELIABILITY_SEED`, else a fixed default (printed by the suites). */
export function suiteSeed(fallback: number): number {
  const raw = process.env.XCSH_TOOLS_RELIABILITY_SEED;
  const n = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(n)) throw new Error(`XCSH_TOOLS_RELIABILITY_SEED must be an integer, not ${raw}`);
  return n;
}

/** Shuffle a copy of `items` with `random`. */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A world whose paths never change, so it can be restored from a template. */
export interface FixedWorld {
  root: string;
  home: string;
  xcshHome: string;
  plugins: string;
  ours: string;
  cwd: string;
  /** Scratch outside the world (pause markers, step logs): never part of a snapshot. */
  scratch: string;
  /** Environment every command of this world gets (isolated git, test markers). */
  env: NodeJS.ProcessEnv;
  write(rel: string, content: string | object): Promise<string>;
  cli(args: string[], env?: NodeJS.ProcessEnv, timeoutMs?: number): Promise<ProcessResult>;
  spawnCli(args: string[], env?: NodeJS.ProcessEnv): ChildProcess;
  /** Copy the world as it is now to template `name`. */
  saveTemplate(name: string): Promise<void>;
  /** Replace the world with template `name`. */
  restore(name: string): Promise<void>;
  readJson(rel: string): Promise<any>;
  cleanup(): Promise<void>;
}

/** Make a world; `.npmrc` points at the test registry only. */
export async function makeFixedWorld(reg: RegistryHandle, prefix: string): Promise<FixedWorld> {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  const root = path.join(base, "w");
  const templates = path.join(base, "templates");
  const scratch = path.join(base, "scratch");
  const home = path.join(root, "home");
  const xcshHome = path.join(home, ".xcsh");
  const plugins = path.join(xcshHome, "plugins");
  const cwd = path.join(root, "project");
  await mkdir(home, { recursive: true });
  await mkdir(cwd, { recursive: true });
  await mkdir(templates, { recursive: true });
  await mkdir(scratch, { recursive: true });
  await writeUserNpmrc(home, reg.url);
  const git = isolatedGitEnv(home);
  const env: NodeJS.ProcessEnv = {
    XCSH_TEST_MARKER: path.join(scratch, "marker"),
    GIT_CONFIG_GLOBAL: git.GIT_CONFIG_GLOBAL,
    GIT_CONFIG_NOSYSTEM: git.GIT_CONFIG_NOSYSTEM,
    GIT_AUTHOR_NAME: git.GIT_AUTHOR_NAME,
    GIT_AUTHOR_EMAIL: git.GIT_AUTHOR_EMAIL,
    GIT_COMMITTER_NAME: git.GIT_COMMITTER_NAME,
    GIT_COMMITTER_EMAIL: git.GIT_COMMITTER_EMAIL,
    GIT_AUTHOR_DATE: git.GIT_AUTHOR_DATE,
    GIT_COMMITTER_DATE: git.GIT_COMMITTER_DATE,
  };
  return {
    root,
    home,
    xcshHome,
    plugins,
    ours: path.join(plugins, ".xcsh-tools"),
    cwd,
    scratch,
    env,
    async write(rel, content) {
      const target = path.isAbsolute(rel) ? rel : path.join(root, rel);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
      return target;
    },
    cli: (args, extra = {}, timeoutMs = 120_000) => runCli(args, { cwd, home, env: { ...env, ...extra }, timeoutMs }),
    spawnCli: (args, extra = {}) =>
      spawn(process.execPath, cliArgv(home, args), { cwd, env: hermeticEnv(home, { ...env, ...extra }), stdio: ["ignore", "pipe", "pipe"] }),
    async saveTemplate(name) {
      const dest = path.join(templates, name);
      await rm(dest, { recursive: true, force: true });
      await cp(root, dest, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    },
    async restore(name) {
      await rm(root, { recursive: true, force: true });
      await cp(path.join(templates, name), root, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
      // A copy has new inodes, which the boot index's fingerprints see as a change: re-record
      // them, so that the old state starts with a fresh index like the original world had.
      await refreshBootIndex({ home, xcshHome, env: hermeticEnv(home, env), cwd });
    },
    readJson: async (rel) => JSON.parse(await readFile(path.isAbsolute(rel) ? rel : path.join(plugins, rel), "utf8")),
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}

const TIME_KEYS = new Set(["installedAt", "lastUpdated", "updatedAt", "createdAt", "addedAt", "generatedAt"]);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

function normaliseTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normaliseTimes);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = TIME_KEYS.has(k) && typeof v === "string" && ISO.test(v) ? "<time>" : normaliseTimes(v);
    return out;
  }
  return value;
}

export type StateSnapshot = Record<string, string>;

/**
 * The state of the world: every path under `root` (see the header for what is left out).
 * JSON files outside node_modules are recorded as their text with wall-clock values normalised
 * (readable diffs); other files as sha256 and mode.
 */
export async function snapshotState(w: FixedWorld): Promise<StateSnapshot> {
  const out: StateSnapshot = {};
  const skip = (rel: string, name: string, parentRel: string): boolean => {
    if (rel === "home/.npm") return true;
    if (parentRel === path.relative(w.root, w.ours)) {
      if (name === "lock" || name.startsWith("lock.break-") || /^\.lock\..*\.tmp$/.test(name) || name === "boot-index.json" || name === "boot-modules.json" || name === "boot-components.json" || name === "transpile") return true;
    }
    return false;
  };
  async function walk(abs: string, rel: string): Promise<void> {
    const info = await lstat(abs);
    const mode = (info.mode & 0o7777).toString(8);
    if (info.isSymbolicLink()) {
      out[rel] = `symlink -> ${await readlink(abs)}`;
    } else if (info.isDirectory()) {
      out[rel || "."] = `dir ${mode}`;
      for (const name of (await readdir(abs)).sort()) {
        const childRel = rel ? `${rel}/${name}` : name;
        if (skip(childRel, name, rel)) continue;
        await walk(path.join(abs, name), childRel);
      }
    } else {
      const bytes = await readFile(abs);
      if (rel.endsWith(".json") && !rel.includes("node_modules/") && bytes.length < 64 * 1024) {
        let text: string;
        try {
          text = JSON.stringify(normaliseTimes(JSON.parse(bytes.toString("utf8"))), null, 1);
        } catch {
          text = `UNPARSEABLE ${bytes.toString("utf8")}`;
        }
        out[rel] = `file ${mode} ${text}`;
      } else {
        out[rel] = `file ${mode} ${createHash("sha256").update(bytes).digest("hex")}`;
      }
    }
  }
  await walk(w.root, "");
  return out;
}

/** The keys on which two snapshots differ (for messages). */
export function snapshotDiff(a: StateSnapshot, b: StateSnapshot): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]).sort();
}

/** Wait until `file` exists (the CLI paused there) or the child exits. */
export async function waitForFile(file: string, child: ChildProcess, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await readFile(file, "utf8").then(() => true, () => false)) return;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what}: the CLI exited (${child.exitCode ?? child.signalCode}) before pausing`);
    if (Date.now() > deadline) throw new Error(`${what}: never paused`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** `kill -9` a child and wait for it to be gone. */
export async function killHard(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

/** Collect a child's output (for failure messages). */
export function collectOutput(child: ChildProcess): { text(): string } {
  let text = "";
  child.stdout?.on("data", (c: Buffer) => (text += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (text += c.toString()));
  return { text: () => text };
}

async function readJsonOr(file: string): Promise<any> {
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`${file} does not parse: ${(error as Error).message}`);
  }
}

async function exists(p: string): Promise<boolean> {
  return lstat(p).then(() => true, () => false);
}

/**
 * Problems with how the state files agree with each other (empty when they do):
 * package.json ↔ npm lockfile (root and each plugin's entry) ↔ node_modules ↔ runtime lock ↔
 * our install record; marketplace registries ↔ cache folders; the journal is empty.
 */
export async function stateProblems(w: FixedWorld): Promise<string[]> {
  const problems: string[] = [];
  const pkg = await readJsonOr(path.join(w.plugins, "package.json"));
  const lock = await readJsonOr(path.join(w.plugins, "package-lock.json"));
  const runtime = await readJsonOr(path.join(w.plugins, "xcsh-plugins.lock.json"));
  const record = await readJsonOr(path.join(w.ours, "installs.json"));
  const deps: Record<string, string> = pkg?.dependencies ?? {};
  const names = Object.keys(deps).sort();
  const same = (what: string, list: string[]) => {
    if (JSON.stringify([...list].sort()) !== JSON.stringify(names)) problems.push(`${what} lists ${JSON.stringify([...list].sort())}, package.json ${JSON.stringify(names)}`);
  };
  same("the runtime lock", Object.keys(runtime?.plugins ?? {}));
  same("installs.json", Object.keys(record?.plugins ?? {}));
  if (names.length > 0 || lock) {
    const root = lock?.packages?.[""];
    if (JSON.stringify(root?.dependencies ?? {}) !== JSON.stringify(deps)) problems.push(`package-lock.json root dependencies ${JSON.stringify(root?.dependencies)} ≠ package.json ${JSON.stringify(deps)}`);
    for (const [key, entry] of Object.entries<any>(lock?.packages ?? {})) {
      if (key === "" || !key.startsWith("node_modules/")) continue;
      const dir = path.join(w.plugins, key);
      const info = await lstat(dir).catch(() => undefined);
      if (!info) {
        problems.push(`${key} is in package-lock.json but not on disk`);
        continue;
      }
      if (entry.link) {
        if (!info.isSymbolicLink()) problems.push(`${key} is a link in package-lock.json but not a symlink`);
        continue;
      }
      const installed = await readJsonOr(path.join(dir, "package.json"));
      if (installed?.version !== entry.version) problems.push(`${key} is ${installed?.version} on disk, ${entry.version} in package-lock.json`);
    }
    const top = (await readdir(path.join(w.plugins, "node_modules")).catch(() => [] as string[])).filter((n) => !n.startsWith("."));
    for (const name of top) {
      const scoped = name.startsWith("@") ? (await readdir(path.join(w.plugins, "node_modules", name))).map((s) => `${name}/${s}`) : [name];
      for (const full of scoped) if (!lock?.packages?.[`node_modules/${full}`]) problems.push(`node_modules/${full} is on disk but not in package-lock.json`);
    }
  }
  for (const name of names) {
    const dir = path.join(w.plugins, "node_modules", name);
    const installed = await readJsonOr(path.join(dir, "package.json"));
    if (!installed) {
      problems.push(`${name} is in package.json but not in node_modules`);
      continue;
    }
    if (runtime?.plugins?.[name] && runtime.plugins[name].version !== installed.version) problems.push(`${name} is ${installed.version} in node_modules, ${runtime.plugins[name].version} in the runtime lock`);
    const locked = lock?.packages?.[`node_modules/${name}`];
    if (!locked) problems.push(`${name} is not in package-lock.json`);
  }
  // Marketplaces: every registered marketplace has its cache; every installed entry its folder;
  // every plugin cache folder is referenced.
  const marketplaces = await readJsonOr(path.join(w.xcshHome, "marketplaces.json"));
  for (const entry of marketplaces?.marketplaces ?? []) {
    const name = entry?.name;
    if (typeof name === "string" && !(await exists(path.join(w.plugins, "cache", "marketplaces", name)))) problems.push(`marketplace ${name} has no cache folder`);
  }
  const referenced = new Set<string>();
  for (const file of [path.join(w.plugins, "installed_plugins.json"), path.join(w.cwd, ".xcsh", "plugins", "installed_plugins.json")]) {
    const registry = await readJsonOr(file);
    for (const [id, entries] of Object.entries<any>(registry?.plugins ?? {})) {
      for (const entry of entries ?? []) {
        if (typeof entry?.installPath !== "string") continue;
        referenced.add(path.resolve(entry.installPath));
        if (!(await exists(entry.installPath))) problems.push(`${id} points at ${entry.installPath}, which does not exist`);
      }
    }
  }
  const pluginCache = path.join(w.plugins, "cache", "plugins");
  for (const name of await readdir(pluginCache).catch(() => [] as string[])) {
    if (!referenced.has(path.join(pluginCache, name))) problems.push(`cache/plugins/${name} is referenced by no installed_plugins.json`);
  }
  const journal = await readdir(path.join(w.ours, "journal")).catch(() => [] as string[]);
  if (journal.length > 0) problems.push(`the journal is not empty: ${journal.join(", ")}`);
  return problems;
}

/** At most `n` of the functions given to the returned runner run at once. */
export function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (fn) => {
    // A finishing run hands its slot straight to the next waiter, so newcomers cannot overtake.
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    else active += 1;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active -= 1;
    }
  };
}

/**
 * True when `<ours>/lock` names a process that is still alive. A lock left by a killed holder is
 * fine (the next locker sees the dead pid and takes it over at once); a live one would block.
 */
export async function lockHolderAlive(w: FixedWorld): Promise<boolean> {
  let owner: { pid?: unknown };
  try {
    owner = JSON.parse(await readFile(path.join(w.ours, "lock"), "utf8"));
  } catch {
    return false;
  }
  if (typeof owner.pid !== "number") return false;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** One check of `doctor --json`. */
export interface DoctorCheckRow {
  id: string;
  area: string;
  status: "ok" | "warn" | "error";
  message: string;
}

/** Doctor's report on the world, from its engine in this process (the CLI's `doctor --json` document). */
async function doctorReport(w: FixedWorld): Promise<{ ok: boolean; checks: DoctorCheckRow[] }> {
  // A generous import timeout: the conflict check imports every tool, and on a loaded 2-core
  // machine the default 6 s has run out (EIMPORT_TIMEOUT says nothing about crash recovery).
  return runDoctor({ roots: { home: w.home, xcshHome: w.xcshHome }, cwd: w.cwd, env: hermeticEnv(w.home, w.env), stopDir: w.root, moduleTimeoutMs: 60_000 });
}

/**
 * What doctor finds wrong: not ok, every check with status error, the boot index check unless
 * it is ok (fresh: it agrees with the state), and any warning not in `allowed` (the warnings of
 * the reference states) other than a stale lock of a killed holder. Run in process (the engine
 * `doctor` runs) to spare a Node start per case.
 */
export async function doctorProblems(w: FixedWorld, allowed: ReadonlySet<string> = new Set()): Promise<string[]> {
  const report = await doctorReport(w);
  const problems: string[] = [];
  if (!report.ok) problems.push("doctor: not ok");
  for (const check of report.checks) {
    if (check.status === "error") problems.push(`doctor error ${check.id}: ${check.message}`);
    else if (check.area === "boot index" && check.status !== "ok") problems.push(`doctor: ${check.message}`);
    else if (check.status === "warn" && !allowed.has(check.id) && !(check.id === "lock" && /stale lock/.test(check.message))) problems.push(`doctor warning ${check.id}: ${check.message}`);
  }
  if (!report.checks.some((c) => c.area === "boot index")) problems.push("doctor has no boot index check");
  return problems;
}

/** The ids of doctor's warnings in the current state (the reference states' allowed warnings). */
export async function doctorWarnings(w: FixedWorld): Promise<string[]> {
  return (await doctorReport(w)).checks.filter((c) => c.status === "warn").map((c) => c.id);
}
