/**
 * The module checker's memory cap (validate/module-check.ts `memoryCap`). Under Node before 24 on
 * Linux the checker starts with no V8 flag (any non-default flag makes those runtimes compile their
 * built-in modules without the embedded code cache: ~15-20 ms of CPU per install, restore and
 * validate) and the parent watches its resident memory instead; elsewhere V8's heap cap stays.
 * Either way a tool that allocates without end must fail its check quickly with `EMODULE_EXIT`
 * and the modules after it must still be checked. (test/reliability/hostile-plugins.test.ts keeps
 * its heap case unchanged.) Each case allocates at most ~3 GB, filled so that it is resident, and
 * stops: on a cap that did not hold, the case fails instead of eating the machine.
 */
import { chmod } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHILD_MAX_OLD_SPACE_MB, CHILD_MAX_RSS_MB, memoryCap } from "../../src/validate/module-check.js";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld } from "../helpers/tmp-home.js";

let cases = 0;
beforeAll(async () => {
  await buildDist();
}, 180_000);
afterAll(() => {
  console.log(`checker-memory: ${cases} cases`);
});

const TOOL = `({ name: "fine", label: "fine", description: "fixture", parameters: { type: "object", properties: {} }, async execute() { return { content: [{ type: "text", text: "ok" }] }; } })`;

interface Finding {
  file: string;
  code: string;
  message: string;
}

/** `validate --json` of the modules `files` (name → source) in one tools folder. */
async function validateTools(files: Record<string, string>, timeoutMs = 20_000): Promise<{ errors: Finding[]; tools: Array<{ name: string }>; stdout: string }> {
  const w = await makeTmpWorld("xcsh-tools-checker-memory-", { trustProject: true });
  try {
    for (const [name, source] of Object.entries(files)) await chmod(await w.write(`project/tools/${name}`, source), 0o644);
    const target = Object.keys(files).length === 1 ? `tools/${Object.keys(files)[0]}` : "tools";
    const r = await runCli(["validate", target, "--json", "--timeout", String(timeoutMs)], { cwd: w.cwd, home: w.home, timeoutMs: timeoutMs + 60_000 });
    expect(r.timedOut, r.stderr).toBe(false);
    const json = r.json() as { errors: Finding[]; tools: Array<{ name: string }> };
    return { errors: json.errors, tools: json.tools, stdout: r.stdout };
  } finally {
    await w.cleanup();
  }
}

const major = Number(process.versions.node.split(".")[0]);
const watched = process.platform === "linux" && major < 24;

describe("the checker's memory cap holds without a V8 flag", () => {
  it("the checker starts with no V8 flag exactly where the parent watches its memory (Node < 24, Linux)", async () => {
    expect(memoryCap()).toBe(watched ? "watch" : "flag");
    const { errors, stdout } = await validateTools({ "argv.mjs": `export default () => { throw new Error("execArgv=" + JSON.stringify(process.execArgv)); };\n` });
    const message = errors.find((e) => e.code === "EFACTORY_THROW")?.message;
    expect(message, stdout).toContain(`execArgv=${JSON.stringify(watched ? [] : [`--max-old-space-size=${CHILD_MAX_OLD_SPACE_MB}`])}`);
    cases++;
  }, 120_000);

  // Hostile: memory the heap's cap never counts (Buffers live off V8's heap), and the heap itself,
  // at import and in the factory. Each allocates in 64 MB steps up to ~3 GB, then gives up.
  const HOGS: Array<[string, string]> = [
    ["Buffers off the heap in the factory", `export default () => { const keep = []; for (let i = 0; i < 48; i++) keep.push(Buffer.alloc(64 * 1024 * 1024, 1)); return ${TOOL}; };\n`],
    ["Buffers off the heap at import", `const keep = []; for (let i = 0; i < 48; i++) keep.push(Buffer.alloc(64 * 1024 * 1024, 1));\nexport default () => (${TOOL});\n`],
    ["typed arrays off the heap, kept by a global", `globalThis.keep = []; export default () => { for (let i = 0; i < 48; i++) globalThis.keep.push(new Float64Array(8 * 1024 * 1024).fill(1)); return ${TOOL}; };\n`],
    ["the heap at import", `const keep = []; for (let i = 0; i < 3000; i++) keep.push(new Array(1e5).fill(i + 0.5));\nexport default () => (${TOOL});\n`],
  ];
  for (const [title, source] of HOGS) {
    it(`${title}: EMODULE_EXIT, the module's tools not taken`, async () => {
      const { errors, tools, stdout } = await validateTools({ "hog.mjs": source });
      expect(errors.map((e) => e.code), stdout).toContain("EMODULE_EXIT");
      if (watched && !title.startsWith("the heap")) expect(errors.find((e) => e.code === "EMODULE_EXIT")?.message, stdout).toContain(`more than ${CHILD_MAX_RSS_MB} MB`);
      expect(tools.map((t) => t.name), stdout).not.toContain("fine");
      cases++;
    }, 180_000);
  }

  it("after a module stopped for its memory, the next module is checked in a fresh checker", async () => {
    const { errors, tools, stdout } = await validateTools({
      "a-hog.mjs": `export default () => { const keep = []; for (let i = 0; i < 48; i++) keep.push(Buffer.alloc(64 * 1024 * 1024, 1)); return ${TOOL}; };\n`,
      "b-fine.mjs": `export default () => (${TOOL.replace('"fine"', '"after_hog"')});\n`,
    });
    expect(errors.filter((e) => e.code === "EMODULE_EXIT").map((e) => e.file.split("/").pop()), stdout).toEqual(["a-hog.mjs"]);
    expect(tools.map((t) => t.name), stdout).toContain("after_hog");
    cases++;
  }, 180_000);

  it("a module that uses memory within the cap and lets it go passes (no false alarm)", async () => {
    const { errors, tools, stdout } = await validateTools({ "modest.mjs": `export default () => { let n = 0; for (let i = 0; i < 4; i++) n += Buffer.alloc(64 * 1024 * 1024, 1).length; return ${TOOL.replace('"fine"', '"modest"')}; };\n` });
    expect(errors, stdout).toEqual([]);
    expect(tools.map((t) => t.name), stdout).toContain("modest");
    cases++;
  }, 120_000);
});
