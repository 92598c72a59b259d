/**
 * Reliability suite 5 — secrets. The user's `.npmrc` holds the registry's real token (sent with
 * every request to the shared Verdaccio), a token, `_auth` and `_password` for a second, dead
 * registry, and a plugin has a secret setting. Every command a user runs — successful and failing,
 * human, `--json` and `--debug` — is run in one world; no secret may appear in stdout or stderr,
 * nor in any file the commands wrote (the whole temp tree is scanned, npm's cache included), except
 * `.npmrc` itself and the secret setting's value in the runtime lock (mode 0600).
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import type { ProcessResult } from "../helpers/run-cli.js";
import { makeRelWorld, type RelWorld } from "./helpers-world.js";

const DEAD = "http://127.0.0.1:9/";
const FAKE_TOKEN = "SECRET-TOKEN-xyz-0123456789";
const AUTH_PLAIN = "alice:SECRET-AUTH-pass-42";
const PASSWORD_PLAIN = "SECRET-PASSWORD-77";
const SETTING_SECRET = "S3CRET-setting-value-9";
const b64 = (s: string) => Buffer.from(s).toString("base64");

let reg: RegistryHandle & { dispose(): Promise<void> };
let prefix: string;
let w: RelWorld;
let secrets: string[];
const runs: Array<{ args: string[]; r: ProcessResult }> = [];

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  prefix = `sec${Date.now().toString(36)}`;
  const settings = { apiKey: { type: "string", secret: true }, limit: { type: "number", default: 3 } };
  for (const version of ["1.0.0", "1.1.0"]) {
    await reg.publish({
      name: `${prefix}-plugin`,
      version,
      packageJson: { type: "module", xcsh: { tools: "./t.js", settings } },
      files: { "t.js": `export default () => ({ name: "${prefix}_tool", label: "t", description: "fixture", parameters: { type: "object", properties: {} }, async execute() { return { content: [] }; } });\n` },
    });
  }
  w = await makeRelWorld(reg.url);
  const host = reg.url.replace(/^http:/, "");
  await w.write(
    path.join(w.home, ".npmrc"),
    [
      `registry=${reg.url}`,
      `${host}:_authToken=${reg.token}`,
      `@dead:registry=${DEAD}`,
      `//127.0.0.1:9/:_authToken=${FAKE_TOKEN}`,
      `//127.0.0.1:9/:_auth=${b64(AUTH_PLAIN)}`,
      `//127.0.0.1:9/:username=alice`,
      `//127.0.0.1:9/:_password=${b64(PASSWORD_PLAIN)}`,
      "",
    ].join("\n"),
  );
  secrets = [reg.token, FAKE_TOKEN, b64(AUTH_PLAIN), AUTH_PLAIN.split(":")[1]!, b64(PASSWORD_PLAIN), PASSWORD_PLAIN];

  const name = `${prefix}-plugin`;
  const commands: string[][] = [
    ["install", `${name}@1.0.0`],
    ["list"],
    ["outdated"],
    ["update", name],
    ["config", "set", name, "apiKey", SETTING_SECRET],
    ["config", "get", name, "apiKey"],
    ["config", "list", name],
    ["config", "validate", name],
    ["tools"],
    ["doctor"],
    ["marketplace", "add", w.market],
    ["marketplace", "list"],
    // Failing runs: the token's registry is unreachable; a package that does not exist; a token
    // in a --registry URL; a bad value for a setting; a secret for a plugin that is not installed.
    ["install", "@dead/anything"],
    ["install", `${prefix}-does-not-exist`],
    ["install", `${prefix}-does-not-exist`, "--registry", `http://alice:${FAKE_TOKEN}@127.0.0.1:9/`],
    ["outdated", "--registry", DEAD],
    ["config", "set", name, "limit", "not-a-number"],
    ["config", "set", `${prefix}-not-installed`, "apiKey", SETTING_SECRET],
  ];
  for (const command of commands) {
    for (const mode of [[], ["--json"], ["--debug"]]) {
      const args = [...command, ...mode];
      runs.push({ args, r: await w.cli(args, {}, 120_000) });
    }
  }
}, 600_000);

afterAll(async () => {
  console.log(`secrets: ${runs.length} runs, ${secrets?.length ?? 0} npmrc secrets + 1 secret setting`);
  await w?.cleanup();
  await reg?.dispose();
});

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await readdir(dir)) {
    const abs = path.join(dir, name);
    const info = await lstat(abs);
    if (info.isDirectory()) out.push(...(await filesUnder(abs)));
    else if (info.isFile()) out.push(abs);
  }
  return out;
}

describe("secrets never leak", () => {
  it("the commands ran as expected (the secrets were in use, failures failed)", () => {
    const byArgs = (args: string) => runs.find((run) => run.args.join(" ") === args)!.r;
    expect(byArgs(`install ${prefix}-plugin@1.0.0`).code, byArgs(`install ${prefix}-plugin@1.0.0`).stderr).toBe(0);
    expect(byArgs(`config set ${prefix}-plugin apiKey ${SETTING_SECRET}`).code).toBe(0);
    expect(byArgs(`config get ${prefix}-plugin apiKey --json`).code).toBe(0);
    expect(byArgs("install @dead/anything --json").json().error.code).toBe("EREGISTRY");
    expect(byArgs(`install ${prefix}-does-not-exist --json`).json().error.code).toBe("ENOT_FOUND");
    expect(byArgs(`config set ${prefix}-plugin limit not-a-number --json`).code).toBe(2);
    expect(byArgs(`config set ${prefix}-not-installed apiKey ${SETTING_SECRET} --json`).code).not.toBe(0);
  });

  it("no npmrc secret and no secret setting in any stdout or stderr", () => {
    const leaks: string[] = [];
    for (const { args, r } of runs) {
      for (const secret of [...secrets, SETTING_SECRET]) {
        // The command line itself holds the setting's value; what it prints must not.
        if (r.stdout.includes(secret)) leaks.push(`stdout of ${args.join(" ")}: ${secret}`);
        if (r.stderr.includes(secret)) leaks.push(`stderr of ${args.join(" ")}: ${secret}`);
      }
    }
    expect(leaks).toEqual([]);
  });

  it("no secret in any file under the world (boot index, journal, lock, state, logs, npm's cache)", async () => {
    const leaks: string[] = [];
    const runtimeLock = path.join(w.xcshHome, "plugins", "xcsh-plugins.lock.json");
    for (const file of await filesUnder(w.root)) {
      if (file === path.join(w.home, ".npmrc")) continue;
      const text = (await readFile(file)).toString("latin1");
      for (const secret of secrets) if (text.includes(secret)) leaks.push(`${path.relative(w.root, file)}: ${secret}`);
      if (file !== runtimeLock && text.includes(SETTING_SECRET)) leaks.push(`${path.relative(w.root, file)}: the secret setting`);
    }
    expect(leaks).toEqual([]);
    // The one place the secret setting lives: the runtime lock, readable by the user only.
    expect(await readFile(runtimeLock, "utf8")).toContain(SETTING_SECRET);
    expect((await lstat(runtimeLock)).mode & 0o777).toBe(0o600);
  });
});
