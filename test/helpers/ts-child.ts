/**
 * Run a TypeScript file of this repo in a child Node process (through jiti's ESM loader, since
 * Node 20 cannot strip types), for tests that need real processes: lock contention, kill -9
 * crash points, concurrent writers. The child's stdout lines are JSON messages.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { REPO_ROOT } from "./runtimes.js";

const JITI_REGISTER = pathToFileURL(path.join(REPO_ROOT, "node_modules", "jiti", "lib", "jiti-register.mjs")).href;

export interface TsChild {
  child: ChildProcess;
  /** Every JSON line the child printed so far. */
  messages: any[];
  /** Resolves with the first message matching `predicate` (rejects if the child exits first). */
  waitFor(predicate: (message: any) => boolean): Promise<any>;
  /** Resolves when the child exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

/** Spawn `node <script> ...args` with TypeScript support; `env` is added to a minimal env. */
export function spawnTs(script: string, args: string[], env: NodeJS.ProcessEnv = {}): TsChild {
  const child = spawn(process.execPath, ["--import", JITI_REGISTER, path.resolve(REPO_ROOT, script), ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: "/nonexistent-home-for-tests", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const messages: any[] = [];
  const waiters: Array<{ predicate: (m: any) => boolean; resolve: (m: any) => void; reject: (e: Error) => void }> = [];
  let buffer = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (!line.trim()) continue;
      let message: any;
      try {
        message = JSON.parse(line);
      } catch {
        message = { raw: line };
      }
      messages.push(message);
      for (const w of [...waiters]) {
        if (w.predicate(message)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(message);
        }
      }
    }
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => {
    child.on("exit", (code, signal) => {
      for (const w of waiters.splice(0)) w.reject(new Error(`child exited (${code ?? signal}) before the expected message\n${stderr}`));
      resolve({ code, signal, stderr });
    });
  });
  return {
    child,
    messages,
    exited,
    waitFor(predicate) {
      const found = messages.find(predicate);
      if (found) return Promise.resolve(found);
      if (child.exitCode !== null || child.signalCode !== null) {
        return Promise.reject(new Error(`child already exited\n${stderr}`));
      }
      return new Promise((resolve, reject) => waiters.push({ predicate, resolve, reject }));
    },
  };
}

/**
 * Spawn and wait for the exit and for the end of its stdout; returns the messages too. Node may
 * emit "exit" before the last lines of stdout are read (a child that writes a message and kills
 * itself with SIGKILL at once): the messages are whole only once stdout has closed.
 */
export async function runTs(script: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const handle = spawnTs(script, args, env);
  const stdoutClosed = new Promise<void>((resolve) => handle.child.stdout!.once("close", () => resolve()));
  const result = await handle.exited;
  await stdoutClosed;
  return { ...result, messages: handle.messages };
}
