/**
 * A loopback proxy in front of the test registry: it forwards every request as it came (the Host
 * header too: Verdaccio builds tarball URLs from it, so tarballs come through the proxy as well),
 * after `inspect` has seen it. `inspect` may answer a request itself and return true (a registry
 * that wants a token, say); nothing is forwarded then.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

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
