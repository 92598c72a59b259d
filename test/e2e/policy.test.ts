/**
 * The organization policy through the built CLI (issue 43 points 2, 3, 5; docs/design/fleets.md
 * "Policy"): each run reads the policy file through the test-only preload (run-cli.ts
 * `managedPolicy`), HOMEs of their own, npm through a counting proxy in front of the local
 * Verdaccio, catalogs and git URLs on a counting loopback server. A refused source is refused at
 * every entry point with no request made and nothing on disk changed; what is already installed
 * stops loading with a coded reason; a broken policy file stops every change and never allows.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isolatedGitEnv } from "../helpers/git-remote.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { startHttpServer, type TestHttpServer } from "../helpers/http-server.js";
import { writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { withManagedPolicy } from "../helpers/no-managed-policy.js";
import { countingSwapProxy, type RegistryProxy } from "../helpers/registry-proxy.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, writeTrustRecord, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { toolName, toolSource } from "../integration/plugins-fixtures.js";

const LONG = 180_000;

describe("organization policy: every entry point, boot, broken files, audit", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  let proxy: RegistryProxy;
  let http: TestHttpServer;
  const requests: string[] = [];
  const tag = Math.random().toString(36).slice(2, 8);
  const ok = `@polok${tag}/tool`;
  const bad = `@polbad${tag}/tool`;
  const scripted = `@polok${tag}/scripted`;
  let w: TmpWorld;
  let policyFile: string;
  let market: string;

  const publish = (name: string, extra: Record<string, unknown> = {}) =>
    reg.publish({ name, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" }, ...extra }, files: { "t.js": toolSource(toolName(name)) } });

  beforeAll(async () => {
    reg = await useGlobalRegistry();
    proxy = await countingSwapProxy(reg.url, requests, () => undefined);
    http = await startHttpServer();
    // ok brings a hook module the host imports: what the audit must say it runs.
    await reg.publish({ name: ok, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js", hooks: "./hooks/guard.js" } }, files: { "t.js": toolSource(toolName(ok)), "hooks/guard.js": "export default function () {}\n" } });
    await publish(bad);
    await publish(scripted, { scripts: { postinstall: `node -e "require('fs').writeFileSync(process.env.XCSH_TEST_MARKER,'ran')"` } });
  }, LONG);
  afterAll(async () => {
    await proxy?.close();
    await http?.close();
    await reg?.dispose();
  });
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-policy-e2e-");
    await writeUserNpmrc(w.home, proxy.url);
    policyFile = path.join(w.root, "etc", "managed-settings.json");
    market = await writeFolderMarketplace(path.join(w.root, "markets", "corp"), { name: "corp", tools: ["corp_hello"] });
    requests.length = 0;
    http.requests.length = 0;
  });
  afterEach(async () => {
    await w.cleanup();
  });

  const cli = (args: string[], options: { policy?: boolean; cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
    runCli(args, { cwd: options.cwd ?? w.cwd, home: w.home, timeoutMs: LONG, ...(options.env ? { env: options.env } : {}), ...(options.policy === false ? {} : { managedPolicy: policyFile }) });
  const setPolicy = (doc: unknown) => w.write(policyFile, typeof doc === "string" ? doc : JSON.stringify(doc));
  /** Everything of the world but the policy file itself and npm's own cache. */
  const snap = () => snapshotTree(w.root, { exclude: [".npm", "etc"] });
  function refusal(r: ProcessResult): { code: string; message: string; hint?: string } {
    expect(r.code, `${r.stdout}\n${r.stderr}`).not.toBe(0);
    const error = r.json().error;
    expect(error, r.stdout).toBeDefined();
    return error;
  }
  /** The code of a refusal, or of the one failed item of a report (`update` and `marketplace update` go on with the others). */
  function failedCode(r: ProcessResult): string | undefined {
    expect(r.code, `${r.stdout}\n${r.stderr}`).not.toBe(0);
    const doc = r.json();
    return doc.error?.code ?? doc.failed?.[0]?.error?.code ?? doc.results?.find((x: { op: string }) => x.op === "FAILED")?.error?.code;
  }
  async function installed(args: string[]): Promise<void> {
    const r = await cli([...args, "--yes"], { policy: false });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  }
  /** Before any policy: the npm plugin `name`, the folder marketplace and its plugin hello@corp; no request counted after. */
  async function installBoth(name: string): Promise<void> {
    await installed(["install", name]);
    await installed(["marketplace", "add", market]);
    await installed(["install", "hello@corp"]);
    requests.length = 0;
  }

  it("marketplace add: a blocked folder, a catalog URL off the allowlist, a git host — refused, nothing fetched, nothing written", async () => {
    const before = await snap();
    await setPolicy({ marketplaces: { block: [{ folder: path.dirname(market) }] } });
    const folder = refusal(await cli(["marketplace", "add", market, "--json"]));
    expect(folder.code).toBe("EPOLICY_BLOCKED");
    expect(folder.message).toContain(market);
    http.set("/marketplace.json", { name: "remote", plugins: [] });
    await setPolicy({ marketplaces: { allow: [{ github: "acme" }] } });
    expect(refusal(await cli(["marketplace", "add", `${http.url}/marketplace.json`, "--json"])).code).toBe("EPOLICY_NOT_ALLOWED");
    const port = new URL(http.url).port;
    await setPolicy({ marketplaces: { block: [{ host: `127.0.0.1:${port}` }] } });
    expect(refusal(await cli(["marketplace", "add", `${http.url}/mkt.git`, "--json"])).code).toBe("EPOLICY_BLOCKED");
    expect(http.requests).toEqual([]);
    expect(await snap()).toEqual(before);
  }, LONG);

  it("install from npm: a blocked scope, a registry off the allowlist, a forbidden name — no registry request", async () => {
    const before = await snap();
    await setPolicy({ plugins: { block: [{ npmScope: `@polbad${tag}` }] } });
    expect(refusal(await cli(["install", bad, "--yes", "--json"])).code).toBe("EPOLICY_BLOCKED");
    await setPolicy({ plugins: { allow: [{ npmRegistry: "https://npm.corp.example/" }] } });
    const off = refusal(await cli(["install", ok, "--yes", "--json"]));
    expect(off.code).toBe("EPOLICY_NOT_ALLOWED");
    expect(off.message).toContain(proxy.url);
    await setPolicy({ plugins: { forbidden: [ok] } });
    expect(refusal(await cli(["install", ok, "--yes", "--json"])).code).toBe("EPOLICY_FORBIDDEN");
    expect(requests).toEqual([]);
    expect(await snap()).toEqual(before);
    // The same install with the registry allowed goes through: the refusals above were the policy's.
    await setPolicy({ plugins: { allow: [{ npmRegistry: proxy.url }] } });
    expect((await cli(["install", ok, "--yes"])).code).toBe(0);
    expect(requests.length).toBeGreaterThan(0);
  }, LONG);

  it("install a folder, a tarball URL, a git URL: refused before anything is read or fetched", async () => {
    const folder = await w.write("plugin/package.json", { name: "local-plugin", version: "1.0.0", xcsh: { tools: "./t.js" } });
    const before = await snap();
    await setPolicy({ plugins: { block: [{ folder: path.dirname(folder) }] } });
    expect(refusal(await cli(["install", path.dirname(folder), "--yes", "--json"])).code).toBe("EPOLICY_BLOCKED");
    expect(refusal(await cli(["link", path.dirname(folder), "--json"])).code).toBe("EPOLICY_BLOCKED");
    await setPolicy({ plugins: { allow: [{ npmScope: `@polok${tag}` }] } });
    for (const spec of [`${http.url}/x.tgz`, `git+${http.url}/x.git`, "github:someone/plugin"]) {
      expect(refusal(await cli(["install", spec, "--yes", "--json"])).code, spec).toBe("EPOLICY_NOT_ALLOWED");
    }
    expect(http.requests).toEqual([]);
    expect(requests).toEqual([]);
    expect(await snap()).toEqual(before);
  }, LONG);

  it("install from a marketplace: its marketplace blocked, its own source blocked, the plugin forbidden", async () => {
    expect((await cli(["marketplace", "add", market], { policy: false })).code).toBe(0);
    const before = await snap();
    await setPolicy({ marketplaces: { block: [{ folder: market }] } });
    expect(refusal(await cli(["install", "hello@corp", "--yes", "--json"])).code).toBe("EPOLICY_BLOCKED");
    await setPolicy({ plugins: { allow: [{ github: "acme" }] } });
    expect(refusal(await cli(["install", "hello@corp", "--yes", "--json"])).code).toBe("EPOLICY_NOT_ALLOWED");
    await setPolicy({ plugins: { forbidden: ["hello"] } });
    expect(refusal(await cli(["install", "hello@corp", "--yes", "--json"])).code).toBe("EPOLICY_FORBIDDEN");
    await setPolicy({ marketplaces: { block: [{ folder: market }] } });
    expect(failedCode(await cli(["marketplace", "update", "corp", "--json"]))).toBe("EPOLICY_BLOCKED");
    expect(await snap()).toEqual(before);
  }, LONG);

  it("update: an installed plugin whose source is now blocked is not fetched again", async () => {
    await installBoth(bad);
    const before = await snap();
    await setPolicy({ plugins: { block: [{ npmScope: `@polbad${tag}` }] } });
    expect(refusal(await cli(["update", bad, "--yes", "--json"])).code).toBe("EPOLICY_BLOCKED");
    expect(requests).toEqual([]);
    await setPolicy({ marketplaces: { block: [{ folder: market }] } });
    expect(failedCode(await cli(["update", "hello@corp", "--yes", "--json"]))).toBe("EPOLICY_BLOCKED");
    expect(await snap()).toEqual(before);
  }, LONG);

  it("restore (install with no spec): a blocked declared plugin, a forbidden one, a project marketplace the policy does not let projects add", async () => {
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    // A repository: `install --scope project` writes its declaration there.
    execFileSync("git", ["init", "-q"], { cwd: w.cwd, env: isolatedGitEnv(w.home) });
    await w.write(path.join(w.cwd, "xcsh-team.json"), { version: 1, plugins: { [bad]: { spec: "^1.0.0" } } });
    const before = await snap();
    await setPolicy({ plugins: { block: [{ npmScope: `@polbad${tag}` }], allow: [{ npmScope: `@polbad${tag}` }] } });
    expect(refusal(await cli(["install", "--yes", "--json"])).code).toBe("EPOLICY_BLOCKED");
    await setPolicy({ plugins: { allow: [{ npmScope: `@polbad${tag}` }, { npmRegistry: "https://npm.corp.example/" }] } });
    // Declaring one (--scope project) resolves its version first: refused before that request too.
    expect(refusal(await cli(["install", `${ok.replace("/tool", "/other")}`, "--scope", "project", "--yes", "--json"])).code).toBe("EPOLICY_NOT_ALLOWED");
    await setPolicy({ plugins: { forbidden: [bad] } });
    expect(refusal(await cli(["install", "--yes", "--json"])).code).toBe("EPOLICY_FORBIDDEN");
    expect(refusal(await cli(["install", bad, "--scope", "project", "--yes", "--json"])).code).toBe("EPOLICY_FORBIDDEN");
    expect(requests).toEqual([]);
    expect(await snap()).toEqual(before);
    await writeFolderMarketplace(path.join(w.cwd, "tools", "mkt"), { name: "inrepo", tools: ["inrepo_hello"] });
    await w.write(path.join(w.cwd, "xcsh-team.json"), { version: 1, marketplaces: { inrepo: { source: { source: "directory", path: "./tools/mkt" } } }, plugins: { "hello@inrepo": {} } });
    const declared = await snap();
    await setPolicy({ projectMarketplaces: false });
    const project = refusal(await cli(["install", "--yes", "--json"]));
    expect(project.code).toBe("EPOLICY_PROJECT_MARKETPLACE");
    expect(project.message).toContain("inrepo");
    expect(await snap()).toEqual(declared);
  }, LONG);

  it("boot: plugins whose recorded source the policy no longer allows, or that it forbids, are not loaded, with a coded reason", async () => {
    await installBoth(ok);
    const names = (r: ProcessResult) => (r.json().tools as { name: string }[]).map((t) => t.name).sort();
    const codes = (r: ProcessResult) => (r.json().errors as { code: string; error?: string; message?: string }[]).map((e) => `${e.code} ${/^Plugin (\S+) was not loaded/.exec(e.message ?? e.error ?? "")?.[1] ?? JSON.stringify(e)}`).sort();
    const free = await cli(["tools", "--json"], { policy: false });
    expect(names(free)).toEqual(["corp_hello", toolName(ok)].sort());

    await setPolicy({ plugins: { block: [{ npmScope: `@polok${tag}` }] }, marketplaces: { allow: [{ github: "acme" }] } });
    const blocked = await cli(["tools", "--json"]);
    expect(names(blocked)).toEqual([]);
    expect(codes(blocked)).toEqual([`EPOLICY_BLOCKED ${ok}`, "EPOLICY_NOT_ALLOWED hello@corp"]);

    await setPolicy({ plugins: { forbidden: ["hello@corp"] } });
    const forbidden = await cli(["tools", "--json"]);
    expect(names(forbidden)).toEqual([toolName(ok)]);
    expect(codes(forbidden)).toEqual(["EPOLICY_FORBIDDEN hello@corp"]);

    // The library a host calls, in this process (the seam set directly): the loader's result and the components a host runs.
    await setPolicy({ plugins: { block: [{ npmScope: `@polok${tag}` }] }, marketplaces: { allow: [{ github: "acme" }] } });
    await withManagedPolicy(policyFile, async () => {
      const lib = await import("../../src/index.js");
      const host = { home: w.home, xcshHome: w.xcshHome, env: {} };
      const loaded = await lib.discoverAndLoadCustomTools([], w.cwd, [], undefined, host);
      expect(loaded.tools).toEqual([]);
      expect(loaded.errors.map((e) => `${e.code} ${e.source?.plugin}`).sort()).toEqual([`EPOLICY_BLOCKED ${ok}`, "EPOLICY_NOT_ALLOWED hello@corp"]);
      const components = await lib.listInstalledComponents({ cwd: w.cwd, ...host });
      expect(components.plugins).toEqual([]);
      expect(components.refused?.map((r) => `${r.code} ${r.id}`).sort()).toEqual([`EPOLICY_BLOCKED ${ok}`, "EPOLICY_NOT_ALLOWED hello@corp"]);
    });

    // The host's own boot (`run` goes through discoverAndLoadCustomTools): the tool is not there.
    await setPolicy({ plugins: { block: [{ npmScope: `@polok${tag}` }] } });
    const run = await cli(["run", toolName(ok), "--json"]);
    expect(run.code).not.toBe(0);
    expect(JSON.stringify(run.json())).toMatch(/ETOOL_UNKNOWN|EPOLICY_BLOCKED/);
  }, LONG);

  it("a broken policy file stops every change; reading commands still work and say it", async () => {
    await installBoth(ok);
    let before = await snap();
    for (const [content, code] of [
      [{ plugins: { alow: [] } }, "EPOLICY_UNKNOWN_KEY"],
      [{ marketplaces: { block: [{ host: "https://git.corp" }] } }, "EPOLICY_PATTERN"],
      ["{ nope", "EPOLICY_INVALID"],
    ] as const) {
      await setPolicy(content);
      for (const args of [["install", bad], ["uninstall", ok], ["disable", ok], ["uninstall", "hello@corp"], ["marketplace", "remove", "corp"], ["update"]]) {
        const error = refusal(await cli([...args, "--yes", "--json"]));
        expect(error.code, `${args.join(" ")} with ${code}`).toBe(code);
        expect(error.message).toContain(policyFile);
      }
      expect(requests).toEqual([]);
      expect(await snap()).toEqual(before);
      // Reading commands work and say it (they may refresh the boot index's caches: not a change).
      const list = await cli(["list", "--json"]);
      expect(list.code).toBe(0);
      expect((list.json().plugins as { name: string }[]).map((p) => p.name)).toEqual([ok]);
      expect(list.json().policyError).toMatchObject({ code });
      expect((await cli(["list"])).stderr).toContain(code);
      const tools = await cli(["tools", "--json"]);
      expect(tools.json().tools).toEqual([]);
      expect((tools.json().errors as { code: string }[]).every((e) => e.code === code)).toBe(true);
      const doctor = await cli(["doctor", "--json"]);
      expect(doctor.json().checks).toContainEqual(expect.objectContaining({ area: "policy", status: "error", message: expect.stringContaining(code) }));
      expect((await cli(["audit", "--json"])).json().policy).toMatchObject({ file: policyFile, state: "broken", error: { code } });
      before = await snap();
    }
    // A folder where the file should be: exists, cannot be read.
    await rm(policyFile);
    await mkdir(policyFile);
    expect(refusal(await cli(["install", bad, "--yes", "--json"])).code).toBe("EPOLICY_UNREADABLE");
    expect(await snap()).toEqual(before);
  }, LONG);

  it("required plugins: uninstall and disable refused, a missing one reported by doctor", async () => {
    await installBoth(ok);
    const before = await snap();
    await setPolicy({ plugins: { required: [ok, "hello@corp", "@corp/audit-log"] } });
    for (const args of [["uninstall", ok], ["disable", ok], ["uninstall", "hello@corp"], ["disable", "hello@corp"], ["marketplace", "remove", "corp"]]) {
      const error = refusal(await cli([...args, "--yes", "--json"]));
      expect(error.code, args.join(" ")).toBe("EPOLICY_REQUIRED");
    }
    expect(await snap()).toEqual(before);
    const doctor = (await cli(["doctor", "--json"])).json();
    expect(doctor.checks).toContainEqual(expect.objectContaining({ area: "policy", status: "ok", message: expect.stringContaining(policyFile) }));
    expect(doctor.checks).toContainEqual(expect.objectContaining({ area: "policy", status: "error", message: expect.stringContaining("@corp/audit-log is required") }));
    expect(doctor.checks.filter((c: { area: string; status: string }) => c.area === "policy" && c.status === "error")).toHaveLength(1);
  }, LONG);

  it("allowScripts: false: install scripts never run, even with --allow-scripts, and the output says the policy forbids them", async () => {
    const marker = path.join(w.root, "marker");
    await setPolicy({ allowScripts: false });
    const r = await cli(["install", scripted, "--allow-scripts", "--yes"], { env: { XCSH_TEST_MARKER: marker } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("forbids install scripts");
    expect(r.stderr).toContain(policyFile);
    await expect(readFile(marker, "utf8")).rejects.toThrow();
    expect((await cli(["list", "--json"])).json().plugins[0]).toMatchObject({ name: scripted, scriptsRan: false });
    await setPolicy({ allowScripts: false, plugins: {} });
    await w.write(path.join(w.xcshHome, "xcsh-tools.json"), { allowScripts: true });
    expect((await cli(["update", scripted, "--yes"], { env: { XCSH_TEST_MARKER: marker } })).code).toBe(0);
    await expect(readFile(marker, "utf8")).rejects.toThrow();
  }, LONG);

  it("audit --json: source, version, integrity or commit, what it runs, scope, who installed it, the policy's verdict", async () => {
    await installBoth(ok);
    await setPolicy({ plugins: { block: [{ npmScope: `@polok${tag}` }], required: ["hello"] } });
    const r = await cli(["audit", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = r.json();
    expect(report).toMatchObject({ auditVersion: 1, policy: { file: policyFile, state: "ok" } });
    const npm = report.plugins.find((p: { id: string }) => p.id === ok);
    expect(npm).toMatchObject({
      kind: "npm",
      scope: "user",
      enabled: true,
      version: "1.0.0",
      source: { type: "registry", spec: ok },
      integrity: expect.stringMatching(/^sha512-/),
      resolved: expect.stringContaining(proxy.url),
      installScripts: { declared: [], ran: false },
      installedBy: "user",
      policy: { allowed: false, code: "EPOLICY_BLOCKED", required: false },
    });
    expect(npm.runs).toEqual([{ kind: "hook", name: expect.any(String), runs: `imported by the host: ${path.join(npm.path, "hooks", "guard.js")}` }]);
    const mkt = report.plugins.find((p: { id: string }) => p.id === "hello@corp");
    expect(mkt).toMatchObject({ kind: "marketplace", scope: "user", version: expect.any(String), source: { type: "marketplace", marketplace: "corp", marketplaceSource: { type: "local", uri: market } }, installedBy: "user", policy: { allowed: true, required: true } });
    expect(Object.keys(mkt).sort()).toEqual(["commit", "enabled", "id", "installScripts", "installedBy", "integrity", "kind", "path", "policy", "resolved", "runs", "scope", "source", "version"]);
    const human = await cli(["audit"]);
    expect(human.stdout).toContain(`Organization policy: ${policyFile}`);
    expect(human.stdout).toContain("EPOLICY_BLOCKED");
  }, LONG);
});
