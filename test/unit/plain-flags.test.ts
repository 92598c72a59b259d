/**
 * A plain `tools` argv runs without commander (cli/program.ts `plainFlags`): for every argv it
 * accepts, its flags must be exactly the ones commander would give the command's action, and
 * every other argv (help, repeats, lists, operands, a missing value) must go to commander.
 */
import { describe, expect, it } from "vitest";
import { register, TOOLS_OPTIONS } from "../../src/cli/commands/tools.js";
import { plainFlags } from "../../src/cli/program.js";
import { commanderParse } from "../helpers/commander-parse.js";

/** What commander hands the `tools` action for `argv` (`optsWithGlobals()`), or undefined when it refuses the argv. */
async function commanderFlags(argv: string[]): Promise<Record<string, unknown> | undefined> {
  return (await commanderParse(register, argv))?.optsWithGlobals();
}

const PLAIN = [
  ["tools"],
  ["tools", "--json"],
  ["--json", "tools"],
  ["tools", "--json", "--cwd", "/some/where"],
  ["--cwd=/p", "tools", "--no-color"],
  ["--home", "/h", "tools", "--debug", "--registry", "http://127.0.0.1:1/"],
  ["tools", "--builtins", "read, bash,,edit", "--pi", "./pi.js", "--json"],
  ["tools", "--pi=@scope/pkg", "--builtins=read"],
  ["--cwd", "tools", "tools"],
];

const TO_COMMANDER = [
  ["list", "--json"],
  ["tools", "--path", "a.ts"],
  ["tools", "--path", "a.ts", "b.ts"],
  ["tools", "--json", "--json"],
  ["--builtins", "read", "tools"],
  ["tools", "--help"],
  ["tools", "-h"],
  ["tools", "extra"],
  ["tools", "--cwd"],
  ["tools", "--cwd", "--json"],
  ["tools", "--cwd="],
  ["tools", "--json=yes"],
  ["tools", "--color"],
  ["tools", "--", "--json"],
];

describe("plainFlags", () => {
  it("gives the flags commander gives, for every argv it accepts", async () => {
    for (const argv of PLAIN) {
      const plain = plainFlags(argv, "tools", TOOLS_OPTIONS);
      expect(plain, argv.join(" ")).toBeDefined();
      expect(plain, argv.join(" ")).toEqual(await commanderFlags(argv));
    }
  });

  it("leaves everything else to commander", async () => {
    for (const argv of TO_COMMANDER) expect(plainFlags(argv, "tools", TOOLS_OPTIONS), argv.join(" ")).toBeUndefined();
    // Some of those are fine for commander: the plain path only gives up on them.
    expect(await commanderFlags(["tools", "--path", "a.ts", "b.ts"])).toMatchObject({ path: ["a.ts", "b.ts"] });
  });

  it("leaves an option with an optional value to commander (it may or may not take the next argument)", () => {
    const options = [{ flags: "--since [when]" }];
    for (const argv of [["tools", "--since"], ["tools", "--since", "yesterday"], ["tools", "--since=yesterday"]]) expect(plainFlags(argv, "tools", options), argv.join(" ")).toBeUndefined();
  });
});
