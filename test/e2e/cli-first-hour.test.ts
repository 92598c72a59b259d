/**
 * What a new user met in their first hour (issue 41), for commands that need no registry: `tools`
 * fails (exit 1) when a tool does not load, whichever way its argv is parsed; every subcommand's
 * help lists the global options.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/run-cli.js";
import { worldPerTest, type TmpWorld } from "../helpers/tmp-home.js";

let w: TmpWorld;
worldPerTest((world) => (w = world), "xcsh-tools-first-hour-");

const cli = (args: string[]) => runCli(args, { cwd: w.cwd, home: w.home });
const tool = (name: string) => `export default (api) => ({ name: ${JSON.stringify(name)}, label: "l", description: "d", parameters: api.typebox.Type.Object({}), async execute() { return { content: [] }; } });\n`;

describe("tools: exit 1 when any tool fails to load", () => {
  // A plain argv runs without commander (program.ts plainFlags), `--path` goes through it: both.
  const argvs: [how: string, args: () => string[]][] = [
    ["plain argv", () => ["tools"]],
    ["commander's argv (--path)", () => ["tools", "--path", path.join(w.root, "extra", "extra.js")]],
  ];

  for (const [how, args] of argvs) {
    it(`${how}: a module that throws, a built-in's name, two tools of one name: exit 1, human and --json (exit 0 while all load)`, async () => {
      // The project's own tools load only once the user trusts it, as a user would.
      expect((await cli(["trust"])).code).toBe(0);
      await w.write(path.join(w.cwd, ".xcsh/tools/good.js"), tool("good_tool"));
      await w.write(path.join(w.root, "extra", "extra.js"), tool("extra_tool"));
      const ok = await cli(args());
      expect(ok.code, ok.stderr).toBe(0);
      expect((await cli([...args(), "--json"])).code).toBe(0);

      const broken = await w.write(path.join(w.cwd, ".xcsh/tools/broken.js"), `throw new Error("broken at import");\n`);
      const human = await cli(args());
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(/good_tool/);
      expect(human.stdout).toMatch(/1 error:[\s\S]*broken\.js[\s\S]*broken at import/);
      const json = await cli([...args(), "--json"]);
      expect(json.code).toBe(1);
      expect(json.json()).toMatchObject({ tools: expect.arrayContaining([expect.objectContaining({ name: "good_tool" })]), errors: [{ path: broken }] });

      // Conflicts are load errors too (the tool is skipped at boot).
      await rm(broken);
      const builtin = await cli([...args(), "--builtins", "good_tool", "--json"]);
      expect(builtin.code).toBe(1);
      expect(builtin.json().errors).toMatchObject([{ code: "ECONFLICT_BUILTIN" }]);
      await w.write(path.join(w.cwd, ".xcsh/tools/twin.js"), tool("good_tool"));
      const twin = await cli([...args(), "--json"]);
      expect(twin.code).toBe(1);
      expect(twin.json().errors).toMatchObject([{ code: "ECONFLICT" }]);
    });
  }
});

describe("help lists the global options", () => {
  /** The command names under "Commands:" of a help text (help itself left out). */
  const commandsOf = (help: string) => (help.includes("Commands:") ? [...help.slice(help.indexOf("Commands:")).matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((n) => n !== "help") : []);

  it("every command and subcommand (install, marketplace add, config set…) shows --cwd, --home, --json, --debug… under Global Options", async () => {
    const { GLOBAL_OPTIONS } = await import("../../src/cli/command-name.js");
    const flags = GLOBAL_OPTIONS.map((o) => o.flags);
    const paths: string[][] = commandsOf((await cli(["--help"])).stdout).map((n) => [n]);
    expect(paths.flat()).toEqual(expect.arrayContaining(["install", "tools", "marketplace", "config"]));
    const seen: string[] = [];
    while (paths.length > 0) {
      const at = paths.shift()!;
      const help = await cli([...at, "--help"]);
      expect(help.code, at.join(" ")).toBe(0);
      seen.push(at.join(" "));
      const global = help.stdout.slice(help.stdout.indexOf("Global Options:"));
      expect(help.stdout, at.join(" ")).toContain("Global Options:");
      for (const flag of flags) expect(global, `${at.join(" ")}: ${flag}`).toContain(flag);
      paths.push(...commandsOf(help.stdout).map((n) => [...at, n]));
    }
    expect(seen).toEqual(expect.arrayContaining(["install", "marketplace add", "config set"]));
  });
});
