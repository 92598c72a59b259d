/**
 * `xcsh-tools trust [path]`, `untrust [path]`, `trust --list` (in process, through the program),
 * and the one trust question a command may ask on a terminal (`decideCommandTrust`), driven with
 * fake TTY streams: yes records trust, no or an empty answer does not, no terminal never asks.
 */
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { PassThrough } from "node:stream";
import { beforeEach, describe, expect, it } from "vitest";
import { createOutput } from "../../src/cli/output.js";
import { decideCommandTrust } from "../../src/cli/project-trust.js";
import { runCli } from "../../src/cli/program.js";
import { xcshPaths } from "../../src/core/paths.js";
import { isProjectTrustedByUser, readTrustRecord } from "../../src/core/trust.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-trust-cmd-", { trustProject: false });

const trustFile = () => xcshPaths({ home: w.home, xcshHome: w.xcshHome }).trustedProjects;
const trustedNow = (dir: string) => isProjectTrustedByUser(dir, { home: w.home, trustFile: trustFile() });

async function run(args: string[], cwd = w.cwd): Promise<{ code: number; stdout: string; stderr: string; json(): any }> {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    stdout: { write: (chunk: string) => (stdout += chunk) },
    stderr: { write: (chunk: string) => (stderr += chunk) },
    cwd,
    env: { HOME: w.home, XCSH_HOME: w.xcshHome, NO_COLOR: "1" },
  });
  return { code, stdout, stderr, json: () => JSON.parse(stdout) };
}

