/**
 * `xcsh-tools run <tool> '<json params>'`: a tool is loaded as the host loads it (user tools
 * folder, a linked plugin, a project's tools only when trusted), its params are checked against
 * its schema before `execute` (a canary file proves the tool never ran), updates stream to stderr
 * while it runs, and the exit code says what happened (0 result, 1 the tool threw, 2 the caller's
 * input, 130 Ctrl-C).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { cliArgv, hermeticEnv, runCli } from "../helpers/run-cli.js";
import { worldPerTest, writeTrustRecord, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((made) => (w = made), "xcsh-tools-run-");

/** A tool module (plain JS, as a user writes one) whose `execute` is `body`; `CANARY` is a file it may write. */
function toolModule(name: string, body: string, schema = "Type.Object({ name: Type.String() })"): string {
  return `import { writeFileSync } from "node:fs";
const CANARY = process.env.RUN_CANARY;
if (CANARY) writeFileSync(CANARY + ".${name}.loaded", "");
export default (api) => {
  const { Type } = api.typebox;
  return {
    name: "${name}",
    label: "${name}",
    description: "a tool of the run tests",
    parameters: ${schema},
    async execute(_id, params, onUpdate, ctx, signal) {
      ${body}
    },
  };
};
`;
}

const GREET = toolModule(
  "greet",
  `if (CANARY) writeFileSync(CANARY + ".greet.executed", JSON.stringify(params));
      onUpdate?.({ content: [{ type: "text", text: "looking up " + params.name }] });
      onUpdate?.({ content: [{ type: "text", text: "found " + params.name }] });
      return { content: [{ type: "text", text: "Hello, " + params.name + "!" }], details: { length: params.name.length } };`,
);

let canary: string;
beforeEach(() => {
  canary = path.join(w.root, "canary");
});
const userTool = (file: string, source: string) => w.write(path.join(w.xcshHome, "agent", "tools", file), source);
const run = (args: string[], cwd = w.cwd) => runCli(["run", ...args], { cwd, home: w.home, env: { RUN_CANARY: canary }, timeoutMs: 60_000 });

describe("xcsh-tools run: a tool the host would load, called once", () => {
  it("a tool from ~/.xcsh/agent/tools: updates on stderr in order, the result's text on stdout, exit 0", async () => {
    await userTool("greet.mjs", GREET);
    const result = await run(["greet", '{"name":"Ada"}']);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "Hello, Ada!\n" });
    expect(result.stderr).toBe("… looking up Ada\n… found Ada\n");
  });

  it("--json: one document with the result, its updates and where the tool came from", async () => {
    const file = await userTool("greet.mjs", GREET);
    const result = await runCli(["run", "greet", '{"name":"Bo"}', "--json"], { cwd: w.cwd, home: w.home, timeoutMs: 60_000 });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
    expect(result.json()).toEqual({
      tool: "greet",
      file,
      provider: "native",
      level: "user",
      result: { content: [{ type: "text", text: "Hello, Bo!" }], details: { length: 2 } },
      updates: [{ content: [{ type: "text", text: "looking up Bo" }] }, { content: [{ type: "text", text: "found Bo" }] }],
    });
  });

  it("a tool of a linked plugin, with its params", { timeout: 120_000 }, async () => {
    const dir = path.join(w.root, "run-plugin");
    await w.write(path.join(dir, "package.json"), { name: "run-plugin", version: "1.0.0", type: "module", xcsh: { tools: "./tools/shout.js" } });
    await w.write(
      path.join(dir, "tools", "shout.js"),
      toolModule("shout", `return { content: [{ type: "text", text: params.words.map((x) => x.toUpperCase()).join(" ") }] };`, "Type.Object({ words: Type.Array(Type.String()) })"),
    );
    const link = await runCli(["link", dir], { cwd: w.cwd, home: w.home, timeoutMs: 120_000 });
    expect(link.code, link.stderr).toBe(0);
    const result = await run(["shout", '{"words":["a","b"]}']);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 0, stdout: "A B\n", stderr: "" });
  });

  it("no params means {}: a tool without required params runs", async () => {
    await userTool("now.mjs", toolModule("now", `return { content: [{ type: "text", text: "ok " + JSON.stringify(params) }] };`, "Type.Object({})"));
    const result = await run(["now"]);
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: "ok {}\n" });
  });
});

