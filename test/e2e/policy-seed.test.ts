/**
 * The organization policy meets plugin seeds (issue 43; docs/design/fleets.md "Seeds and the
 * policy"): a seeded plugin is judged from its own seed's records at boot and in `tools`, listed
 * by `audit` as the seed's, refused by `seed` before any request or folder, refused by a restore
 * even when a seed holds it; `outdated` probes no source the policy refuses. npm goes through a
 * counting proxy in front of the local Verdaccio; each run reads the policy file through the
 * test-only preload (run-cli.ts `managedPolicy`).
 */
import { execFileSync } from "node:child_process";
import { cp, readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isolatedGitEnv } from "../helpers/git-remote.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { catalogPath, writeFolderMarketplace } from "../helpers/marketplace-fixtures.js";
import { withManagedPolicy } from "../helpers/no-managed-policy.js";
import { countingSwapProxy, type RegistryProxy } from "../helpers/registry-proxy.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeWritable, refusal } from "../helpers/seeds.js";
import { makeTmpWorld, writeTrustRecord, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { toolName, toolSource } from "../integration/plugins-fixtures.js";

const LONG = 240_000;

describe("organization policy and plugin seeds", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  let proxy: RegistryProxy;
  const requests: string[] = [];
  const tag = Math.random().toString(36).slice(2, 8);
  const ok = `@psok${tag}/tool`;
  const bad = `@psbad${tag}/tool`;
  let builder: TmpWorld;
  /** ok@1.0.0 (with a hook module) and bad@1.0.0. */
  let seedA: string;
  /** ok@1.1.0 only: before seedA in the variable, it provides ok. */
  let seedB: string;
  let w: TmpWorld;
  let policyFile: string;

  const publish = (name: string, version: string, extra: Record<string, unknown> = {}) =>
    reg.publish({ name, version, packageJson: { type: "module", xcsh: { tools: "./t.js", ...extra } }, files: { "t.js": toolSource(toolName(name)), "hooks/guard.js": "export default function () {}\n" } });

  beforeAll(async () => {
    reg = await useGlobalRegistry();
    proxy = await countingSwapProxy(reg.url, requests, () => undefined);
    await publish(ok, "1.0.0", { hooks: "./hooks/guard.js" });
    await publish(ok, "1.1.0");
    await publish(bad, "1.0.0");
    builder = await makeTmpWorld("xcsh-policy-seed-build-");
    await writeUserNpmrc(builder.home, proxy.url);
    seedA = path.join(builder.root, "seed-a");
    seedB = path.join(builder.root, "seed-b");
    for (const [dir, specs] of [[seedA, [`${ok}@1.0.0`, `${bad}@1.0.0`]], [seedB, [`${ok}@1.1.0`]]] as const) {
      const built = await runCli(["seed", dir, ...specs, "--yes"], { cwd: builder.cwd, home: builder.home, timeoutMs: LONG });
      expect(built.code, built.stderr).toBe(0);
    }
  }, LONG);
  afterAll(async () => {
    await proxy?.close();
    await reg?.dispose();
    if (builder) await makeWritable(builder.root);
    await builder?.cleanup();
  });
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-policy-seed-");
    await writeUserNpmrc(w.home, proxy.url);
    policyFile = path.join(w.root, "etc", "managed-settings.json");
    requests.length = 0;
  });
  afterEach(async () => {
    await makeWritable(w.root);
    await w.cleanup();
  });

  const cli = (args: string[], options: { seeds?: string[]; policy?: boolean } = {}) =>
    runCli(args, {
      cwd: w.cwd,
      home: w.home,
      timeoutMs: LONG,
      ...(options.seeds ? { env: { XCSH_PLUGIN_SEED_DIR: options.seeds.join(path.delimiter) } } : {}),
      ...(options.policy === false ? {} : { managedPolicy: policyFile }),
    });
  const setPolicy = (doc: unknown) => w.write(policyFile, JSON.stringify(doc));
  const names = (r: ProcessResult) => (r.json().tools as { name: string }[]).map((t) => t.name).sort();
  const refusals = (r: ProcessResult) =>
    (r.json().errors as { code: string; message?: string; seed?: string }[])
      .filter((e) => e.code.startsWith("EPOLICY"))
      .map((e) => `${e.code} ${/^Plugin (\S+) was not loaded/.exec(e.message ?? "")?.[1]} ${e.seed === undefined ? "no seed" : path.basename(e.seed)}`)
      .sort();
  const snap = () => snapshotTree(w.root, { exclude: [".npm", "etc"] });

  describe("boot and tools judge a seeded plugin by its own seed's records", () => {
    it("a blocked npm scope, a registry off the allowlist, a forbidden name: not loaded, with the policy's code", async () => {
      const free = await cli(["tools", "--json"], { seeds: [seedA] });
      expect(names(free)).toEqual([toolName(bad), toolName(ok)].sort());

      await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
      const blocked = await cli(["tools", "--json"], { seeds: [seedA] });
      expect(names(blocked)).toEqual([toolName(ok)]);
      expect(refusals(blocked)).toEqual([`EPOLICY_BLOCKED ${bad} seed-a`]);

      // The seed's lock recorded the proxy's tarball URLs: a registry allowlist without it refuses both.
      await setPolicy({ plugins: { allow: [{ npmRegistry: "https://npm.corp.example/" }] } });
      const off = await cli(["tools", "--json"], { seeds: [seedA] });
      expect(names(off)).toEqual([]);
      expect(refusals(off)).toEqual([`EPOLICY_NOT_ALLOWED ${bad} seed-a`, `EPOLICY_NOT_ALLOWED ${ok} seed-a`]);
      await setPolicy({ plugins: { allow: [{ npmRegistry: proxy.url }] } });
      expect(names(await cli(["tools", "--json"], { seeds: [seedA] }))).toEqual([toolName(bad), toolName(ok)].sort());

      await setPolicy({ plugins: { forbidden: [ok] } });
      const forbidden = await cli(["tools", "--json"], { seeds: [seedA] });
      expect(names(forbidden)).toEqual([toolName(bad)]);
      expect(refusals(forbidden)).toEqual([`EPOLICY_FORBIDDEN ${ok} seed-a`]);
    }, LONG);

    it("the library's loader in a host process: a seeded plugin of a blocked scope is not loaded", async () => {
      await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
      await withManagedPolicy(policyFile, async () => {
        const lib = await import("../../src/index.js");
        const loaded = await lib.discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, xcshHome: w.xcshHome, env: { XCSH_PLUGIN_SEED_DIR: seedA } });
        expect(loaded.tools.map((t) => t.tool.name)).toEqual([toolName(ok)]);
        expect(loaded.errors.map((e) => `${e.code} ${e.source?.plugin} ${e.source?.seed}`)).toEqual([`EPOLICY_BLOCKED ${bad} ${seedA}`]);
      });
    }, LONG);

    it("a seed whose package.json and lock do not name its plugin is still judged, never let through", async () => {
      const hidden = path.join(w.root, "seed-hidden");
      await cp(seedA, hidden, { recursive: true });
      await makeWritable(hidden);
      await writeFile(path.join(hidden, "plugins", "package.json"), JSON.stringify({ name: "seed", private: true, dependencies: {} }));
      await writeFile(path.join(hidden, "plugins", "package-lock.json"), JSON.stringify({ lockfileVersion: 3, packages: {} }));
      await setPolicy({ plugins: { allow: [{ npmRegistry: proxy.url }] } });
      const r = await cli(["tools", "--json"], { seeds: [hidden] });
      expect(names(r)).toEqual([]);
      expect(refusals(r)).toEqual([`EPOLICY_NOT_ALLOWED ${bad} seed-hidden`, `EPOLICY_NOT_ALLOWED ${ok} seed-hidden`]);
      await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
      expect(refusals(await cli(["tools", "--json"], { seeds: [hidden] }))).toEqual([`EPOLICY_BLOCKED ${bad} seed-hidden`]);
    }, LONG);
  });

  it("audit lists every seeded plugin in use (first seed wins) as the seed's: dir, version, integrity, resolved, what it runs, the verdict", async () => {
    await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
    const r = await cli(["audit", "--json"], { seeds: [seedB, seedA] });
    expect(r.code, r.stderr).toBe(0);
    const plugins = r.json().plugins as { id: string; installedBy: string; seed?: string; version: string; integrity: string; resolved: string; runs: { kind: string }[]; policy: { allowed: boolean; code?: string }; source: { type: string } }[];
    expect(plugins.map((p) => `${p.id}@${p.version} ${p.installedBy} ${p.seed}`).sort()).toEqual([`${bad}@1.0.0 seed ${seedA}`, `${ok}@1.1.0 seed ${seedB}`].sort());
    const manifestA = JSON.parse(await readFile(path.join(seedA, "xcsh-seed.json"), "utf8"));
    const manifestB = JSON.parse(await readFile(path.join(seedB, "xcsh-seed.json"), "utf8"));
    const byId = new Map(plugins.map((p) => [p.id, p]));
    expect(byId.get(bad)!.integrity).toBe(manifestA.plugins[bad].integrity);
    expect(byId.get(ok)!.integrity).toBe(manifestB.plugins[ok].integrity);
    for (const p of plugins) {
      expect(p.source.type).toBe("seed");
      expect(p.resolved.startsWith(proxy.url)).toBe(true);
    }
    expect(byId.get(bad)!.policy).toMatchObject({ allowed: false, code: "EPOLICY_BLOCKED" });
    expect(byId.get(ok)!.policy).toMatchObject({ allowed: true });
    // seedA's ok (1.0.0) brings a hook module; it is not the one in use.
    expect(byId.get(ok)!.runs).toEqual([]);
    const onlyA = (await cli(["audit", "--json"], { seeds: [seedA] })).json().plugins as typeof plugins;
    expect(onlyA.find((p) => p.id === ok)!.runs.map((x) => x.kind)).toContain("hook");
    const text = await cli(["audit"], { seeds: [seedB, seedA] });
    expect(text.stdout).toContain(`installed by seed`);
    expect(text.stdout).toContain(`(seed ${seedA})`);
    expect(text.stdout).toContain(`policy: EPOLICY_BLOCKED`);
  }, LONG);

  describe("seed refuses what the policy refuses before any request or folder", () => {
    const leftovers = async (dir: string) => (await readdir(dir)).filter((name) => name.startsWith("out"));

    it("a blocked spec, a registry off the allowlist, a forbidden name", async () => {
      const out = path.join(w.root, "out");
      await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
      expect(refusal(await cli(["--json", "seed", out, `${bad}@1.0.0`, "--yes"])).code).toBe("EPOLICY_BLOCKED");
      await setPolicy({ plugins: { allow: [{ npmRegistry: "https://npm.corp.example/" }] } });
      expect(refusal(await cli(["--json", "seed", out, `${ok}@1.0.0`, "--yes"])).code).toBe("EPOLICY_NOT_ALLOWED");
      await setPolicy({ plugins: { forbidden: [ok] } });
      expect(refusal(await cli(["--json", "seed", out, `${ok}@1.0.0`, "--yes"])).code).toBe("EPOLICY_FORBIDDEN");
      expect(requests).toEqual([]);
      expect(await leftovers(w.root)).toEqual([]);
      // The target is not even looked at: a full one, or one under a file, is the policy's refusal too.
      const full = await w.write(path.join(w.root, "full", "x"), "x");
      expect(refusal(await cli(["--json", "seed", path.dirname(full), `${ok}@1.0.0`, "--yes"])).code).toBe("EPOLICY_FORBIDDEN");
      expect(refusal(await cli(["--json", "seed", path.join(full, "under-a-file"), `${ok}@1.0.0`, "--yes"])).code).toBe("EPOLICY_FORBIDDEN");
      expect(await readdir(path.join(w.root, "full"))).toEqual(["x"]);
    }, LONG);

    it("--from a project whose lock holds a blocked plugin", async () => {
      await lockProject(bad);
      const out = path.join(w.root, "out");
      await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
      const r = refusal(await cli(["--json", "seed", out, "--from", ".", "--yes"]));
      expect(r.code).toBe("EPOLICY_BLOCKED");
      expect(r.message).toContain(bad);
      const full = await w.write(path.join(w.root, "full", "x"), "x");
      expect(refusal(await cli(["--json", "seed", path.dirname(full), "--from", ".", "--yes"])).code).toBe("EPOLICY_BLOCKED");
      expect(requests).toEqual([]);
      expect(await leftovers(w.root)).toEqual([]);
    }, LONG);
  });

  /** A trusted repository whose set declares and locks `name` (installed without a policy), then no request counted. */
  async function lockProject(name: string): Promise<void> {
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    execFileSync("git", ["init", "-q"], { cwd: w.cwd, env: isolatedGitEnv(w.home) });
    const r = await cli(["install", `${name}@1.0.0`, "--scope", "project", "--yes"], { policy: false });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(await readFile(path.join(w.cwd, "xcsh-team.lock.json"), "utf8")).toContain(name);
    requests.length = 0;
  }

  it("a restore refuses a locked plugin the policy blocks or forbids even when a seed provides it", async () => {
    await lockProject(bad);
    const before = await snap();
    await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
    expect(refusal(await cli(["install", "--yes", "--json"], { seeds: [seedA] })).code).toBe("EPOLICY_BLOCKED");
    await setPolicy({ plugins: { forbidden: [bad] } });
    expect(refusal(await cli(["install", "--yes", "--json", "--offline"], { seeds: [seedA] })).code).toBe("EPOLICY_FORBIDDEN");
    expect(requests).toEqual([]);
    expect(await snap()).toEqual(before);
    // Without the policy the same restore is served by the seed: the refusals above were the policy's.
    const served = await cli(["install", "--yes", "--json", "--offline"], { seeds: [seedA], policy: false });
    expect(served.code, `${served.stdout}\n${served.stderr}`).toBe(0);
  }, LONG);

  it("outdated probes no marketplace or plugin source the policy refuses", async () => {
    const market = await writeFolderMarketplace(path.join(w.root, "markets", "corp"), { name: "corp", tools: ["corp_hello"] });
    for (const args of [["marketplace", "add", market], ["install", "hello@corp"]]) {
      const r = await cli([...args, "--yes"], { policy: false });
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    }
    const rowOf = async () => {
      const r = await cli(["outdated", "--json"]);
      const rows = r.json().marketplacePlugins as { id: string; error?: { code: string } }[];
      return rows.find((row) => row.id === "hello@corp")?.error?.code;
    };
    expect(await rowOf()).toBeUndefined();
    // The folder's catalog changes after it was added: reading it live would say ECATALOG_STALE; a blocked folder is not read.
    const catalogFile = path.join(market, catalogPath());
    const doc = JSON.parse(await readFile(catalogFile, "utf8"));
    await writeFile(catalogFile, JSON.stringify({ ...doc, description: "changed" }));
    await setPolicy({ marketplaces: { block: [{ folder: path.dirname(market) }] } });
    expect(await rowOf()).toBe("EPOLICY_BLOCKED");
    await writeFile(catalogFile, JSON.stringify(doc));
    await setPolicy({ plugins: { block: [{ folder: market }] } });
    expect(await rowOf()).toBe("EPOLICY_BLOCKED");
    await setPolicy({ plugins: { forbidden: ["hello@corp"] } });
    expect(await rowOf()).toBe("EPOLICY_FORBIDDEN");
  }, LONG);

  it("outdated asks no registry about an installed npm plugin whose recorded source the policy blocks", async () => {
    const r = await cli(["install", `${bad}@1.0.0`, "--yes"], { policy: false });
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    requests.length = 0;
    expect((await cli(["outdated", "--json"])).code).toBe(0);
    expect(requests.length).toBeGreaterThan(0);
    await setPolicy({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } });
    requests.length = 0;
    const refused = refusal(await cli(["outdated", "--json"]));
    expect(refused.code).toBe("EPOLICY_BLOCKED");
    expect(refused.message).toContain(bad);
    expect(requests).toEqual([]);
  }, LONG);

  for (const { label, policy, code } of [
    { label: "a blocked npm scope", policy: () => ({ plugins: { block: [{ npmScope: `@psbad${tag}` }] } }), code: "EPOLICY_BLOCKED" },
    { label: "a forbidden plugin", policy: () => ({ plugins: { forbidden: [bad] } }), code: "EPOLICY_FORBIDDEN" },
    { label: "a scope off the allowlist", policy: () => ({ plugins: { allow: [{ npmScope: `@psok${tag}` }] } }), code: "EPOLICY_NOT_ALLOWED" },
  ]) {
    it(`outdated of a project's set asks no registry about a declared plugin the policy refuses: ${label}`, async () => {
      await w.write(path.join(w.cwd, "xcsh-team.json"), { version: 1, plugins: { [bad]: { spec: "^1.0.0" }, [ok]: { spec: "^1.0.0" } } });
      expect((await cli(["trust"], { policy: false })).code).toBe(0);
      requests.length = 0;
      const free = await cli(["outdated", "--json"]);
      expect(free.code, `${free.stdout}\n${free.stderr}`).toBe(0);
      expect(requests.length).toBeGreaterThan(0);
      await setPolicy(policy());
      requests.length = 0;
      const refused = refusal(await cli(["outdated", "--json"]));
      expect(refused.code).toBe(code);
      expect(refused.message).toContain(bad);
      expect(requests).toEqual([]);
    }, LONG);
  }

  it("outdated asks no registry for a marketplace plugin whose npm source the policy blocks", async () => {
    const pkg = `@psnpm${tag}/mkt`;
    await reg.publish({ name: pkg, version: "1.0.0", packageJson: { type: "module" }, files: { "tools/npm_tool.mjs": toolSource("npm_tool"), ".xcsh-plugin/plugin.json": { name: "frompkg" } } });
    const market = await writeFolderMarketplace(path.join(w.root, "markets", "npmm"), { name: "npmm", plugin: "frompkg", tools: ["unused"], entry: { source: { source: "npm", package: pkg, version: "^1.0.0", registry: proxy.url } } });
    for (const args of [["marketplace", "add", market], ["install", "frompkg@npmm"]]) {
      const r = await cli([...args, "--yes"], { policy: false });
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    }
    const rowOf = async () => ((await cli(["outdated", "--json"])).json().marketplacePlugins as { id: string; error?: { code: string } }[]).find((row) => row.id === "frompkg@npmm");
    requests.length = 0;
    expect((await rowOf())?.error).toBeUndefined();
    expect(requests.length).toBeGreaterThan(0);
    await setPolicy({ plugins: { block: [{ npmScope: `@psnpm${tag}` }] } });
    requests.length = 0;
    expect((await rowOf())?.error?.code).toBe("EPOLICY_BLOCKED");
    expect(requests).toEqual([]);
  }, LONG);
});

describe("test runs read no machine policy", () => {
  it("a CLI run without managedPolicy reads a file in its temp home that does not exist, not the platform's", async () => {
    const world = await makeTmpWorld("xcsh-policy-hermetic-");
    try {
      const r = await runCli(["audit", "--json"], { cwd: world.cwd, home: world.home });
      expect(r.code, r.stderr).toBe(0);
      const policy = r.json().policy as { file: string; state: string };
      expect(policy.state).toBe("none");
      expect(policy.file.startsWith(world.home + path.sep)).toBe(true);
    } finally {
      await world.cleanup();
    }
  });
});