describe("trust / untrust / trust --list", () => {
  it("trust records the current folder (--cwd) by real path; again changes nothing; --list shows it", async () => {
    const first = await run(["trust", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json()).toMatchObject({ project: w.cwd, trusted: true, changed: true, file: trustFile() });
    expect(trustedNow(w.cwd)).toBe(true);
    const again = await run(["trust", "--json"]);
    expect(again.json()).toMatchObject({ project: w.cwd, changed: false });
    const listed = await run(["trust", "--list", "--json"]);
    expect(listed.json().projects).toEqual([{ path: w.cwd, trustedAt: expect.any(String), exists: true }]);
    const text = await run(["trust", "--list"]);
    expect(text.stdout).toContain(w.cwd);
  });

  it("trust takes a path (relative to --cwd, or a symlink: recorded as the real folder)", async () => {
    const sub = path.join(w.cwd, "sub");
    await mkdir(sub);
    const link = path.join(w.root, "link");
    await symlink(sub, link, "dir");
    expect((await run(["--cwd", w.root, "trust", "link", "--json"])).json()).toMatchObject({ project: sub, changed: true });
    expect(readTrustRecord(trustFile()).record.projects.map((p) => p.path)).toEqual([sub]);
    expect(trustedNow(link)).toBe(true);
    expect(trustedNow(w.cwd)).toBe(false);
  });

  it("untrust removes it; a project still trusted through a parent folder says so", async () => {
    const sub = path.join(w.cwd, "sub");
    await mkdir(sub);
    await run(["trust", w.cwd]);
    await run(["trust", sub]);
    const r = await run(["untrust", sub, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ project: sub, changed: true, trusted: true, trustedThrough: w.cwd });
    const text = await run(["untrust", sub]);
    expect(text.stdout).toContain("was not in the trust record");
    expect(text.stderr).toContain(`still trusted through ${w.cwd}`);
    expect((await run(["untrust", "--json"])).json()).toMatchObject({ project: w.cwd, changed: true, trusted: false });
    expect(trustedNow(sub)).toBe(false);
  });

  it("untrust takes a recorded folder that no longer exists", async () => {
    const gone = path.join(w.root, "gone");
    await mkdir(gone);
    await run(["trust", gone]);
    await rm(gone, { recursive: true });
    const r = await run(["untrust", gone, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ project: gone, changed: true });
    expect(readTrustRecord(trustFile()).record.projects).toEqual([]);
  });

  it("a path that does not exist or is not a folder is a usage error (exit 2) and records nothing", async () => {
    const file = await w.write("file.txt", "x");
    for (const args of [["trust", path.join(w.root, "missing")], ["trust", file], ["untrust", path.join(w.root, "missing")], ["untrust", file], ["trust", "--list", w.cwd]]) {
      const r = await run([...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.json().error.code).toBe("EUSAGE");
    }
    const text = await run(["trust", path.join(w.root, "missing")]);
    expect(text.stderr).toMatch(/does not exist/);
    await expect(readFile(trustFile(), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("--list of a broken record reports the problem; trust replaces it, untrust leaves it", async () => {
    await w.write(trustFile(), "{ not json");
    const listed = await run(["trust", "--list", "--json"]);
    expect(listed.code).toBe(0);
    expect(listed.json()).toMatchObject({ projects: [], problem: expect.stringMatching(/not valid JSON/) });
    // Nothing is trusted while the record is broken; untrust does not rewrite it.
    expect((await run(["untrust", "--json"])).json()).toMatchObject({ project: w.cwd, changed: false, trusted: false });
    expect((await run(["untrust"])).stderr).toMatch(/not valid JSON/);
    expect(await readFile(trustFile(), "utf8")).toBe("{ not json");
    expect((await run(["trust", "--json"])).json()).toMatchObject({ changed: true });
    expect(readTrustRecord(trustFile())).toEqual({ record: { version: 1, projects: [{ path: w.cwd, trustedAt: expect.any(String) }] } });
  });
});

describe("the trust question on a terminal", () => {
  /** Fake TTY streams answering `answer` once the question is printed. */
  function terminal(answer: string | undefined, tty = true) {
    const stdin = Object.assign(new PassThrough(), { isTTY: tty });
    const stdout = Object.assign(new PassThrough(), { isTTY: tty });
    let transcript = "";
    stdout.on("data", (chunk: Buffer) => {
      transcript += chunk.toString("utf8");
      if (answer !== undefined && /\(y\/N\)\s*$/.test(transcript)) {
        stdin.write(`${answer}\n`);
        answer = undefined;
      }
    });
    return { io: { stdin, stdout }, transcript: () => transcript };
  }
  const ctx = (json = false) => ({
    cwd: w.cwd,
    roots: { home: w.home, xcshHome: w.xcshHome },
    output: createOutput({ stdout: { write: () => true }, stderr: { write: () => true } }, { json, env: {} }),
  });

  beforeEach(async () => {
    await w.write(path.join(w.cwd, ".xcsh/tools/t.js"), "export default () => [];\n");
  });

  it("yes records trust", async () => {
    const t = terminal("y");
    expect(await decideCommandTrust(ctx(), t.io)).toBe(true);
    expect(t.transcript()).toContain(".xcsh/tools");
    expect(t.transcript()).toContain(`Trust ${w.cwd}?`);
    expect(trustedNow(w.cwd)).toBe(true);
  });

  it("no, or an empty answer, does not", async () => {
    for (const answer of ["n", ""]) {
      const t = terminal(answer);
      expect(await decideCommandTrust(ctx(), t.io)).toBe(false);
      expect(t.transcript()).toContain("(y/N)");
    }
    await expect(readFile(trustFile(), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("without a terminal, with --json, or in a project without project state, nothing is asked", async () => {
    const pipe = terminal("y", false);
    expect(await decideCommandTrust(ctx(), pipe.io)).toBe(false);
    expect(pipe.transcript()).toBe("");
    const json = terminal("y");
    expect(await decideCommandTrust(ctx(true), json.io)).toBe(false);
    expect(json.transcript()).toBe("");
    await rm(path.join(w.cwd, ".xcsh"), { recursive: true });
    const bare = terminal("y");
    expect(await decideCommandTrust(ctx(), bare.io)).toBe(false);
    expect(bare.transcript()).toBe("");
    await expect(readFile(trustFile(), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a fresh clone with only a team declaration (xcsh-team.json) is asked about: install would restore its set", async () => {
    await rm(path.join(w.cwd, ".xcsh"), { recursive: true });
    await w.write(path.join(w.cwd, "xcsh-team.json"), `${JSON.stringify({ version: 1, plugins: {} })}\n`);
    const t = terminal("y");
    expect(await decideCommandTrust(ctx(), t.io)).toBe(true);
    expect(t.transcript()).toContain("xcsh-team.json");
    expect(trustedNow(w.cwd)).toBe(true);
  });

  it("a trusted project is not asked about", async () => {
    await run(["trust"]);
    const t = terminal("n");
    expect(await decideCommandTrust(ctx(), t.io)).toBe(true);
    expect(t.transcript()).toBe("");
  });
});
