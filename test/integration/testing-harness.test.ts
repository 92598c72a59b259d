/**
 * `xcsh-tools/testing` (src/testing.ts): the recording exec (fake and real), the scripted UI,
 * the captured logger, loading modules and factories through the real loader (with its error
 * codes), runTool's streaming updates and param checks, cancellation reaching a real subprocess,
 * and session events through the host's dispatcher.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { CustomToolFactory } from "../../src/index.js";
import {
  createCapturedLogger,
  createRecordingExec,
  createScriptedUI,
  createTestContext,
  createToolHarness,
  renderToLines,
  runTool,
} from "../../src/testing.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const worlds: TmpWorld[] = [];
afterAll(async () => {
  await Promise.all(worlds.map((w) => w.cleanup()));
});
async function world(): Promise<TmpWorld> {
  const w = await makeTmpWorld("xcsh-tools-harness-", { trustProject: true });
  worlds.push(w);
  return w;
}
function harnessIn(w: TmpWorld, options: Parameters<typeof createToolHarness>[0] = {}) {
  return createToolHarness({ cwd: w.cwd, cacheDir: path.join(w.root, "cache"), ...options });
}

/** A streaming tool: one update per step, each step an exec that gets the signal. */
const stepper: CustomToolFactory = (api) => ({
  name: "stepper",
  label: "Stepper",
  description: "runs commands one by one",
  parameters: api.typebox.Type.Object({ steps: api.typebox.Type.Array(api.typebox.Type.Array(api.typebox.Type.String())) }),
  async execute(_id, params: { steps: string[][] }, onUpdate, _ctx, signal) {
    const outputs: string[] = [];
    for (const [index, [command, ...args]] of params.steps.entries()) {
      onUpdate?.({ content: [{ type: "text", text: `step ${index + 1}` }], details: { index } });
      const result = await api.exec(command!, args, { signal });
      if (result.killed) throw new Error(`cancelled at step ${index + 1} (code ${result.code})`);
      outputs.push(result.stdout.trim());
    }
    return { content: [{ type: "text", text: outputs.join(",") }], details: { steps: outputs.length } };
  },
});

describe("createRecordingExec", () => {
  it("records calls and answers from the handler: a string is stdout, a partial result fills the rest", async () => {
    const exec = createRecordingExec(({ command }) => (command === "git" ? "main\n" : { code: 2, stderr: "nope" }));
    expect(await exec("git", ["branch", "--show-current"])).toEqual({ stdout: "main\n", stderr: "", code: 0, killed: false });
    expect(await exec("ls", [], { cwd: "/x" })).toEqual({ stdout: "", stderr: "nope", code: 2, killed: false });
    expect(exec.calls.map((c) => [c.command, c.args, c.options.cwd, c.result?.code])).toEqual([
      ["git", ["branch", "--show-current"], undefined, 0],
      ["ls", [], "/x", 2],
    ]);
  });

  it("answers an already aborted signal as killed without asking the handler", async () => {
    let asked = 0;
    const exec = createRecordingExec(() => {
      asked++;
      return "x";
    });
    expect(await exec("x", [], { signal: AbortSignal.abort() })).toEqual({ stdout: "", stderr: "", code: 143, killed: true });
    expect(asked).toBe(0);
  });

  it('"real" runs the program without a shell and records the real result', async () => {
    const exec = createRecordingExec("real");
    const result = await exec(process.execPath, ["-e", "process.stdout.write(process.argv[1])", "; echo pwned"]);
    expect(result).toEqual({ stdout: "; echo pwned", stderr: "", code: 0, killed: false });
    expect(exec.calls[0]?.result).toEqual(result);
  });
});

describe("createScriptedUI", () => {
  it("answers prompts in order, records every call, and fails loudly on an unscripted prompt", async () => {
    const ui = createScriptedUI({ confirm: [true, false], select: (_title, options) => options[1], theme: { name: "t" } });
    expect(await ui.confirm("Delete?", "really")).toBe(true);
    expect(await ui.confirm("Again?", "really")).toBe(false);
    expect(await ui.select("Pick", ["a", "b"])).toBe("b");
    ui.notify("done", "info");
    ui.setStatus("k", "busy");
    ui.setStatus("j", "x");
    ui.setStatus("j", undefined);
    ui.setEditorText("draft");
    expect(ui.getEditorText()).toBe("draft");
    expect(ui.theme).toEqual({ name: "t" });
    expect(ui.notifications).toEqual([{ message: "done", type: "info" }]);
    expect([...ui.status]).toEqual([["k", "busy"]]);
    expect(ui.calls.slice(0, 3).map((c) => [c.method, c.answer])).toEqual([
      ["confirm", true],
      ["confirm", false],
      ["select", "b"],
    ]);
    await expect(ui.confirm("Third?", "")).rejects.toMatchObject({ code: "EUI_UNSCRIPTED", message: expect.stringContaining('ui.confirm("Third?")') });
    await expect(ui.input("Name")).rejects.toMatchObject({ code: "EUI_UNSCRIPTED" });
  });
});

