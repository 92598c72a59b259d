/**
 * The bundle defers eager requires of npm's libraries (scripts/lib/bundle.mjs, the
 * `lazyRequires` plugin): loading pacote and arborist must evaluate none of sigstore,
 * @npmcli/run-script, arborist's query selector (@npmcli/query), pacote's git client and its
 * folder packer (npm-packlist), the three proxy agents of @npmcli/agent, and the first use of
 * each (reading sigstore's exports, calling run-script, a `querySelectorAll`, a git spec, packing
 * a folder, an agent through a proxy) must reach the real module, under every runtime the CLI
 * runs on. npm-libraries.ts is bundled as
 * the package's build bundles it, with the two packages' main modules instrumented to record
 * their evaluation.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { bundleForTest, REPO, testBundleRoot } from "../helpers/build-dist.js";
import { requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";

const BUNDLE = pathToFileURL(path.join(testBundleRoot("deferred-requires"), "dist", "probe.js")).href;
// The entry lives in the repository, so that its requires resolve as pacote's do.
const ENTRY = path.join(REPO, "node_modules", ".cache", "xcsh-tools-test-bundles", "deferred-requires-entry.cjs");
const fromPacote = createRequire(createRequire(path.join(REPO, "package.json")).resolve("pacote"));
const fromArborist = createRequire(createRequire(path.join(REPO, "package.json")).resolve("@npmcli/arborist"));
const fromAgent = createRequire(createRequire(path.join(REPO, "package.json")).resolve("@npmcli/agent"));
// @npmcli/agent's proxy module, which the bundle rewrites to require the proxy agents on first use.
const PROXY_MODULE = fromAgent.resolve("./proxy.js");
const MAINS = {
  sigstore: fromPacote.resolve("sigstore"),
  "run-script": fromPacote.resolve("@npmcli/run-script"),
  query: fromArborist.resolve("@npmcli/query"),
  git: fromPacote.resolve("@npmcli/git"),
  packlist: fromPacote.resolve("npm-packlist"),
  "http-proxy": fromAgent.resolve("http-proxy-agent"),
  "https-proxy": fromAgent.resolve("https-proxy-agent"),
  "socks-proxy": fromAgent.resolve("socks-proxy-agent"),
};

/** Records, in the bundled process, when each instrumented main module is evaluated. */
const instrument = {
  name: "test:record-evaluation",
  transform(code: string, id: string) {
    const name = Object.entries(MAINS).find(([, file]) => file === id)?.[0];
    return name ? { code: `(globalThis.__xcshToolsEvaluated ??= []).push(${JSON.stringify(name)});\n${code}`, map: null } : null;
  },
};

// Runs in the child: loads pacote and arborist from the bundle, then reports which instrumented
// modules were evaluated before and after the first touch of each module's exports.
const PROBE = `
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
const { default: probe } = await import(${JSON.stringify(BUNDLE)});
const evaluated = () => [...(globalThis.__xcshToolsEvaluated ?? [])];
const pacote = probe.lib.pacote();
probe.lib.Arborist();
const before = evaluated();
const sigstore = probe.sigstore();
const verifyType = typeof sigstore.verify;
const listsVerify = Object.keys(sigstore).includes("verify");
const afterSigstore = evaluated();
const runScript = probe.runScript();
const runScriptType = typeof runScript;
const beforeRun = evaluated();
const folder = mkdtempSync(path.join(os.tmpdir(), "xcsh-tools-run-script-"));
const ran = await runScript({ event: "probe", path: folder, pkg: { name: "probe", version: "1.0.0", scripts: { probe: "echo ran" } }, stdio: "pipe" });
const after = evaluated();
// Each stand-in of an importer's require, through the importer: arborist's Node, pacote's fetchers.
const Arborist = probe.lib.Arborist();
writeFileSync(path.join(folder, "package.json"), JSON.stringify({ name: "probe", version: "1.0.0" }));
const root = new Arborist.Node({ path: folder, pkg: { name: "probe", version: "1.0.0" } });
const queried = (await root.querySelectorAll(":root")).map((node) => node === root);
const afterQuery = evaluated();
const packed = (await pacote.tarball(folder, { Arborist })).length > 0;
const afterPack = evaluated();
const gitFailed = await pacote.resolve("git+file://" + path.join(folder, "no-such-repo.git"), { cache: path.join(folder, "cache") }).then(() => false, () => true);
const afterGit = evaluated();
const { getAgent } = probe.agent();
const direct = getAgent("https://registry.invalid/", {}).proxy;
const beforeProxy = evaluated();
const proxied = getAgent("https://registry.invalid/", { proxy: "socks5://127.0.0.1:9" }).proxy.url.protocol;
const afterProxy = evaluated();
const { getProxyAgent } = probe.proxy();
const agents = [getProxyAgent("socks5://127.0.0.1:9").name, ...getProxyAgent("http://127.0.0.1:9").map((agent) => agent.name)];
console.log(JSON.stringify({ manifest: typeof pacote.manifest, before, verifyType, listsVerify, afterSigstore, runScriptType, beforeRun, ran: { code: ran.code, stdout: String(ran.stdout).trim() }, after, queried, afterQuery, packed, afterPack, gitFailed, afterGit, direct, beforeProxy, proxied, afterProxy, agents }));
`;

