/**
 * The failures a command raises itself, in a module of their own: the commands import them, and
 * program.ts (which loads the commands) turns them into exit codes, so neither imports the other.
 */
import { XcshToolsError } from "../core/errors.js";

/** A usage error raised by a command's own argument checks (exit 2). */
export function usageError(message: string, hint?: string): XcshToolsError {
  return new XcshToolsError("EUSAGE", message, { exitCode: 2, ...(hint ? { hint } : {}) });
}

/**
 * Thrown by a command that has already printed its failure (e.g. validate's report): exit code
 * only. 130 / 143: a run interrupted by SIGINT / SIGTERM (`run`), as shells report it.
 */
export class ReportedFailure extends Error {
  constructor(readonly exitCode: 1 | 2 | 130 | 143) {
    super(`command failed with exit code ${exitCode}`);
    this.name = "ReportedFailure";
  }
}
