/**
 * A loopback proxy in front of the test registry: it forwards every request as it came (the Host
 * header too: Verdaccio builds tarball URLs from it, so tarballs come through the proxy as well),
 * after `inspect` has seen it. `inspect` may answer a request itself and return true (a registry
 * that wants a token, say); nothing is forwarded then.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "./tmp-home.js";

export interface RegistryProxy {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  close(): Promise<void>;
}

export async function startRegistryProxy(target: string, inspect: (req: http.IncomingMessage, res: http.ServerResponse) => boolean | void = () => false): Promise<RegistryProxy> {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    if (inspect(req, res) === true) return;
    const forward = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", () => res.writeHead(502).end());
    req.pipe(forward);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A proxy that logs each request (`METHOD url`) into `requests` and, when `swapOf()` gives a
 * function that has bytes for the URL, answers with those bytes instead (an empty buffer: 404):
 * a registry serving other bytes than a lock names, or missing npm's tarball layout.
 */
export function countingSwapProxy(target: string, requests: string[], swapOf: () => ((url: string) => Buffer | undefined) | undefined): Promise<RegistryProxy> {
  return startRegistryProxy(target, (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const other = swapOf()?.(req.url ?? "");
    if (!other) return false;
    if (other.length === 0) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":"not found"}');
      return true;
    }
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(other.length) });
    res.end(other);
    return true;
  });
}

/** Two HOMEs of a team: A reaches the registry directly, B through a `countingSwapProxy`. */
export interface ProxiedPair {
  a: TmpWorld;
  b: TmpWorld;
  proxy: RegistryProxy;
  /** Every request B's npm made, `METHOD url`. */
  requests: string[];
  dispose(): Promise<void>;
}

export async function twoHomesBehindProxy(registryUrl: string, prefix: string, swapOf: () => ((url: string) => Buffer | undefined) | undefined): Promise<ProxiedPair> {
  const a = await makeTmpWorld(`${prefix}-a-`);
  const b = await makeTmpWorld(`${prefix}-b-`);
  const requests: string[] = [];
  const proxy = await countingSwapProxy(registryUrl, requests, swapOf);
  await writeUserNpmrc(a.home, registryUrl);
  await writeUserNpmrc(b.home, proxy.url);
  return {
    a,
    b,
    proxy,
    requests,
    dispose: async () => {
      await proxy.close();
      await a.cleanup();
      await b.cleanup();
    },
  };
}
