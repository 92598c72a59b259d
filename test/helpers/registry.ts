/**
 * A real npm registry for tests: Verdaccio on 127.0.0.1, on a free port, with its storage in a
 * temp folder and **no uplinks**, so a package that was not published here is a 404 and nothing
 * can reach the public registry.
 *
 * Verdaccio runs in a child process (`verdaccio-server.cjs`, which calls Verdaccio's `runServer`
 * API and listens on port 0) rather than inside the test worker: its logger and globals stay out
 * of our process, the port is chosen by the OS (no probe-then-bind race), `stop()` is a kill
 * that really closes the port, and the child exits by itself if the test process dies (IPC
 * disconnect). The wait for it to listen is a hang guard, not a speed check: a machine running
 * several suites at once starts it slowly.
 *
 * Publishing does in this process what `npm publish --ignore-scripts` does, with npm's own
 * libraries: the manifest is read as npm reads it (`@npmcli/package-json` fix + prepare), the
 * tarball is packed by pacote (npm-packlist decides the files, as for `npm pack`), and the
 * document npm's libnpmpublish builds is PUT with this registry's token. No npm process is
 * spawned (the suite publishes dozens of fixtures, and each `npm publish` was a Node start-up),
 * nothing reads the user's `~/.npmrc` or `npm_config_*` variables, and lifecycle scripts of
 * fixtures never run.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** A package to publish, described inline. */
export interface PackageFixture {
  name: string;
  version: string;
  /** Extra package.json fields (dependencies, xcsh, scripts, ...). */
  packageJson?: Record<string, unknown>;
  /** Files relative to the package root; objects are written as JSON. */
  files?: Record<string, string | object>;
}

/** A registry the tests can publish to and point installs at. */
export interface RegistryHandle {
  /** `http://127.0.0.1:<port>/` (trailing slash, as npm writes registry URLs). */
  url: string;
  /** A valid auth token of the test user. */
  token: string;
  /** An `.npmrc` with `registry=` and the token, for npm or our CLI under test. */
  npmrc: string;
  /** Publish a folder or an inline fixture; resolves once the registry has it. */
  publish(pkg: string | PackageFixture, options?: { tag?: string }): Promise<{ name: string; version: string }>;
}

