/**
 * A loopback git server over smart HTTP (git's own `git http-backend` as a CGI behind node:http),
 * serving the bare repositories under one folder. For sources a committed file may name: those
 * may not be local URLs (`file://`, paths), so a team set's git marketplace needs a server.
 * Plain JS so that the conformance recorder (scripts/conformance/install.mjs) serves its git
 * fixtures to Claude Code with the same server the tests use (test/helpers/git-http.ts).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:http";

/**
 * @param {string} root the folder of the bare repositories
 * @returns {Promise<{url: string, close(): Promise<void>}>} `url` is `http://127.0.0.1:<port>`; a bare repo `<root>/x.git` is `<url>/x.git`
 */
export async function startGitHttpServer(root) {
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    const child = spawn("git", ["http-backend"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        GIT_CONFIG_NOSYSTEM: "1",
        HOME: root,
        PATH_INFO: decodeURIComponent(u.pathname),
        QUERY_STRING: u.search.slice(1),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        ...(req.headers["content-length"] ? { CONTENT_LENGTH: req.headers["content-length"] } : {}),
        HTTP_CONTENT_ENCODING: req.headers["content-encoding"] ?? "",
        GIT_PROTOCOL: String(req.headers["git-protocol"] ?? ""),
        REMOTE_ADDR: "127.0.0.1",
      },
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let started = false;
    child.stdout.on("data", (chunk) => {
      if (started) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const colon = line.indexOf(":");
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else res.setHeader(name, value);
      }
      res.writeHead(status);
      started = true;
      res.write(head.subarray(end + 4));
    });
    child.stdout.on("end", () => res.end());
    child.on("error", () => res.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
