/**
 * `install` through the HTTP proxy an `.npmrc` names: the bundle requires npm's proxy agents only
 * when a proxy is configured (scripts/lib/bundle.mjs `lazyProxyAgents`), so this is the path where
 * they are loaded late. Every request of the install (manifests and tarballs) must go through the
 * proxy, and the plugin must be installed as without one.
 */
import http from "node:http";
import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

/** A forward proxy for plain-HTTP requests (absolute-form URLs), recording each URL it forwards. */
async function forwardProxy(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url ?? "");
    const target = new URL(req.url ?? "");
    const upstream = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let w: TmpWorld;
let reg: RegistryHandle & { dispose(): Promise<void> };
let proxy: Awaited<ReturnType<typeof forwardProxy>>;
let name: string;
beforeAll(async () => {
  await buildDist();
  reg = await useGlobalRegistry();
  name = `px${Date.now().toString(36)}-plugin`;
  await reg.publish({ name: `${name}-lib`, version: "1.0.0", files: { "index.js": "module.exports = 1;\n" } });
  await reg.publish({ name, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./tools/t.js" }, dependencies: { [`${name}-lib`]: "^1.0.0" } }, files: { "tools/t.js": toolSource(toolName(name)) } });
}, 180_000);
afterAll(async () => {
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makeTmpWorld("xcsh-tools-proxy-");
  proxy = await forwardProxy();
  // No `noproxy`: the registry is on loopback, and every request must still take the proxy.
  await writeUserNpmrc(w.home, reg.url, `proxy=${proxy.url}\n`);
}, 120_000);
afterEach(async () => {
  await proxy.close();
  await w.cleanup();
});

describe("install through the proxy the .npmrc names", () => {
  it("fetches every manifest and tarball through the proxy and installs the plugin", async () => {
    const r = await runCli(["install", name], { cwd: w.cwd, home: w.home, env: { NO_PROXY: "", no_proxy: "" } });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const installed = JSON.parse(await readFile(path.join(w.home, ".xcsh", "plugins", "node_modules", name, "package.json"), "utf8")) as { name: string };
    expect(installed.name).toBe(name);
    const registry = new URL(reg.url);
    const through = proxy.seen.map((url) => new URL(url));
    expect(through.every((url) => url.host === registry.host)).toBe(true);
    // Both packages' manifests and tarballs: the plugin's and its library's.
    for (const pkg of [name, `${name}-lib`]) {
      expect(through.some((url) => decodeURIComponent(url.pathname) === `/${pkg}`)).toBe(true);
      expect(through.some((url) => url.pathname.endsWith(".tgz") && url.pathname.includes(`/${pkg}/-/`))).toBe(true);
    }
  }, 120_000);
});
