import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRegistry, type LocalRegistry } from "../helpers/registry.js";

let registry: LocalRegistry | undefined;

beforeAll(async () => {
  registry = await startRegistry();
});
afterAll(async () => {
  await registry?.stop();
});

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

describe("local Verdaccio registry helper", () => {
  it("listens on loopback and serves what was published", async () => {
    const r = registry!;
    expect(r.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const published = await r.publish({
      name: "@xcsh-test/tiny",
      version: "1.0.0",
      packageJson: { main: "index.js", scripts: { postinstall: "exit 1" } },
      files: { "index.js": "module.exports = 42;\n" },
    });
    expect(published).toEqual({ name: "@xcsh-test/tiny", version: "1.0.0" });
    await r.publish({ name: "@xcsh-test/tiny", version: "2.0.0-beta.1", files: { "index.js": "" } }, { tag: "next" });

    const response = await fetch(`${r.url}@xcsh-test%2ftiny`);
    expect(response.status).toBe(200);
    const packument = (await response.json()) as {
      "dist-tags": Record<string, string>;
      versions: Record<string, { dist: { tarball: string; integrity: string } }>;
    };
    expect(Object.keys(packument.versions).sort()).toEqual(["1.0.0", "2.0.0-beta.1"]);
    expect(packument["dist-tags"]).toEqual({ latest: "1.0.0", next: "2.0.0-beta.1" });
    const tarballUrl = packument.versions["1.0.0"]!.dist.tarball;
    expect(tarballUrl.startsWith(r.url)).toBe(true);
    const tarball = await fetch(tarballUrl);
    expect(tarball.status).toBe(200);
    expect((await tarball.arrayBuffer()).byteLength).toBeGreaterThan(100);
  });

  it("has no uplinks: a package that exists on the public registry is a 404 here", async () => {
    const response = await fetch(`${registry!.url}left-pad`);
    expect(response.status).toBe(404);
  });

  it("refuses anonymous publishes", async () => {
    const response = await fetch(`${registry!.url}anon-pkg`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "anon-pkg", versions: {} }),
    });
    expect(response.status).toBeGreaterThanOrEqual(400);
  });

  it("stop() closes the port", async () => {
    const port = registry!.port;
    expect(await canConnect(port)).toBe(true);
    await registry!.stop();
    registry = undefined;
    expect(await canConnect(port)).toBe(false);
  });
});
