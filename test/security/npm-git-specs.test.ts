/**
 * Git specs read back from the npm plugins' state (`~/.xcsh/plugins/package.json` dependencies,
 * npm's lockfile `resolved`) are checked by core/source-args.ts's rules before arborist or pacote
 * could hand them to git: option-shaped URLs, hosts, refs and ranges, and local repositories the
 * user never typed, are refused (the state read fails, nothing is fetched). And the git that npm's
 * libraries run themselves gets our settings through the environment.
 */
import { chmod, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import pacote from "pacote";
import { loadPluginsState } from "../../src/plugins/state.js";
import { npmOptions } from "../../src/plugins/npm-client.js";
import { buildDist } from "../helpers/build-dist.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeHostileWorld, type HostileWorld } from "./hostile-world.js";

let world: HostileWorld;

beforeAll(async () => {
  await buildDist();
}, 180_000);
beforeEach(async () => {
  world = await makeHostileWorld();
});
afterEach(async () => {
  await world.cleanup();
});

const plugins = () => path.join(world.xcshHome, "plugins");
const cli = (args: string[]): Promise<ProcessResult> => runCli(args, { cwd: world.cwd, home: world.home, env: { GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" }, timeoutMs: 90_000 });

function errorOf(r: ProcessResult): { code: string; message: string; hint?: string } {
  expect(r.code, `${r.stdout}\n${r.stderr}`).not.toBe(0);
  return r.json().error;
}

async function writePackageJson(dependencies: Record<string, string>): Promise<void> {
  await world.write(path.join(plugins(), "package.json"), { name: "xcsh-plugins", private: true, dependencies });
}

describe("git specs in the plugins' package.json are checked when read back", () => {
  const cases: [string, () => string, string][] = [
    ["a host that is an ssh option", () => `git+ssh://-oProxyCommand=${world.canary}/x.git`, "has no valid host name"],
    ["a user that is an ssh option", () => "git+ssh://-oProxyCommand=x@example.invalid/x.git", 'starts with "-"'],
    ["a committish that is a git option", () => `git+https://127.0.0.1:9/x.git#--upload-pack=${world.canary}`, "git ref"],
    ["an option-shaped semver range", () => "git+https://127.0.0.1:9/x.git#semver:--x", "npm version"],
    ["a local repository the user never typed", () => `git+file://${world.ssh}`, "local disk"],
  ];
  it.each(cases)("%s: update and list fail naming the file and field, nothing fetched", async (_label, spec, words) => {
    await writePackageJson({ evil: spec() });
    for (const args of [["update", "--json"], ["list", "--json"]]) {
      const error = errorOf(await cli(args));
      expect(error.code, args.join(" ")).toBe("ESTATE_FILE");
      expect(error.message).toContain(path.join(plugins(), "package.json"));
      expect(error.message).toContain("/dependencies/evil");
      expect(error.message).toContain(words);
    }
    await world.assertUntouched();
  });

  it("a local repository is accepted only for a plugin our record says the user installed from it", async () => {
    const spec = `git+file://${path.join(world.root, "my-repo")}`;
    await writePackageJson({ mine: spec });
    await expect(loadPluginsState({ home: world.home, xcshHome: world.xcshHome })).rejects.toMatchObject({ code: "ESTATE_FILE" });
    await world.write(path.join(plugins(), ".xcsh-tools", "installs.json"), { version: 1, plugins: { mine: { spec, source: "git", scripts: [], installedAt: "2026-01-01T00:00:00.000Z" } } });
    const state = await loadPluginsState({ home: world.home, xcshHome: world.xcshHome });
    expect(state.packageJson?.dependencies).toEqual({ mine: spec });
    // The record of another plugin does not cover this one.
    await writePackageJson({ mine: spec, other: spec });
    await expect(loadPluginsState({ home: world.home, xcshHome: world.xcshHome })).rejects.toMatchObject({ code: "ESTATE_FILE", path: "/dependencies/other" });
    await world.assertUntouched();
  });

  it("npm's lockfile: a hostile git `resolved` is refused naming the entry", async () => {
    await writePackageJson({ a: "^1.0.0" });
    await world.write(path.join(plugins(), "package-lock.json"), {
      name: "xcsh-plugins",
      lockfileVersion: 3,
      requires: true,
      packages: { "": { dependencies: { a: "^1.0.0" } }, "node_modules/a": { version: "1.0.0", resolved: `git+ssh://-oProxyCommand=${world.canary}/a.git#0123456789abcdef0123456789abcdef01234567` } },
    });
    const error = errorOf(await cli(["update", "--json"]));
    expect(error.code).toBe("EGIT_URL");
    expect(error.message).toContain("/packages/node_modules/a/resolved");
    await world.assertUntouched();
  });
});

describe("the git npm's libraries run gets our settings", () => {
  it("pacote's git call carries protocol.ext/fd never, hooks off, no prompts, GIT_PROTOCOL_FROM_USER=0", async () => {
    const log = path.join(world.root, "npm-git.jsonl");
    const fake = path.join(world.root, "fake-git");
    await writeFile(fake, `#!${process.execPath}\nrequire("node:fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify({ argv: process.argv.slice(2), env: process.env }) + "\\n");\nprocess.exit(128);\n`);
    await chmod(fake, 0o755);
    const options = { ...npmOptions({ registry: { registry: "http://127.0.0.1:9/" }, home: world.home, allowScripts: false }), git: fake, fetchRetries: 0, cache: path.join(world.root, "npm-cache") };
    await expect(pacote.manifest("git+https://127.0.0.1:9/x.git", options)).rejects.toBeTruthy();
    const calls = (await readFile(log, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as { argv: string[]; env: Record<string, string> });
    expect(calls.length).toBeGreaterThan(0);
    for (const { env } of calls) {
      const count = Number(env.GIT_CONFIG_COUNT);
      const settings = Array.from({ length: count }, (_, i) => `${env[`GIT_CONFIG_KEY_${i}`]}=${env[`GIT_CONFIG_VALUE_${i}`]}`);
      expect(settings).toEqual(expect.arrayContaining(["protocol.ext.allow=never", "protocol.fd.allow=never", "protocol.file.allow=never", "core.fsmonitor=false"]));
      expect(settings.some((s) => s.startsWith("core.hooksPath="))).toBe(true);
      expect(env.GIT_PROTOCOL_FROM_USER).toBe("0");
      expect(env.GIT_TERMINAL_PROMPT).toBe("0");
    }
    await world.assertUntouched();
  });
});
