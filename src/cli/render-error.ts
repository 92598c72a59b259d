/**
 * Rendering an error is one pure function: message, `Code:`, `Try this:`, `Caused by:`, the
 * stack only with `--debug`, made safe as every line we print (cli/output.ts `printable`:
 * secrets redacted, control and bidi characters escaped); under `--json`,
 * `{error: {code, message, hint}}`, which the sink's `result` makes safe the same way.
 */
import { XcshToolsError, errorMessage, exitCodeOfCode } from "../core/errors.js";
import { codedFailure } from "../core/failure.js";
import { printable } from "./output.js";

/**
 * What a thrown value is shown as: an uncoded full disk or refused permission that escaped an
 * engine is still `EDISK_FULL` / `EPERMISSION` naming its path (core/failure.ts), never
 * `EUNEXPECTED`.
 */
function shown(error: unknown): unknown {
  return error instanceof XcshToolsError ? error : (codedFailure(error) ?? error);
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

/**
 * The human rendering of an error, as lines for stderr. A message, hint or cause may span lines
 * (ours do: EUNCONFIRMED lists what was refused), so a line after the first of each is indented:
 * text quoted inside a message cannot print a line that starts like `Code:` or `Caused by:`.
 * A cause whose message was already printed (a wrapper that quotes its cause) is not repeated.
 */
export function renderError(thrown: unknown, options: { debug?: boolean } = {}): string {
  const error = shown(thrown);
  const message = errorMessage(error);
  const lines = [`Error: ${message}`];
  if (error instanceof XcshToolsError) {
    lines.push(`Code: ${error.code}`);
    if (error.hint) lines.push(`Try this: ${error.hint}`);
  }
  const printed = [message];
  let cause = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    const said = errorMessage(cause).trim();
    if (said !== "" && !printed.some((m) => m.includes(said))) {
      lines.push(`Caused by: ${said}`);
      printed.push(said);
    }
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  const body = lines.map((line) => line.replace(/\n(?! )/g, "\n  ")).join("\n");
  const stack = options.debug && error instanceof Error && error.stack ? `\n\n${error.stack}` : "";
  return printable(body + stack, { newlines: true });
}

/** The `--json` rendering of an error. */
export function renderErrorJson(thrown: unknown): { error: { code: string; message: string; hint?: string; file?: string; path?: string } } {
  const error = shown(thrown);
  const base = { code: errorCode(error), message: errorMessage(error) };
  if (!(error instanceof XcshToolsError)) return { error: base };
  return {
    error: {
      ...base,
      ...(error.hint ? { hint: error.hint } : {}),
      ...(error.file ? { file: error.file } : {}),
      ...(error.path ? { path: error.path } : {}),
    },
  };
}
