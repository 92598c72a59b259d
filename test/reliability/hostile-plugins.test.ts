/**
 * Reliability suite 4 — hostile plugins at boot. A stand-in host (a child process running
 * `discoverAndLoadCustomTools` with short timeouts, test/reliability/helpers-hostile-child.ts)
 * boots with tools that hang, throw, tamper with the shared API, return throwing getters or throw
 * later; it must stay up, load the good tools, and report each hostile one with its code.
 *
 * What no in-process loader can stop — a synchronous infinite loop, allocation without end, a
 * `process.exit` — is shown here as it is (the host process is the victim) and is caught by
 * `xcsh-tools validate`, which imports modules in a child process with a kill timer and a memory
 * cap. Every case is bounded by the timeouts it configures; nothing is random.
 */
import { chmod } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist } from "../helpers/build-dist.js";
import { runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { runTs } from "../helpers/ts-child.js";

const CHILD = "test/reliability/helpers-hostile-child.ts";
let cases = 0;

beforeAll(async () => {
  await buildDist();
}, 180_000);
afterAll(() => {
  console.log(`hostile-plugins: ${cases} cases`);
});

const tool = (name: string, extra = "") =>
  `({ name: ${JSON.stringify(name)}, label: ${JSON.stringify(name)}, description: "fixture", parameters: { type: "object", properties: {} }, async execute() { return { content: [{ type: "text", text: "ok" }] }; }${extra} })`;

/** Tool modules by file name (loaded in name order from ~/.xcsh/agent/tools). */
const HOSTILE: Record<string, string> = {
  // Tries every way of changing the shared API, swallowing the errors, and still returns a tool.
  "a-mutate.mjs": `export default (api) => {
  const evil = function evil() {};
  globalThis.__evil = evil;
  const attempts = [
    () => { api.exec = evil; },
    () => { api.cwd = "/"; },
    () => { delete api.typebox; },
    () => { api.ui = { select: evil }; },
    () => { api.ui.select = evil; },
    () => { api.hasUI = true; },
    () => { Object.defineProperty(api, "logger", { value: null }); },
    () => { Object.setPrototypeOf(api, { exec: evil }); },
  ];
  for (const attempt of attempts) { try { attempt(); } catch {} }
  return ${tool("mutate_tool")};
};
`,
  // Reassigns without catching: strict module code throws on the frozen API.
  "b-mutate-strict.mjs": `export default (api) => { api.exec = () => ({ code: 0 }); return ${tool("strict_mutate_tool")}; };\n`,
  "c-throw.mjs": `export default () => { throw new Error("factory exploded"); };\n`,
  "d-factory-hang.mjs": `export default () => new Promise(() => {});\n`,
  "e-import-hang.mjs": `await new Promise(() => {});\nexport default () => ${tool("never_tool")};\n`,
  "f-getters.mjs": `export default () => ({
  get name() { throw new Error("name getter"); },
  get description() { throw new Error("description getter"); },
  get parameters() { throw new Error("parameters getter"); },
  get execute() { throw new Error("execute getter"); },
});
`,
  "g-later.mjs": `export default () => {
  setTimeout(() => { throw new Error("thrown later"); }, 100);
  Promise.reject(new Error("rejected later"));
  return ${tool("later_tool")};
};
`,
  "h-async-loop.mjs": `export default () => new Promise((resolve) => { const spin = () => setImmediate(spin); spin(); });\n`,
  // Sees the API after all of the above: it must be the original one.
  "z-good.mjs": `export default (api) => {
  const pristine = typeof api.exec === "function" && api.exec !== globalThis.__evil && api.exec.name !== "evil"
    && typeof api.typebox === "object" && api.typebox !== null && api.cwd !== "/" && api.hasUI === false
    && api.ui.select !== globalThis.__evil && api.logger !== null && Object.getPrototypeOf(api) === Object.prototype;
  return { name: "good_tool", label: "good", description: "fixture", parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: pristine ? "pristine" : "tampered" }] }; } };
};
`,
};

async function worldWith(files: Record<string, string>): Promise<TmpWorld> {
  const w = await makeTmpWorld("xcsh-tools-hostile-", { trustProject: true });
  for (const [name, source] of Object.entries(files)) await w.write(path.join(w.xcshHome, "agent", "tools", name), source);
  return w;
}

describe("hostile plugins at boot (in-process loader, in a stand-in host process)", () => {
  it("the host stays up, the good tools load with an untouched API, each hostile one is reported with its code", async () => {
    const w = await worldWith(HOSTILE);
    try {
      const r = await runTs(CHILD, [w.cwd, w.home, "1"]);
      const loaded = r.messages.find((m) => m.type === "loaded");
      const alive = r.messages.find((m) => m.type === "alive");
      expect(loaded, r.stderr).toBeDefined();
      expect(alive, r.stderr).toBeDefined();
      expect(r.code, r.stderr).toBe(0);
      expect(loaded.tools).toEqual(["good_tool", "later_tool", "mutate_tool"]);
      expect(loaded.executed.content[0].text).toBe("pristine");
      const byFile = Object.fromEntries(loaded.errors.map((e: { file: string; code: string }) => [e.file, e.code]));
      expect(byFile).toEqual({
        "b-mutate-strict.mjs": "EFACTORY_THROW",
        "c-throw.mjs": "EFACTORY_THROW",
        "d-factory-hang.mjs": "EFACTORY_TIMEOUT",
        "e-import-hang.mjs": "EIMPORT_TIMEOUT",
        "f-getters.mjs": "ETOOL_SHAPE",
        "h-async-loop.mjs": "EFACTORY_TIMEOUT",
      });
      expect(loaded.errors.find((e: { file: string }) => e.file === "c-throw.mjs").error).toContain("factory exploded");
      // The stray throw and rejection reached the host's own handlers, not the loader's results.
      expect(alive.stray).toEqual(expect.arrayContaining(["uncaught: thrown later", "unhandled: rejected later"]));
      cases += 9;
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("limit, shown honestly: without host handlers, a factory's stray rejection ends the host while it loads", async () => {
    const w = await worldWith({ "g-later.mjs": HOSTILE["g-later.mjs"]!, "z-good.mjs": HOSTILE["z-good.mjs"]! });
    try {
      const r = await runTs(CHILD, [w.cwd, w.home, "0"]);
      // Node's default for an unhandled rejection ends the process (whether before or just after
      // the loader returns depends on scheduling): only a host handler (as above) keeps it up.
      // The loader installs none, because it would change the host's process-wide error policy.
      expect(r.messages.find((m) => m.type === "alive")).toBeUndefined();
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/rejected later|thrown later/);
      cases++;
    } finally {
      await w.cleanup();
    }
  }, 60_000);

  it("limit, shown honestly: process.exit in a factory ends the host during loading", async () => {
    const w = await worldWith({ "a-exit.mjs": `export default () => { process.exit(7); };\n`, "z-good.mjs": HOSTILE["z-good.mjs"]! });
    try {
      const r = await runTs(CHILD, [w.cwd, w.home, "1"]);
      expect(r.code).toBe(7);
      expect(r.messages.find((m) => m.type === "loaded")).toBeUndefined();
      cases++;
    } finally {
      await w.cleanup();
    }
  }, 60_000);
});

describe("xcsh-tools validate isolates what the loader cannot (child process, kill timer, memory cap)", () => {
  // The module timer starts when the child has started and is about to import the module (its
  // `start` message), so a slow child start on a loaded machine is not inside it; the child's
  // import and factory timeouts are 0.6 and 0.3 of it, ample for these one-line modules. The cases
  // that end by a timeout wait it out in full (the loops keep a core busy), so it is no longer
  // than the codes need; a blocked loop is still stopped by the kill.
  const VALIDATE_CASES: Array<[string, string, string, number?]> = [
    ["a synchronous infinite loop in the factory", `export default () => { for (;;) {} };\n`, "EMODULE_TIMEOUT"],
    ["a synchronous infinite loop at import", `for (;;) {}\nexport default () => ({});\n`, "EMODULE_TIMEOUT"],
    ["allocation without end", `export default () => { const keep = []; for (;;) keep.push(new Array(1e6).fill(keep.length)); };\n`, "EMODULE_EXIT", 60_000],
    ["process.exit in the factory", `export default () => { process.exit(3); };\n`, "EMODULE_EXIT"],
    ["process.exit at import", `process.exit(0);\nexport default () => ({});\n`, "EMODULE_EXIT"],
    ["an import that never settles", `await new Promise(() => {});\nexport default () => ({});\n`, "EIMPORT_TIMEOUT"],
    ["a factory that never settles", `export default () => new Promise(() => {});\n`, "EFACTORY_TIMEOUT"],
    ["getters that throw", `export default () => ({ get name() { throw new Error("x"); }, get execute() { throw new Error("y"); } });\n`, "ETOOL_SHAPE"],
  ];
  for (const [title, source, code, timeoutMs = 4000] of VALIDATE_CASES) {
    it(`validate reports ${title} as ${code}`, async () => {
      const w = await makeTmpWorld("xcsh-tools-hostile-validate-", { trustProject: true });
      try {
        const file = await w.write("tool/hostile.mjs", source);
        await chmod(file, 0o644);
        const r = await runCli(["validate", file, "--json", "--timeout", String(timeoutMs)], { cwd: w.cwd, home: w.home, timeoutMs: timeoutMs + 60_000 });
        expect(r.timedOut, r.stderr).toBe(false);
        expect(r.code, r.stdout).toBe(1);
        const codes = (r.json().errors as Array<{ code: string }>).map((e) => e.code);
        expect(codes, r.stdout).toContain(code);
        cases++;
      } finally {
        await w.cleanup();
      }
    }, 150_000);
  }
});
