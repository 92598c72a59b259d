/**
 * The one way this code base runs git: the system `git`, without a shell (an argument array)
 * and with the user's own environment, so credential helpers, `~/.ssh/config`, `insteadOf` rules
 * and proxies work exactly as on the command line (Claude Code's bundled git library did not
 * honour credential helpers). Every command has the `timeouts.gitMs` deadline (the host's
 * plugin clones had none).
 *
 * URLs, refs and shas come from catalogs and state files, which are untrusted, so each call:
 * - checks them again right here (core/source-args.ts) whatever the caller checked before;
 * - puts them after `--` (or, for a checkout, as a validated hex sha with `^{commit}`), so no
 *   value can be read as an option (`--upload-pack=…`, `-oProxyCommand=…`);
 * - runs with `-c protocol.ext.allow=never -c protocol.fd.allow=never` (the remote helpers that
 *   run commands), `protocol.file.allow=never` unless the URL may be local (then `always`: under
 *   `GIT_PROTOCOL_FROM_USER=0` its default "user" policy would refuse it), `core.hooksPath` at
 *   the null device and `core.fsmonitor=false` (no program of any configuration runs during a
 *   clone), and `GIT_PROTOCOL_FROM_USER=0`;
 * - never prompts: `GIT_TERMINAL_PROMPT=0`, `GCM_INTERACTIVE=never`, an empty `GIT_ASKPASS`
 *   (git then skips `core.askPass` and `SSH_ASKPASS`) and `SSH_ASKPASS_REQUIRE=never`, unless the
 *   user's environment sets those itself (a CI token helper is theirs to choose).
 * `core.sshCommand`, `GIT_SSH_COMMAND` and the user's config are left alone: they are trusted.
 *
 * `cloneAt` honours a `sha` pin even when the commit is not the tip of any ref (in the
 * host, a depth-1 clone then a checkout only worked for the tip): it fetches the commit itself
 * (servers allow wanting any reachable commit with protocol v2), and falls back to a full clone
 * for servers that refuse.
 */
import { mkdir } from "node:fs/promises";
import { devNull } from "node:os";
import { XcshToolsError, isXcshToolsError } from "./errors.js";
import { runInProcessGroup } from "./process-group.js";
import { redactSecrets } from "./redact.js";
import { removeTree } from "./atomic-fs.js";
import { outsideEveryRepository } from "./git-discovery.js";
import { assertSourceArg, gitRefProblem, gitShaProblem, gitUrlProblem } from "./source-args.js";

/** How git runs. */
export interface GitOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  cwd?: string;
  /**
   * The URL may reach the local disk (`file://`, a path): only when the user typed it or the
   * catalog naming it came from the local disk. Default false.
   */
  allowLocal?: boolean;
}

/** The environment of a git that must not prompt; the user's own choices are kept. */
export function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...env,
    GIT_TERMINAL_PROMPT: "0",
    GCM_INTERACTIVE: "never",
    GIT_PROTOCOL_FROM_USER: "0",
    GIT_ASKPASS: env.GIT_ASKPASS ?? "",
    SSH_ASKPASS_REQUIRE: env.SSH_ASKPASS_REQUIRE ?? "never",
  };
}

/** The `-c` settings every git call runs with (see the header). */
export function gitHardening(allowLocal: boolean): string[] {
  const settings = ["protocol.ext.allow=never", "protocol.fd.allow=never", allowLocal ? "protocol.file.allow=always" : "protocol.file.allow=never", `core.hooksPath=${devNull}`, "core.fsmonitor=false"];
  return settings.flatMap((s) => ["-c", s]);
}

/**
 * The same settings for a git that npm's fetcher (pacote, for git install specs and git
 * dependencies) spawns itself: through `GIT_CONFIG_COUNT`, appended to any the user set.
 */
export function gitEnvForNpm(env: NodeJS.ProcessEnv, allowLocal = false): NodeJS.ProcessEnv {
  const out = gitEnv(env);
  const settings = gitHardening(allowLocal).filter((_, i) => i % 2 === 1);
  let count = Number.parseInt(env.GIT_CONFIG_COUNT ?? "0", 10);
  if (!Number.isInteger(count) || count < 0) count = 0;
  for (const setting of settings) {
    const eq = setting.indexOf("=");
    out[`GIT_CONFIG_KEY_${count}`] = setting.slice(0, eq);
    out[`GIT_CONFIG_VALUE_${count}`] = setting.slice(eq + 1);
    count += 1;
  }
  out.GIT_CONFIG_COUNT = String(count);
  return out;
}


