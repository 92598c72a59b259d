/**
 * The one redaction of credentials in text we show: every line, note, error and `--json` value
 * the CLI prints passes through it (cli/output.ts), and the engines use it where they build a
 * message from a URL (core/git.ts and the marketplace sources), so no route prints a token it was handed.
 *
 * In a URL (any `scheme://...`) the whole userinfo is hidden (`https://***@host`: a token is
 * often the user name alone, `https://ghp_...@github.com`), and so is the value of every query
 * or fragment parameter whose name is not on a short list of names that only ever locate
 * something (ref, branch, version, path...). An allow list, not a deny list of `token`, `sig`,
 * `X-Amz-Signature`...: signed and tokened URLs name their secrets in too many ways (`sv`/`se`/
 * `sig` of Azure SAS, `Signature`/`Policy`/`Key-Pair-Id` of CloudFront, `X-Goog-*`, `code`,
 * `apikey`...), and a hidden harmless value costs a reader less than a shown secret.
 */

/** Query parameters that name a place or a version, never a credential. */
const HARMLESS_PARAMS = new Set(["ref", "branch", "tag", "rev", "commit", "sha", "version", "v", "path", "file", "filename", "format", "raw", "page", "per_page", "lang", "locale", "plugin", "name", "type", "download"]);

/**
 * A URL as it appears in free text: up to a space, a quote or an angle bracket, and not the
 * punctuation that follows it in a sentence (`<url>: failed`, `(<url>)`).
 */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]*[^\s"'<>`.,:;!?)\]}]/gi;

/**
 * Hide tokens and passwords wherever they appear in text we print. Each pattern below matches only
 * text holding one of these fixed pieces, so text holding none (most lines a command prints) is
 * returned as it is without running them: their first run compiles four regular expressions,
 * about 2 ms of a short command's CPU (a restore with nothing to do prints one such line).
 */
export function redactSecrets(text: string): string {
  return mayHoldSecret(text) ? redactEvery(text) : text;
}

/** Every pattern run over `text` (exported for the test that holds mayHoldSecret to them). */
export function redactEvery(text: string): string {
  return text
    .replace(/((?:_authToken|_auth|_password)\s*=\s*)[^\s"']+/gi, "$1***")
    .replace(/(authorization:\s*(?:bearer|basic)\s+)[^\s"']+/gi, "$1***")
    .replace(URL_IN_TEXT, redactOneUrl)
    .replace(/\b(npm_[A-Za-z0-9]{20,})\b/g, "npm_***");
}

/** Whether `text` holds a piece without which none of redactSecrets' patterns can match. */
export function mayHoldSecret(text: string): boolean {
  if (text.includes("://") || text.includes("npm_")) return true;
  const lower = text.toLowerCase();
  return lower.includes("_auth") || lower.includes("_password") || lower.includes("authorization");
}

/**
 * One URL with its credentials hidden. By hand rather than with `new URL`: the text may be a URL
 * no parser accepts (a git remote, a cut-off line of git's stderr), and it must come back as
 * written apart from the secrets.
 */
function redactOneUrl(url: string): string {
  const scheme = url.indexOf("://") + 3;
  const authorityEnd = url.slice(scheme).search(/[/?#]/);
  const end = authorityEnd < 0 ? url.length : scheme + authorityEnd;
  // The last '@' of the authority ends the userinfo: a password may hold an unencoded '@'.
  const at = url.lastIndexOf("@", end - 1);
  const head = at >= scheme ? `${url.slice(0, scheme)}***${url.slice(at, end)}` : url.slice(0, end);
  return head + url.slice(end).replace(/([?&#;])([^=&#;]+)=([^&#;]*)/g, (whole, sep: string, name: string, value: string) => (value === "" || HARMLESS_PARAMS.has(paramName(name)) ? whole : `${sep}${name}=***`));
}

function paramName(name: string): string {
  try {
    return decodeURIComponent(name).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}
