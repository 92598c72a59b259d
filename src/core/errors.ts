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
  /**
   * Exit code for a code that is not in `EXIT_CODES` (a validator's issue code passed through):
   * 1 failure (default), 2 usage or validation. A code in the table always exits as the table says.
   */
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
    this.exitCode = exitCodeOfCode(code, options.exitCode);
  }
}

/**
 * The exit code of each error code the CLI throws: 2 for a usage or validation error (the input
 * is wrong: a flag, a spec, a name, a file's content), 1 for a failure (something was missing,
 * refused or broke). One code has one exit code wherever it is thrown, so scripts can rely on it;
 * test/unit/exit-codes.test.ts checks that every code thrown in src/ is listed here and that no
 * throw site asks for another exit code than the table's.
 */
export const EXIT_CODES = {
  // Usage: arguments, flags, specs, names.
  EUSAGE: 2,
  ESPEC: 2,
  EPLUGIN_ID: 2,
  EAMBIGUOUS_SCOPE: 2,
  EPROJECT_SCOPE: 2,
  ENAME_INVALID: 2,
  ENAME_MISSING: 2,
  ETEMPLATE_UNKNOWN: 2,
  // `xcsh-tools run`: params that do not fit the tool's schema (also the harness's runTool), a tool name nothing loaded.
  EPARAMS_INVALID: 2,
  ETOOL_UNKNOWN: 2,
  ETARGET_NOT_DIR: 2,
  ETARGET_NOT_EMPTY: 2,
  ETARGET_NOT_FOUND: 2,
  ETARGET_UNKNOWN: 2,
  EUNKNOWN_FEATURE: 2,
  EUNKNOWN_SETTING: 2,
  EUNKNOWN_MARKETPLACE: 2,
  ESETTING_VALUE: 2,
  ESECRET_SCOPE: 2,
  EMARKETPLACE_NAME: 2,
  EMARKETPLACE_RESERVED: 2,
  ESOURCE_UNKNOWN: 2,
  ESOURCE_COMMAND: 2,
  EENV_PATH: 2,
  EHOST_EXPORTS_MODULE: 2,
  ESOURCE_AMBIGUOUS: 2,
  // Source values refused by src/core/source-args.ts.
  EGIT_URL: 2,
  EGIT_REF: 2,
  ESHA: 2,
  ESOURCE_INVALID: 2,
  EVERSION: 2,
  ESOURCE_URL: 2,
  EPACKAGE_NAME: 2,
  // Validation: a file or package is not what it must be.
  ECONFIG: 2,
  ENPMRC: 2,
  ECATALOG_INVALID: 2,
  EDUPLICATE_PLUGIN: 2,
  EPLUGIN_INVALID: 2,
  ENOT_A_PLUGIN: 2,
  EOMP_MANIFEST: 2,
  ETARBALL_TOO_LARGE: 2,
  ETARBALL_UNSAFE: 2,
  EENTRY_ESCAPE: 2,
  // Team sets (issue 42, docs/design/team-sets.md): the committed xcsh-team.json, its lock and the personal file.
  ETEAM_DECLARATION_INVALID: 2,
  ETEAM_UNKNOWN_MARKETPLACE: 2,
  ETEAM_SPEC: 2,
  ETEAM_MACHINE_PATH: 2,
  ETEAM_SOURCE: 2,
  ETEAM_DECLARATION_CONFLICT: 2,
  ETEAM_CONFLICT_MARKERS: 2,
  ETEAM_LOCK_INVALID: 2,
  ETEAM_LOCK_VERSION: 2,
  ETEAM_NOT_DECLARED: 2,
  ETEAM_UNSATISFIABLE: 1,
  ETEAM_PLUGIN_DELISTED: 1,
  ETEAM_FROZEN: 1,
  ETEAM_GENERATED_TRACKED: 1,
  // Plugin seeds (docs/design/fleets.md).
  ESEED_INVALID: 2,
  ESEED_FORMAT: 2,
  ESEEDED: 2,
  ESEED_TARGET: 2,
  ESEED_UNREADABLE: 1,
  ESEED_INCOMPLETE: 1,
  ESEED_INTEGRITY: 1,
  ESEED_LOCK_MISMATCH: 1,
  EOFFLINE: 1,
  // The organization policy (issue 43, docs/design/fleets.md "Policy"): its file, then what it refuses.
  EPOLICY_INVALID: 2,
  EPOLICY_UNKNOWN_KEY: 2,
  EPOLICY_PATTERN: 2,
  EPOLICY_UNREADABLE: 1,
  EPOLICY_BLOCKED: 1,
  EPOLICY_NOT_ALLOWED: 1,
  EPOLICY_FORBIDDEN: 1,
  EPOLICY_REQUIRED: 1,
  EPOLICY_PROJECT_MARKETPLACE: 1,
  // Failures.
  ENOT_FOUND: 1,
  ENOT_INSTALLED: 1,
  ENOT_LINKED: 1,
  ESTATE_FILE: 1,
  EREGISTRY_FILE: 1,
  ETARBALL: 1,
  EABORTED: 1,
  EAUTH: 1,
  ECATALOG_NOT_FOUND: 1,
  ECATALOG_STALE: 1,
  ECLAUDE_PLUGIN: 1,
  ECHILD_MISSING: 1,
  ECOMPONENT_SHAPE: 1,
  EDISK_FULL: 1,
  EDOCTOR_FIX: 1,
  ECOPY_LIMIT: 1,

  EENTRY_NOT_FOUND: 1,
  EFAULT_INJECTED: 1,
  EFETCH: 1,
  EFETCH_TIMEOUT: 1,
  EGIT: 1,
  EGIT_MISSING: 1,
  EGIT_TIMEOUT: 1,
  EIMPORT: 1,
  EIMPORT_TIMEOUT: 1,
  EIMPORT_OUTSIDE: 1,
  EINSTALL: 1,
  EINTEGRITY: 1,
  EJOURNAL: 1,
  EJSONPARSE: 1,
  EJSON_DEPTH: 1,
  EJSON_TOO_LARGE: 1,
  EFILE_TOO_LARGE: 1,
  ELOCKED: 1,
  ELOCK_LOST: 1,
  EMARKETPLACE_EXISTS: 1,
  EMARKETPLACE_FOLDER_CHANGED: 1,
  EMARKETPLACE_NAME_DRIFT: 1,
  EMARKETPLACE_NOT_FOUND: 1,
  ENPM_FETCH: 1,
  ENOT_A_FILE: 1,
  EPATH_OUTSIDE: 1,
  EPERMISSION: 1,
  EPLUGIN_NOT_FOUND: 1,
  EPROMPT_CLOSED: 1,
  EREAD: 1,
  EREGISTRY: 1,
  ERESULT_SHAPE: 1,
  ESETTING_UNSET: 1,
  ESHA_NOT_FOUND: 1,
  ESOURCE_KIND: 1,
  ESOURCE_NOT_FOUND: 1,
  ETEMPLATE_PLACEHOLDER: 1,
  ETOOL_NOT_LOADED: 1,
  ETOOL_FAILED: 1,
  ETREE_DEPTH: 1,
  EUI_UNSCRIPTED: 1,
  EUNSAFE_REMOVE: 1,
  EUNSUPPORTED_FILE: 1,
  EUNTRUSTED_PROJECT: 1,
  EUNCONFIRMED: 1,
  EURL_RELATIVE_SOURCE: 1,
  EVALIDATE: 1,
  EWRITE: 1,
  // Lazy tools (docs/lazy-tools.md): a definition at first use that is not the recorded one; a plugin whose declared static definitions are not.
  ELAZY_DEFINITION: 1,
  ESTATIC_TOOLS: 1,
} as const satisfies Record<string, 1 | 2>;

/** An error code the table knows. */
export type KnownErrorCode = keyof typeof EXIT_CODES;

/** The exit code of `code`: the table's, else `fallback` (a code passed through from a validator), else 1. */
export function exitCodeOfCode(code: string, fallback?: 1 | 2): 1 | 2 {
  return Object.hasOwn(EXIT_CODES, code) ? EXIT_CODES[code as KnownErrorCode] : (fallback ?? 1);
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

/** The code, message and hint of anything thrown, as a report that goes on past a failure lists it. */
export function errorSummary(error: unknown): { code: string; message: string; hint?: string } {
  if (error instanceof XcshToolsError) return { code: error.code, message: error.message, ...(error.hint ? { hint: error.hint } : {}) };
  return { code: "EUNEXPECTED", message: errorMessage(error) };
}

/** The Node error code (`ENOENT`, ...) of a thrown value, if any. */
export function nodeErrorCode(error: unknown): string | undefined {
  if (error && typeof error === "object" && "code" in error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === "string" ? code : undefined;
  }
  return undefined;
}
