/**
 * A memo of the module format Node detects, for the Node versions whose compile cache keeps the
 * stripped TypeScript itself (23.7 and later; before that the strip cache answers, strip-cache.ts).
 *
 * A tool in a folder whose package.json sets no `type` (a tools folder has none) has no declared
 * format, so Node's loader finds it out on every import: it strips a `.ts` file, compiles the text
 * as CommonJS and, on the ESM syntax error, compiles it again as a module. That detection was
 * about a quarter of the import CPU of 200 seed-style tools on Node 24, even with every compile
 * answered by the compile cache (docs/benchmarks.md, session 29). Its answer depends only on the
 * source's bytes and on the runtime (Node's version and options); the package scope is checked by
 * Node itself before it detects, and the hook steps in only where Node says it would detect (no
 * format from resolve).
 *
 * So a synchronous load hook (node-hooks.ts registers it with its resolve hook) records what Node
 * detected — `module` or `module-typescript` only — as an empty file named by a CRC-32 and the
 * length of the bytes Node loaded and by the format, in a folder per runtime, listed once per
 * process (one `readdir`, not a file read per tool); the next import of the same bytes under the
 * same runtime gets that format and those bytes without a second detection. CRC-32 is what Node's compile
 * cache itself checks a source against before it reuses the compiled code and the stripped text,
 * so this memo trusts the bytes exactly as far as the compiled code it leads to; and zlib's is
 * loaded in ~1 ms where node:crypto costs ~4. Anything else goes to Node as before: CommonJS
 * answers are never recorded (Node detects them every time), and an edited file, another Node,
 * other options or a package.json that now sets a `type` miss and are detected anew. A record is
 * its name, so it is whole as soon as it exists; edits leave old records behind, so a folder past
 * `MAX_RECORDS` is emptied and filled again.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cacheableModule, type LoadResult, type SyncLoad } from "./strip-cache.js";

/** The formats recorded: only the ones that are ESM, whose source Node compiles as given. */
const RECORDED = new Set(["module", "module-typescript"]);

/**
 * Node options that cannot change a detected format (memory, diagnostics, warnings): left out of
 * the runtime's name, so the validation child (`--max-old-space-size`) records for the host's
 * boot. Every other option names a runtime of its own.
 */
const UNRELATED_OPTION = /^--(?:max-old-space-size|max-semi-space-size|stack-size|title|no-warnings|enable-source-maps|cpu-prof|heap-prof|inspect)(?:[-=]|$)/;

/** Records kept before the folder is emptied: far above a tools folder's modules, and listed in ~2 ms. */
const MAX_RECORDS = 4096;

type Crc32 = (data: string | ArrayBufferView) => number;

/**
 * The load hook that remembers detected formats below `dir`, or `undefined` where it buys nothing
 * or cannot be exact: a Node whose compile cache keeps no stripped TypeScript (the strip cache's
 * hook answers there, detection included), or one without `zlib.crc32`.
 */
export function formatMemoHook(dir: string): SyncLoad | undefined {
  const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
  if (major < 23 || (major === 23 && minor < 7)) return undefined;
  const crc32 = (process.getBuiltinModule("node:zlib") as { crc32?: Crc32 }).crc32;
  if (typeof crc32 !== "function") return undefined;
  // Everything the detection depends on besides the bytes: the version and the options Node runs with.
  const options = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].filter((option) => option !== "" && !UNRELATED_OPTION.test(option));
  const runtime = `${process.version}\0${options.join("\0")}`;
  const folder = path.join(dir, `${process.version}-${crc32(runtime).toString(16)}`);
  const recordOf = (source: ArrayBufferView) => `${crc32(source).toString(16)}-${source.byteLength}`;
  let known: Map<string, string> | undefined;
  let made = false;
  return (url, context, nextLoad) => {
    if (!detected(url, context)) return nextLoad(url, context);
    known ??= listRecords(folder);
    try {
      const source = readFileSync(fileURLToPath(url));
      const format = known.get(recordOf(source));
      if (format !== undefined) return { format, source, shortCircuit: true };
    } catch {
      // Unreadable: Node loads it and says why.
    }
    const loaded = nextLoad(url, context);
    if (typeof loaded.format !== "string" || !RECORDED.has(loaded.format) || loaded.source == null) return loaded;
    try {
      const record = recordOf(bytesOf(loaded.source));
      if (!made) mkdirSync(folder, { recursive: true });
      made = true;
      writeFileSync(path.join(folder, `${record}.${loaded.format}`), "");
      known.set(record, loaded.format);
    } catch {
      // A read-only root: the next process detects again.
    }
    return loaded;
  };
}

/** The records in `folder` (record → format); none when it cannot be read, none (and an empty folder) past `MAX_RECORDS`. */
function listRecords(folder: string): Map<string, string> {
  const known = new Map<string, string>();
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return known;
  }
  if (names.length > MAX_RECORDS) {
    try {
      rmSync(folder, { recursive: true, force: true });
    } catch {
      // Only a memo: a folder that stays full is listed again next time.
    }
    return known;
  }
  for (const name of names) {
    const dot = name.indexOf(".");
    const format = name.slice(dot + 1);
    if (dot > 0 && RECORDED.has(format)) known.set(name.slice(0, dot), format);
  }
  return known;
}

function bytesOf(source: NonNullable<LoadResult["source"]>): ArrayBufferView {
  return typeof source === "string" ? Buffer.from(source) : ArrayBuffer.isView(source) ? source : new Uint8Array(source);
}

/** A module Node would detect the format of: a cacheable file (strip-cache.ts) for which resolve gave no format. */
function detected(url: string, context: unknown): boolean {
  const format = (context as { format?: unknown } | undefined)?.format;
  return (format === null || format === undefined) && cacheableModule(url, context);
}
