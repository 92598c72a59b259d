/**
 * The command an argv names, as the process entry reads it to choose the program's build and the
 * program to register that command alone: global options and their values are skipped.
 */
import { describe, expect, it } from "vitest";
import { commandNameOf, GLOBAL_OPTIONS } from "../../src/cli/command-name.js";

describe("commandNameOf", () => {
  it("is the first operand", () => {
    expect(commandNameOf(["install", "a", "b"])).toBe("install");
    expect(commandNameOf(["tools", "--json"])).toBe("tools");
  });

  it("skips global flags, and the value of those that take one", () => {
    expect(commandNameOf(["--json", "--debug", "--no-color", "list"])).toBe("list");
    expect(commandNameOf(["--cwd", "tools", "install", "x"])).toBe("install");
    expect(commandNameOf(["--home", "/h", "--registry", "http://127.0.0.1:1/", "tools"])).toBe("tools");
    expect(commandNameOf(["--cwd=/p", "doctor"])).toBe("doctor");
  });

  it("is undefined without an operand, or when `--` comes first", () => {
    expect(commandNameOf([])).toBeUndefined();
    expect(commandNameOf(["--version"])).toBeUndefined();
    expect(commandNameOf(["--json", "--", "install"])).toBeUndefined();
  });

  it("knows which global options take a value from their own flags", () => {
    const valued = GLOBAL_OPTIONS.filter((option) => option.flags.includes("<")).map((option) => option.flags.split(" ")[0]);
    expect(valued).toEqual(["--cwd", "--home", "--registry"]);
    for (const flag of valued) expect(commandNameOf([flag!, "list", "tools"])).toBe("tools");
  });
});
