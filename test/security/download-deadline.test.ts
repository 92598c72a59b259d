/**
 * A download that answers and then drips bytes (issue 41, class I.3): one deadline covers the
 * whole download (headers and body), the error is coded, and the CLI process exits right after
 * printing it (no socket or timer of the download keeps it alive). The deadline is set through
 * the documented setting's variable, XCSH_TOOLS_FETCH_TIMEOUT_MS. The time of the error line and
 * of the process's exit are measured, not only the message.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog, catalogPath } from "../helpers/marketplace-fixtures.js";
import { cliArgv, hermeticEnv, runCli } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

const DEADLINE_MS = 1500;
const GZIP_HEAD = Buffer.from([0x1f, 0x8b, 0x08, 0x00]);

let w: TmpWorld;
let http: TestHttpServer;
worldPerTest((made) => (w = made), "xcsh-tools-deadline-");
beforeAll(async () => {
  await buildDist();
}, 180_000);
afterEach(async () => {
  await http?.close();
});

/** Run the CLI; when its error's `Code:` line appeared and when it exited, in ms from the start. */
function timedCli(args: string[]): Promise<{ code: number | null; stderr: string; errorAt: number | undefined; exitAt: number }> {
  return new Promise((resolve) => {
    const start = Date.now();
    const child = spawn(process.execPath, cliArgv(w.home, args), { cwd: w.cwd, env: hermeticEnv(w.home, { XCSH_TOOLS_FETCH_TIMEOUT_MS: String(DEADLINE_MS) }), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let errorAt: number | undefined;
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      if (errorAt === undefined && /^Code: /m.test(stderr)) errorAt = Date.now() - start;
    });
    child.stdout.resume();
    // Far past the bound the test asserts: a process that outlives its error is killed and fails.
    const kill = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("close", (code) => {
      clearTimeout(kill);
      resolve({ code, stderr, errorAt, exitAt: Date.now() - start });
    });
  });
}

async function expectPromptExit(args: string[], code: string | RegExp): Promise<void> {
  const r = await timedCli(args);
  expect(r.stderr).toMatch(typeof code === "string" ? new RegExp(`Code: ${code}`) : code);
  expect(r.code).not.toBe(0);
  expect(r.errorAt, r.stderr).toBeDefined();
  // The error comes within the deadline plus start-up, and the process ends right after it.
  expect(r.errorAt!).toBeLessThan(DEADLINE_MS + 8_000);
  expect(r.exitAt - r.errorAt!, `exited ${r.exitAt - r.errorAt!} ms after its error`).toBeLessThan(3_000);
  // The dripping connection was closed by the client, not by the test's teardown.
  expect(http.dripsClosed()).toBeGreaterThan(0);
}

describe("a download that answers, then sends one byte every 500 ms forever", () => {
  it("npm plugin from a tarball URL (gzip that never ends): EFETCH_TIMEOUT, then the process exits", async () => {
    http = await startHttpServer();
    http.drip("/p.tgz", GZIP_HEAD, 500);
    await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
    await expectPromptExit(["install", `${http.url}/p.tgz`], "EFETCH_TIMEOUT");
  }, 60_000);

  it("npm plugin from a tarball URL refused at its first bytes (not gzip): ETARBALL, then the process exits", async () => {
    http = await startHttpServer();
    http.drip("/p.tgz", Buffer.from("<html>"), 500);
    await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
    await expectPromptExit(["install", `${http.url}/p.tgz`], "ETARBALL");
  }, 60_000);

  it("marketplace catalog URL: EFETCH_TIMEOUT, then the process exits", async () => {
    http = await startHttpServer();
    http.drip("/m/marketplace.json", Buffer.from("{"), 500);
    await expectPromptExit(["marketplace", "add", `${http.url}/m/marketplace.json`], "EFETCH_TIMEOUT");
  }, 60_000);

  it("marketplace archive plugin: EFETCH_TIMEOUT, then the process exits", async () => {
    http = await startHttpServer();
    http.drip("/p.tar.gz", GZIP_HEAD, 500);
    const root = path.join(w.root, "market");
    await w.write(path.join(root, catalogPath()), catalog("dm", [{ name: "p", source: { source: "archive", url: `${http.url}/p.tar.gz` } }]));
    expect((await runCli(["marketplace", "add", root], { cwd: w.cwd, home: w.home })).code).toBe(0);
    await expectPromptExit(["install", "p@dm", "--yes"], "EFETCH_TIMEOUT");
  }, 60_000);
});
