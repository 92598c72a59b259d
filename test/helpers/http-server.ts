/**
 * A loopback HTTP server for tests (node:http on 127.0.0.1, port 0): serves a mutable map of
 * path → body, and 404 for anything else. Nothing leaves the machine.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface TestHttpServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Serve `body` (objects as JSON, Buffers as bytes) at `pathname`, or stop serving it with `undefined`. */
  set(pathname: string, body: string | Buffer | object | undefined, status?: number): void;
  /** Requests seen, as `METHOD /path`. */
  requests: string[];
  close(): Promise<void>;
}

export async function startHttpServer(): Promise<TestHttpServer> {
  const routes = new Map<string, { body: string | Buffer; status: number }>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    requests.push(`${req.method} ${pathname}`);
    const route = routes.get(pathname);
    if (!route) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(route.status, { "content-type": Buffer.isBuffer(route.body) ? "application/octet-stream" : "application/json" }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    set(pathname, body, status = 200) {
      if (body === undefined) routes.delete(pathname);
      else routes.set(pathname, { body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body, null, 2), status });
    },
    requests,
    close: () => new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve()))),
  };
}
