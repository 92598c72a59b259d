/**
 * The system `git`, run without a shell (an argument array, so no quoting bugs and no injection)
 * and with the user's own environment, so credential helpers, `~/.ssh/config`, `insteadOf` rules
 * and proxies work exactly as on the command line (Claude Code's bundled git library did not
 * honour credential helpers: peers §1.6). `GIT_TERMINAL_PROMPT=0` turns a password prompt into
 * an error instead of a hang; every command has the `timeouts.gitMs` deadline (host weakness
 * #36: plugin clones had none).
 *
 * `cloneAt` honours a `sha` pin even when the commit is not the tip of any ref (host weakness
 * #36: a depth-1 clone then a checkout only worked for the tip): it fetches the commit itself
 * (servers allow wanting any reachable commit with protocol v2), and falls back to a full clone
 * for servers that refuse.
 */
import { spawn } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { XcshToolsError } from "../core/errors.js";
import { removeTree } from "../core/atomic-fs.js";

/** How git runs. */
export interface GitOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  cwd?: string;
}

/** A failed git command: stderr and whether it timed out. */
export interface GitFailure {
  code: number | null;
  stderr: string;
  timedOut: boolean;
}

function gitEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GIT_TERMINAL_PROMPT: "0", GCM_INTERACTIVE: "never" };
}

/** Redact credentials embedded in URLs (`https://user:token@host`) before they reach a message. */
export function redactUrl(text: string): string {
  return text.replace(/(\w+:\/\/)[^/@\s]+@/g, "$1***@");
}

/** Run `git <args>`; resolves to stdout, rejects with `EGIT` / `EGIT_TIMEOUT` / `EGIT_MISSING`. */
export function runGit(args: string[], options: GitOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    let child;
    try {
      // Its own process group (POSIX), so a timeout kills git's helpers too (git-remote-https,
      // ssh, a credential helper): they inherit git's pipes, and killing git alone left them
      // holding those pipes open — the command then hung past its deadline.
      child = spawn("git", args, { cwd: options.cwd, env: gitEnv(options.env), stdio: ["ignore", "pipe", "pipe"], windowsHide: true, detached: process.platform !== "win32" });
    } catch (error) {
      reject(missingGit(error));
      return;
    }
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    let aborted = false;
    const killAll = () => {
      try {
        if (process.platform !== "win32" && child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
      // Whatever still holds the pipes (a helper that escaped the group) must not delay us.
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killAll();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killAll();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      reject(missingGit(error));
    });
    let settled = false;
    const settle = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      const stderr = Buffer.concat(err).toString("utf8").trim();
      if (code === 0 && !timedOut && !aborted) {
        resolve(Buffer.concat(out).toString("utf8"));
        return;
      }
      const command = redactUrl(`git ${args.join(" ")}`);
      if (aborted) {
        reject(new XcshToolsError("EABORTED", `Interrupted: ${command}`, { hint: "Nothing was changed; run the command again." }));
      } else if (timedOut) {
        reject(new XcshToolsError("EGIT_TIMEOUT", `${command} did not finish within ${options.timeoutMs} ms`, {
          hint: "Raise timeouts.gitMs (or XCSH_TOOLS_GIT_TIMEOUT_MS) for slow networks or big repositories.",
        }));
      } else {
        reject(gitError(command, { code, stderr: redactUrl(stderr), timedOut }));
      }
    };
    child.on("close", (code) => settle(code));
    // After a kill, the exit is enough: the output no longer matters.
    child.on("exit", (code) => {
      if (timedOut || aborted) settle(code);
    });
  });
}

function missingGit(error: unknown): XcshToolsError {
  return new XcshToolsError("EGIT_MISSING", "Cannot run git: it is not installed or not on PATH", {
    hint: "Install git (https://git-scm.com) and make sure `git --version` works in this shell.",
    cause: error,
  });
}

function gitError(command: string, failure: GitFailure): XcshToolsError {
  const last = failure.stderr.split("\n").filter(Boolean).slice(-3).join(" / ");
  let hint = "Check the URL and that you can run the same git command yourself.";
  if (/could not read Username|Authentication failed|terminal prompts disabled|Permission denied \(publickey\)|403/i.test(failure.stderr)) {
    hint = "Git needs credentials: configure a credential helper or an SSH key (xcsh-tools never prompts), then retry.";
  } else if (/not found|does not exist|does not appear to be a git repository|Could not resolve host/i.test(failure.stderr)) {
    hint = "The repository cannot be reached: check the URL, the network, and that the repository still exists.";
  }
  return new XcshToolsError("EGIT", `${command} failed (exit ${failure.code}): ${last || "no output"}`, { hint });
}

/** What to check out. */
export interface GitPin {
  ref?: string;
  sha?: string;
}

/** Clone `url` into `dest` (created; must not exist) at `pin`; returns the checked-out commit. */
export async function cloneAt(url: string, dest: string, pin: GitPin, options: GitOptions): Promise<string> {
  const quiet = ["-c", "advice.detachedHead=false"];
  if (pin.sha) {
    await mkdir(dest, { recursive: true });
    const inDest = { ...options, cwd: dest };
    await runGit(["init", "-q"], inDest);
    await runGit(["remote", "add", "origin", url], inDest);
    try {
      await runGit(["-c", "protocol.version=2", "fetch", "-q", "--depth", "1", "origin", pin.sha], inDest);
      await runGit([...quiet, "checkout", "-q", "--detach", "FETCH_HEAD"], inDest);
    } catch (error) {
      if (error instanceof XcshToolsError && (error.code === "EGIT_TIMEOUT" || error.code === "EABORTED")) throw error;
      // The server refused to hand out a commit by id: fetch everything and look for it.
      await removeTree(dest);
      await runGit(["clone", "-q", "--no-checkout", url, dest], options);
      try {
        await runGit([...quiet, "checkout", "-q", "--detach", pin.sha], inDest);
      } catch (checkoutError) {
        throw new XcshToolsError("ESHA_NOT_FOUND", `Commit ${pin.sha} is not in ${redactUrl(url)}${pin.ref ? ` (ref ${pin.ref})` : ""}`, {
          hint: "The catalog pins a commit the repository does not have (force-pushed or wrong sha): ask the marketplace owner to fix the pin.",
          cause: checkoutError,
        });
      }
    }
  } else {
    await runGit(["clone", "-q", "--depth", "1", ...(pin.ref ? ["--branch", pin.ref] : []), url, dest], options);
  }
  const head = (await runGit(["rev-parse", "HEAD"], { ...options, cwd: dest })).trim();
  if (pin.sha && head.toLowerCase() !== pin.sha.toLowerCase()) {
    throw new XcshToolsError("ESHA_NOT_FOUND", `Checked out ${head} from ${redactUrl(url)}, not the pinned ${pin.sha}`, {
      hint: "Ask the marketplace owner to pin a full 40-character commit sha.",
    });
  }
  return head;
}

/** The commit `ref` (default HEAD) points at on the remote, without cloning. */
export async function remoteHead(url: string, ref: string | undefined, options: GitOptions): Promise<string | undefined> {
  const out = await runGit(["ls-remote", url, ref ?? "HEAD"], options);
  const lines = out.split("\n").filter(Boolean).map((l) => l.split(/\s+/));
  // Prefer a peeled tag (^{}) so an annotated tag compares by its commit.
  const peeled = lines.find((l) => l[1]?.endsWith("^{}"));
  return (peeled ?? lines[0])?.[0];
}
