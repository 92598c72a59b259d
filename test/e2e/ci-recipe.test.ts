/**
 * The CI recipe of docs/fleets.md (issue 43 points 3, 4 and 5): at image build, `seed --from` the
 * project's lock; at run time, in a clean HOME with no terminal and XCSH_PLUGIN_SEED_DIR set,
 * `install --frozen --yes --offline` restores the set from the seed with no request to the
 * registry (a counting proxy in front of it), and the loader boots the tools from the seed with
 * the registry gone. Without a seed `--offline` is `EOFFLINE` listing what is missing; a seed
 * that disagrees with the lock, or whose files changed, is a coded error naming file and field.
 * Every refusal writes nothing.
 */
import { cp, readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { discoverAndLoadCustomTools } from "../../src/index.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import { countingSwapProxy, type RegistryProxy } from "../helpers/registry-proxy.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeWritable, refusal, removeWorlds, teamMachine } from "../helpers/seeds.js";
import { toolName, toolSource } from "../integration/plugins-fixtures.js";

const LONG = 300_000;

describe("CI recipe: seed at image build, restore and boot with no network", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const tag = Math.random().toString(36).slice(2, 8);
  const p1 = `@cirecipe/p1-${tag}`;
  const p2 = `@cirecipe/p2-${tag}`;
  let image: TmpWorld;
  let seed: string;
  const worlds: TmpWorld[] = [];
  const requests: string[] = [];
  let proxy: RegistryProxy;

  /** A clean CI machine: its own HOME, npm through the counting proxy, the project's committed files only. */
  const ciMachine = (): Promise<TmpWorld> => teamMachine(image.cwd, proxy.url, worlds, "xcsh-ci-run-");
  /** `xcsh-tools seed <dir> <specs> --yes` at image build. */
  async function seedOf(dir: string, specs: string[]): Promise<void> {
    const built = await runCli(["seed", dir, ...specs, "--yes"], { cwd: image.cwd, home: image.home, timeoutMs: 180_000 });
    expect(built.code, built.stderr).toBe(0);
  }
  const ci = (w: TmpWorld, args: string[], seeds?: string) => runCli(args, { cwd: w.cwd, home: w.home, env: seeds === undefined ? { XCSH_PLUGIN_SEED_DIR: undefined } : { XCSH_PLUGIN_SEED_DIR: seeds }, timeoutMs: 180_000 });

  beforeAll(async () => {
    reg = await useGlobalRegistry();
    proxy = await countingSwapProxy(reg.url, requests, () => undefined);
    // p1 brings a hook module (consent needed); p2 has a dependency of its own.
    await reg.publish({ name: `${p2}-dep`, version: "1.0.0", files: { "index.js": "module.exports = 42;\n" } });
    await reg.publish({ name: p1, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js", hooks: "./hooks/guard.js" } }, files: { "t.js": toolSource(toolName(p1)), "hooks/guard.js": "export default function () {}\n" } });
    for (const version of ["1.0.0", "1.1.0"]) await reg.publish({ name: p2, version, packageJson: { type: "module", xcsh: { tools: "./t.js" }, dependencies: { [`${p2}-dep`]: "^1.0.0" } }, files: { "t.js": toolSource(toolName(p2)) } });
    // The image build: the project declares p1 and p2 and was locked by a developer.
    image = await makeTmpWorld("xcsh-ci-image-");
    await writeUserNpmrc(image.home, reg.url);
    await image.write(path.join(image.cwd, "xcsh-team.json"), { version: 1, plugins: { [p1]: { spec: "^1.0.0" }, [p2]: { spec: "1.0.0" } } });
    const img = (args: string[]) => runCli(args, { cwd: image.cwd, home: image.home, timeoutMs: 180_000 });
    expect((await img(["trust"])).code).toBe(0);
    const locked = await img(["install", "--yes"]);
    expect(locked.code, locked.stderr).toBe(0);
    seed = path.join(image.root, "opt-xcsh-seed");
    // Consent as install: no terminal and no --yes is EUNCONFIRMED, and no seed is left behind.
    expect(refusal(await img(["--json", "seed", seed, "--from", "."])).code).toBe("EUNCONFIRMED");
    expect(await readdir(image.root)).not.toContain("opt-xcsh-seed");
    const built = await img(["seed", seed, "--from", ".", "--yes"]);
    expect(built.code, built.stderr).toBe(0);
  }, LONG);
  afterAll(async () => {
    await proxy?.close();
    await reg?.dispose();
    await removeWorlds([image, ...worlds]);
  });

  it("the seed records the lock it came from (sha256 of its bytes) and the locked integrity of each plugin", async () => {
    const manifest = JSON.parse(await readFile(path.join(seed, "xcsh-seed.json"), "utf8"));
    const lockText = await readFile(path.join(image.cwd, "xcsh-team.lock.json"), "utf8");
    const lock = JSON.parse(lockText);
    const { createHash } = await import("node:crypto");
    expect(manifest.from).toEqual({ kind: "lock", file: "xcsh-team.lock.json", sha256: createHash("sha256").update(lockText).digest("hex") });
    for (const name of [p1, p2]) expect(manifest.plugins[name]).toMatchObject({ version: lock.npm[name].version, integrity: lock.npm[name].integrity });
    // The plugin's own dependency is in the seed too: it resolves from the plugin in place.
    expect(await readdir(path.join(seed, "plugins", "node_modules", "@cirecipe"))).toContain(`p2-${tag}-dep`);
  });

  it("run: install --frozen --yes --offline takes the set from the seed with no request, and the loader boots it with the registry gone", async () => {
    const w = await ciMachine();
    const before = await snapshotTree(seed);
    requests.length = 0;
    const r = await ci(w, ["--json", "install", "--frozen", "--yes", "--offline"], seed);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(requests).toEqual([]);
    expect(r.json().fromSeeds.join("\n")).toContain(`${p1}@1.0.0 (${seed})`);
    expect(r.json().npmInstalled).toEqual([]);
    // Used in place: nothing of the set was copied into the user's plugins.
    expect(await readdir(path.join(w.home, ".xcsh", "plugins", "node_modules")).catch(() => [])).toEqual([]);
    // A second run is the engine again (no stamp while seeds are in use) and still asks nothing of the network.
    expect((await ci(w, ["install", "--frozen", "--yes", "--offline"], seed)).code).toBe(0);
    expect(requests).toEqual([]);
    // Boot: the host's one call, in this process, the registry unreachable (the proxy stopped).
    await proxy.close();
    const loaded = await discoverAndLoadCustomTools([], w.cwd, [], undefined, { home: w.home, env: { XCSH_HOME: path.join(w.home, ".xcsh"), XCSH_PLUGIN_SEED_DIR: seed } });
    expect(loaded.errors).toEqual([]);
    const names = loaded.tools.map((t) => t.tool.name);
    expect(names).toEqual(expect.arrayContaining([toolName(p1), toolName(p2)]));
    for (const tool of loaded.tools) expect(tool.resolvedPath.startsWith(seed + path.sep)).toBe(true);
    expect(await snapshotTree(seed)).toEqual(before);
    proxy = await countingSwapProxy(reg.url, requests, () => undefined);
  }, LONG);

  it("a seed holding part of the set: that part comes from the seed, only the rest from the registry", async () => {
    const partial = path.join(image.root, "partial-seed");
    await seedOf(partial, [`${p1}@1.0.0`]);
    const w = await ciMachine();
    requests.length = 0;
    const r = await ci(w, ["--json", "install", "--frozen", "--yes"], partial);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.json().fromSeeds).toEqual([`${p1}@1.0.0 (${partial})`]);
    expect(r.json().npmInstalled).toEqual([`${p2}@1.0.0`]);
    const p1Path = `/${p1.replace("/", "%2f")}`;
    expect(requests.filter((q) => q.includes(p1Path) || q.includes(`/${p1}/`))).toEqual([]);
    expect(requests.some((q) => q.includes(`p2-${tag}`))).toBe(true);
    // Then --offline answers p2 from npm's cache, p1 from the seed: no request at all.
    requests.length = 0;
    expect((await ci(w, ["install", "--frozen", "--yes", "--offline"], partial)).code).toBe(0);
    expect(requests).toEqual([]);
  }, LONG);

  it("--offline without a seed: EOFFLINE listing each missing plugin, no request, nothing written", async () => {
    const w = await ciMachine();
    const before = await snapshotTree(w.root, { exclude: [".npm"] });
    requests.length = 0;
    const error = refusal(await ci(w, ["--json", "install", "--frozen", "--yes", "--offline"]));
    expect(error.code).toBe("EOFFLINE");
    expect(error.message).toContain(`${p1}@1.0.0`);
    expect(error.message).toContain(`${p2}@1.0.0`);
    expect(error.file).toBe(path.join(w.cwd, "xcsh-team.lock.json"));
    expect(error.hint).toMatch(/XCSH_PLUGIN_SEED_DIR/);
    expect(requests).toEqual([]);
    expect(await snapshotTree(w.root, { exclude: [".npm"] })).toEqual(before);
  }, LONG);

  it("--offline with a declaration the lock does not cover yet: EOFFLINE naming the entry to resolve, no request, nothing written", async () => {
    const w = await ciMachine();
    const extra = `@cirecipe/unlocked-${tag}`;
    await w.write(path.join(w.cwd, "xcsh-team.json"), { version: 1, plugins: { [p1]: { spec: "^1.0.0" }, [p2]: { spec: "1.0.0" }, [extra]: { spec: "^1.0.0" } } });
    const before = await snapshotTree(w.root, { exclude: [".npm"] });
    requests.length = 0;
    const error = refusal(await ci(w, ["--json", "install", "--yes", "--offline"], seed));
    expect(error.code).toBe("EOFFLINE");
    expect(error.message).toContain(`/npm/${extra.replace("/", "~1")} (missing: resolving it needs the network)`);
    expect(requests).toEqual([]);
    expect(await snapshotTree(w.root, { exclude: [".npm"] })).toEqual(before);
  }, LONG);

  it("a seed and a lock that disagree: ESEED_LOCK_MISMATCH naming both files and the field, nothing written", async () => {
    const other = path.join(image.root, "other-seed");
    await seedOf(other, [`${p2}@1.1.0`]);
    const w = await ciMachine();
    const before = await snapshotTree(w.root, { exclude: [".npm"] });
    // The first seed that lists p2 decides: other-seed, at 1.1.0.
    const error = refusal(await ci(w, ["--json", "install", "--frozen", "--yes", "--offline"], [other, seed].join(path.delimiter)));
    expect(error.code).toBe("ESEED_LOCK_MISMATCH");
    expect(error.file).toBe(path.join(other, "xcsh-seed.json"));
    expect(error.path).toBe(`/plugins/${p2.replace("/", "~1")}/version`);
    expect(error.message).toContain(`/npm/${p2.replace("/", "~1")}/version is 1.0.0`);
    expect(error.hint).toMatch(/seed <dir> --from/);
    expect(await snapshotTree(w.root, { exclude: [".npm"] })).toEqual(before);
  }, LONG);

  it("a seed whose files changed after it was built: ESEED_INTEGRITY naming /plugins/<name>/tree; one missing a plugin: ESEED_INCOMPLETE", async () => {
    const tampered = path.join(image.root, "tampered-seed");
    await cp(seed, tampered, { recursive: true });
    await makeWritable(tampered);
    await writeFile(path.join(tampered, "plugins", "node_modules", p1, "t.js"), toolSource(toolName(p1), "// changed\n"));
    const w = await ciMachine();
    const before = await snapshotTree(w.root, { exclude: [".npm"] });
    const error = refusal(await ci(w, ["--json", "install", "--frozen", "--yes", "--offline"], tampered));
    expect(error.code).toBe("ESEED_INTEGRITY");
    expect(error.file).toBe(path.join(tampered, "xcsh-seed.json"));
    expect(error.path).toBe(`/plugins/${p1.replace("/", "~1")}/tree`);
    const { rm } = await import("node:fs/promises");
    await rm(path.join(tampered, "plugins", "node_modules", p1), { recursive: true });
    const missing = refusal(await ci(w, ["--json", "install", "--frozen", "--yes", "--offline"], tampered));
    expect(missing.code).toBe("ESEED_INCOMPLETE");
    expect(missing.path).toBe(`/plugins/${p1.replace("/", "~1")}`);
    expect(await snapshotTree(w.root, { exclude: [".npm"] })).toEqual(before);
  }, LONG);

  // Last: it publishes a newer dependency, which later restores would not see anyway (they pin the lock's closure).
  it("seed --from when the registry now resolves another dependency than the lock's closure: ESEED_LOCK_MISMATCH naming /npm/<name>/dependencies/<dep@version>, no seed left", async () => {
    await reg.publish({ name: `${p2}-dep`, version: "1.0.1", files: { "index.js": "module.exports = 43;\n" } });
    const target = path.join(image.root, "drifted-seed");
    const error = refusal(await runCli(["--json", "seed", target, "--from", ".", "--yes"], { cwd: image.cwd, home: image.home, timeoutMs: 180_000 }));
    expect(error.code).toBe("ESEED_LOCK_MISMATCH");
    expect(error.file).toBe(path.join(image.cwd, "xcsh-team.lock.json"));
    expect(error.path).toBe(`/npm/${p2.replace("/", "~1")}/dependencies/${`${p2}-dep@1.0.0`.replace("/", "~1")}`);
    expect(error.message).toContain("not installed");
    expect(await readdir(image.root)).not.toContain("drifted-seed");
  }, LONG);
});
