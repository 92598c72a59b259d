/**
 * Requiring one large CommonJS file (the bundle of npm's libraries, scripts/bundle-npm.mjs) with
 * V8's code cache, on Node. Node 20 compiles every function again at each start, which for the
 * 1.1 MB bundle was ~100 ms of each install's ~1.1 s. Here the file is compiled with `vm.Script`
 * and the cache V8 produced in an earlier run after that run had used the libraries, so the
 * functions it compiled lazily are in it too; V8 checks the cache against the source and its own
 * version and flags, and rejects a stale one, which is then written anew at exit. Node >= 22.1
 * has a compile cache of its own (our bin shim turns it on), but it keeps what V8 compiled when
 * the file was loaded, before any of it ran: ours still saved a warm 20-plugin install on Node 22
 * ~40 ms (0.95 -> 0.91 s, A/B). Bun keeps compiled code itself and loads the file as it is.
 *
 * Written by hand: v8-compile-cache (the library for this) hooks every `require` of the process
 * and measured no gain here; one file needs one `vm.Script`. Like Node's own compile cache, the
 * cache lives in the OS temp folder, never in the user's xcsh state (a `--dry-run` writes
 * nothing there), in a folder of this user's only: a folder that another user could write to is
 * not used, since a code cache is code. `NODE_DISABLE_COMPILE_CACHE` turns it off, as it does
 * Node's.
 */
import * as nodeBuffer from "node:buffer";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import nodeModule, { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import vm from "node:vm";

/** How the last `requireWithCodeCache` went: no cache used (`off`), none yet (`miss`), a usable one (`hit`), a stale one (`rejected`). */
export type CodeCacheState = "off" | "miss" | "hit" | "rejected";

const loaded = new Map<string, { exports: unknown; state: CodeCacheState }>();

/** Whether this runtime caches compiled code by itself (Bun), or is told not to. */
function runtimeCaches(env: NodeJS.ProcessEnv): boolean {
  return Boolean(process.versions.bun || env.NODE_DISABLE_COMPILE_CACHE);
}

/** This user's cache folder, made owner-only; undefined when it cannot be trusted or made. */
function cacheDir(): string | undefined {
  const uid = process.getuid?.();
  const dir = path.join(os.tmpdir(), `xcsh-tools-code-cache-${uid ?? "user"}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const info = statSync(dir);
    if (!info.isDirectory() || (uid !== undefined && info.uid !== uid) || (process.platform !== "win32" && (info.mode & 0o022) !== 0)) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/** `require(file)`, compiled with a code cache on Node (see above). */
export function requireWithCodeCache(file: string, env: NodeJS.ProcessEnv = process.env): { exports: unknown; state: CodeCacheState } {
  const done = loaded.get(file);
  if (done) return done;
  const dir = runtimeCaches(env) ? undefined : cacheDir();
  if (dir === undefined) {
    const result = { exports: createRequire(file)(file) as unknown, state: "off" as const };
    loaded.set(file, result);
    return result;
  }
  const bytes = readFileSync(file);
  // By content: V8's own check of a cache against its source compares lengths only.
  const key = createHash("sha256").update(`${process.version}\0${process.arch}\0`).update(bytes).digest("hex").slice(0, 32);
  // ASCII text (the npm bundle is built so) decoded as Latin-1 is the same text as a one-byte
  // string, made several times faster than by UTF-8 decoding (~1 vs ~13 ms for the 1.4 MB
  // bundle on Node 20); any other byte, and Latin-1 would misread it.
  const source = nodeBuffer.isAscii?.(bytes) ? bytes.toString("latin1") : bytes.toString("utf8");
  const cacheFile = path.join(dir, `${path.basename(file)}-${key}.v8`);
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  // The wrapper Node gives every CommonJS file.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    ...(cachedData ? { cachedData } : {}),
  });
  const state: CodeCacheState = cachedData === undefined ? "miss" : script.cachedDataRejected ? "rejected" : "hit";
  const mod = new nodeModule(file);
  mod.filename = file;
  const requireHere = createRequire(file);
  (script.runInThisContext() as (...args: unknown[]) => void).call(mod.exports, mod.exports, requireHere, mod, file, path.dirname(file));
  mod.loaded = true;
  if (state !== "hit") {
    process.once("exit", () => {
      const temp = `${cacheFile}.${process.pid}.tmp`;
      try {
        writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
        renameSync(temp, cacheFile);
      } catch {
        // A full or read-only temp folder: the next run compiles again.
      }
    });
  }
  const result = { exports: mod.exports as unknown, state };
  loaded.set(file, result);
  return result;
}