/**
 * Run `git <hardening> <args>`; resolves to stdout, rejects with `EGIT` / `EGIT_TIMEOUT` /
 * `EGIT_MISSING` naming the operation `op` and the URL (redacted). Not exported: every caller goes
 * through the operations below, which put untrusted values after `--`.
 */
async function runGit(args: string[], options: GitOptions, op: string, url: string): Promise<string> {
  const argv = [...gitHardening(options.allowLocal === true), ...args];
  // A group of its own, killed at once: a timeout must stop git's helpers too (git-remote-https,
  // ssh, a credential helper), which hold its pipes.
  const result = await runInProcessGroup("git", argv, { cwd: options.cwd, env: gitEnv(options.env), timeoutMs: options.timeoutMs, signal: options.signal, graceMs: 0 });
  if (result.spawnError) throw missingGit(result.spawnError);
  if (result.code === 0 && !result.killedBy) return result.stdout;
  const command = `git ${op} of ${redactSecrets(url)}`;
  if (result.killedBy === "abort") {
    throw new XcshToolsError("EABORTED", `Interrupted: ${command}`, { hint: "Nothing was changed; run the command again." });
  }
  if (result.killedBy === "timeout") {
    throw new XcshToolsError("EGIT_TIMEOUT", `${command} did not finish within ${options.timeoutMs} ms`, {
      hint: "Raise timeouts.gitMs (or XCSH_TOOLS_GIT_TIMEOUT_MS) for slow networks or big repositories.",
    });
  }
  throw gitError(command, result.code, result.stderr);
}

function missingGit(error: unknown): XcshToolsError {
  return new XcshToolsError("EGIT_MISSING", "Cannot run git: it is not installed or not on PATH", {
    hint: "Install git (https://git-scm.com) and make sure `git --version` works in this shell.",
    cause: error,
  });
}

/**
 * git's own words for a failure: its `fatal:` / `error:` lines when it wrote any (the lines after
 * them are advice like "Please make sure you have the correct access rights"), else its last
 * lines; at most three, joined on one line.
 */
function gitSaid(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter(Boolean);
  const errors = lines.filter((l) => /^(fatal|error):/i.test(l));
  return (errors.length > 0 ? errors : lines).slice(-3).join(" / ");
}

/**
 * The coded error of a git that failed: `command` (what ran, redacted), its exit code and stderr;
 * the message carries what git said, the hint what to do about that kind of failure. Our runner
 * and npm's git runner (npm-client.ts) both report through it.
 */
export function gitError(command: string, code: number | null, stderr: string): XcshToolsError {
  const said = redactSecrets(gitSaid(stderr));
  let hint = "Check the URL and that you can run the same git command yourself.";
  if (/could not read Username|Authentication failed|terminal prompts disabled|Permission denied \(publickey\)|403/i.test(stderr)) {
    hint = "Git needs credentials: configure a credential helper or an SSH key (xcsh-tools never prompts), then retry.";
  } else if (/transport '?file'? not allowed/i.test(stderr)) {
    hint = "A repository on this disk is read only when you typed its URL yourself (e.g. `xcsh-tools install git+file:///path/repo.git`); install it that way.";
  } else if (/pathspec .* did not match|couldn't find remote ref|Remote branch .* not found|not a valid ref|unknown revision/i.test(stderr)) {
    hint = "The branch, tag or commit after `#` is not in the repository: check it with `git ls-remote <url>`.";
  } else if (/not found|does not exist|does not appear to be a git repository|Could not resolve host/i.test(stderr)) {
    hint = "The repository cannot be reached: check the URL, the network, and that the repository still exists.";
  }
  return new XcshToolsError("EGIT", `${command} failed (exit ${code ?? "?"}): ${said || "no output"}`, { hint });
}

/** What to check out. */
export interface GitPin {
  ref?: string;
  sha?: string;
}

/** Check what untrusted input handed us, again, right before git sees it. */
function checkPin(url: string, pin: GitPin, allowLocal: boolean): void {
  const where = `git source ${redactSecrets(url).slice(0, 200)}`;
  assertSourceArg(gitUrlProblem(url, { allowLocal }), where);
  if (pin.ref !== undefined) assertSourceArg(gitRefProblem(pin.ref), where);
  if (pin.sha !== undefined) assertSourceArg(gitShaProblem(pin.sha), where);
}

