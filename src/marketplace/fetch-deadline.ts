/**
 * The one HTTP download of the marketplace engine (catalog URLs, archive plugins): one
 * `timeouts.fetchMs` deadline covers the connection and the body, and both fail alike:
 * `EFETCH_TIMEOUT` past the deadline, `ESOURCE_NOT_FOUND` for 404/410, else `EFETCH`.
 */
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { codedFailure } from "../core/failure.js";
import { redactSecrets } from "../core/redact.js";

/**
 * `fetch` under `world`'s deadline and signal, refusing a status that is not 2xx. `what` leads the
 * messages; `checkLanded` sees where redirects landed and throws to refuse it. `checkSize` sees the
 * size the server declares, then the bytes received so far as `chunks` yields them, and throws to
 * stop the download (the server is not ours: nothing is held or written past the caller's limit).
 * `bodyFailed` codes a failure while the caller reads `chunks` (and writes them into `folder`: a full disk is `EDISK_FULL`).
 */
export async function fetchWithDeadline(
  url: string,
  world: { fetchTimeoutMs: number; signal?: AbortSignal | undefined },
  options: { what?: string; headers?: Record<string, string>; goneHint: string; checkLanded?: (url: string) => void; checkSize: (bytes: number, declared: boolean) => void },
): Promise<{ chunks: AsyncIterable<Uint8Array>; bodyFailed: (error: unknown, folder?: string) => XcshToolsError }> {
  const shown = redactSecrets(url);
  const say = (rest: string) => (options.what ? `${options.what}: ${rest}` : rest[0]!.toUpperCase() + rest.slice(1));
  const timeout = AbortSignal.timeout(world.fetchTimeoutMs);
  const bodyFailed = (error: unknown, folder?: string): XcshToolsError => {
    if (error instanceof XcshToolsError) return error;
    // Writing the body into `folder` failed (a full disk): that is no fetch failure.
    const machine = codedFailure(error, folder !== undefined ? { folder } : {});
    if (machine) return machine;
    if (timeout.aborted) return new XcshToolsError("EFETCH_TIMEOUT", say(`fetching ${shown} did not finish within ${world.fetchTimeoutMs} ms`), { hint: "Raise timeouts.fetchMs (or XCSH_TOOLS_FETCH_TIMEOUT_MS), or check the network.", cause: error });
    return new XcshToolsError("EFETCH", say(`cannot fetch ${shown}: ${errorMessage((error as Error).cause ?? error)}`), { hint: "Check the URL and the network, then retry.", cause: error });
  };
  const signal = world.signal ? AbortSignal.any([timeout, world.signal]) : timeout;
  const response = await fetch(url, { signal, redirect: "follow", ...(options.headers ? { headers: options.headers } : {}) }).catch((error: unknown) => {
    throw bodyFailed(error);
  });
  try {
    options.checkLanded?.(response.url || url);
    if (!response.ok || !response.body) {
      const gone = response.status === 404 || response.status === 410;
      throw new XcshToolsError(gone ? "ESOURCE_NOT_FOUND" : "EFETCH", say(`cannot fetch ${shown}: HTTP ${response.status} ${response.statusText}`), { hint: gone ? options.goneHint : "Retry later, or check the URL." });
    }
    options.checkSize(Number(response.headers.get("content-length") ?? "0"), true);
  } catch (error) {
    // A refused answer's body is never read: cancel it, so its connection closes now.
    void response.body?.cancel().catch(() => undefined);
    throw error;
  }
  const body = response.body;
  async function* chunks(): AsyncIterable<Uint8Array> {
    let size = 0;
    for await (const chunk of body) {
      size += chunk.byteLength;
      options.checkSize(size, false); // leaving the loop cancels the download
      yield chunk;
    }
  }
  return { chunks: chunks(), bodyFailed };
}
