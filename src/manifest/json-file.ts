/**
 * Reading JSON state files. Missing files are a normal state (`undefined`); a file that exists
 * but is not JSON is a coded error naming the file and the position, never silently treated as
 * empty (the host treats some such files as empty; docs/host-parity.md).
 */
import { readTextBounded } from "../core/bounded-read.js";
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { jsonErrorDetail } from "../core/json-position.js";
import type { ValidationIssue, ValidationResult } from "./result.js";

/**
 * Limits of every JSON file we read (state files, catalogs, manifests, settings). The largest
 * real ones are lockfiles of a few MB; a bigger or deeper document is hostile or broken, and
 * would cost memory and stack in every later step (validation, structuredClone, stringify).
 */
export const MAX_JSON_FILE_BYTES = 16 * 1024 * 1024;
export const MAX_JSON_DEPTH = 256;

function tooLarge(file: string, size: number): XcshToolsError {
  return new XcshToolsError("EJSON_TOO_LARGE", `${file} is ${size} bytes, more than the ${MAX_JSON_FILE_BYTES} bytes a JSON file of xcsh-tools may have`, {
    file,
    hint: `This is not a file xcsh-tools or the host wrote: move ${file} away (or trim it) and retry.`,
  });
}

/** `EJSON_TOO_LARGE` when `size` (bytes or characters) is over the limit. */
export function checkJsonSize(size: number, file: string): void {
  if (size > MAX_JSON_FILE_BYTES) throw tooLarge(file, size);
}

/** `EJSON_DEPTH` when `value` nests deeper than `MAX_JSON_DEPTH` (checked without recursion). */
export function checkJsonDepth(value: unknown, file: string): void {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth > MAX_JSON_DEPTH) {
      throw new XcshToolsError("EJSON_DEPTH", `${file} nests more than ${MAX_JSON_DEPTH} levels deep`, {
        file,
        hint: `No file of xcsh-tools or the host is that deep: move ${file} away (or fix it) and retry.`,
      });
    }
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === "object") stack.push([child, depth + 1]);
    }
  }
}

/**
 * Parse JSON text, turning a syntax error into `EJSONPARSE` naming `file`; a text over the size
 * limit is `EJSON_TOO_LARGE`, a document nested too deep `EJSON_DEPTH`. `__proto__` keys stay
 * plain own data (JSON.parse never sets a prototype); code that copies entries must use spreads
 * or `Object.defineProperty`, never `target[key] = …` merges.
 */
export function parseJsonText(text: string, file: string): unknown {
  checkJsonSize(text.length, file);
  let value: unknown;
  // Strip a UTF-8 BOM: editors on Windows write one and JSON.parse refuses it.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    value = JSON.parse(body);
  } catch (error) {
    throw new XcshToolsError("EJSONPARSE", `${file} is not valid JSON ${jsonErrorDetail(body, error)}`, {
      file,
      hint: `Fix the syntax of ${file} (or move it away to start from an empty state).`,
      cause: error,
    });
  }
  checkJsonDepth(value, file);
  return value;
}

/**
 * Read and parse a JSON file; `undefined` when it does not exist. A FIFO, device or folder in its
 * place is `ENOT_A_FILE`, never opened for a read that blocks or never ends (core/bounded-read.ts).
 *
 * The read is synchronous on purpose: these files are small (a package.json, a state file) and
 * read one after another, and fs/promises' stat + open/fstat/read/close is five thread-pool
 * round trips per file where a blocking read is a few system calls (the boot index refresh after an
 * install scans twice; `npm run bench` measures it). The async signature stays: callers need not change if a file ever warrants streaming.
 */
export async function readJsonFile(file: string): Promise<unknown | undefined> {
  const text = readJsonText(file);
  return text === undefined ? undefined : parseJsonText(text, file);
}

/** The text of a JSON file, bounded by the JSON limit; `undefined` when missing. */
export function readJsonText(file: string): string | undefined {
  return readTextBounded(file, { maxBytes: MAX_JSON_FILE_BYTES, tooLarge: (f, size) => tooLarge(f, size) });
}

/**
 * A JSON file read for a best guess: `undefined` when it is missing, unreadable, too large, not a
 * regular file or not JSON. Only for callers that fall back quietly; state files are read with `readJsonFile`.
 */
export function readJsonOrUndefined(file: string): unknown {
  try {
    const text = readJsonText(file);
    return text === undefined ? undefined : parseJsonText(text, file);
  } catch {
    return undefined;
  }
}

/**
 * Read a file of state strictly: `undefined` when it is missing; `code` naming the file when it
 * does not parse or is too large or deep (a failed read stays `EREAD`), `hint` saying what to do.
 */
export async function readStrictJson(file: string, code: string, hint: string): Promise<unknown> {
  try {
    return await readJsonFile(file);
  } catch (error) {
    if (!(error instanceof XcshToolsError) || error.code === "EREAD") throw error;
    throw new XcshToolsError(code, error.message, { file, hint, cause: error });
  }
}

/**
 * `readStrictJson` checked with a pure validator: `code` naming the file, the field and the first
 * problem when it does not validate; the check's warnings go to `warnings`. The file's own object
 * is returned (unknown keys and key order kept), not the validator's copy.
 */
export async function readCheckedJson<T>(file: string, validate: (value: unknown) => ValidationResult<T>, how: { code: string; hint: string; warnings?: ValidationIssue[] }): Promise<(T & Record<string, unknown>) | undefined> {
  const raw = await readStrictJson(file, how.code, how.hint);
  if (raw === undefined) return undefined;
  const result = validate(raw);
  if (!result.ok) {
    const first = result.issues[0]!;
    const more = result.issues.length - 1;
    throw new XcshToolsError(how.code, `${file}: ${first.message}${more > 0 ? ` (and ${more} more problem${more > 1 ? "s" : ""})` : ""}`, { file, path: first.path, hint: first.hint ? `${first.hint} ${how.hint}` : how.hint });
  }
  how.warnings?.push(...result.warnings.map((w) => ({ ...w, message: `${file}: ${w.message}` })));
  return raw as T & Record<string, unknown>;
}
