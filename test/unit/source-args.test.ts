/**
 * The rules for values handed to git and npm (core/source-args.ts), as a table: what passes, and
 * what is refused with which code.
 */
import { describe, expect, it } from "vitest";
import { gitRefProblem, gitShaProblem, githubRepoProblem, gitUrlProblem, isLocalGitUrl, npmVersionProblem, registryUrlProblem, subdirPathProblem, subdirUrlProblem } from "../../src/core/source-args.js";

const remote = { allowLocal: false };
const local = { allowLocal: true };

describe("git URLs", () => {
  it.each([
    ["https://github.com/acme/x.git", remote],
    ["http://127.0.0.1:8080/x.git", remote],
    ["ssh://git@github.com/acme/x.git", remote],
    ["ssh://git@[::1]:22/x.git", remote],
    ["git://example.com/x.git", remote],
    ["git@github.com:acme/x.git", remote],
    ["git+ssh://git@host/x.git", remote],
    ["file:///tmp/x.git", local],
    ["/tmp/x.git", local],
    ["./x.git", local],
  ])("accepts %s", (url, policy) => {
    expect(gitUrlProblem(url, policy)).toBeUndefined();
  });

  it.each([
    ["--upload-pack=/tmp/canary", remote],
    ["-oProxyCommand=/tmp/canary", remote],
    ["ext::sh -c /tmp/canary", remote],
    ["ext::/tmp/canary", local],
    ["fd::3", local],
    ["EXT::x", local],
    ["ssh://-oProxyCommand=/tmp/canary/x", remote],
    ["ssh://%2DoProxyCommand=x/y", remote],
    ["ssh://-user@host/x", remote],
    ["git@-oProxyCommand=x:y", remote],
    ["-git@host:x", remote],
    ["https://host/x.git\n--upload-pack=x", remote],
    ["https://host/x .git", remote],
    ["https://", remote],
    ["ftp://host/x", remote],
    ["javascript://x", remote],
    ["file:///tmp/x.git", remote],
    ["/tmp/x.git", remote],
    ["../x", remote],
    ["~/x", remote],
    ["just-words", local],
    ["", local],
    ["https://h/" + "a".repeat(3000), remote],
  ])("refuses %j with EGIT_URL", (url, policy) => {
    expect(gitUrlProblem(url, policy)?.code).toBe("EGIT_URL");
  });

  it("tells local URLs from remote ones", () => {
    expect(isLocalGitUrl("file:///x")).toBe(true);
    expect(isLocalGitUrl("/x")).toBe(true);
    expect(isLocalGitUrl("https://x/y")).toBe(false);
    expect(isLocalGitUrl("git@h:x")).toBe(false);
  });
});

describe("refs and shas", () => {
  it.each(["main", "v1.2.0", "release/2.x", "refs/heads/main", "feature_x-1", "a".repeat(40)])("accepts ref %s", (ref) => {
    expect(gitRefProblem(ref)).toBeUndefined();
  });
  it.each(["--output=/tmp/victim", "-c", "-c core.sshCommand=/tmp/canary", "a..b", "a b", "a~1", "a^", "a:b", "x?", "x*", "x[", "a\\b", "@", "a@{1}", "/a", "a/", "a//b", "a.", "a.lock", ".hidden", "a/.b", "", "a\u0000b", "a\tb"])("refuses ref %j with EGIT_REF", (ref) => {
    expect(gitRefProblem(ref)?.code).toBe("EGIT_REF");
  });
  it.each(["a".repeat(40), "0123456789abcdefABCDEF0123456789abcdef01", "f".repeat(64)])("accepts sha %s", (sha) => {
    expect(gitShaProblem(sha)).toBeUndefined();
  });
  it.each(["abc1234", "g".repeat(40), "--upload-pack=x", "a".repeat(41), "", 42])("refuses sha %j with ESHA", (sha) => {
    expect(gitShaProblem(sha)?.code).toBe("ESHA");
  });
});

describe("GitHub repos, subdir paths, npm versions and registries", () => {
  it.each(["acme/x", "a/b.c", "a-b/x_y", "A1/.github", "o/x-y"])("accepts repo %s", (repo) => {
    expect(githubRepoProblem(repo)).toBeUndefined();
  });
  it.each(["-oProxyCommand/x", "acme-/x", "a--b/x", "acme/-x", "acme/..", "acme/.", "acme", "a/b/c", "a/b c", "x".repeat(40) + "/y", "acme/" + "x".repeat(101)])("refuses repo %j with ESOURCE_INVALID", (repo) => {
    expect(githubRepoProblem(repo)?.code).toBe("ESOURCE_INVALID");
  });
  it.each(["plugins/x", "x", "./x", "a/b/c"])("accepts subdir %s", (p) => {
    expect(subdirPathProblem(p)).toBeUndefined();
  });
  it.each(["../../victim", "a/../../b", "a/..", "/etc", "C:\\x", "\\\\server\\x", "..\\x", "a\u0000"])("refuses subdir %j with EENTRY_ESCAPE", (p) => {
    expect(subdirPathProblem(p)?.code).toBe("EENTRY_ESCAPE");
  });
  it("reads a git-subdir url as a git URL or GitHub's owner/repo", () => {
    expect(subdirUrlProblem("acme/mono", remote)).toBeUndefined();
    expect(subdirUrlProblem("acme/mono.git", remote)).toBeUndefined();
    expect(subdirUrlProblem("https://h/x.git", remote)).toBeUndefined();
    expect(subdirUrlProblem("-oProxyCommand=x", remote)?.code).toBe("EGIT_URL");
    expect(subdirUrlProblem("-o/x", remote)?.code).toBe("EGIT_URL");
    expect(subdirUrlProblem("ext::sh", remote)?.code).toBe("EGIT_URL");
  });
  it.each(["1.2.3", "^1.2.0", ">=1 <2", "latest", "next", "beta-2", "*"])("accepts npm version %s", (v) => {
    expect(npmVersionProblem(v)).toBeUndefined();
  });
  it.each(["--registry=http://evil", "-1", " -x", "a\u0000", "", "$(x)"])("refuses npm version %j with EVERSION", (v) => {
    expect(npmVersionProblem(v)?.code).toBe("EVERSION");
  });
  it.each([["https://registry.npmjs.org", undefined], ["http://127.0.0.1:4873/", undefined], ["-x", "ESOURCE_URL"], ["ftp://r", "ESOURCE_URL"], ["https://r x", "ESOURCE_URL"]])("registry %j → %s", (url, code) => {
    expect(registryUrlProblem(url)?.code).toBe(code);
  });
});
