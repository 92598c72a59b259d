/**
 * Failures that tell the truth about what failed. One function turns a low-level error (Node's
 * file-system errors, npm's fetch errors) into the coded error a user can act on, so no caller
 * guesses: a full disk is `EDISK_FULL` naming the folder, a refused permission is `EPERMISSION`
 * naming the path, a tarball URL that failed is `ETARBALL` naming that URL (with the HTTP status
 * or the network error), and only a request to a registry is ever reported as a registry failure.
 */
import os from "node:os";
import { XcshToolsError, errorMessage, nodeErrorCode } from "./errors.js";

/** What a caller knows about the request or folder a failure is about. */
export interface FailureContext {
  /** The spec or thing being worked on, as messages name it. */
  what?: string;
  /** The folder being written, when the error itself names no path. */
  folder?: string;
  /** The tarball URL the spec names (a `https://…/x.tgz` install): its failures are `ETARBALL`. */
  tarballUrl?: string;
}

const DISK_FULL = new Set(["ENOSPC", "EDQUOT"]);
const PERMISSION = new Set(["EACCES", "EPERM", "EROFS"]);
/** Errors of a connection (DNS, refused, reset, timed out), as Node and npm's fetch report them. */
const NETWORK = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ESOCKETTIMEDOUT", "ECONNABORTED", "ERR_SOCKET_TIMEOUT", "FETCH_ERROR", "EPROTO", "ECERT"]);

/** The path a Node error names (`path`, or `dest` for a rename or copy). */
function pathOf(error: unknown): string | undefined {
  const e = error as { path?: unknown; dest?: unknown };
  return typeof e?.dest === "string" ? e.dest : typeof e?.path === "string" ? e.path : undefined;
}

/** The URL an npm fetch error names: `uri` of an HTTP error, or the URL in minipass-fetch's message. */
export function failedUrlOf(error: unknown): string | undefined {
  const uri = (error as { uri?: unknown })?.uri;
  if (typeof uri === "string") return uri;
  return /\brequest to (\S+) failed\b/.exec(errorMessage(error))?.[1];
}

function stripCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.href;
  } catch {
    return url;
  }
}

/**
 * The coded error for a failure of the machine (disk full, permission refused) or of a tarball
 * URL, or `undefined` when `error` is none of those (the caller maps what is its own: a registry's
 * answer, a git failure). Coded errors pass through unchanged.
 */
export function codedFailure(error: unknown, context: FailureContext = {}): XcshToolsError | undefined {
  if (error instanceof XcshToolsError) return error;
  const code = nodeErrorCode(error) ?? "";
  const where = pathOf(error) ?? context.folder;
  const about = context.what ? `${context.what}: ` : "";
  if (DISK_FULL.has(code)) {
    return new XcshToolsError("EDISK_FULL", `${about}the disk is full${where ? `: cannot write ${where}` : ""} (${code})`, {
      ...(where ? { file: where } : {}),
      hint: `Free some space on the disk that holds ${where ?? "the folder being written"} (npm's cache: \`npm cache clean --force\`; leftover xcsh-tools-* scratch folders in ${os.tmpdir()}; plugins you no longer use: \`xcsh-tools uninstall\`), then retry. A failed install or update changed nothing.`,
      cause: error,
    });
  }
  if (PERMISSION.has(code)) {
    const syscall = (error as { syscall?: unknown }).syscall;
    return new XcshToolsError("EPERMISSION", `${about}permission denied${where ? `: cannot ${typeof syscall === "string" ? `${syscall} ` : "use "}${where}` : ""} (${code})`, {
      ...(where ? { file: where } : {}),
      hint: where
        ? `Check the owner and mode of ${where} and of the folders above it (${code === "EROFS" ? "the file system is read-only" : "your user must be able to write there"}), or point --home at a folder you own.`
        : "Check the owner and mode of the folders xcsh-tools writes (the xcsh root, npm's cache).",
      cause: error,
    });
  }
  if (context.tarballUrl !== undefined) {
    const status = (error as { statusCode?: unknown }).statusCode;
    const url = stripCredentials(failedUrlOf(error) ?? context.tarballUrl);
    if (typeof status === "number") {
      return new XcshToolsError("ETARBALL", `${about}the tarball URL ${url} answered HTTP ${status}`, {
        hint: status === 404 || status === 410 ? "The tarball is not at that address: check the URL." : status === 401 || status === 403 ? "The server refused the request: check the URL and any credentials it needs." : "Retry later, or check the URL.",
        cause: error,
      });
    }
    if (NETWORK.has(code) || /\brequest to \S+ failed\b/.test(errorMessage(error))) {
      const reason = (error as { code?: unknown }).code === "FETCH_ERROR" ? errorMessage(error) : `${code}: ${errorMessage(error)}`;
      return new XcshToolsError("ETARBALL", `${about}cannot download the tarball URL ${url} (${reason})`, { hint: "Check the URL, that its server is up, and your network.", cause: error });
    }
  }
  return undefined;
}