/** A registry this process started. */
export interface LocalRegistry extends RegistryHandle {
  port: number;
  /** Stop the server (the port is closed when this resolves) and delete its storage. */
  stop(): Promise<void>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

const require = createRequire(import.meta.url);

/** npm's libraries, loaded on the first publish (a test file that only installs never pays for them). */
let npmLibraries: { pacote: any; Arborist: any; PackageJson: any } | undefined;
function npmLibs(): { pacote: any; Arborist: any; PackageJson: any } {
  npmLibraries ??= { pacote: require("pacote"), Arborist: require("@npmcli/arborist"), PackageJson: require("@npmcli/package-json") };
  return npmLibraries;
}

/**
 * `npm publish <dir> --ignore-scripts [--tag tag]` against `url`, in process: the manifest npm
 * would send (package.json fixed and prepared as npm's publish command does), the tarball
 * `npm pack` would make, and the publish document of libnpmpublish.
 */
async function publishFolder(dir: string, url: string, token: string, cache: string, tag = "latest"): Promise<{ name: string; version: string }> {
  const { pacote, Arborist, PackageJson } = npmLibs();
  const fixed = await PackageJson.fix(dir, { changes: [] });
  const manifest = { ...(await fixed.prepare()).content, _nodeVersion: process.versions.node } as Record<string, unknown> & { name: string; version: string; description?: string };
  const { name, version } = manifest;
  // As npm publish refuses: a prerelease needs an explicit tag.
  if (/-/.test(version) && tag === "latest") throw new Error(`${name}@${version}: publishing a prerelease needs a tag (npm refuses it without --tag)`);
  const tarball: Buffer = await pacote.tarball(`file:${dir}`, { Arborist, ignoreScripts: true, allowDirectory: "all", cache });
  const file = `${name}-${version}.tgz`;
  const body = {
    _id: name,
    name,
    description: manifest.description,
    "dist-tags": { [tag]: version },
    versions: {
      [version]: {
        ...manifest,
        _id: `${name}@${version}`,
        dist: {
          integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
          shasum: createHash("sha1").update(tarball).digest("hex"),
          tarball: `${url}${name}/-/${file}`,
        },
      },
    },
    access: "public",
    _attachments: { [file]: { content_type: "application/octet-stream", data: tarball.toString("base64"), length: tarball.length } },
  };
  // The path npm uses: a scoped name keeps its `@` and escapes the `/`.
  const response = await fetch(`${url}${name.replace("/", "%2f")}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`publish ${name}@${version} to ${url} failed: ${response.status} ${await response.text()}`);
  return { name, version };
}

async function writeFixture(root: string, fixture: PackageFixture): Promise<string> {
  const dir = path.join(root, `${fixture.name.replace(/[@/]/g, "_")}-${fixture.version}-${Date.now()}`);
  await mkdir(dir, { recursive: true });
  const manifest = { name: fixture.name, version: fixture.version, ...fixture.packageJson };
  await writeFile(path.join(dir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const [rel, content] of Object.entries(fixture.files ?? {})) {
    const file = path.join(dir, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
  return dir;
}

/**
 * A handle on a registry started elsewhere (e.g. by the global setup): publishing works,
 * with its own throw-away npm config.
 */
export async function connectRegistry(url: string, token: string): Promise<RegistryHandle & { dispose(): Promise<void> }> {
  const work = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-npm-"));
  const npmrc = path.join(work, "npmrc");
  const hostPath = url.replace(/^https?:/, "");
  await writeFile(npmrc, `registry=${url}\n${hostPath}:_authToken=${token}\n`);
  return {
    url,
    token,
    npmrc,
    async publish(pkg, options = {}) {
      const dir = typeof pkg === "string" ? path.resolve(pkg) : await writeFixture(path.join(work, "fixtures"), pkg);
      return publishFolder(dir, url, token, path.join(work, "cache"), options.tag);
    },
    async dispose() {
      await rm(work, { recursive: true, force: true });
    },
  };
}

function waitForPort(child: ChildProcess, output: () => string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`Verdaccio did not start within 60 s\n${output()}`)), 60_000);
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(error);
    }
    child.on("message", (message: { type: string; port?: number; message?: string }) => {
      if (message.type === "listening" && message.port) {
        clearTimeout(timer);
        resolve(message.port);
      } else if (message.type === "error") {
        fail(new Error(`Verdaccio failed to start: ${message.message}\n${output()}`));
      }
    });
    child.on("exit", (code) => fail(new Error(`Verdaccio exited early (code ${code})\n${output()}`)));
  });
}

async function createUser(url: string): Promise<string> {
  const name = "xcsh-test";
  const password = `pw-${Math.random().toString(36).slice(2)}-${Date.now()}`;
  const response = await fetch(`${url}-/user/org.couchdb.user:${name}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password, type: "user", roles: [], date: new Date().toISOString() }),
  });
  const body = (await response.json()) as { token?: string; error?: string };
  if (!response.ok || !body.token) throw new Error(`Cannot create the registry test user: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** Start a fresh, empty registry on 127.0.0.1. */
export async function startRegistry(): Promise<LocalRegistry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "xcsh-tools-registry-"));
  const access = { access: "$all", publish: "$authenticated", unpublish: "$authenticated" };
  const config = {
    self_path: path.join(dir, "config.yaml"),
    configPath: path.join(dir, "config.yaml"),
    storage: path.join(dir, "storage"),
    auth: { htpasswd: { file: path.join(dir, "htpasswd"), max_users: 1000 } },
    // No uplinks and no `proxy:` on any package: nothing is ever fetched from elsewhere.
    uplinks: {},
    packages: { "@*/*": access, "**": access },
    max_body_size: "200mb",
    publish: { allow_offline: true },
    web: { enable: false },
    log: { type: "stdout", format: "pretty", level: "error" },
  };
  let output = "";
  const child = fork(path.join(here, "verdaccio-server.cjs"), [JSON.stringify(config)], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe", "ipc"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, NODE_ENV: "production" },
    execArgv: [],
  });
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let port: number;
  try {
    port = await waitForPort(child, () => output);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  const url = `http://127.0.0.1:${port}/`;
  const token = await createUser(url);
  const client = await connectRegistry(url, token);
  return {
    url,
    port,
    token,
    npmrc: client.npmrc,
    publish: client.publish,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await client.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
