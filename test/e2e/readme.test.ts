/**
 * The README's examples run as written. Code blocks marked `<!-- readme-test: NAME -->` are
 * extracted verbatim: the tool example becomes `~/.xcsh/agent/tools/greet.ts` of a temp HOME
 * and is type-checked against the built declarations; the host example becomes a script that
 * imports `xcsh-tools` by name (a temp `node_modules/xcsh-tools` links to this repo, as an
 * install would) and runs under every runtime. The quick-start command at the very top is run
 * too.
 */
import { readFileSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CLI_BIN, hermeticEnv, runCli, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT, requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";

const README = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");

/** The code of the fenced block right after `<!-- readme-test: name -->`. */
function readmeBlock(markdown: string, name: string): { lang: string; code: string } {
  const marker = `<!-- readme-test: ${name} -->`;
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`README.md has no ${marker}`);
  const match = /^\s*```(\w*)\n([\s\S]*?)\n```/.exec(markdown.slice(at + marker.length));
  if (!match) throw new Error(`README.md: ${marker} is not followed by a fenced code block`);
  return { lang: match[1] ?? "", code: `${match[2]}\n` };
}

const worlds: TmpWorld[] = [];
afterAll(async () => {
  await Promise.all(worlds.map((w) => w.cleanup()));
});

/** A temp world where the README's tool is installed and its host script can import xcsh-tools. */
async function readmeWorld(): Promise<{ world: TmpWorld; hostScript: string }> {
  const world = await makeTmpWorld("xcsh-tools-readme-");
  worlds.push(world);
  await world.write(path.join(world.xcshHome, "agent", "tools", "greet.ts"), readmeBlock(README, "tool-example").code);
  // The host lives in its own folder with its own node_modules, away from HOME and the project,
  // so tools cannot borrow its dependencies by walking up.
  const hostDir = path.join(world.root, "host");
  await mkdir(path.join(hostDir, "node_modules"), { recursive: true });
  await symlink(REPO_ROOT, path.join(hostDir, "node_modules", "xcsh-tools"), "dir");
  const hostScript = path.join(hostDir, "host.mjs");
  await writeFile(hostScript, readmeBlock(README, "host-example").code);
  return { world, hostScript };
}

describe("README", () => {
  it("marks its examples in the languages they are run as", () => {
    expect(readmeBlock(README, "tool-example").lang).toBe("ts");
    expect(readmeBlock(README, "host-example").lang).toBe("js");
  });

  for (const runtime of runtimes()) {
    runtimeIt(runtime)(`host example runs as written under ${runtime.label}${skipNote(runtime)}`, { timeout: 60_000 }, async () => {
      const command = requireRuntime(runtime);
      const { world, hostScript } = await readmeWorld();
      const result = await runProcess(command, [hostScript], { cwd: world.cwd, env: hermeticEnv(world.home), timeoutMs: 60_000 });
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
      expect(result.stdout).toBe("Hello, world!\n");
    });
  }

  it("tool example type-checks against the built declarations", { timeout: 60_000 }, async () => {
    const { world } = await readmeWorld();
    const toolFile = path.join(world.xcshHome, "agent", "tools", "greet.ts");
    // Resolve `xcsh-tools` the way a tool project does: through node_modules.
    await mkdir(path.join(world.xcshHome, "agent", "node_modules"), { recursive: true });
    await symlink(REPO_ROOT, path.join(world.xcshHome, "agent", "node_modules", "xcsh-tools"), "dir");
    const tsconfig = await world.write(path.join(world.xcshHome, "agent", "tsconfig.json"), {
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        skipLibCheck: true,
        typeRoots: [path.join(REPO_ROOT, "node_modules", "@types")],
        types: ["node"],
      },
      files: [toolFile],
    });
    const tsc = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
    const result = await runProcess(process.execPath, [tsc, "-p", tsconfig], { cwd: world.root, env: hermeticEnv(world.home), timeoutMs: 60_000 });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.code).toBe(0);
  });

  it("every `npx xcsh-tools validate` line of the README passes", { timeout: 60_000 }, async () => {
    const targets = [...README.matchAll(/^npx xcsh-tools validate (\S+)/gm)].map((m) => m[1]!);
    expect(targets.length).toBeGreaterThan(1);
    const world = await makeTmpWorld("xcsh-tools-readme-");
    worlds.push(world);
    for (const target of targets) {
      const result = await runCli(["validate", target], { cwd: REPO_ROOT, home: world.home });
      expect({ target, code: result.code, stderr: result.stderr }, result.stdout).toEqual({ target, code: 0, stderr: "" });
    }
  });

  it("exit codes are the documented ones", { timeout: 60_000 }, async () => {
    const world = await makeTmpWorld("xcsh-tools-readme-");
    worlds.push(world);
    const notAFactory = await world.write("project/not-a-factory.ts", "export default 42;\n");
    const cases: [string[], number][] = [
      [["--version"], 0],
      [["validate", "examples/hello-tool.ts"], 0],
      [["validate", notAFactory], 1],
      [["no-such-command"], 2],
      [["validate", path.join(world.cwd, "nothing-here.ts")], 2],
      [["tools", "--no-such-flag"], 2],
    ];
    for (const [args, code] of cases) {
      const result = await runCli(args, { cwd: REPO_ROOT, home: world.home });
      expect({ args, code: result.code }, `${result.stdout}\n${result.stderr}`).toEqual({ args, code });
    }
    const table = README.slice(README.indexOf("### Exit codes"));
    for (const code of [0, 1, 2]) expect(table).toContain(`| ${code} |`);
  });

  it("quick-start command at the top works: validate the shipped example", { timeout: 60_000 }, async () => {
    const firstBlock = /```sh\n([\s\S]*?)\n```/.exec(README)?.[1] ?? "";
    const line = firstBlock.split("\n")[0] ?? "";
    const match = /^npm install && npx xcsh-tools (.+?)\s*(#.*)?$/.exec(line);
    expect(match, `first line of README's first block: ${line}`).not.toBeNull();
    const args = match![1]!.split(/\s+/);
    expect(firstBlock).toMatch(/^npm test\b/m);
    const world = await makeTmpWorld("xcsh-tools-readme-");
    worlds.push(world);
    const result = await runCli(args, { cwd: REPO_ROOT, home: world.home });
    expect({ code: result.code, stderr: result.stderr }, `${CLI_BIN} ${args.join(" ")}\n${result.stdout}`).toEqual({ code: 0, stderr: "" });
  });
});
