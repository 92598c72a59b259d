/**
 * Rendering an error is one pure function: message, `Code:`, `Try this:`, `Caused by:`, the
 * stack only with `--debug`, secrets redacted; under `--json`, `{error: {code, message, hint}}`.
 */
import { XcshToolsError, errorMessage, exitCodeOfCode } from "../core/errors.js";
import { codedFailure } from "../core/failure.js";

/**
 * What a thrown value is shown as: an uncoded full disk or refused permission that escaped an
 * engine is still `EDISK_FULL` / `EPERMISSION` naming its path (core/failure.ts), never
 * `EUNEXPECTED`.
 */
function shown(error: unknown): unknown {
  return error instanceof XcshToolsError ? error : (codedFailure(error) ?? error);
}

/** Hide tokens and passwords wherever they appear in text we print. */
export function redactSecrets(text: string): string {
  return text
    .replace(/((?:_authToken|_auth|_password)\s*=\s*)[^\s"']+/gi, "$1***")
    .replace(/(authorization:\s*(?:bearer|basic)\s+)[^\s"']+/gi, "$1***")
    .replace(/(\/\/[^/\s:@]+:)[^@\s/]+@/g, "$1***@")
    .replace(/\b(npm_[A-Za-z0-9]{20,})\b/g, "npm_***");
}

/** The code of any thrown value (`EUNEXPECTED` for plain errors). */
export function errorCode(thrown: unknown): string {
  const error = shown(thrown);
  return error instanceof XcshToolsError ? error.code : "EUNEXPECTED";
}

/** The process exit code for a thrown value: its code's in `EXIT_CODES` (2 usage/validation, 1 failure); 1 for uncoded errors. */
export function exitCodeOf(thrown: unknown): 1 | 2 {
  const error = shown(thrown);
  return error instanceof XcshToolsError ? exitCodeOfCode(error.code, error.exitCode) : 1;
}

/** The human rendering of an error, as lines for stderr. */
export function renderError(thrown: unknown, options: { debug?: boolean } = {}): string {
  const error = shown(thrown);
  const lines = [`Error: ${errorMessage(error)}`];
  if (error instanceof XcshToolsError) {
    lines.push(`Code: ${error.code}`);
    if (error.hint) lines.push(`Try this: ${error.hint}`);
  }
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    lines.push(`Caused by: ${errorMessage(cause)}`);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  if (options.debug && error instanceof Error && error.stack) lines.push("", error.stack);
  return redactSecrets(lines.join("\n"));
}

/** The `--json` rendering of an error. */
export function renderErrorJson(thrown: unknown): { error: { code: string; message: string; hint?: string; file?: string; path?: string } } {
  const error = shown(thrown);
  const base = { code: errorCode(error), message: redactSecrets(errorMessage(error)) };
  if (!(error instanceof XcshToolsError)) return { error: base };
  return {
    error: {
      ...base,
      ...(error.hint ? { hint: redactSecrets(error.hint) } : {}),
      ...(error.file ? { file: error.file } : {}),
      ...(error.path ? { path: error.path } : {}),
    },
  };
}
