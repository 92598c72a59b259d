/**
 * A loopback HTTP proxy in front of the local registry that holds every request for `delayMs`
 * before forwarding it: a registry some network distance away, without leaving the machine.
 * Tarball URLs in the JSON documents it forwards are rewritten to go through it too, so every
 * request of an install pays the delay, as it would against a remote registry.
 *
 * It runs in a child process of its own: the benchmark times each install with `spawnSync`,
 * which blocks the benchmark's own event loop.
 *
 *   node bench/lib/delay-proxy.js <registry URL> <delay ms>   (prints its URL)
 */
import { spawn } from "node:child_process";
import http from "node:http";
import { fileURLToPath } from "node:url";

const self = fileURLToPath(import.meta.url);

/** Start the proxy in a child process; resolves to `{ url, close() }`. */
export async function startDelayProxy(target, delayMs) {
  const child = spawn(process.execPath, [self, target, String(delayMs)], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("\n")) resolve(out.trim());
    });
    child.once("exit", (code) => reject(new Error(`bench: the delay proxy exited (${code})`)));
  });
  return {
    url,
    close: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill();
      }),
  };
}

function serve(target, delayMs) {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true });
  let own = "";
  const server = http.createServer((req, res) => {
    setTimeout(() => {
      // Identity encoding: the JSON bodies are rewritten below.
      const headers = { ...req.headers, host: upstream.host, "accept-encoding": "identity" };
      const forward = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent }, (answer) => {
        if (!String(answer.headers["content-type"] ?? "").includes("json")) {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
          return;
        }
        const chunks = [];
        answer.on("data", (chunk) => chunks.push(chunk));
        answer.on("end", () => {
          const body = Buffer.from(Buffer.concat(chunks).toString("utf8").split(upstream.origin).join(own));
          const out = { ...answer.headers, "content-length": String(body.length) };
          delete out["transfer-encoding"];
          res.writeHead(answer.statusCode ?? 502, out);
          res.end(body);
        });
      });
      forward.on("error", (error) => res.writeHead(502).end(String(error)));
      req.pipe(forward);
    }, delayMs);
  });
  server.listen(0, "127.0.0.1", () => {
    own = `http://127.0.0.1:${server.address().port}`;
    process.stdout.write(`${own}/\n`);
  });
}

if (process.argv[1] === self) serve(process.argv[2], Number(process.argv[3]));
