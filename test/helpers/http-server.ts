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
  /**
   * Answer `pathname` with status 200 and `first`, then one byte every `everyMs` until the client
   * goes away: a download that never ends and never stalls for long.
   */
  drip(pathname: string, first: Buffer, everyMs: number): void;
  /** How many dripping answers the client has closed so far. */
  dripsClosed(): number;
  /** Requests seen, as `METHOD /path`. */
  requests: string[];
  close(): Promise<void>;
}

export async function startHttpServer(): Promise<TestHttpServer> {
  const routes = new Map<string, { body: string | Buffer; status: number }>();
  const drips = new Map<string, { first: Buffer; everyMs: number }>();
  let dripsClosed = 0;
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    requests.push(`${req.method} ${pathname}`);
    const drip = drips.get(pathname);
    if (drip) {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.write(drip.first);
      const timer = setInterval(() => res.write(Buffer.from([0])), drip.everyMs);
      res.on("close", () => {
        clearInterval(timer);
        dripsClosed++;
      });
      return;
    }
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
    drip(pathname, first, everyMs) {
      drips.set(pathname, { first, everyMs });
    },
    dripsClosed: () => dripsClosed,
    requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}