describe("xcsh-tools run: the caller's input is checked before the tool runs (exit 2, canary untouched)", () => {
  const invalid: [string, string, RegExp][] = [
    ["a param of the wrong type", '{"name":42}', /\/name: Expected string/],
    ["a missing required param", "{}", /\/name: Expected required property/],
    ["params that are not an object", "[1,2]", /\/: Expected object/],
    ["null", "null", /\/: Expected object/],
  ];
  for (const [what, params, problem] of invalid) {
    it(`${what}: EPARAMS_INVALID naming the path and the expected type; execute never called`, async () => {
      await userTool("greet.mjs", GREET);
      const result = await run(["greet", params]);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain("Code: EPARAMS_INVALID");
      expect(result.stderr).toMatch(problem);
      expect(result.stdout).toBe("");
      expect(existsSync(`${canary}.greet.executed`)).toBe(false);
    });
  }

  it("JSON that does not parse: EUSAGE naming where it breaks, before any tool code is imported", async () => {
    await userTool("greet.mjs", GREET);
    const result = await runCli(["run", "greet", '{"name": Ada}', "--json"], { cwd: w.cwd, home: w.home, env: { RUN_CANARY: canary } });
    expect(result.code).toBe(2);
    expect(result.json().error).toMatchObject({ code: "EUSAGE", message: expect.stringMatching(/^params are not valid JSON at line 1, column 10 \(position 9\): /) });
    expect(existsSync(`${canary}.greet.loaded`)).toBe(false);
  });

  it("a name no loaded tool has: ETOOL_UNKNOWN with the closest loaded name and the loaded list", async () => {
    await userTool("greet.mjs", GREET);
    await userTool("shout.mjs", toolModule("shout", `return { content: [] };`));
    const result = await runCli(["run", "gret", "{}", "--json"], { cwd: w.cwd, home: w.home });
    expect(result.code).toBe(2);
    expect(result.json().error).toEqual({ code: "ETOOL_UNKNOWN", message: 'No loaded tool is named "gret"', hint: 'Did you mean "greet"? Loaded: greet, shout.' });
  });
});

