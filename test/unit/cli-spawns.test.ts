/**
 * Every CLI process a test starts reads the organization policy the way `runCli` makes it read it
 * (test/helpers/run-cli.ts `cliArgv`: a never-created file in the run's home, or the file the test
 * names), never the machine's own /etc/xcsh/managed-settings.json: a machine with a policy must run
 * the suite as one without. A direct spawn (a process a test signals, reads while it runs, or wraps
 * in `time` or `script`) that put the shim on its command line itself skipped that default. This
 * reads every test source and refuses a start of the CLI that does not go through `cliArgv`.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/runtimes.js";

const SPAWNS = /\b(spawn|spawnSync|runProcess|execFile|execFileSync|fork)\(/;
/** The helper that owns the shim's path, and this check (whose planted examples bypass on purpose). */
const EXEMPT = new Set([path.join("test", "helpers", "run-cli.ts"), path.join("test", "unit", "cli-spawns.test.ts")]);

/** `file:line: why` for each start of the CLI in `text` that bypasses `cliArgv`. */
export function bypasses(file: string, text: string): string[] {
  if (EXEMPT.has(file)) return [];
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (/^\s*import\b/.test(line) || /^\s*(\*|\/\/)/.test(line)) return;
    if (/\bCLI_BIN\b/.test(line)) found.push(`${file}:${i + 1}: uses CLI_BIN directly (start the CLI with cliArgv(home, args) or runCli)`);
    else if (SPAWNS.test(line) && /xcsh-tools\.js/.test(line) && !line.includes("cliArgv(")) found.push(`${file}:${i + 1}: spawns a copy of bin/xcsh-tools.js without cliArgv (pass it as cliArgv(home, args, { bin }))`);
  });
  return found;
}

function testSources(dir = path.join(REPO_ROOT, "test"), out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "fixtures" && entry.name !== "node_modules") testSources(full, out);
    } else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) out.push(full);
  }
  return out;
}

describe("tests start the CLI only through cliArgv (the no-machine-policy default of runCli)", () => {
  it("no test source starts the CLI another way", () => {
    const found = testSources().flatMap((file) => bypasses(path.relative(REPO_ROOT, file), readFileSync(file, "utf8")));
    expect(found).toEqual([]);
  });

  it("the check sees each way of bypassing it", () => {
    const planted = [
      `const child = spawn(process.execPath, [CLI_BIN, "run"], { cwd });`,
      `const argv = ["-v", process.execPath, CLI_BIN, ...args];`,
      `await runProcess(command, [path.join(installed, "bin", "xcsh-tools.js"), "--version"], { cwd, env });`,
      `execFileSync(process.execPath, ["bin/xcsh-tools.js", "tools"]);`,
    ];
    expect(planted.map((line) => bypasses("test/x.test.ts", line).length)).toEqual([1, 1, 1, 1]);
    expect(bypasses("test/x.test.ts", `import { CLI_BIN } from "../helpers/run-cli.js";\nspawn(process.execPath, cliArgv(w.home, ["run"]), { cwd });\nawait runProcess(command, cliArgv(home, ["--version"], { bin: path.join(installed, "bin", "xcsh-tools.js") }), { cwd, env });`)).toEqual([]);
  });
});
