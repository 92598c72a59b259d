/**
 * `xcsh-tools validate` as a user runs it: the built CLI on good and bad fixtures, exit codes
 * 0/1/2 and the --json shape.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildDist, REPO } from "../helpers/build-dist.js";
import { cliArgv, hermeticEnv, runCli } from "../helpers/run-cli.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const FIX = path.join(REPO, "test", "fixtures", "validate");
let world: TmpWorld;
beforeAll(async () => {
  await buildDist();
  world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
});
afterAll(async () => world?.cleanup());

const cli = (args: string[]) => runCli(args, { cwd: REPO, home: world.home });

describe("xcsh-tools validate (built CLI)", () => {
  it("exits 0 on the examples and prints the tools", async () => {
    const tool = await cli(["validate", "examples/hello-tool.ts"]);
    expect(tool.code, tool.stderr).toBe(0);
    expect(tool.stdout).toContain("hello");
    expect(tool.stdout).toContain("✓ valid");
    const plugin = await cli(["validate", "examples/plugin-greet", "--json"]);
    expect(plugin.code, plugin.stderr).toBe(0);
    expect(plugin.json()).toMatchObject({
      ok: true,
      errors: [],
      warnings: [],
      tools: [
        { name: "greet", file: path.join(REPO, "examples/plugin-greet/tools/greet.ts") },
        { name: "farewell", file: path.join(REPO, "examples/plugin-greet/tools/farewell.ts") },
      ],
    });
  });

  it("exits 1 on an invalid plugin, with the file, path, code, message and hint in --json", async () => {
    const r = await cli(["validate", path.join(FIX, "bad", "entry-missing"), "--json"]);
    expect(r.code).toBe(1);
    const doc = r.json();
    expect(Object.keys(doc).sort()).toEqual(["components", "durationMs", "errors", "ok", "target", "tools", "warnings"]);
    expect(doc.ok).toBe(false);
    expect(doc.errors[0]).toMatchObject({
      file: path.join(FIX, "bad", "entry-missing", "package.json"),
      path: "/xcsh/tools",
      code: "EENTRY_NOT_FOUND",
      message: expect.stringContaining("./tools/nope.ts"),
      hint: expect.any(String),
    });
  });

  it("prints a readable report grouped by file, with the fix", async () => {
    const r = await cli(["validate", path.join(FIX, "bad", "tool-builtin-name", "tool.mjs")]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(path.join("test", "fixtures", "validate", "bad", "tool-builtin-name", "tool.mjs"));
    expect(r.stdout).toMatch(/error ECONFLICT_BUILTIN \/tools\/0\/name: tool name "bash"/);
    expect(r.stdout).toContain("fix: Rename it");
    expect(r.stdout).toContain("✗ invalid");
  });

  it("warnings pass, unless --strict", async () => {
    const target = path.join(FIX, "bad", "manifest-typo");
    expect((await cli(["validate", target])).code).toBe(0);
    const strict = await cli(["validate", target, "--strict", "--json"]);
    expect(strict.code).toBe(1);
    expect(strict.json().warnings[0]).toMatchObject({ code: "EUNKNOWN_KEY", path: "/xcsh/feautres" });
  });

  it("--builtins adds names to the defaults", async () => {
    const target = path.join(FIX, "good", "tool.mjs");
    expect((await cli(["validate", target])).code).toBe(0);
    const r = await cli(["validate", target, "--builtins", "other,good_tool", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().errors[0].code).toBe("ECONFLICT_BUILTIN");
  });

  it("exits 2 on usage errors", async () => {
    const missing = await cli(["validate", "no/such/path", "--json"]);
    expect(missing.code).toBe(2);
    expect(missing.json().error.code).toBe("ETARGET_NOT_FOUND");
    const badFlag = await cli(["validate", "examples/hello-tool.ts", "--timeout", "soon"]);
    expect(badFlag.code).toBe(2);
    const unknown = await cli(["validate", "--no-such-flag"]);
    expect(unknown.code).toBe(2);
  });

  it("ends quietly and completely when its reader closes the pipe first (`| head -1`)", async () => {
    const child = spawn(process.execPath, cliArgv(world.home, ["validate", "examples/plugin-greet"]), { cwd: REPO, env: hermeticEnv(world.home), stdio: ["ignore", "pipe", "pipe"] });
    // Closed before the CLI prints anything: every write it makes meets EPIPE.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("survives a module that exits the process", async () => {
    const r = await cli(["validate", path.join(FIX, "bad", "process-exit", "tool.mjs"), "--json"]);
    expect(r.code).toBe(1);
    expect(r.json().errors[0].code).toBe("EMODULE_EXIT");
  });
});
