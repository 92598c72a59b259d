/**
 * Plugin seeds (issue 43 points 1, 2 and the seed part of 5; docs/design/fleets.md): `seed`
 * builds a read-only folder from npm specs at image-build time; a machine with
 * XCSH_PLUGIN_SEED_DIR boots the loader and answers `tools`, `list`, `doctor` from it in place,
 * never writing it; changing a seeded plugin is `ESEEDED`; a broken seed is a coded record naming
 * file and field. The built CLI as a process, no terminal (stdin is a closed pipe).
 */
import { chmod, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { snapshotTree } from "../helpers/tree-snapshot.js";
import { makeWritable, refusal } from "../helpers/seeds.js";
import { toolName, toolSource } from "../integration/plugins-fixtures.js";

const LONG = 240_000;

describe("plugin seeds: build, boot in place, never written", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const tag = Math.random().toString(36).slice(2, 8);
  const alpha = `@seede2e/alpha-${tag}`;
  const beta = `@seede2e/beta-${tag}`;
  let builder: TmpWorld;
  let seed: string;

  beforeAll(async () => {
    reg = await useGlobalRegistry();
    // alpha brings a hook module the host would import: building a seed with it needs consent.
    await reg.publish({ name: alpha, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js", hooks: "./hooks/guard.js" } }, files: { "t.js": toolSource(toolName(alpha)), "hooks/guard.js": "export default function () {}\n" } });
    await reg.publish({ name: beta, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(beta)) } });
    // The image build: a HOME of its own, no terminal.
    builder = await makeTmpWorld("xcsh-seed-build-");
    await writeUserNpmrc(builder.home, reg.url);
    seed = path.join(builder.root, "seed");
    const unconfirmed = await runCli(["--json", "seed", seed, `${alpha}@1.0.0`], { cwd: builder.cwd, home: builder.home, timeoutMs: 180_000 });
    expect(refusal(unconfirmed).code).toBe("EUNCONFIRMED");
    expect(await readdir(builder.root)).not.toContain("seed");
    const built = await runCli(["seed", seed, `${alpha}@1.0.0`, `${beta}@1.0.0`, "--yes"], { cwd: builder.cwd, home: builder.home, timeoutMs: 180_000 });
    expect(built.code, built.stderr).toBe(0);
  }, LONG);
  afterAll(async () => {
    await reg?.dispose();
    if (builder) await makeWritable(builder.root);
    await builder?.cleanup();
  });

  let w: TmpWorld;
  beforeEach(async () => {
    w = await makeTmpWorld("xcsh-seed-run-");
  });
  afterEach(async () => {
    await w?.cleanup();
  });

  /** `xcsh-tools <args>` on the running machine: clean HOME, the seed variable, a registry that is not there. */
  const run = (args: string[], seeds: string = seed) => runCli(args, { cwd: w.cwd, home: w.home, env: { XCSH_PLUGIN_SEED_DIR: seeds, npm_config_registry: "http://127.0.0.1:9/" }, timeoutMs: 120_000 });

  it("is self-describing and read-only: format, origin, per-plugin version, integrity and tree hash", async () => {
    const manifest = JSON.parse(await readFile(path.join(seed, "xcsh-seed.json"), "utf8"));
    expect(manifest.seedFormat).toBe(1);
    expect(manifest.from).toEqual({ kind: "specs", specs: [`${alpha}@1.0.0`, `${beta}@1.0.0`] });
    for (const name of [alpha, beta]) {
      expect(manifest.plugins[name].version).toBe("1.0.0");
      expect(manifest.plugins[name].integrity).toMatch(/^sha512-/);
      expect(manifest.plugins[name].tree).toMatch(/^tree1-sha256:[0-9a-f]{64}$/);
    }
    for (const file of [path.join(seed, "xcsh-seed.json"), path.join(seed, "plugins", "node_modules", alpha, "t.js")]) expect((await stat(file)).mode & 0o222).toBe(0);
    expect((await stat(seed)).mode & 0o222).toBe(0);
    expect(await readdir(path.join(seed, "plugins"))).not.toContain(".xcsh-tools");
  });

  it("tools, list, show, doctor, and the refused changes leave every byte of the seed as it was", async () => {
    const before = await snapshotTree(seed);
    const tools = await run(["--json", "tools"]);
    expect(tools.code, tools.stderr).toBe(0);
    const listed = tools.json().tools as { name: string; file: string; seed?: string; plugin?: string }[];
    for (const name of [alpha, beta]) {
      const tool = listed.find((t) => t.name === toolName(name));
      expect(tool, JSON.stringify(listed)).toBeDefined();
      expect(tool!.file.startsWith(path.join(seed, "plugins", "node_modules"))).toBe(true);
      expect(tool).toMatchObject({ seed, plugin: name, level: "user", provider: "npm" });
    }
    const list = await run(["--json", "list"]);
    expect(list.code, list.stderr).toBe(0);
    const seededRows = list.json().seeded as { name: string; version: string; seed: string; path: string }[];
    expect(seededRows.map((p) => p.name).sort()).toEqual([alpha, beta].sort());
    expect(seededRows.every((p) => p.seed === seed && p.version === "1.0.0" && p.path.startsWith(seed))).toBe(true);
    expect(list.json().plugins).toEqual([]);
    const shown = await run(["show", alpha]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`from the read-only seed ${seed}`);
    expect(shown.stdout).toContain(toolName(alpha));
    const doctor = await run(["--json", "doctor"]);
    const seedChecks = (doctor.json().checks as { area: string; status: string; message: string }[]).filter((c) => c.area === "seeds");
    expect(seedChecks).toEqual([expect.objectContaining({ status: "ok", message: expect.stringContaining(`seed ${seed}: 2 plugins, intact`) })]);
    for (const args of [["list"], ["tools"], ["doctor", "--fix"]]) await run(args);
    for (const [verb, extra] of [["uninstall", []], ["update", []], ["disable", []], ["enable", []]] as const) {
      const r = await run(["--json", verb, alpha, ...extra]);
      const error = refusal(r);
      expect(error.code, `${verb}: ${r.stdout}`).toBe("ESEEDED");
      expect(error.message).toContain(seed);
      expect(error.file).toBe(path.join(seed, "xcsh-seed.json"));
      expect(error.path).toBe(`/plugins/${alpha.replace("/", "~1")}`);
      expect(error.hint).toMatch(/xcsh-tools seed/);
    }
    expect(await snapshotTree(seed)).toEqual(before);
    // The user's own folder got nothing installed: the seed is used in place.
    expect(await readdir(path.join(w.home, ".xcsh", "plugins", "node_modules")).catch(() => [])).toEqual([]);
  }, LONG);

  it("several seeds: the first that has a plugin wins; one that is missing is a record, the others still load", async () => {
    const second = path.join(w.root, "second");
    const { cp } = await import("node:fs/promises");
    await cp(seed, second, { recursive: true });
    const fileOf = (r: ProcessResult) => (r.json().tools as { name: string; file: string }[]).find((t) => t.name === toolName(alpha))?.file ?? "";
    expect(fileOf(await run(["--json", "tools"], [seed, second].join(path.delimiter))).startsWith(seed + path.sep)).toBe(true);
    expect(fileOf(await run(["--json", "tools"], [second, seed].join(path.delimiter))).startsWith(second + path.sep)).toBe(true);
    const missing = path.join(w.root, "missing");
    const r = await run(["--json", "tools"], [missing, seed].join(path.delimiter));
    expect(r.code, r.stderr).toBe(1); // `tools` exits 1 when there are errors
    const errors = r.json().errors as { code: string; path: string }[];
    expect(errors.some((e) => e.code === "ESEED_UNREADABLE" && e.path.startsWith(missing))).toBe(true);
    expect(fileOf(r).startsWith(seed + path.sep)).toBe(true);
    await makeWritable(second);
  }, LONG);

  it("seed refuses, writing nothing: a target that is not empty (ESEED_TARGET), --from an untrusted project (EUNTRUSTED_PROJECT), both specs and --from (EUSAGE)", async () => {
    const target = path.join(w.root, "target");
    await w.write(path.join(target, "keep.txt"), "mine");
    const b = (args: string[]) => runCli(["--json", "seed", ...args], { cwd: w.cwd, home: w.home, timeoutMs: 120_000 });
    const notEmpty = refusal(await b([target, `${alpha}@1.0.0`, "--yes"]));
    expect(notEmpty).toMatchObject({ code: "ESEED_TARGET", file: target });
    expect(await readdir(target)).toEqual(["keep.txt"]);
    await w.write(path.join(w.cwd, "xcsh-team.json"), { version: 1, plugins: { [alpha]: { spec: "1.0.0" } } });
    await w.write(path.join(w.cwd, "xcsh-team.lock.json"), "{}");
    const before = await snapshotTree(w.root);
    expect(refusal(await b([path.join(w.root, "s1"), "--from", ".", "--yes"])).code).toBe("EUNTRUSTED_PROJECT");
    expect(refusal(await b([path.join(w.root, "s2"), alpha, "--from", "."])).code).toBe("EUSAGE");
    expect(await snapshotTree(w.root)).toEqual(before);
  });

  it("a relative seed folder in the variable is EENV_PATH", async () => {
    const error = refusal(await run(["--json", "tools"], "relative/seed"));
    expect(error.code).toBe("EENV_PATH");
    expect(error.message).toContain("XCSH_PLUGIN_SEED_DIR");
  });

  describe("bad seeds: a coded record naming file and field, nothing of that seed loaded", () => {
    let copy: string;
    beforeEach(async () => {
      copy = path.join(w.root, "copy");
      const { cp } = await import("node:fs/promises");
      await cp(seed, copy, { recursive: true });
      await makeWritable(copy);
    });
    afterEach(async () => {
      await makeWritable(copy);
    });

    const toolsErrors = async () => {
      const r = await run(["--json", "tools"], copy);
      expect(r.code, r.stderr).toBe(1); // `tools` exits 1 when there are errors
      return { errors: r.json().errors as { code: string; path: string; message: string }[], names: (r.json().tools as { name: string }[]).map((t) => t.name) };
    };

    it("written by a newer format: ESEED_FORMAT at /seedFormat", async () => {
      const file = path.join(copy, "xcsh-seed.json");
      const manifest = JSON.parse(await readFile(file, "utf8"));
      await writeFile(file, JSON.stringify({ ...manifest, seedFormat: 2 }));
      const { errors, names } = await toolsErrors();
      const record = errors.find((e) => e.code === "ESEED_FORMAT");
      expect(record?.path).toBe(file);
      expect(record?.message).toMatch(/\/seedFormat: 2 .*newer xcsh-tools/);
      expect(names).not.toContain(toolName(alpha));
    });

    it("not JSON, or a field of the wrong shape: ESEED_INVALID naming the field", async () => {
      const file = path.join(copy, "xcsh-seed.json");
      const manifest = JSON.parse(await readFile(file, "utf8"));
      await writeFile(file, JSON.stringify({ ...manifest, plugins: { [alpha]: { ...manifest.plugins[alpha], tree: "md5:x" } } }));
      let { errors } = await toolsErrors();
      expect(errors.find((e) => e.code === "ESEED_INVALID")?.message).toContain(`/plugins/${alpha.replace("/", "~1")}/tree`);
      await writeFile(file, "{ not json");
      ({ errors } = await toolsErrors());
      expect(errors.find((e) => e.code === "ESEED_INVALID")?.message).toMatch(/not JSON/);
    });

    it("a listed plugin missing, or at another version: ESEED_INCOMPLETE for that plugin only", async () => {
      await rm(path.join(copy, "plugins", "node_modules", alpha), { recursive: true });
      const betaPkg = path.join(copy, "plugins", "node_modules", beta, "package.json");
      await writeFile(betaPkg, JSON.stringify({ ...JSON.parse(await readFile(betaPkg, "utf8")), version: "9.9.9" }));
      const { errors, names } = await toolsErrors();
      const incomplete = errors.filter((e) => e.code === "ESEED_INCOMPLETE");
      expect(incomplete.map((e) => e.message).join("\n")).toContain(`${alpha}@1.0.0`);
      expect(incomplete.map((e) => e.message).join("\n")).toContain("/version is \"9.9.9\"");
      expect(names).not.toContain(toolName(alpha));
      expect(names).not.toContain(toolName(beta));
    });

    it("files changed after the build: doctor says ESEED_INTEGRITY naming /plugins/<name>/tree (the boot path checks only versions)", async () => {
      await writeFile(path.join(copy, "plugins", "node_modules", beta, "t.js"), toolSource(toolName(beta), "// changed\n"));
      const r = await run(["--json", "doctor"], copy);
      expect(r.code).not.toBe(0);
      const failing = (r.json().checks as { area: string; status: string; message: string }[]).filter((c) => c.area === "seeds" && c.status === "error");
      expect(failing).toHaveLength(1);
      expect(failing[0]!.message).toMatch(/^ESEED_INTEGRITY: /);
      expect(failing[0]!.message).toContain(`/plugins/${beta.replace("/", "~1")}/tree`);
    });

    it("not readable: ESEED_UNREADABLE", async () => {
      if (process.getuid?.() === 0) return; // root reads anything
      await chmod(path.join(copy, "xcsh-seed.json"), 0o000);
      const { errors } = await toolsErrors();
      expect(errors.find((e) => e.code === "ESEED_UNREADABLE")?.path).toBe(path.join(copy, "xcsh-seed.json"));
    });
  });
});
