/**
 * The README's first steps, as a new user takes them from a clone: the bare `xcsh-tools` command
 * from `npm install --global --ignore-scripts .` (into a temp prefix), then `new`, the scaffolded
 * plugin's own `npm install && npm test` — offline, against the suite's Verdaccio, where this
 * file publishes the plugin's other dev dependencies (TypeScript, vitest, TypeBox and what they
 * need) from this checkout's node_modules — then `link .`, `list` and `validate` of the plugin.
 * The scaffold's dependency on xcsh-tools is `file:<this checkout>`, which npm installs as a link
 * without any registry.
 */
import { readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import path from "node:path";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT } from "../helpers/runtimes.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
let reg: Awaited<ReturnType<typeof useGlobalRegistry>>;
let prefix: string;
beforeAll(async () => {
  w = await makeTmpWorld("xcsh-tools-first-steps-");
  reg = await useGlobalRegistry();
  prefix = path.join(w.root, "npm-global");
  await mkdir(prefix, { recursive: true });
  // npm reads the registry from the user's .npmrc, as a user's machine would have it.
  await w.write(path.join(w.home, ".npmrc"), `registry=${reg.url}\n`);
});
afterAll(async () => {
  await reg?.dispose();
  await w?.cleanup();
});

/** The environment of the user's shell: the global prefix's bin first on PATH. */
function shellEnv(): NodeJS.ProcessEnv {
  return hermeticEnv(w.home, { PATH: `${path.join(prefix, "bin")}${path.delimiter}${process.env.PATH ?? ""}`, npm_config_prefix: prefix });
}

async function sh(command: string, args: string[], cwd: string, timeoutMs = 180_000) {
  const result = await runProcess(command, args, { cwd, env: shellEnv(), timeoutMs });
  expect({ command: [command, ...args].join(" "), code: result.code }, `${result.stdout}\n${result.stderr}`).toEqual({ command: [command, ...args].join(" "), code: 0 });
  return result;
}

/** Every file of a package folder, relative, without its node_modules. */
function packageFiles(dir: string, rel = ""): string[] {
  return readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) => {
    const r = rel ? `${rel}/${e.name}` : e.name;
    if (e.name === "node_modules" && rel === "") return [];
    if (e.isDirectory()) return packageFiles(dir, r);
    return e.isFile() ? [r] : [];
  });
}

/** The installed packages `names` need (dependencies, optional ones present here, required peers), from this checkout. */
function closure(names: string[]): string[] {
  const seen = new Set<string>();
  const find = (name: string, from: string): string | undefined => {
    for (let d = from; ; d = path.dirname(d)) {
      const dir = path.join(d, "node_modules", name);
      if (statSync(path.join(dir, "package.json"), { throwIfNoEntry: false })) return dir;
      if (path.dirname(d) === d) return undefined;
    }
  };
  const walk = (name: string, from: string, optional: boolean) => {
    const dir = find(name, from);
    if (!dir) {
      if (optional) return;
      throw new Error(`${name} (needed from ${from}) is not installed in this checkout`);
    }
    if (seen.has(dir)) return;
    seen.add(dir);
    const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
    for (const dep of Object.keys(pkg.dependencies ?? {})) walk(dep, dir, Boolean(pkg.optionalDependencies?.[dep]));
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) walk(dep, dir, true);
    for (const dep of Object.keys(pkg.peerDependencies ?? {})) if (!pkg.peerDependenciesMeta?.[dep]?.optional) walk(dep, dir, true);
  };
  for (const name of names) walk(name, REPO_ROOT, false);
  return [...seen];
}

/** Publish an installed package folder to the test registry as it is (a version already there is kept). */
async function publishInstalled(dir: string): Promise<void> {
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const chunks: Buffer[] = [];
  for await (const chunk of tar.c({ gzip: true, cwd: dir, prefix: "package/", portable: true }, packageFiles(dir)) as unknown as AsyncIterable<Buffer>) chunks.push(chunk);
  const tgz = Buffer.concat(chunks);
  const file = `${manifest.name.replace(/^@[^/]+\//, "")}-${manifest.version}.tgz`;
  const response = await fetch(`${reg.url}${encodeURIComponent(manifest.name)}`, {
    method: "PUT",
    headers: { "content-type": "application/json", authorization: `Bearer ${reg.token}` },
    body: JSON.stringify({
      _id: manifest.name,
      name: manifest.name,
      "dist-tags": { latest: manifest.version },
      versions: {
        [manifest.version]: {
          ...manifest,
          _id: `${manifest.name}@${manifest.version}`,
          dist: {
            tarball: `${reg.url}${manifest.name}/-/${file}`,
            shasum: createHash("sha1").update(tgz).digest("hex"),
            integrity: `sha512-${createHash("sha512").update(tgz).digest("base64")}`,
          },
        },
      },
      _attachments: { [file]: { content_type: "application/octet-stream", data: tgz.toString("base64"), length: tgz.length } },
    }),
  });
  if (response.status !== 409) expect(response.status, `${manifest.name}@${manifest.version}: ${await response.text()}`).toBeLessThan(300);
}

describe("first steps from a clone", () => {
  it("the bare command from `npm install --global --ignore-scripts .`, then a plugin of one's own: new, npm install && npm test, link, list, validate", { timeout: 600_000 }, async () => {
    // README: get the bare command from the clone (dist/ is built by the clone's npm install).
    await sh("npm", ["install", "--global", "--ignore-scripts", "--offline", "--no-audit", "--no-fund", "."], REPO_ROOT);
    const version = await sh("xcsh-tools", ["--version"], w.cwd);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version);

    // README: a plugin of one's own.
    await sh("xcsh-tools", ["new", "my-first-plugin", "--yes"], w.cwd);
    const plugin = path.join(w.cwd, "my-first-plugin");
    const pkg = JSON.parse(await readFile(path.join(plugin, "package.json"), "utf8"));
    expect(pkg.devDependencies["xcsh-tools"]).toBe(`file:${realpathSync(REPO_ROOT)}`);

    const others = Object.keys(pkg.devDependencies).filter((name) => name !== "xcsh-tools");
    for (const dir of closure(others)) await publishInstalled(dir);
    await sh("npm", ["install", "--no-audit", "--no-fund"], plugin, 300_000);
    const test = await sh("npm", ["test"], plugin, 300_000);
    expect(test.stdout).toMatch(/passed/);

    await sh("xcsh-tools", ["link", "."], plugin);
    const list = await sh("xcsh-tools", ["list", "--json"], w.cwd);
    expect(list.json()).toMatchObject({ plugins: [{ name: "my-first-plugin", linked: true }] });
    await sh("xcsh-tools", ["validate", plugin], w.cwd);
    const tools = await sh("xcsh-tools", ["tools", "--json"], w.cwd);
    expect(tools.json().tools.map((t: { name: string }) => t.name)).toContain("my_first_plugin");
  });
});
