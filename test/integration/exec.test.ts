import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { execCommand } from "../../src/host/exec.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const node = process.execPath;

/** Gone, or a zombie waiting for a reaper (a container's PID 1 may never reap it). */
async function isAliveAsync(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  return !/^\d+ \(.*\) Z/.test(stat);
}


describe("execCommand", () => {
  let world: TmpWorld;
  beforeEach(async () => {
    world = await makeTmpWorld("xcsh-tools-test-", { trustProject: true });
  });
  afterEach(async () => {
    await world.cleanup();
  });

  it("collects stdout and stderr and runs in cwd", async () => {
    const result = await execCommand(node, ["-e", "process.stdout.write(process.cwd()); process.stderr.write('err')"], {
      cwd: world.cwd,
    });
    expect(result).toEqual({ stdout: world.cwd, stderr: "err", code: 0, killed: false });
  });

  it("resolves with the exit code for a non-zero exit", async () => {
    const result = await execCommand(node, ["-e", "process.exit(3)"]);
    expect(result.code).toBe(3);
    expect(result.killed).toBe(false);
  });

  it("passes arguments literally, with no shell", async () => {
    const marker = path.join(world.root, "pwned");
    const evil = `; echo pwned > ${marker}`;
    const result = await execCommand("echo", ["hello", evil, "$HOME", "`id`"]);
    expect(result.stdout).toBe(`hello ${evil} $HOME \`id\`\n`);
    await expect(readFile(marker)).rejects.toThrow();
  });

  it("kills the process when the signal aborts", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const running = execCommand(node, ["-e", "setInterval(() => {}, 1000)"], { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const result = await running;
    expect(result.killed).toBe(true);
    expect(result.code).toBe(143);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("does not start anything when the signal is already aborted", async () => {
    const marker = path.join(world.root, "ran");
    const result = await execCommand(node, ["-e", `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`], {
      signal: AbortSignal.abort(),
    });
    expect(result.killed).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    await expect(readFile(marker)).rejects.toThrow();
  });

  it("kills the process on timeout", async () => {
    const result = await execCommand(node, ["-e", "setInterval(() => {}, 1000)"], { timeout: 150 });
    expect(result.killed).toBe(true);
    expect(result.code).toBe(143);
  });

  it("kills grandchildren with the process group", async () => {
    const pidFile = path.join(world.root, "grandchild.pid");
    const script = `
      const { spawn } = require("child_process");
      const c = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
      require("fs").writeFileSync(${JSON.stringify(pidFile)}, String(c.pid));
      setInterval(() => {}, 1000);`;
    const controller = new AbortController();
    const running = execCommand(node, ["-e", script], { signal: controller.signal });
    let pid: number | undefined;
    for (let i = 0; i < 100 && pid === undefined; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pid = Number(await readFile(pidFile, "utf8").catch(() => "")) || undefined;
    }
    expect(pid).toBeDefined();
    controller.abort();
    await running;
    await new Promise((r) => setTimeout(r, 200));
    expect(await isAliveAsync(pid as number)).toBe(false);
  });

  it("reports a missing program as code 127 without rejecting", async () => {
    const result = await execCommand("definitely-not-a-program-xcsh", ["x"]);
    expect(result.code).toBe(127);
    expect(result.killed).toBe(false);
    expect(result.stderr).toMatch(/ENOENT/);
  });
});
