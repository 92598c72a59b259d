/**
 * Coded errors. Every failure a user can cause is an `XcshToolsError` with a stable
 * `code` (public API: hosts, scripts and tests match on it), a message that names the
 * file, field or spec, and a hint that says how to fix it. Rendering lives in the CLI.
 */

/** Options of a coded error: how to fix it, what caused it, and structured details. */
export interface XcshToolsErrorOptions {
  hint?: string;
  cause?: unknown;
  /** File the error is about, when there is one. */
  file?: string;
  /** JSON path or field inside `file`. */
  path?: string;
  /** Exit code the CLI uses for it: 1 failure (default), 2 usage or validation. */
  exitCode?: 1 | 2;
}

/** An error with a stable code and a hint; the only kind engines throw on purpose. */
export class XcshToolsError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly file: string | undefined;
  readonly path: string | undefined;
  readonly exitCode: 1 | 2;

  constructor(code: string, message: string, options: XcshToolsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "XcshToolsError";
    this.code = code;
    this.hint = options.hint;
    this.file = options.file;
    this.path = options.path;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** True when `error` is a coded error, optionally of the given code. */
export function isXcshToolsError(error: unknown, code?: string): error is XcshToolsError {
  return error instanceof XcshToolsError && (code === undefined || error.code === code);
}

/** The message of anything thrown, never `undefined`. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return String(error);
  } catch {
    return "unknown error";
  }
}

/** The Node error code (`ENOENT`, ...) of a thrown value, if any. */
export function nodeErrorCode(error: unknown): string | undefined {
  if (error && typeof error === "object" && "code" in error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}
