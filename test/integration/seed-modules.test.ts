/**
 * A seed carries the module outcomes its build validated (`xcsh-seed-modules.json`,
 * docs/design/fleets.md "Module records in a seed"): a restore that uses the seed hands them to the
 * boot index refresh after its commit, which then imports none of those modules in the validation
 * child. Only while the bytes and the runtime are the recorded ones: an edited module, or records
 * made under another runtime, go through the child. A records file naming a module outside its
 * plugin's folder is `ESEED_INVALID`, nothing written.
 *
 * Whether the child ran is read from the boot index: the test rewrites each recorded tool's
 * description to a marker the module itself never produces, so a record holding the marker came
 * from the seed, one holding the module's own description from the child.
 */
import { cp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli, type ProcessResult } from "../helpers/run-cli.js";
import type { TmpWorld } from "../helpers/tmp-home.js";
import { makeWritable, refusal, removeWorlds, seedImage, teamMachine } from "../helpers/seeds.js";
import { seedTreeHash } from "../../src/teamset/seed.js";
import { toolName, toolSource } from "./plugins-fixtures.js";

const LONG = 300_000;
const MARK = "recorded by the seed's build";

describe("module records in a seed: the restore's boot index refresh imports nothing the seed validated", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const tag = Math.random().toString(36).slice(2, 8);
  const p1 = `@seedmods/p1-${tag}`;
  const p2 = `@seedmods/p2-${tag}`;
  let image: TmpWorld;
  let seed: string;
  const worlds: TmpWorld[] = [];
  const machine = (): Promise<TmpWorld> => teamMachine(image.cwd, reg.url, worlds, "xcsh-seedmods-run-");
  const restore = (w: TmpWorld, seeds: string, extra: string[] = []): Promise<ProcessResult> =>
    runCli(["--json", "install", "--frozen", "--yes", "--offline", ...extra], { cwd: w.cwd, home: w.home, env: { XCSH_PLUGIN_SEED_DIR: seeds }, timeoutMs: 180_000 });

  /** A writable copy of the seed, its module records rewritten by `edit` (every description marked first). */
  async function forged(name: string, edit: (records: { plugins: Record<string, { file: string; sha256: string; runtime: string; tools: { description?: unknown }[] }[]> }) => void = () => {}): Promise<string> {
    const copy = path.join(image.root, `${name}-${Math.random().toString(36).slice(2, 8)}`);
    await cp(seed, copy, { recursive: true });
    await makeWritable(copy);
    const file = path.join(copy, "xcsh-seed-modules.json");
    const records = JSON.parse(await readFile(file, "utf8"));
    for (const modules of Object.values(records.plugins) as { tools: { description?: unknown }[] }[][]) for (const m of modules) for (const t of m.tools) t.description = MARK;
    edit(records);
    await writeFile(file, JSON.stringify(records));
    return copy;
  }

  /** Change a seeded plugin's file and record the new tree hash, as a seed's owner could: the restore then trusts the folder, not the module records. */
  async function editPlugin(copy: string, name: string, rel: string, text: string): Promise<void> {
    const dir = path.join(copy, "plugins", "node_modules", name);
    await writeFile(path.join(dir, rel), text);
    const manifestFile = path.join(copy, "xcsh-seed.json");
    const manifest = JSON.parse(await readFile(manifestFile, "utf8"));
    manifest.plugins[name].tree = await seedTreeHash(dir);
    await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  }

  /** The description each seeded tool module's record holds after the restore, by plugin. */
  async function recorded(w: TmpWorld, copy: string): Promise<Record<string, unknown>> {
    const index = JSON.parse(await readFile(path.join(w.home, ".xcsh", "plugins", ".xcsh-tools", "boot-modules.json"), "utf8")) as { modules: Record<string, Record<string, { tools: { description?: unknown }[] }>> };
    const out: Record<string, unknown> = {};
    for (const name of [p1, p2]) {
      const file = path.join(copy, "plugins", "node_modules", name, "t.js");
      out[name] = index.modules[file]?.node?.tools[0]?.description;
    }
    return out;
  }

  /** Every file below the machine's root (what "nothing written" compares). */
  async function files(w: TmpWorld, dir = w.root, out: string[] = []): Promise<string[]> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name === ".npm" || entry.name === "trusted-projects.json") continue;
      const file = path.join(dir, entry.name);
      out.push(path.relative(w.root, file));
      if (entry.isDirectory()) await files(w, file, out);
    }
    return out.sort();
  }

  beforeAll(async () => {
    await buildDist();
    reg = await useGlobalRegistry();
    await reg.publish({ name: p1, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(p1)) } });
    await reg.publish({ name: p2, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(p2)) } });
    ({ image, seed } = await seedImage(reg.url, "xcsh-seedmods-image-", { [p1]: "1.0.0", [p2]: "1.0.0" }));
  }, LONG);
  afterAll(async () => {
    await reg?.dispose();
    await removeWorlds([image, ...worlds]);
  });

  it("seed records each tool module's place in its package, sha256 and runtime, from the validation it ran while installing", async () => {
    const records = JSON.parse(await readFile(path.join(seed, "xcsh-seed-modules.json"), "utf8"));
    expect(Object.keys(records.plugins).sort()).toEqual([p1, p2].sort());
    for (const name of [p1, p2]) {
      const [module] = records.plugins[name];
      expect(module).toMatchObject({ file: "t.js", runtime: "node", tools: [{ name: toolName(name), description: "fixture tool", problems: [] }] });
      const { createHash } = await import("node:crypto");
      expect(module.sha256).toBe(createHash("sha256").update(await readFile(path.join(seed, "plugins", "node_modules", name, "t.js"))).digest("hex"));
    }
  }, LONG);

  for (const via of [{ label: "the seed-satisfied restore", extra: [] }, { label: "the restore engine", extra: ["--yes"] }]) {
    it(`${via.label}: the refresh records every seeded module from the seed's records, no child`, async () => {
      const copy = await forged("marked");
      const w = await machine();
      const r = await restore(w, copy, via.extra);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(await recorded(w, copy)).toEqual({ [p1]: MARK, [p2]: MARK });
    }, LONG);
  }

  describe("the records are not trusted where bytes or runtime differ: that module goes through the child", () => {
    it("a module edited after the seed was built (tree hash rewritten to match): the child validates it, the untouched one comes from the seed", async () => {
      const copy = await forged("edited");
      await editPlugin(copy, p1, "t.js", toolSource(toolName(p1), "// edited after the build\n"));
      const w = await machine();
      const r = await restore(w, copy);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(await recorded(w, copy)).toEqual({ [p1]: "fixture tool", [p2]: MARK });
    }, LONG);

    it("records made under another runtime: the child validates those modules", async () => {
      const copy = await forged("other-runtime", (records) => {
        for (const m of records.plugins[p2]!) m.runtime = "bun";
      });
      const w = await machine();
      const r = await restore(w, copy);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(await recorded(w, copy)).toEqual({ [p1]: MARK, [p2]: "fixture tool" });
    }, LONG);

    it("a record whose sha256 is not the file's: the child validates that module", async () => {
      const copy = await forged("wrong-sha", (records) => {
        records.plugins[p1]![0]!.sha256 = "0".repeat(64);
      });
      const w = await machine();
      const r = await restore(w, copy);
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      expect(await recorded(w, copy)).toEqual({ [p1]: "fixture tool", [p2]: MARK });
    }, LONG);
  });

  describe("a records file naming a module outside its plugin's folder: ESEED_INVALID naming the file and field, nothing written", () => {
    const cases: { label: string; file: (copy: string) => Promise<string> }[] = [
      { label: "climbing out with ..", file: async () => `../p2-${tag}/t.js` },
      { label: "an absolute path", file: async (copy) => path.join(copy, "plugins", "node_modules", p2, "t.js") },
      { label: "a Windows path", file: async () => "..\\..\\t.js" },
      {
        label: "a link inside the plugin that leads out of it",
        file: async (copy) => {
          const dir = path.join(copy, "plugins", "node_modules", p1);
          await symlink(path.join(image.root, "outside.js"), path.join(dir, "out.js"));
          const manifestFile = path.join(copy, "xcsh-seed.json");
          const manifest = JSON.parse(await readFile(manifestFile, "utf8"));
          manifest.plugins[p1].tree = await seedTreeHash(dir);
          await writeFile(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
          return "out.js";
        },
      },
    ];
    for (const { label, file } of cases) {
      for (const via of [{ name: "fast path", extra: [] }, { name: "engine", extra: ["--yes"] }]) {
        it(`${label} (${via.name})`, async () => {
          await writeFile(path.join(image.root, "outside.js"), toolSource("outside"));
          const copy = await forged("outside");
          const recordsFile = path.join(copy, "xcsh-seed-modules.json");
          const records = JSON.parse(await readFile(recordsFile, "utf8"));
          records.plugins[p1][0].file = await file(copy);
          await writeFile(recordsFile, JSON.stringify(records));
          const w = await machine();
          const before = await files(w);
          const error = refusal(await restore(w, copy, via.extra));
          expect(error.code).toBe("ESEED_INVALID");
          expect(error.file).toBe(recordsFile);
          expect(error.path).toBe(`/plugins/${p1.replace("/", "~1")}/0/file`);
          expect(await files(w)).toEqual(before);
        }, LONG);
      }
    }

    it("doctor reports it too", async () => {
      const copy = await forged("doctor", (records) => {
        records.plugins[p1]![0]!.file = "../../../../etc/passwd";
      });
      const w = await machine();
      const r = await runCli(["--json", "doctor"], { cwd: w.cwd, home: w.home, env: { XCSH_PLUGIN_SEED_DIR: copy }, timeoutMs: 180_000 });
      expect(r.stdout).toContain("ESEED_INVALID");
      expect(r.stdout).toContain("/0/file");
    }, LONG);
  });

  it("a seed without module records (built before they existed): the restore validates every module in the child", async () => {
    const copy = await forged("none");
    await rm(path.join(copy, "xcsh-seed-modules.json"));
    const w = await machine();
    const r = await restore(w, copy);
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(await recorded(w, copy)).toEqual({ [p1]: "fixture tool", [p2]: "fixture tool" });
  }, LONG);
});