/** Clone `url` into `dest` (created; must not exist) at `pin`; returns the checked-out commit. */
export async function cloneAt(url: string, dest: string, pin: GitPin, options: GitOptions): Promise<string> {
  checkPin(url, pin, options.allowLocal === true);
  const quiet = ["-c", "advice.detachedHead=false"];
  if (pin.sha) {
    await mkdir(dest, { recursive: true });
    const inDest = { ...options, cwd: dest };
    await runGit(["init", "-q"], inDest, "init", url);
    await runGit(["remote", "add", "--", "origin", url], inDest, "remote add", url);
    try {
      await runGit(["-c", "protocol.version=2", "fetch", "-q", "--depth", "1", "--", "origin", pin.sha], inDest, "fetch", url);
      await runGit([...quiet, "checkout", "-q", "--detach", "FETCH_HEAD"], inDest, "checkout", url);
    } catch (error) {
      if (error instanceof XcshToolsError && (error.code === "EGIT_TIMEOUT" || error.code === "EABORTED")) throw error;
      // The server refused to hand out a commit by id: fetch everything and look for it.
      await removeTree(dest);
      await runGit(["clone", "-q", "--no-checkout", "--", url, dest], options, "clone", url);
      try {
        // `checkout` takes no `--` before a commit (it would be a path): the sha is checked hex
        // above, and `^{commit}` makes it a commit expression that cannot be an option or a path.
        await runGit([...quiet, "checkout", "-q", "--detach", `${pin.sha}^{commit}`], inDest, "checkout", url);
      } catch (checkoutError) {
        throw new XcshToolsError("ESHA_NOT_FOUND", `Commit ${pin.sha} is not in ${redactSecrets(url)}${pin.ref ? ` (ref ${pin.ref})` : ""}`, {
          hint: "The catalog pins a commit the repository does not have (force-pushed or wrong sha): ask the marketplace owner to fix the pin.",
          cause: checkoutError,
        });
      }
    }
  } else {
    await runGit(["clone", "-q", "--depth", "1", ...(pin.ref ? [`--branch=${pin.ref}`] : []), "--", url, dest], options, "clone", url);
  }
  const head = (await runGit(["rev-parse", "HEAD"], { ...options, cwd: dest }, "rev-parse", url)).trim();
  if (pin.sha && head.toLowerCase() !== pin.sha.toLowerCase()) {
    throw new XcshToolsError("ESHA_NOT_FOUND", `Checked out ${head} from ${redactSecrets(url)}, not the pinned ${pin.sha}`, {
      hint: "Ask the marketplace owner to pin a full 40-character commit sha.",
    });
  }
  return head;
}

/** The commit `ref` (default HEAD) points at on the remote, without cloning. */
export async function remoteHead(url: string, ref: string | undefined, options: GitOptions): Promise<string | undefined> {
  checkPin(url, ref !== undefined ? { ref } : {}, options.allowLocal === true);
  const out = await runGit(["ls-remote", "--", url, ref ?? "HEAD"], options, "ls-remote", url);
  const lines = out.split("\n").filter(Boolean).map((l) => l.split(/\s+/));
  // Prefer a peeled tag (^{}) so an annotated tag compares by its commit.
  const peeled = lines.find((l) => l[1]?.endsWith("^{}"));
  return (peeled ?? lines[0])?.[0];
}

/**
 * The files among `paths` (relative to `workTree`) that git tracks there, relative to it, or
 * `undefined` when `workTree` is not in a git work tree (or there is no git: then nothing can be
 * tracked that we could tell about). Read-only: `rev-parse` and `ls-files` with literal
 * pathspecs, the hardening above, never a command that changes the user's repository.
 */
export async function trackedFiles(workTree: string, paths: readonly string[], options: Pick<GitOptions, "env" | "timeoutMs" | "signal">): Promise<string[] | undefined> {
  if (outsideEveryRepository(workTree, options.env)) return undefined;
  const at = { ...options, cwd: workTree };
  try {
    if ((await runGit(["rev-parse", "--is-inside-work-tree"], at, "rev-parse", workTree)).trim() !== "true") return undefined;
  } catch (error) {
    if (isXcshToolsError(error, "EGIT") || isXcshToolsError(error, "EGIT_MISSING")) return undefined;
    throw error;
  }
  const out = await runGit(["--literal-pathspecs", "ls-files", "-z", "--", ...paths], at, "ls-files", workTree);
  return out.split("\0").filter(Boolean);
}

/**
 * The commit checked out in the work tree `workTree` is in (the full sha), or `undefined` when it
 * is in none, has no commit yet, or there is no git: what Claude Code records as the commit of a
 * plugin of a local folder marketplace. Read-only: `rev-parse` with the hardening above.
 */
export async function headCommit(workTree: string, options: Pick<GitOptions, "env" | "timeoutMs" | "signal">): Promise<string | undefined> {
  try {
    const sha = (await runGit(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { ...options, cwd: workTree }, "rev-parse", workTree)).trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : undefined;
  } catch (error) {
    if (isXcshToolsError(error, "EGIT") || isXcshToolsError(error, "EGIT_MISSING")) return undefined;
    throw error;
  }
}