describe("xcsh-tools run: a tool's failure is the run's (exit 1)", () => {
  it("a tool that throws: ETOOL_FAILED, its message printed once, nothing on stdout", async () => {
    await userTool("boom.mjs", toolModule("boom", `throw new Error("the disk is on fire");`));
    const result = await run(["boom", '{"name":"x"}']);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("Code: ETOOL_FAILED");
    expect(result.stderr.split("the disk is on fire").length - 1).toBe(1);
  });

  it("a tool that resolves to no result: ERESULT_SHAPE", async () => {
    await userTool("empty.mjs", toolModule("empty", `return "done";`));
    const result = await run(["empty", '{"name":"x"}']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Code: ERESULT_SHAPE");
  });

  it("a tool that leaves a timer running: the run still ends once its answer is written", async () => {
    await userTool("linger.mjs", toolModule("linger", `setInterval(() => {}, 1000); return { content: [{ type: "text", text: "left a timer" }] };`));
    const started = Date.now();
    const result = await run(["linger", '{"name":"x"}']);
    expect({ code: result.code, stdout: result.stdout, timedOut: result.timedOut }).toEqual({ code: 0, stdout: "left a timer\n", timedOut: false });
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});

describe("xcsh-tools run: trust, streaming and Ctrl-C", () => {
  it("a project's own tool in an untrusted project is not loaded, so not run; after `trust` it runs", async () => {
    await w.write(path.join(w.cwd, ".xcsh", "tools", "local.mjs"), toolModule("local", `return { content: [{ type: "text", text: "ran" }] };`));
    const refused = await runCli(["run", "local", '{"name":"x"}', "--json"], { cwd: w.cwd, home: w.home, env: { RUN_CANARY: canary } });
    expect(refused.code).toBe(2);
    expect(refused.json().error).toMatchObject({
      code: "ETOOL_UNKNOWN",
      message: expect.stringContaining(`the project ${w.cwd} is not trusted, so its own tools were not loaded`),
      hint: expect.stringContaining(`xcsh-tools trust ${w.cwd}`),
    });
    expect(existsSync(`${canary}.local.loaded`)).toBe(false);
    await writeTrustRecord(w.xcshHome, [w.cwd]);
    const trusted = await run(["local", '{"name":"x"}']);
    expect({ code: trusted.code, stdout: trusted.stdout }).toEqual({ code: 0, stdout: "ran\n" });
  });

  /** Spawn `run` and resolve each time stderr has shown `text`. */
  function spawnRun(args: string[]) {
    const child = spawn(process.execPath, cliArgv(w.home, ["run", ...args]), { cwd: w.cwd, env: hermeticEnv(w.home, { RUN_CANARY: canary }), stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const waiters: { text: string; resolve: () => void }[] = [];
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      for (const waiter of waiters.splice(0)) (stderr.includes(waiter.text) ? waiter.resolve : () => waiters.push(waiter))();
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    return {
      child,
      exited,
      out: () => ({ stdout, stderr }),
      seen: (text: string) => new Promise<void>((resolve) => (stderr.includes(text) ? resolve() : waiters.push({ text, resolve }))),
    };
  }

  it("updates stream while the tool runs: the tool waits for a file the test writes only after seeing its first update", { timeout: 60_000 }, async () => {
    const gate = path.join(w.root, "gate");
    await userTool(
      "slow.mjs",
      toolModule(
        "slow",
        `const { existsSync } = await import("node:fs");
      onUpdate?.({ content: [{ type: "text", text: "step 1" }] });
      while (!existsSync(${JSON.stringify(gate)})) await new Promise((r) => setTimeout(r, 20));
      onUpdate?.({ content: [{ type: "text", text: "step 2" }] });
      return { content: [{ type: "text", text: "done" }] };`,
      ),
    );
    const running = spawnRun(["slow", '{"name":"x"}']);
    await running.seen("… step 1\n");
    expect(running.out()).toEqual({ stdout: "", stderr: "… step 1\n" });
    await writeFile(gate, "");
    expect(await running.exited).toBe(0);
    expect(running.out()).toEqual({ stdout: "done\n", stderr: "… step 1\n… step 2\n" });
  });

  it("Ctrl-C aborts the tool's signal and exits 130", { timeout: 60_000 }, async () => {
    await userTool(
      "wait.mjs",
      toolModule(
        "wait",
        `onUpdate?.({ content: [{ type: "text", text: "waiting" }] });
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      writeFileSync(CANARY + ".wait.aborted", "");
      throw new Error("cancelled");`,
      ),
    );
    const running = spawnRun(["wait", '{"name":"x"}']);
    await running.seen("… waiting\n");
    running.child.kill("SIGINT");
    expect(await running.exited).toBe(130);
    expect(existsSync(`${canary}.wait.aborted`)).toBe(true);
    expect(running.out().stderr).toBe("… waiting\nInterrupted: wait was cancelled (it stopped)\n");
  });

  it("a tool that ignores its signal: exit 130 after a grace, saying it did not stop", { timeout: 60_000 }, async () => {
    await userTool(
      "deaf.mjs",
      toolModule("deaf", `onUpdate?.({ content: [{ type: "text", text: "not listening" }] });
      await new Promise(() => setInterval(() => {}, 1000));`),
    );
    const running = spawnRun(["deaf", '{"name":"x"}']);
    await running.seen("… not listening\n");
    running.child.kill("SIGINT");
    expect(await running.exited).toBe(130);
    expect(running.out().stderr).toMatch(/Interrupted: deaf was cancelled \(it did not stop within \d+ s of its signal being aborted\)\n$/);
  });
});
