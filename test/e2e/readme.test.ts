/**
 * The README's examples run as written. Code blocks marked `<!-- readme-test: NAME -->` are
 * extracted verbatim: the tool example becomes `~/.xcsh/agent/tools/greet.ts` of a temp HOME
 * and is type-checked against the built declarations; the host example (in docs/library-api.md)
 * becomes a script that imports `xcsh-tools` by name (a temp `node_modules/xcsh-tools` links to
 * this repo, as an install would) and runs under every runtime. The quick-start command at the
 * very top is run too, and every other shell block of the README runs as written, in order, in
 * a temp project holding a copy of `examples/` (the blocks `get-command` and `first-plugin` run
 * in test/e2e/first-steps.test.ts, with the bare command and npm).
 */
import { readFileSync } from "node:fs";
import { cp, mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeWritable } from "../helpers/seeds.js";
import { cliArgv, hermeticEnv, runCli, runProcess } from "../helpers/run-cli.js";
import { REPO_ROOT, requireRuntime, runtimeIt, runtimes, skipNote } from "../helpers/runtimes.js";
import { makeTmpWorld, type TmpWorld } from "../helpers/tmp-home.js";
import { commandsOf, shBlocks } from "../helpers/readme-blocks.js";
import { isolatedGitEnv } from "../helpers/git-remote.js";

const README = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const LIBRARY_API = readFileSync(path.join(REPO_ROOT, "docs", "library-api.md"), "utf8");
const ERROR_CODES = readFileSync(path.join(REPO_ROOT, "docs", "error-codes.md"), "utf8");

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
  await writeFile(hostScript, readmeBlock(LIBRARY_API, "host-example").code);
  return { world, hostScript };
}

