/**
 * The README's first steps, as a new user takes them from a clone, run as written: the blocks
 * `get-command` (the bare `xcsh-tools` from `npm install --global --ignore-scripts .`, into a temp
 * prefix through `npm_config_prefix`) and `first-plugin` (`new`, the scaffolded plugin's own
 * `npm install && npm test` — offline, against the suite's Verdaccio, where this file publishes
 * the plugin's other dev dependencies (TypeScript, vitest, TypeBox and what they need) from this
 * checkout's node_modules — then `link .`, `list`, `validate` and `tools`). The scaffold's
 * dependency on xcsh-tools is `file:<this checkout>`, which npm installs as a link without any
 * registry.
 */
import { readFileSync, readdirSync, realpathSync, statSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import path from "node:path";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { commandsOf, shBlocks } from "../helpers/readme-blocks.js";
import { hermeticEnv, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT } from "../helpers/runtimes.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
let reg: Awaited<ReturnType<typeof useGlobalRegistry>>;
let prefix: string;
beforeAll(async () => {
  w = await makeTmpWorld("xcsh-tools-first-steps-");
  reg = await useGlobalRegistry();
  prefix = path.join(w.root, "npm-global");
  await mkdir(prefix, { recursive: true });
  // npm reads the registry from the user's .npmrc, as a user's machine would have it.
  await writeUserNpmrc(w.home, reg.url);
});
afterAll(async () => {
  await reg?.dispose();
  await w?.cleanup();
});

/** The environment of the user's shell: the global prefix's bin first on PATH. */
function shellEnv(): NodeJS.ProcessEnv {
  // npm_config_offline: nothing but the loopback registry, and the global install needs nothing from it.
  return hermeticEnv(w.home, { PATH: `${path.join(prefix, "bin")}${path.delimiter}${process.env.PATH ?? ""}`, npm_config_prefix: prefix, npm_config_prefer_offline: "true" });
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
  it("README blocks get-command and first-plugin, as written: the bare command, then a plugin of one's own installed, listed and validated", { timeout: 600_000 }, async () => {
    const readme = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
    const block = (name: string) => shBlocks(readme).find((b) => b.name === name)?.lines ?? [];
    const run = async (lines: string[], start: string, before: (argv: string[], cwd: string) => Promise<void>) => {
      let cwd = start;
      const results = [];
      for (const line of lines) {
        for (const [bin, ...args] of commandsOf(line)) {
          if (bin === "cd") {
            cwd = path.resolve(cwd, args[0]!);
            continue;
          }
          await before([bin!, ...args], cwd);
          results.push({ argv: [bin!, ...args], cwd, result: await sh(bin!, args, cwd, 300_000) });
        }
      }
      return results;
    };

    // Get the command: in the clone's folder.
    expect(block("get-command")[0]).toBe("npm install --global --ignore-scripts .");
    const got = await run(block("get-command"), REPO_ROOT, async () => {});
    const version = got.find((r) => r.argv.join(" ") === "xcsh-tools --version")!;
    expect(version.result.stdout.trim()).toBe(JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).version);

    // The first plugin: in a folder of the user's (the temp project).
    const lines = block("first-plugin");
    expect(lines.join("\n")).toMatch(/xcsh-tools new my-first-plugin[\s\S]*npm install && npm test[\s\S]*xcsh-tools link \.[\s\S]*xcsh-tools list[\s\S]*xcsh-tools validate/);
    const plugin = path.join(w.cwd, "my-first-plugin");
    const results = await run(lines, w.cwd, async (argv) => {
      if (argv.join(" ") !== "npm install") return;
      // Before the plugin's npm install: its dependency on xcsh-tools is this clone, and the rest is in the registry.
      const pkg = JSON.parse(await readFile(path.join(plugin, "package.json"), "utf8"));
      expect(pkg.devDependencies["xcsh-tools"]).toBe(`file:${realpathSync(REPO_ROOT)}`);
      for (const dir of closure(Object.keys(pkg.devDependencies).filter((name) => name !== "xcsh-tools"))) await publishInstalled(dir);
    });
    const output = (command: string) => results.find((r) => r.argv.join(" ") === command)!.result.stdout;
    expect(output("npm test")).toMatch(/passed/);
    expect(output("xcsh-tools list")).toMatch(/^my-first-plugin@0\.1\.0 .*enabled.*linked/m);
    expect(output("xcsh-tools validate .")).toMatch(/valid plugin-package/);
    expect(output("xcsh-tools tools")).toMatch(/^my_first_plugin /m);
    // `run`, as its comment says: the first TODO of tools/, found by the tool itself (its own source names TODO).
    const ran = results.find((r) => r.argv[1] === "run")!;
    expect(ran.argv).toEqual(["xcsh-tools", "run", "my_first_plugin", '{"path": "tools", "limit": 1}']);
    expect(ran.result.stdout).toMatch(/^tools\/my_first_plugin\.ts:\d+:.*TODO.*\n\(\d+ more\)\n$/);
    expect(ran.result.stderr).toBe("… searching tools...\n");
    const list = await sh("xcsh-tools", ["list", "--json"], plugin);
    expect(list.json()).toMatchObject({ plugins: [{ name: "my-first-plugin", linked: true }] });
  });
});
