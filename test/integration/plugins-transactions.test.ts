/**
 * Nothing lost: dry runs write nothing, a failure injected at each step of an install leaves the
 * tree byte-identical, `kill -9` at any point is recovered by the next command (to exactly the
 * old state before the commit record, to the new one after it), four concurrent installs all
 * end recorded, and the user's .npmrc auth is honoured without the token ever being printed.
 */
import { once } from "node:events";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { startRegistryProxy, type RegistryProxy } from "../helpers/registry-proxy.js";
import { makePluginWorld, preparePluginWorld, publishFixtures, toolSource, type FixtureNames, type PluginWorld, type PluginWorldTemplate } from "./plugins-fixtures.js";

let reg: RegistryHandle & { dispose(): Promise<void> };
let n: FixtureNames;
let w: PluginWorld;
let prefix: string;
/** The states the rollback and kill tests start from, each installed once and copied per test. */
let basicNoFeatures: PluginWorldTemplate;
let extraOne: PluginWorldTemplate;

/** A template whose state is what `install <args>` leaves. */
function installed(args: string[]): Promise<PluginWorldTemplate> {
  return preparePluginWorld(reg, async (x) => {
    const r = await x.cli(["install", ...args]);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  }, "", { trustProject: true });
}

beforeAll(async () => {
  reg = await useGlobalRegistry();
  await buildDist();
  prefix = `pt${Date.now().toString(36)}`;
  n = await publishFixtures(reg, prefix);
  basicNoFeatures = await installed([`${n.basic}@1.0.0[]`]);
  extraOne = await installed([n.extra[0]!]);
}, 180_000);
afterAll(async () => {
  await basicNoFeatures?.cleanup();
  await extraOne?.cleanup();
  await reg?.dispose();
});
beforeEach(async () => {
  w = await makePluginWorld(reg, "", { trustProject: true });
});
afterEach(async () => {
  await w.cleanup();
});

async function installedNames(world: PluginWorld): Promise<string[]> {
  return Object.keys((await world.readJson("package.json")).dependencies).sort();
}

describe("--dry-run", () => {
  it("writes nothing at all on a fresh home, for every mutation", async () => {
    const before = await w.snapshot();
    expect(Object.keys(before)).toEqual([".", "plugins", "plugins/.xcsh-tools", "plugins/.xcsh-tools/trusted-projects.json"]);
    const r = await w.cli(["install", n.basic, "--dry-run", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ dryRun: true, actions: [{ type: "ADD", name: n.basic, to: { version: "2.0.0" } }] });
    expect(await w.snapshot()).toEqual(before);
  });

  it("writes nothing on an existing install either (install, uninstall, update, link, unlink)", async () => {
    expect((await w.cli(["install", `${n.basic}@1.0.0`])).code).toBe(0);
    const before = await w.snapshot();
    const dir = path.join(w.root, "dev");
    await w.write("dev/package.json", { name: n.extra[0], version: "0.0.1", type: "module", xcsh: { tools: "./t.js" } });
    await w.write("dev/t.js", toolSource("dry_tool"));
    for (const args of [["install", n.extra[1]!], ["install", `${n.basic}@2.0.0`], ["uninstall", n.basic], ["update"], ["update", "--latest"], ["link", dir]]) {
      const r = await w.cli([...args, "--dry-run", "--json"]);
      expect(r.code, `${args.join(" ")}: ${r.stdout}${r.stderr}`).toBe(0);
      expect(r.json().dryRun).toBe(true);
      expect(await w.snapshot(), args.join(" ")).toEqual(before);
    }
  });
});