beforeAll(async () => {
  mkdirSync(path.dirname(ENTRY), { recursive: true });
  writeFileSync(
    ENTRY,
    `"use strict";\nmodule.exports = {\n  lib: require(${JSON.stringify(path.join(REPO, "src", "plugins", "npm-libraries.ts"))}),\n  sigstore: () => require("sigstore"),\n  runScript: () => require("@npmcli/run-script"),\n  agent: () => require("@npmcli/agent"),\n  proxy: () => require(${JSON.stringify(PROXY_MODULE)}),\n};\n`,
  );
  await bundleForTest("deferred-requires", { probe: ENTRY }, [instrument]);
}, 180_000);

describe("sigstore, run-script, the query selector, git and packlist are evaluated on first use, not with pacote and arborist", () => {
  for (const runtime of runtimes()) {
    runtimeIt(runtime)(`${runtime.label}${skipNote(runtime)}`, { timeout: 60_000 }, () => {
      const command = requireRuntime(runtime);
      const args = runtime.id === "bun" ? ["-e", PROBE] : ["--input-type=module", "-e", PROBE];
      const child = spawnSync(command, args, { cwd: REPO, encoding: "utf8" });
      expect(child.stderr).toBe("");
      expect(child.status).toBe(0);
      const report = JSON.parse(child.stdout) as Record<string, unknown>;
      expect(report.manifest).toBe("function");
      expect(report.before).toEqual([]);
      expect(report.verifyType).toBe("function");
      expect(report.listsVerify).toBe(true);
      expect(report.afterSigstore).toEqual(["sigstore"]);
      expect(report.runScriptType).toBe("function");
      expect(report.beforeRun).toEqual(["sigstore"]);
      expect(report.ran).toEqual({ code: 0, stdout: "ran" });
      expect(report.after).toEqual(["sigstore", "run-script"]);
      expect(report.queried).toEqual([true]);
      expect(report.afterQuery).toEqual(["sigstore", "run-script", "query"]);
      expect(report.packed).toBe(true);
      expect(report.afterPack).toEqual(["sigstore", "run-script", "query", "packlist"]);
      expect(report.gitFailed).toBe(true);
      expect(report.afterGit).toEqual(["sigstore", "run-script", "query", "packlist", "git"]);
      expect(report.direct).toEqual({});
      expect(report.beforeProxy).toEqual(report.afterGit);
      expect(report.proxied).toBe("socks5:");
      expect(report.afterProxy).toEqual([...(report.afterGit as string[]), "http-proxy", "https-proxy", "socks-proxy"]);
      expect(report.agents).toEqual(["SocksProxyAgent", "HttpProxyAgent", "HttpsProxyAgent"]);
    });
  }
});

describe("the proxy module's rewrite refuses a version of @npmcli/agent it does not know", () => {
  type Rewrite = { transform: { handler(code: string, id: string): { code: string } } };
  const rewrite = async () => ((await import(pathToFileURL(path.join(REPO, "scripts", "lib", "bundle.mjs")).href)) as { lazyProxyAgents: Rewrite }).lazyProxyAgents.transform.handler;
  const original = readFileSync(PROXY_MODULE, "utf8");

  it("rewrites the installed version, leaving no proxy agent required at load", async () => {
    const out = (await rewrite())(original, PROXY_MODULE).code;
    expect(out).not.toMatch(/^const \{ \w+ProxyAgent \} = require/m);
    expect(out).toContain("proxyAgents().SocksProxyAgent");
  });

  it.each([
    ["a require it expects is gone", original.replace("const { SocksProxyAgent } = require('socks-proxy-agent')\n", "const SocksProxyAgent = require('socks-proxy-agent').SocksProxyAgent\n")],
    ["a replaced text appears twice", original.replace("    return SocksProxyAgent\n", "    return SocksProxyAgent\n    return SocksProxyAgent\n")],
    ["an agent class is used somewhere else", `${original}\nmodule.exports.socks = SocksProxyAgent\n`],
    ["the protocols set is used other than by has()", `${original}\nmodule.exports.protocols = [...SOCKS_PROTOCOLS]\n`],
  ])("fails the build when %s", async (_what, code) => {
    const handler = await rewrite();
    expect(() => handler(code, PROXY_MODULE)).toThrow(/lazyProxyAgents/);
  });
});
