/**
 * The one HTTP download of the marketplace engine (direct catalog URLs, archive plugins): a single
 * `timeouts.fetchMs` deadline covers the connection and the body, the caller's signal cancels it,
 * and both kinds fail with the same codes: `EFETCH_TIMEOUT` past the deadline, `ESOURCE_NOT_FOUND`
 * for 404/410 (the thing is gone from that address), `EFETCH` for any other failure.
 */
import { XcshToolsError, errorMessage } from "../core/errors.js";
import { redactUrl } from "../core/git.js";

export interface FetchOptions {
  /** Who downloads, for messages (`Plugin "x" of marketplace "m"`); none: the message names the URL only. */
  what?: string;
  headers?: Record<string, string>;
  /** The hint when the server says the thing is gone. */
  goneHint: string;
  /** Called with the address a redirect landed on, before the status is looked at; throws to refuse it. */
  checkLanded?: (url: string) => void;
}

export interface DeadlineResponse {
  response: Response & { body: NonNullable<Response["body"]> };
  /** The coded error for a failure while reading the body (the deadline still runs). */
  bodyFailed(error: unknown): XcshToolsError;
}

/** `fetch` under the deadline of `world`, refusing a status that is not 2xx. */
export async function fetchWithDeadline(url: string, world: { fetchTimeoutMs: number; signal?: AbortSignal | undefined }, options: FetchOptions): Promise<DeadlineResponse> {
  const shown = redactUrl(url);
  const say = (rest: string) => (options.what ? `${options.what}: ${rest}` : rest[0]!.toUpperCase() + rest.slice(1));
  const timeout = AbortSignal.timeout(world.fetchTimeoutMs);
  const signal = world.signal ? AbortSignal.any([timeout, world.signal]) : timeout;
  const failed = (error: unknown): XcshToolsError => {
    if (error instanceof XcshToolsError) return error;
    if (timeout.aborted) return new XcshToolsError("EFETCH_TIMEOUT", say(`fetching ${shown} did not finish within ${world.fetchTimeoutMs} ms`), { hint: "Raise timeouts.fetchMs (or XCSH_TOOLS_FETCH_TIMEOUT_MS), or check the network.", cause: error });
    return new XcshToolsError("EFETCH", say(`cannot fetch ${shown}: ${errorMessage((error as Error).cause ?? error)}`), { hint: "Check the URL and the network, then retry.", cause: error });
  };
  let response: Response;
  try {
    response = await fetch(url, { signal, redirect: "follow", ...(options.headers ? { headers: options.headers } : {}) });
  } catch (error) {
    throw failed(error);
  }
  options.checkLanded?.(response.url || url);
  if (!response.ok || !response.body) {
    const gone = response.status === 404 || response.status === 410;
    throw new XcshToolsError(gone ? "ESOURCE_NOT_FOUND" : "EFETCH", say(`cannot fetch ${shown}: HTTP ${response.status} ${response.statusText}`), { hint: gone ? options.goneHint : "Retry later, or check the URL." });
  }
  return { response: response as DeadlineResponse["response"], bodyFailed: failed };
}
