/**
 * Reading JSON state files. Missing files are a normal state (`undefined`); a file that exists
 * but is not JSON is a coded error naming the file and the position, never silently treated as
 * empty (a host weakness we fix: xcsh-host-formats §9 items 23, 32).
 */
import { readFile } from "node:fs/promises";
import { XcshToolsError, errorMessage, nodeErrorCode } from "../core/errors.js";

/** Parse JSON text, turning a syntax error into `EJSONPARSE` naming `file`. */
export function parseJsonText(text: string, file: string): unknown {
  try {
    // Strip a UTF-8 BOM: editors on Windows write one and JSON.parse refuses it.
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new XcshToolsError("EJSONPARSE", `${file} is not valid JSON: ${errorMessage(error)}`, {
      file,
      hint: `Fix the syntax of ${file} (or move it away to start from an empty state).`,
      cause: error,
    });
  }
}

/** Read and parse a JSON file; `undefined` when it does not exist. */
export async function readJsonFile(file: string): Promise<unknown | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = nodeErrorCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new XcshToolsError("EREAD", `Cannot read ${file}: ${errorMessage(error)}`, {
      file,
      hint: "Check the file's permissions.",
      cause: error,
    });
  }
  return parseJsonText(text, file);
}

/**
 * Read `file` and check it with a pure validator; `undefined` when missing. A failed check
 * throws the first issue's code naming the file and JSON path (exit 2: the file is invalid),
 * with the number of further issues; warnings are returned for the caller to show.
 */
export async function readValidatedJson<T>(
  file: string,
  validate: (value: unknown) => import("./result.js").ValidationResult<T>,
): Promise<{ value: T; warnings: import("./result.js").ValidationIssue[] } | undefined> {
  const raw = await readJsonFile(file);
  if (raw === undefined) return undefined;
  const result = validate(raw);
  if (result.ok) return { value: result.value, warnings: result.warnings };
  const first = result.issues[0]!;
  const more = result.issues.length > 1 ? ` (and ${result.issues.length - 1} more problem${result.issues.length > 2 ? "s" : ""})` : "";
  throw new XcshToolsError(first.code, `${file}: ${first.message}${more}`, {
    file,
    path: first.path,
    hint: first.hint ?? `Fix ${first.path || "the file"} in ${file}, or run \`xcsh-tools validate ${file}\` to see every problem.`,
    exitCode: 2,
  });
}
