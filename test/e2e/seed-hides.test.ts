/**
 * A seed wins over the user's own copy of the same plugin name (docs/design/fleets.md
 * "Precedence"): the user's copy is not loaded, and `list`, `tools` and `doctor` say so
 * (WSEED_HIDES, naming the seed, its manifest and the fix) instead of hiding it silently. A user
 * plugin no seed lists, or no seed at all, says nothing. The built CLI as a process, no terminal.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useGlobalRegistry } from "../helpers/global-registry.js";
import type { RegistryHandle } from "../helpers/registry.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, writeUserNpmrc, type TmpWorld } from "../helpers/tmp-home.js";
import { makeWritable } from "../helpers/seeds.js";
import { toolName, toolSource } from "../integration/plugins-fixtures.js";

const LONG = 240_000;

describe("a seed hiding the user's own copy of a plugin is said, never silent", () => {
  let reg: RegistryHandle & { dispose(): Promise<void> };
  const tag = Math.random().toString(36).slice(2, 8);
  const alpha = `@seedhides/alpha-${tag}`;
  const beta = `@seedhides/beta-${tag}`;
  let w: TmpWorld;
  let seed: string;
  const run = (args: string[], seeds?: string) => runCli(args, { cwd: w.cwd, home: w.home, env: { XCSH_PLUGIN_SEED_DIR: seeds }, timeoutMs: 120_000 });

  beforeAll(async () => {
    reg = await useGlobalRegistry();
    for (const version of ["1.0.0", "1.1.0"]) await reg.publish({ name: alpha, version, packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(alpha)) } });
    await reg.publish({ name: beta, version: "1.0.0", packageJson: { type: "module", xcsh: { tools: "./t.js" } }, files: { "t.js": toolSource(toolName(beta)) } });
    w = await makeTmpWorld("xcsh-seed-hides-");
    await writeUserNpmrc(w.home, reg.url);
    seed = path.join(w.root, "seed");
    // The image's seed holds alpha 1.0.0; the user installed alpha 1.1.0 and beta themselves.
    const built = await runCli(["seed", seed, `${alpha}@1.0.0`, "--yes"], { cwd: w.cwd, home: w.home, timeoutMs: 180_000 });
    expect(built.code, built.stderr).toBe(0);
    const own = await run(["install", `${alpha}@1.1.0`, beta, "--yes"]);
    expect(own.code, own.stderr).toBe(0);
  }, LONG);
  afterAll(async () => {
    await reg?.dispose();
    if (w) await makeWritable(w.root);
    await w?.cleanup();
  });

  const manifest = () => path.join(seed, "xcsh-seed.json");

  it("list: the user's item names the seed that hides it (--json hiddenBySeed), and the text says why and what to do", async () => {
    const json = await run(["--json", "list"], seed);
    expect(json.code, json.stderr).toBe(0);
    const items = json.json().plugins as { name: string; hiddenBySeed?: string }[];
    expect(items.find((p) => p.name === alpha)?.hiddenBySeed).toBe(seed);
    expect(items.find((p) => p.name === beta)).not.toHaveProperty("hiddenBySeed");
    const text = await run(["list"], seed);
    expect(text.stdout).toContain(`warning WSEED_HIDES: your own ${alpha} is not loaded: the plugin seed ${seed} (XCSH_PLUGIN_SEED_DIR) provides ${alpha}@1.0.0`);
    expect(text.stdout).toContain(`xcsh-tools uninstall ${alpha}`);
    expect(text.stdout).not.toContain(`your own ${beta}`);
  }, LONG);

  it("tools: a WSEED_HIDES warning naming the seed's manifest; the tool listed is the seed's", async () => {
    const r = await run(["--json", "tools"], seed);
    const warnings = r.json().warnings as { code: string; file: string; message: string; hint: string }[];
    expect(warnings.filter((x) => x.code === "WSEED_HIDES")).toEqual([{ code: "WSEED_HIDES", file: manifest(), message: expect.stringContaining(`your own ${alpha} is not loaded`), hint: expect.stringContaining(`uninstall ${alpha}`) }]);
    const tool = (r.json().tools as { name: string; file: string }[]).find((t) => t.name === toolName(alpha));
    expect(tool?.file.startsWith(seed + path.sep)).toBe(true);
    expect((await run(["tools"], seed)).stdout).toContain("warning WSEED_HIDES");
  }, LONG);

  it("doctor: a warning in the seeds area for the hidden copy, and none for the user's other plugin", async () => {
    const r = await run(["--json", "doctor"], seed);
    const checks = (r.json().checks as { area: string; status: string; message: string }[]).filter((c) => c.area === "seeds");
    expect(checks.filter((c) => c.status === "warn")).toEqual([expect.objectContaining({ message: expect.stringContaining(`WSEED_HIDES: your own ${alpha} is not loaded`) })]);
  }, LONG);

  it("without the seed: nothing is hidden and nothing is said", async () => {
    const list = await run(["--json", "list"], undefined);
    expect((list.json().plugins as object[]).every((p) => !("hiddenBySeed" in p))).toBe(true);
    const tools = await run(["--json", "tools"], undefined);
    expect(((tools.json().warnings ?? []) as { code: string }[]).some((x) => x.code === "WSEED_HIDES")).toBe(false);
    const doctor = await run(["--json", "doctor"], undefined);
    expect((doctor.json().checks as { message: string }[]).some((c) => c.message.includes("WSEED_HIDES"))).toBe(false);
  }, LONG);
});
