/**
 * State files that may hold a credential are owner-only (issue 41, class I.2): a marketplace
 * added from a URL carrying tokens in its query keeps that URL (it is needed to fetch again),
 * so every file under the user's home that contains it must be unreadable by group and others.
 */
import { readFile, readdir, lstat } from "node:fs/promises";
import path from "node:path";
import * as tar from "tar";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { catalog } from "../helpers/marketplace-fixtures.js";
import { runCli } from "../helpers/run-cli.js";
import { type TmpWorld, worldPerTest } from "../helpers/tmp-home.js";

const PASSWORD = "pw-5c1e9a77";
const TOKEN = "qt-83b0d2f4";

let w: TmpWorld;
let http: TestHttpServer | undefined;
worldPerTest((made) => (w = made), "xcsh-tools-modes-");
beforeAll(async () => {
  await buildDist();
}, 180_000);
afterEach(async () => {
  await http?.close();
  http = undefined;
});

/** Every regular file below `dir` whose bytes contain one of `needles`, with its mode. */
async function filesHolding(dir: string, needles: string[]): Promise<{ file: string; mode: number }[]> {
  const out: { file: string; mode: number }[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const text = await readFile(file, "latin1");
    if (needles.some((n) => text.includes(n))) out.push({ file, mode: (await lstat(file)).mode & 0o777 });
  }
  return out;
}

describe("state files holding a URL with a credential", () => {
  it("marketplace add / update / tools: every file that holds the password or token is 0600", async () => {
    http = await startHttpServer();
    http.set("/cat/marketplace.json", catalog("webcat", [{ name: "remote", source: { source: "github", repo: "acme/remote" } }]));
    // fetch() refuses user:password in a URL, so a catalog URL carries its credential in the query.
    const url = `${http.url}/cat/marketplace.json?token=${TOKEN}&key=${PASSWORD}`;
    const run = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home });
    const added = await run(["marketplace", "add", url]);
    expect(added.code, added.stderr).toBe(0);
    expect((await run(["marketplace", "update", "webcat"])).code).toBe(0);
    expect((await run(["tools"])).code).toBe(0);
    const holding = await filesHolding(w.home, [PASSWORD, TOKEN]);
    // The URL is stored (it is needed to fetch again): the test looks at real files.
    expect(holding.length).toBeGreaterThan(0);
    for (const { file, mode } of holding) expect({ file, mode: mode.toString(8) }).toEqual({ file, mode: "600" });
  });
});

describe("npm plugin from a tarball URL with a token", () => {
  it("install: every file under the xcsh home that holds the token (package.json, lockfiles) is 0600", async () => {
    const pkg = path.join(w.root, "pkg", "package");
    await w.write(path.join(pkg, "package.json"), { name: "tokened", version: "1.0.0", type: "module", xcsh: { tools: "./t.js" } });
    await w.write(path.join(pkg, "t.js"), 'export default (api) => ({ name: "tokened_tool", label: "t", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n');
    const tgz = path.join(w.root, "tokened.tgz");
    await tar.c({ gzip: true, file: tgz, cwd: path.dirname(pkg) }, ["package"]);
    http = await startHttpServer();
    http.set("/tokened.tgz", await readFile(tgz));
    await w.write(path.join(w.home, ".npmrc"), "registry=http://127.0.0.1:9/\n");
    const r = await runCli(["install", `${http.url}/tokened.tgz?token=${TOKEN}`], { cwd: w.cwd, home: w.home });
    expect(r.code, r.stderr).toBe(0);
    // Under the xcsh home: npm's own cache (~/.npm, npm's modes) records the URL too, as with npm itself.
    const holding = await filesHolding(w.xcshHome, [TOKEN]);
    expect(holding.length).toBeGreaterThan(0);
    for (const { file, mode } of holding) expect({ file, mode: mode.toString(8) }).toEqual({ file, mode: "600" });
  });
});
