/**
 * The built CLI on a pseudo terminal (util-linux `script`), as a person at a terminal runs it:
 * stdin and stdout are TTYs, so questions are asked and progress animates. Used by the consent
 * tests and by the terminal-output tests (which also turn colors on).
 */
import { spawn } from "node:child_process";
import { cliArgv, hermeticEnv } from "./run-cli.js";

const SCRIPT = "/usr/bin/script";

/** Quote one argument for the shell `script -c` runs. */
function sh(arg: string): string {
  return `'${arg.replace(/'/g, "'\\''")}'`;
}

/**
 * Run the CLI on a pseudo terminal in `world`; when `(y/N)` appears, type `answer` and Enter.
 * Resolves with everything the terminal showed and the exit code (script -e passes the child's
 * on). `env` is applied over the hermetic environment (`undefined` removes a variable).
 */
export function runOnPty(args: string[], world: { cwd: string; home: string }, answer: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; screen: string; asked: boolean }> {
  return new Promise((resolve, reject) => {
    const command = [process.execPath, ...cliArgv(world.home, args)].map(sh).join(" ");
    const child = spawn(SCRIPT, ["-q", "-e", "-c", command, "/dev/null"], { cwd: world.cwd, env: hermeticEnv(world.home, { TERM: "xterm-256color", COLUMNS: "200", ...env }), stdio: ["pipe", "pipe", "pipe"] });
    let screen = "";
    let asked = false;
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    const onData = (chunk: Buffer) => {
      screen += chunk.toString("utf8");
      if (!asked && /\(y\/N\)/.test(screen)) {
        asked = true;
        child.stdin.write(`${answer}\r`);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, screen, asked });
    });
  });
}
