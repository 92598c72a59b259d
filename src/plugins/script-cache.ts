/**
 * npm's libraries in the build compiled once per bundle and runtime, functions used included.
 *
 * Why: Node's compile cache (bin/xcsh-tools.js turns it on) keeps only what V8 compiled before a
 * module ran. The libraries' module bodies are lazily compiled functions, so on Node 22 every
 * install compiled arborist and pacote again, and on both Node 22 and 24 every function the
 * install called; V8's code cache taken *after* a run (`vm.Script#createCachedData`) holds those
 * too. A warm install of 20 plugins: 0.90x the whole run's CPU on Node 22 and 0.91x on Node 24
 * (docs/benchmarks.md, session 29).
 *
 * So the build (scripts/lib/bundle.mjs `npmLibrariesAsScript`) turns the libraries' chunk into a
 * classic script (one function expression taking the chunk's imports) beside a small ES module
 * that runs it through here. The cache is a file per bundle and runtime, named by a hash of the
 * script's bytes and the runtime's version, in a folder of this user's in the system temp folder
 * (where Node's compile cache and npm's live) that nobody else can write: cached code is code we
 * run, so a folder another local user made or can write is never read nor written. The file
 * carries a hash of its cached data, checked before V8 sees it; V8 refuses data of another source
 * or flags itself. It is written at exit, and only when it would hold more: none was read, V8
 * refused it, or this run used a library (arborist after an `outdated`) the cached run did not.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off with Node's; Bun has no such cache and runs the
 * script plainly.
 */
import { createHash, randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const MAGIC = Buffer.from("xcsh-v8\u0001", "latin1");
const HEADER = MAGIC.length + 1 + 32;

/**
 * This user's cache folder, or undefined when it is not one only this user can write. Its name is
 * not `xcsh-tools-*`: that prefix in the temp folder is the commands' scratch, which a failed
 * command leaves none of (the reliability suites check it) and which EDISK_FULL's hint tells the
 * user to delete; this cache is meant to stay, as Node's `node-compile-cache` beside it does.
 */
function cacheFolder(): string | undefined {
  const uid = process.getuid?.();
  const dir = path.join(os.tmpdir(), uid === undefined ? "xcsh-v8-cache" : `xcsh-v8-cache-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch {
    // Already there (checked below) or not makeable (no cache).
  }
  const info = lstatSync(dir, { throwIfNoEntry: false });
  if (!info?.isDirectory() || (uid !== undefined && info.uid !== uid) || (info.mode & 0o022) !== 0) return undefined;
  return dir;
}

/** The cached data of `file` if it is whole (its hash matches), with the mask of libraries its run used. */
function readCache(file: string): { data: Buffer; used: number } | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return undefined;
  }
  if (bytes.length <= HEADER || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const data = bytes.subarray(HEADER);
  if (!createHash("sha256").update(data).digest().equals(bytes.subarray(MAGIC.length + 1, HEADER))) return undefined;
  return { data, used: bytes[MAGIC.length]! };
}

/**
 * Run the classic script `scriptUrl` (a function expression) with `args` and return what it
 * returns, an object of functions (npm-libraries.ts's exports), compiled from this user's code
 * cache when it has one for these bytes and this runtime.
 */
export function runCachedScript(scriptUrl: URL, args: readonly unknown[]): Record<string, (...a: unknown[]) => unknown> {
  const filename = fileURLToPath(scriptUrl);
  const source = readFileSync(filename, "utf8");
  const cacheable = process.versions.bun === undefined && process.env.NODE_DISABLE_COMPILE_CACHE === undefined && typeof vm.Script.prototype.createCachedData === "function";
  const dir = cacheable ? cacheFolder() : undefined;
  const runtime = `${process.version}-${process.arch}-${process.versions.v8}`;
  const prefix = `${path.basename(filename).replace(/[^\w.-]/g, "_")}-${runtime.replace(/[^\w.-]/g, "_")}-`;
  const cacheFile = dir && path.join(dir, `${prefix}${createHash("sha256").update(source).digest("hex").slice(0, 32)}.v8`);
  const cached = cacheFile ? readCache(cacheFile) : undefined;
  const script = new vm.Script(source, { filename, ...(cached ? { cachedData: cached.data } : {}) });
  const cachedUsed = cached && !script.cachedDataRejected ? cached.used : -1;
  const exports = (script.runInThisContext() as (...a: readonly unknown[]) => Record<string, (...a: unknown[]) => unknown>)(...args);
  if (!cacheFile) return exports;
  // Which exports this run called, one bit each, kept in the file as one byte (the build allows at most 8 exports).
  let used = 0;
  const wrapped = Object.fromEntries(
    Object.entries(exports).map(([name, fn], i) => [
      name,
      (...a: unknown[]) => {
        used |= 1 << i;
        return fn(...a);
      },
    ]),
  );
  process.once("exit", () => {
    if (cachedUsed !== -1 && (used & ~cachedUsed) === 0) return;
    try {
      const data = script.createCachedData();
      const temp = path.join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
      writeFileSync(temp, Buffer.concat([MAGIC, Buffer.of(used | Math.max(cachedUsed, 0)), createHash("sha256").update(data).digest(), data]), { mode: 0o600 });
      renameSync(temp, cacheFile);
      // The same script's cache for other bytes (an edited build) is stale.
      for (const name of readdirSync(dir)) if (name.startsWith(prefix) && path.join(dir, name) !== cacheFile) rmSync(path.join(dir, name), { force: true });
    } catch {
      // A cache is never worth a failure.
    }
  });
  return wrapped;
}
