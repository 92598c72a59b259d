/**
 * The README's shell lines are run by splitting them as a shell would (test/helpers/readme-blocks.ts):
 * single-quoted words are literal (the README's `run` line passes JSON), and any syntax the
 * reader does not implement is refused rather than run as something else.
 */
import { describe, expect, it } from "vitest";
import { commandsOf } from "../helpers/readme-blocks.js";

describe("commandsOf", () => {
  it("splits words and && chains; a single-quoted word is one literal argument", () => {
    expect(commandsOf("npm install && npm test")).toEqual([["npm", "install"], ["npm", "test"]]);
    expect(commandsOf(`xcsh-tools run t '{"path": "a b", "n": 1}'`)).toEqual([["xcsh-tools", "run", "t", '{"path": "a b", "n": 1}']]);
    expect(commandsOf("x '' y")).toEqual([["x", "", "y"]]);
    expect(commandsOf("x '&&' y")).toEqual([["x", "&&", "y"]]);
  });

  const refused = ["a | b", "a; b", "a > f", "a $HOME", "a `b`", 'a "b"', "a\\ b", "a*", "a'b'", "'a'b", "a 'unterminated", "a&&b", "a &", "a &&", "&& a"];
  for (const line of refused) {
    it(`refuses ${JSON.stringify(line)}`, () => {
      expect(() => commandsOf(line)).toThrow("shell syntax the tests do not run");
    });
  }
});