describe("createCapturedLogger", () => {
  it("keeps entries with their level and context", () => {
    const logger = createCapturedLogger();
    logger.info("a");
    logger.warn("b", { x: 1 });
    expect(logger.entries).toEqual([
      { level: "info", message: "a" },
      { level: "warn", message: "b", context: { x: 1 } },
    ]);
    expect(logger.messages("warn")).toEqual(["b"]);
  });
});

describe("createToolHarness", () => {
  it("gives factories the loader's shared API: recording exec with the cwd defaulted, scripted UI, logger, pending actions", async () => {
    const w = await world();
    let seen: Parameters<CustomToolFactory>[0] | undefined;
    const harness = harnessIn(w, { ui: { input: ["Ada"] }, pi: { host: true } });
    const tool = await harness.loadTool((api) => {
      seen = api;
      return {
        name: "hello",
        description: "says hello",
        parameters: api.typebox.Type.Object({}),
        async execute() {
          const who = await api.ui.input("Who?");
          api.logger.info("greeting", { who });
          await api.exec("echo", [String(who)]);
          api.pushPendingAction({ label: "undo", apply: async () => ({ content: [] }) });
          return { content: [{ type: "text", text: `hello ${who}` }] };
        },
      } as never;
    });
    expect(seen).toBe(harness.api);
    expect(harness.api.hasUI).toBe(true);
    expect(harness.api.pi).toEqual({ host: true });
    expect(tool.label).toBe("hello"); // the loader defaults a missing label to the name
    const run = await harness.runTool("hello", {});
    expect(run.text).toBe("hello Ada");
    expect(harness.exec.calls).toEqual([{ command: "echo", args: ["Ada"], options: { cwd: w.cwd }, result: { stdout: "", stderr: "", code: 0, killed: false } }]);
    expect(harness.logger.entries).toEqual([{ level: "info", message: "greeting", context: { who: "Ada" } }]);
    expect(harness.pendingActions.map((a) => [a.label, a.sourceToolName])).toEqual([["undo", "custom_tool"]]);
  });

  it("without ui, tools see the host's non-interactive no-op UI", async () => {
    const w = await world();
    const harness = harnessIn(w);
    expect(harness.api.hasUI).toBe(false);
    expect(await harness.api.ui.confirm("x", "y")).toBe(false);
  });

  it("loads a module path (relative to cwd, or a file URL) through the real import, and reports loader codes", async () => {
    const w = await world();
    await mkdir(path.join(w.cwd, "tools"), { recursive: true });
    await writeFile(
      path.join(w.cwd, "tools", "two.ts"),
      `import { Type } from "@sinclair/typebox";
const schema: ReturnType<typeof Type.Object> = Type.Object({ n: Type.Number() });
export default () => [
  { name: "double", description: "doubles", parameters: schema, async execute(_i: string, p: { n: number }) { return { content: [{ type: "text", text: String(p.n * 2) }] }; } },
  { name: "triple", description: "triples", parameters: schema, async execute(_i: string, p: { n: number }) { return { content: [{ type: "text", text: String(p.n * 3) }] }; } },
];
`,
    );
    await writeFile(path.join(w.cwd, "tools", "bad.ts"), "export default 42;\n");
    await writeFile(path.join(w.cwd, "tools", "read.ts"), `export default () => ({ name: "read", description: "x", parameters: { type: "object" }, execute: async () => ({ content: [] }) });\n`);
    await writeFile(path.join(w.cwd, "tools", "broken.ts"), "export default (\n");

    const harness = harnessIn(w);
    const tools = await harness.loadTools("tools/two.ts");
    expect(tools.map((t) => t.name)).toEqual(["double", "triple"]);
    expect((await harness.runTool("triple", { n: 4 })).text).toBe("12");
    await expect(harness.loadTool(pathToFileURL(path.join(w.cwd, "tools", "two.ts")))).rejects.toMatchObject({ code: "ETOOL_NOT_LOADED" });

    const other = harnessIn(w);
    expect((await other.loadTool(pathToFileURL(path.join(w.cwd, "tools", "two.ts")), "double")).name).toBe("double");
    await expect(other.loadTools("tools/bad.ts")).rejects.toMatchObject({ code: "ENOT_A_FACTORY" });
    await expect(other.loadTools("tools/read.ts")).rejects.toMatchObject({ code: "ECONFLICT_BUILTIN" });
    await expect(other.loadTools("tools/broken.ts")).rejects.toMatchObject({ code: "EIMPORT" });
    await expect(other.loadTools(() => ({ name: "no execute" }) as never)).rejects.toMatchObject({ code: "ETOOL_SHAPE" });
    await expect(harnessIn(w, { factoryTimeoutMs: 50 }).loadTools(() => new Promise(() => {}))).rejects.toMatchObject({ code: "EFACTORY_TIMEOUT" });
    expect(other.tools.map((t) => t.name)).toEqual(["double", "triple"]);
  });

  it("delivers session events to every loaded tool through the host's dispatcher", async () => {
    const w = await world();
    const harness = harnessIn(w);
    const events: string[] = [];
    const ctx = createTestContext({ sessionManager: { id: "s1" } });
    await harness.loadTools((api) => [
      {
        name: "a",
        description: "a",
        parameters: api.typebox.Type.Object({}),
        execute: async () => ({ content: [] }),
        onSession: (event: { reason: string }, c: { sessionManager: unknown }) => {
          events.push(`a:${event.reason}:${(c.sessionManager as { id?: string }).id ?? "-"}`);
        },
      },
      {
        name: "b",
        description: "b",
        parameters: api.typebox.Type.Object({}),
        execute: async () => ({ content: [] }),
        onSession: () => {
          throw new Error("b broke");
        },
      },
    ] as never);
    const summary = await harness.sendSessionEvent({ reason: "start", previousSessionFile: undefined }, { ctx });
    await harness.sendSessionEvent({ reason: "shutdown", previousSessionFile: "/s.jsonl" });
    expect(events).toEqual(["a:start:s1", "a:shutdown:-"]);
    expect(summary).toEqual({ called: 2, failures: [{ toolName: "b", error: "b broke" }] });
    expect(harness.logger.messages("warn")).toEqual(["Custom tool onSession error", "Custom tool onSession error"]);
  });
});