describe("README", () => {
  it("marks its examples in the languages they are run as", () => {
    expect(readmeBlock(README, "tool-example").lang).toBe("ts");
    expect(readmeBlock(LIBRARY_API, "host-example").lang).toBe("js");
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

  it("every `xcsh-tools validate examples/...` line of the README passes", { timeout: 60_000 }, async () => {
    const targets = [...README.matchAll(/(?:^|&& )(?:xcsh-tools|node bin\/xcsh-tools\.js) validate (examples\/\S+)/gm)].map((m) => m[1]!);
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
    const table = ERROR_CODES.slice(ERROR_CODES.indexOf("## Exit codes"));
    for (const code of [0, 1, 2]) expect(table).toContain(`| ${code} |`);
  });

  it("quick-start command at the top works: validate the shipped example", { timeout: 60_000 }, async () => {
    const firstBlock = /```sh\n([\s\S]*?)\n```/.exec(README)?.[1] ?? "";
    const line = firstBlock.split("\n")[0] ?? "";
    // The CLI as built by npm install, without npx (which would install and build the package again).
    const match = /^npm install && node bin\/xcsh-tools\.js (.+?)\s*(#.*)?$/.exec(line);
    expect(match, `first line of README's first block: ${line}`).not.toBeNull();
    const args = match![1]!.split(/\s+/);
    expect(firstBlock).toMatch(/^npm test\b/m);
    const world = await makeTmpWorld("xcsh-tools-readme-");
    worlds.push(world);
    const result = await runCli(args, { cwd: REPO_ROOT, home: world.home });
    expect({ code: result.code, stderr: result.stderr }, `xcsh-tools ${args.join(" ")}\n${result.stdout}`).toEqual({ code: 0, stderr: "" });
  });

  it("every other shell block runs as written, in order, against the shipped examples", { timeout: 600_000 }, async () => {
    const blocks = shBlocks(README);
    // The set-up block (the quick-start test above) comes first; two blocks need npm and the bare command.
    expect(blocks[0]!.lines[0]).toMatch(/^npm install && /);
    const elsewhere = new Set(["get-command", "first-plugin"]);
    expect(blocks.filter((b) => b.name && elsewhere.has(b.name)).map((b) => b.name)).toEqual(["get-command", "first-plugin"]);
    const here = blocks.slice(1).filter((b) => !b.name || !elsewhere.has(b.name));
    for (const block of here) expect(block.name, `an unmarked block: ${block.lines.join("; ")}`).toBeDefined();
    expect(here.map((b) => b.name)).toEqual(expect.arrayContaining(["install-plugins", "state-commands", "marketplace", "team", "fleets", "doctor"]));

    // The reader's clone, as a new user has it: the shipped examples, nothing trusted yet.
    const world = await makeTmpWorld("xcsh-tools-readme-blocks-");
    worlds.push(world);
    await cp(path.join(REPO_ROOT, "examples"), path.join(world.cwd, "examples"), { recursive: true });
    // A clone is a git repository: `--scope project` changes write the team's declaration there (xcsh-team.json).
    const init = await runProcess("git", ["init", "-q"], { cwd: world.cwd, env: isolatedGitEnv(world.home) });
    expect(init.code, init.stderr).toBe(0);
    const ran: string[] = [];
    for (const block of here) {
      let cwd = world.cwd; // each block starts in the clone's folder
      for (const line of block.lines) {
        for (const [bin, ...args] of commandsOf(line)) {
          if (bin === "cd") {
            cwd = path.resolve(cwd, args[0]!);
            continue;
          }
          if (bin === "git") {
            // The team walkthrough makes a repository and stages what it commits, with the reader's git (its own config kept out).
            const git = await runProcess("git", args, { cwd, env: isolatedGitEnv(world.home), timeoutMs: 60_000 });
            expect({ block: block.name, line, code: git.code }, git.stderr).toEqual({ block: block.name, line, code: 0 });
            ran.push(`${block.name}: git ${args.join(" ")}`);
            continue;
          }
          expect(bin, `${block.name}: ${line}`).toBe("xcsh-tools");
          const result = await runCli(args, { cwd, home: world.home, timeoutMs: 120_000 });
          expect({ block: block.name, line, code: result.code }, `${result.stdout}\n${result.stderr}`).toEqual({ block: block.name, line, code: 0 });
          ran.push(`${block.name}: ${args.join(" ")}`);
        }
      }
    }
    expect(ran.length).toBeGreaterThan(15);
    // Where the team walkthrough leaves the clone: the set declared and locked, nothing of this machine in it, and
    // exactly the files to commit (the state-commands block's switch is gone again: `enable --scope project` removed it).
    const declared = JSON.parse(await readFile(path.join(world.cwd, "xcsh-team.json"), "utf8"));
    expect(declared).toEqual({ version: 1, marketplaces: { "acme-market": { source: { source: "directory", path: "./acme-market" } } }, plugins: { "acme-market-plugin@acme-market": {} } });
    const lockText = await readFile(path.join(world.cwd, "xcsh-team.lock.json"), "utf8");
    expect(JSON.parse(lockText).marketplacePlugins["acme-market-plugin@acme-market"]).toMatchObject({ version: "0.1.0", hash: expect.stringMatching(/^tree1-sha256:[0-9a-f]{64}$/) });
    expect(lockText).not.toContain(world.home);
    const status = await runProcess("git", ["status", "--porcelain", "--untracked-files=all", "--", "xcsh-team.json", "xcsh-team.lock.json", ".xcsh"], { cwd: world.cwd, env: isolatedGitEnv(world.home) });
    expect(status.stdout.split("\n").filter(Boolean).sort()).toEqual(["?? .xcsh/.gitignore", "?? xcsh-team.json", "?? xcsh-team.lock.json"]);
    const teamList = (await runCli(["list", "--json"], { cwd: world.cwd, home: world.home })).json<{ teamSet: unknown[] }>();
    expect(teamList.teamSet).toEqual([expect.objectContaining({ key: "acme-market-plugin@acme-market", enabled: true, decidedBy: "team" })]);
    // Where the walkthroughs leave the reader: both plugins installed, and their tools loaded.
    const list = await runCli(["list", "--json"], { cwd: world.cwd, home: world.home });
    expect(list.json()).toMatchObject({ plugins: [{ name: "@example/xcsh-search" }], marketplacePlugins: [{ id: "acme-market-plugin@acme-market", scope: "project" }, { id: "acme-market-plugin@acme-market", scope: "user" }] });
    const tools = (await runCli(["tools", "--json"], { cwd: world.cwd, home: world.home })).json<{ tools: { name: string }[] }>().tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["project_search", "web_lookup", "search_history"]));
    // The fleets block's seed: read-only, and a machine pointed at it loads the plugin from it in place.
    const seed = path.join(world.cwd, "..", "xcsh-seed");
    const fromSeed = await runCli(["tools", "--json"], { cwd: world.cwd, home: world.home, env: { XCSH_PLUGIN_SEED_DIR: seed } });
    expect(fromSeed.json<{ tools: { name: string; file: string }[] }>().tools.find((t) => t.name === "project_search")?.file).toContain(path.join(seed, "plugins", "node_modules"));
    await makeWritable(seed);
  });
});
