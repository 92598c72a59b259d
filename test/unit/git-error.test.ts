/**
 * A failed git, ours (core/git.ts) or npm's (pacote's @npmcli/git errors): the coded error says
 * what git said (its fatal/error lines, redacted) and a hint for that kind of failure.
 */
import { describe, expect, it } from "vitest";
import { gitError } from "../../src/core/git.js";
import { npmError } from "../../src/plugins/npm-client.js";

const client = { registry: { registry: "https://registry.example/" }, home: "/nowhere", allowScripts: false } as const;

/** An error shaped as @npmcli/git throws it. */
function npmGitError(message: string, args: string[], code: number, stderr: string): Error {
  return Object.assign(new Error(message), { cmd: "/usr/bin/git", args, code, signal: null, stdout: "", stderr });
}

describe("git failures carry git's words and a hint", () => {
  it("git's fatal lines, not the advice after them", () => {
    const e = gitError("git clone of file:///r.git", 128, "fatal: '/r.git' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\nand the repository exists.\n");
    expect(e.code).toBe("EGIT");
    expect(e.message).toBe("git clone of file:///r.git failed (exit 128): fatal: '/r.git' does not appear to be a git repository / fatal: Could not read from remote repository.");
    expect(e.hint).toMatch(/still exists/);
  });

  it("credentials in what git said never reach the message", () => {
    const e = gitError("git ls-remote of https://***@h/x.git", 128, "fatal: unable to access 'https://bob:s3cret-token@h/x.git/': The requested URL returned error: 403");
    expect(e.message).not.toContain("s3cret-token");
    expect(e.hint).toMatch(/credentials/);
  });

  it("npm's git errors (a fixed message over git's stderr) become EGIT with git's words, never a registry failure", () => {
    const cases = [
      [npmGitError("An unknown git error occurred", ["--no-replace-objects", "ls-remote", "file:///gone.git"], 128, "fatal: '/gone.git' does not appear to be a git repository\nfatal: Could not read from remote repository."), /git ls-remote failed \(exit 128\): fatal: '\/gone\.git' does not appear/, /still exists/],
      [npmGitError("The git reference could not be found", ["--no-replace-objects", "checkout", "nope"], 1, "error: pathspec 'nope' did not match any file(s) known to git"), /git checkout failed \(exit 1\): error: pathspec 'nope'/, /after `#` is not in the repository/],
      [npmGitError("An unknown git error occurred", ["ls-remote", "file:///x.git"], 128, "fatal: transport 'file' not allowed"), /transport 'file' not allowed/, /typed its URL yourself/],
      [npmGitError("A git connection error occurred", ["clone", "https://h/x.git"], 128, "fatal: unable to access 'https://tok-123@h/x.git/': Connection timed out"), /Connection timed out/, /same git command/],
    ] as const;
    for (const [error, message, hint] of cases) {
      const coded = npmError(error, "p@git+https://h/x.git", client as never, "p");
      expect(coded.code).toBe("EGIT");
      expect(coded.message).toMatch(message);
      expect(coded.message).not.toMatch(/registry|tok-123/);
      expect(coded.hint).toMatch(hint);
    }
  });
});