describe("rollback after an injected failure", () => {
  const steps = ["state:loaded", "begin:created", "apply:planned", "apply:copied", "apply:packed", "reify:start", "reify:done", "VALIDATE", "stage:0:recorded", "stage:2:recorded", "apply:staged", "commit:synced"];
  it.each(steps)("at %s the tree is byte-identical", async (step) => {
    await basicNoFeatures.restore(w); // install <basic>@1.0.0[]
    const before = await w.snapshot();
    const fault = step === "VALIDATE" ? `validate:${n.features}` : step;
    const r = await w.cli(["install", n.features, `${n.basic}@2.0.0`, "--json"], { XCSH_TOOLS_TEST_FAULT: fault });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.json().error.code).toBe("EFAULT_INJECTED");
    expect(await w.snapshot()).toEqual(before);
    // And the next command finds nothing to recover and works.
    const again = await w.cli(["install", n.features]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain("Recovered");
    expect(await installedNames(w)).toEqual([n.basic, n.features].sort());
  });

  it("a failure after the commit record is completed by the next command", async () => {
    await extraOne.restore(w); // install <extra0>
    const r = await w.cli(["install", n.extra[1]!], { XCSH_TOOLS_TEST_FAULT: "commit:swap:1:done" });
    expect(r.code).toBe(1);
    const list = await w.cli(["list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.json().plugins.map((p: { name: string }) => p.name).sort()).toEqual([n.extra[0], n.extra[1]].sort());
    expect((await w.readJson("xcsh-plugins.lock.json")).plugins[n.extra[1]!]).toMatchObject({ version: "1.0.0", enabled: true });
  });
});

describe("kill -9 mid-install", () => {
  const INVENTORY = "plugins/.xcsh-tools/boot-components.json";
  async function killAt(step: string, args: string[]) {
    const marker = path.join(w.root, "paused");
    const child = w.spawnCli(args, { XCSH_TOOLS_TEST_PAUSE: step, XCSH_TOOLS_TEST_PAUSE_FILE: marker });
    let stderr = "";
    child.stderr?.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = once(child, "exit");
    for (let i = 0; ; i++) {
      if (await readFile(marker, "utf8").then(() => true, () => false)) break;
      if (child.exitCode !== null) throw new Error(`exited before pausing at ${step}: ${stderr}`);
      if (i > 1200) throw new Error(`never paused at ${step}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    await exited;
  }

  it.each(["apply:copied", "reify:done", "apply:staged", "commit:synced"])("before the commit record (%s): the next command restores exactly the old state", async (step) => {
    await extraOne.restore(w); // install <extra0>
    const before = await w.snapshot();
    await killAt(step, ["install", n.extra[1]!]);
    expect(await w.snapshot()).not.toEqual(before); // a journal was left behind
    const list = await w.cli(["list", "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.json().plugins.map((p: { name: string }) => p.name)).toEqual([n.extra[0]]);
    // The recovering `list` writes the boot index's component inventory, a cache outside any
    // transaction (its inputs are checked at every read): every other file is exactly as before.
    const { [INVENTORY]: inventory, ...after } = await w.snapshot();
    expect(inventory).toBeDefined();
    expect(after).toEqual(before);
  });

  it.each(["commit:marked", "commit:swap:0:done", "commit:swap:2:old-moved", "finish:renamed"])("after the commit record (%s): the next command completes the new state", async (step) => {
    await extraOne.restore(w); // install <extra0>
    await killAt(step, ["install", n.extra[1]!]);
    const r = await w.cli(["uninstall", n.extra[0]!]); // any command, a mutation this time
    expect(r.code, r.stderr).toBe(0);
    expect(await installedNames(w)).toEqual([n.extra[1]]);
    expect(Object.keys((await w.readJson("xcsh-plugins.lock.json")).plugins)).toEqual([n.extra[1]]);
    expect(await readFile(path.join(w.plugins, "node_modules", n.extra[1]!, "package.json"), "utf8")).toContain(n.extra[1]);
  });
});

describe("concurrency", () => {
  it("4 concurrent installs (4 processes) all end recorded", async () => {
    const results = await Promise.all(n.extra.map((name) => w.cli(["install", name], {}, 180_000)));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    expect(await installedNames(w)).toEqual([...n.extra].sort());
    expect(Object.keys((await w.readJson("xcsh-plugins.lock.json")).plugins).sort()).toEqual([...n.extra].sort());
    expect(Object.keys((await w.readJson(".xcsh-tools/installs.json")).plugins).sort()).toEqual([...n.extra].sort());
    const lock = await w.readJson("package-lock.json");
    for (const name of n.extra) expect(lock.packages[`node_modules/${name}`]).toMatchObject({ version: "1.0.0" });
  }, 240_000);
});

describe(".npmrc", () => {
  const token = "npm_SuperSecretTokenValue1234567890abcd";
  let proxy: RegistryProxy | undefined;
  let proxyUrl: string;
  let seen: { path: string; auth: string | undefined }[] = [];
  const scoped = () => `@${prefix}/scoped`;

  beforeAll(async () => {
    await reg.publish({ name: scoped(), version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(`${prefix}_scoped`) } });
    // A registry that requires the token: a proxy in front of Verdaccio.
    proxy = await startRegistryProxy(reg.url, (req, res) => {
      seen.push({ path: req.url ?? "", auth: req.headers.authorization });
      if (req.headers.authorization === `Bearer ${token}`) return false;
      res.writeHead(401, { "content-type": "application/json" }).end('{"error":"authentication required"}');
      return true;
    });
    proxyUrl = proxy.url;
  });
  afterAll(async () => {
    await proxy?.close();
  });

  async function configure(withToken: boolean) {
    await rm(path.join(w.home, ".npmrc"), { force: true });
    await writeFile(
      path.join(w.home, ".npmrc"),
      [`registry=${reg.url}`, `@${prefix}:registry=${proxyUrl}`, withToken ? `${proxyUrl.replace(/^http:/, "")}:_authToken=\${SCOPED_TOKEN}` : "", ""].join("\n"),
    );
  }

  it("scoped registry with an auth token from ${ENV}; the token is never printed", async () => {
    seen = [];
    await configure(true);
    const r = await w.cli(["install", scoped(), "--json"], { SCOPED_TOKEN: token });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json().plugins[0]).toMatchObject({ name: scoped(), version: "1.0.0" });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((s) => s.auth === `Bearer ${token}`)).toBe(true);
    expect(seen.some((s) => s.path.endsWith(".tgz"))).toBe(true);
    for (const args of [["list", "--json"], ["outdated", "--json"], ["outdated", "--debug"], ["install", scoped(), "--debug"]]) {
      const out = await w.cli(args, { SCOPED_TOKEN: token });
      expect(out.code, args.join(" ")).toBe(0);
      expect(out.stdout + out.stderr).not.toContain(token);
    }
  });

  it("without the token the scoped registry refuses: EAUTH, nothing written, no secret printed", async () => {
    await configure(false);
    const r = await w.cli(["install", scoped(), "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().error.code).toBe("EAUTH");
    expect(await w.snapshot()).toEqual(w.fresh);
    // A wrong token is not echoed either.
    await configure(true);
    const wrong = "npm_WrongTokenValue000000000000000000000";
    const bad = await w.cli(["install", scoped(), "--debug"], { SCOPED_TOKEN: wrong });
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).not.toContain(wrong);
  });

  it("--registry beats the npmrc registry", async () => {
    await writeFile(path.join(w.home, ".npmrc"), `registry=http://127.0.0.1:9/\n`);
    expect((await w.cli(["install", n.extra[0]!, "--json"])).json().error.code).toBe("EREGISTRY");
    const r = await w.cli(["install", n.extra[0]!, "--registry", reg.url]);
    expect(r.code, r.stderr).toBe(0);
  });
});