describe("runTool", () => {
  it("returns the result and every onUpdate, in order, and passes (toolCallId, params, onUpdate, ctx, signal)", async () => {
    const w = await world();
    const harness = harnessIn(w, { exec: ({ args }) => `${args[0]}\n` });
    const tool = await harness.loadTool(stepper);
    const live: number[] = [];
    const run = await harness.runTool(tool, { steps: [["echo", "a"], ["echo", "b"], ["echo", "c"]] }, { onUpdate: (_u, i) => live.push(i) });
    expect(run.updates.map((u) => u.content[0])).toEqual([1, 2, 3].map((n) => ({ type: "text", text: `step ${n}` })));
    expect(run.updates.map((u) => u.details)).toEqual([{ index: 0 }, { index: 1 }, { index: 2 }]);
    expect(live).toEqual([0, 1, 2]);
    expect(run.text).toBe("a,b,c");
    expect(run.result.details).toEqual({ steps: 3 });

    const args: unknown[] = [];
    const ctx = createTestContext();
    const signal = new AbortController().signal;
    await runTool(
      { name: "spy", label: "spy", description: "spy", parameters: { type: "object" } as never, execute: async (...a: unknown[]) => (args.push(...a), { content: [] }) },
      { x: 1 },
      { toolCallId: "call-7", ctx, signal },
    );
    expect(args[0]).toBe("call-7");
    expect(args[1]).toEqual({ x: 1 });
    expect(typeof args[2]).toBe("function");
    expect(args[3]).toBe(ctx);
    expect(args[4]).toBe(signal);
  });

  it("checks params against a TypeBox schema like the agent, unless told not to", async () => {
    const w = await world();
    const harness = harnessIn(w);
    const tool = await harness.loadTool(stepper);
    await expect(harness.runTool(tool, { steps: "nope" })).rejects.toMatchObject({ code: "EPARAMS_INVALID", message: expect.stringContaining("/steps") });
    await expect(harness.runTool(tool, { steps: "nope" }, { validateParams: false })).rejects.toThrow(TypeError);
  });

  it("rejects with the tool's own error, and with ERESULT_SHAPE for a result without content", async () => {
    const failing = { name: "f", label: "f", description: "f", parameters: { type: "object" } as never, execute: async () => Promise.reject(new Error("boom")) };
    await expect(runTool(failing, {})).rejects.toThrow("boom");
    const shapeless = { ...failing, execute: async () => ({ text: "x" }) as never };
    await expect(runTool(shapeless, {})).rejects.toMatchObject({ code: "ERESULT_SHAPE" });
  });

  it("cancellation reaches a real subprocess through exec: `sleep 30` dies as soon as the signal aborts", async () => {
    const w = await world();
    const harness = harnessIn(w, { exec: "real" });
    const tool = await harness.loadTool(stepper);
    const controller = new AbortController();
    const started = Date.now();
    const running = harness.runTool(tool, { steps: [["sleep", "30"], ["echo", "never"]] }, {
      signal: controller.signal,
      // Abort once the subprocess has had time to start.
      onUpdate: () => setTimeout(() => controller.abort(), 200),
    });
    await expect(running).rejects.toThrow("cancelled at step 1 (code 143)");
    expect(Date.now() - started).toBeLessThan(5000);
    expect(harness.exec.calls).toHaveLength(1);
    expect(harness.exec.calls[0]).toMatchObject({ command: "sleep", args: ["30"], result: { killed: true, code: 143 } });
  });
});

describe("renderToLines", () => {
  it("draws a component at a width and refuses what is not one", () => {
    expect(renderToLines({ render: (w: number) => [`w=${w}`] }, 40)).toEqual(["w=40"]);
    expect(() => renderToLines("text")).toThrow(expect.objectContaining({ code: "ECOMPONENT_SHAPE" }));
  });
});
